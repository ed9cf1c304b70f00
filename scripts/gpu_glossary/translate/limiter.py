"""How many requests may be in flight at once: adaptive, like TCP's congestion window.

The level starts at the ceiling (`--concurrency`). A 429 or 503 means the server wants
fewer requests: the level halves, once per burst (a refusal of a request that started
before the last halving does not halve again), and nothing new starts until the
server's Retry-After has passed. Each success adds 1/level, so the level grows back by
about one per round of requests and settles just under what the server accepts. It grows
only while it is in full use (as TCP's window, RFC 7661): near the end of a run, when fewer
chunks are left than the level allows, successes prove nothing about a higher level.
Waiting requests start in priority order, so the longest chunks go first.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

MAX_RETRY_AFTER = 60.0


class AdaptiveLimiter:
    def __init__(self, ceiling: int, start: int | None = None):
        self.ceiling = ceiling
        self.level = float(min(start or ceiling, ceiling))
        self.lowest = self.level
        self.backoffs = 0
        self.in_flight = 0
        self.epoch = 0  # counts halvings; a request remembers the epoch it started in
        self._resume_at = 0.0
        self._waiting: list[tuple[int, int, asyncio.Future]] = []
        self._order = itertools.count()
        self._timer: asyncio.TimerHandle | None = None

    @property
    def allowed(self) -> int:
        """Requests that may be in flight now."""
        return max(1, int(self.level))

    async def acquire(self, priority: int = 0) -> int:
        """Wait for a slot (lower `priority` first); returns the epoch to report the outcome with."""
        loop = asyncio.get_running_loop()
        if not self._waiting and self.in_flight < self.allowed and loop.time() >= self._resume_at:
            self.in_flight += 1
            return self.epoch
        future = loop.create_future()
        heapq.heappush(self._waiting, (priority, next(self._order), future))
        self._wake()
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # granted, but the waiter was cancelled before it could use the slot
            raise
        return self.epoch

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def succeeded(self) -> None:
        """A request came back (call before releasing its slot): grow if every slot was taken."""
        if self.in_flight >= self.allowed:
            self.level = min(float(self.ceiling), self.level + 1 / self.level)
        self._wake()

    def overloaded(self, epoch: int, retry_after: float | None = None) -> None:
        """The server refused a request (429/503): halve once per burst and pause for Retry-After."""
        if retry_after:
            self._resume_at = max(self._resume_at, asyncio.get_running_loop().time() + retry_after)
        if epoch == self.epoch:
            self.level = max(1.0, self.level / 2)
            self.lowest = min(self.lowest, self.level)
            self.epoch += 1
            self.backoffs += 1

    def _wake(self) -> None:
        loop = asyncio.get_running_loop()
        while self._waiting and self.in_flight < self.allowed:
            if loop.time() < self._resume_at:
                if self._timer is None:
                    self._timer = loop.call_at(self._resume_at, self._timer_fired)
                return
            _, _, future = heapq.heappop(self._waiting)
            if future.done():  # its waiter was cancelled
                continue
            self.in_flight += 1
            future.set_result(None)

    def _timer_fired(self) -> None:
        self._timer = None
        self._wake()


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The wait a response asks for: `retry-after-ms`, or `Retry-After` in seconds or as a date."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    try:
        seconds = float(value) / 1000 if value is not None else None
    except ValueError:
        seconds = None
    if seconds is None and (value := headers.get("retry-after")) is not None:
        try:
            seconds = float(value)
        except ValueError:
            try:
                seconds = parsedate_to_datetime(value).timestamp() - time.time()
            except (TypeError, ValueError):
                seconds = None
    if seconds is None or not 0 <= seconds <= MAX_RETRY_AFTER:
        return None
    return seconds
