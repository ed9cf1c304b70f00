"""Translate English pages into Chinese through any OpenAI-compatible chat API.

Only pages whose translation is missing or stale are sent, and of a stale page only the
sections that changed (unchanged pages and sections cost nothing). Every chunk of every
page goes into one pool, longest first, under an adaptive concurrency limit; every reply
is checked before it may replace anything, and a page is written atomically, whole, once
all its chunks passed, or not at all. The API key never leaves the client: messages
that could echo it are scrubbed.
"""

from __future__ import annotations

import asyncio
import fnmatch
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import openai

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.glossary import SOURCE_LANG, Glossary
from gpu_glossary.images.links import fix_text
from gpu_glossary.page import Page, parse_page
from gpu_glossary.render import Renderer
from gpu_glossary.terminology import Terminology
from gpu_glossary.translate.checks import markup_differences, parse_translation, structure_problems
from gpu_glossary.translate.chunks import CheckRenderer, Chunk, PagePlan, chunk_size, plan_page
from gpu_glossary.translate.defaults import DEFAULT_BASE_URL, DEFAULT_CONCURRENCY, DEFAULT_MODEL, DEFAULT_PRICES
from gpu_glossary.translate.limiter import AdaptiveLimiter, retry_after_seconds
from gpu_glossary.translate.prompt import retry_note, system_message

TARGET_LANG = "zh"
OVERLOADED = (429, 503)  # the server asks for fewer requests at once


class FatalAPIError(RuntimeError):
    """An error that will fail every request alike (bad key, no balance): stop the run."""


@dataclass
class Settings:
    api_key: str = ""
    base_url: str = DEFAULT_BASE_URL
    model: str = DEFAULT_MODEL
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = 120.0
    retries: int = 3
    temperature: float = 1.3
    max_chars: int = 12000
    prices: dict = field(default_factory=lambda: dict(DEFAULT_PRICES))

    @property
    def thinking_disabled(self) -> bool:
        return "deepseek" in self.model.lower() or "deepseek" in self.base_url.lower()

    def scrub(self, text: str) -> str:
        """Remove the key from any text that might be shown or saved."""
        return text.replace(self.api_key, "***") if self.api_key else text


@dataclass
class Job:
    rel: str
    reason: str  # "missing", "stale" or "forced"
    english: Page
    previous: Page | None


@dataclass
class Outcome:
    rel: str
    reason: str
    status: str = "failed"  # "translated" or "failed"
    error: str = ""
    requests: int = 0
    tokens_in: int = 0
    tokens_cached: int = 0
    tokens_out: int = 0
    parts_sent: int = 0  # sections or blocks sent to the model
    parts_kept: int = 0  # sections or blocks kept as they were


# -- choosing pages ---------------------------------------------------------------------
def select_jobs(glossary: Glossary, patterns: list[str], force: bool) -> list[Job]:
    """English pages to translate: missing or stale ones, or all selected with `force`.

    Patterns are paths or globs of English or Chinese pages (glossary/en/perf/*.md, …)
    or of page paths inside a language folder (perf/occupancy.md).
    """
    jobs = []
    for rel, english in sorted(glossary.pages[SOURCE_LANG].items()):
        if patterns and not any(_matches(rel, pattern, glossary) for pattern in patterns):
            continue
        status = glossary.translation_status(TARGET_LANG, rel)
        if force or status != "current":
            reason = "forced" if force and status == "current" else status
            jobs.append(Job(rel, reason, english, glossary.page(TARGET_LANG, rel)))
    return jobs


def _matches(rel: str, pattern: str, glossary: Glossary) -> bool:
    pattern = pattern.replace("\\", "/")
    candidates = [rel, f"glossary/{SOURCE_LANG}/{rel}", f"glossary/{TARGET_LANG}/{rel}"]
    absolute = Path(pattern)
    if absolute.is_absolute():
        try:
            pattern = absolute.resolve().relative_to(glossary.root.resolve()).as_posix()
        except ValueError:
            return False
    pattern = pattern.removeprefix("./")
    return any(fnmatch.fnmatchcase(candidate, pattern) for candidate in candidates)


def unmatched_patterns(glossary: Glossary, patterns: list[str]) -> list[str]:
    return [p for p in patterns if not any(_matches(rel, p, glossary) for rel in glossary.pages[SOURCE_LANG])]


def orphans(glossary: Glossary) -> list[Page]:
    """Chinese pages whose English page no longer exists."""
    return [page for rel, page in sorted(glossary.pages[TARGET_LANG].items()) if rel not in glossary.pages[SOURCE_LANG]]


def estimate_tokens(text: str) -> int:
    """A rough token count: ~4 Latin characters or ~1.6 Chinese characters per token."""
    cjk = len(re.findall(r"[\u3400-\u9fff]", text))
    return int((len(text) - cjk) / 4 + cjk * 0.6) + 1


def plan_jobs(jobs: list[Job], settings: Settings) -> tuple[list[PagePlan], int]:
    """Each job's parts to keep and to send, cut into chunks of the run's chunk size (returned too)."""
    plans = [plan_page(job.english, job.previous if job.reason == "stale" else None) for job in jobs]
    size = chunk_size(sum(plan.to_send for plan in plans), settings.concurrency, settings.max_chars)
    for plan in plans:
        plan.cut(size)
    return plans, size


# -- talking to the API -----------------------------------------------------------------
def make_client(settings: Settings) -> openai.AsyncOpenAI:
    # No retries inside the client: the translator retries itself, so that a 429 or 503
    # also lowers the concurrency level (limiter.py).
    return openai.AsyncOpenAI(
        api_key=settings.api_key, base_url=settings.base_url, timeout=settings.timeout, max_retries=0
    )


class RequestFailed(Exception):
    """A request that failed for good: the last API error and how many attempts were made."""

    def __init__(self, error: openai.APIError, attempts: int):
        super().__init__(str(error))
        self.error = error
        self.attempts = attempts


def describe_api_error(error: Exception, settings: Settings, attempts: int = 1) -> tuple[str, bool]:
    """A plain message for an API error, and whether it dooms every other request too."""
    status = getattr(error, "status_code", None)
    detail = settings.scrub(_error_detail(error))
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    if isinstance(error, openai.APITimeoutError):
        return f"timed out after {settings.timeout:g} s ({tries})", False
    if isinstance(error, openai.APIConnectionError):
        return f"connection failed ({tries}): {detail}", False
    if status == 401:
        return "the API rejected the key (401): check DEEPSEEK_API_KEY", True
    if status == 402:
        return "insufficient balance (402): top up the account of this API key", True
    if status == 403:
        return f"access denied (403): {detail}", True
    if status == 404:
        return f"not found (404): check --base-url and --model: {detail}", True
    if status == 429:
        return f"rate limited (429), gave up after {tries}: {detail}", False
    if status in (400, 422):
        return f"the API rejected the request ({status}): {detail}", False
    if status is not None and status >= 500:
        return f"server error ({status}), gave up after {tries}: {detail}", False
    return settings.scrub(f"{type(error).__name__}: {detail}"), False


def _error_detail(error: Exception) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(error, "message", None) or error)[:300]


def _retryable(error: openai.APIError) -> bool:
    status = getattr(error, "status_code", None)
    return status is None or status in (408, 409, 429) or status >= 500


def backoff_seconds(failures: int) -> float:
    """Exponential backoff with jitter: about 0.5, 1, 2, 4, 8, 8 … seconds."""
    return min(0.5 * 2 ** (failures - 1), 8.0) * (1 - 0.25 * random.random())


async def check_model(client: openai.AsyncOpenAI, settings: Settings) -> None:
    """Fail early, with the list of models, when the model does not exist there."""
    try:
        models = [model.id async for model in client.with_options(max_retries=settings.retries).models.list()]
    except openai.APIError as error:
        message, _ = describe_api_error(error, settings, settings.retries + 1)
        raise FatalAPIError(f"cannot list the models of {settings.base_url}: {message}") from None
    if settings.model not in models:
        raise FatalAPIError(
            f"model '{settings.model}' does not exist at {settings.base_url}; "
            f"it offers: {', '.join(sorted(models)) or 'nothing'} (choose one with --model)"
        )


class _PageFailed(Exception):
    """Another chunk of this page already failed, or the run was stopped: do not send this one."""


@dataclass
class _PageRun:
    plan: PagePlan
    job: Job
    outcome: Outcome
    done: int = 0
    sent_whole: bool = False  # sent again whole after its kept parts failed the page's checks


Progress = Callable[[int, int, int, int], None]  # (chunks done, chunks in all, pages finished, concurrency level)


@dataclass
class Run:
    outcomes: list[Outcome]
    chunks: int
    concurrency: dict


class Translator:
    """Translates jobs; one instance per run, shared by the concurrent tasks."""

    def __init__(self, client: openai.AsyncOpenAI, settings: Settings, terminology: Terminology, glossary: Glossary):
        self.client = client
        self.settings = settings
        self.system = system_message(terminology)
        self.glossary = glossary
        self.limiter = AdaptiveLimiter(settings.concurrency)
        # A 429/503 may come several times while the level halves down to what the server
        # takes; those tries do not use up --retries (up to one per halving from the ceiling).
        self.overload_retries = settings.retries + (settings.concurrency - 1).bit_length()
        self.renderer = Renderer.for_language(glossary.root, TARGET_LANG)
        self.page_renderer = CheckRenderer(self.renderer)
        self.fatal: str | None = None
        self.progress: Progress | None = None
        self.chunks_total = self.chunks_done = self.pages_finished = 0
        self.chunk_size = settings.max_chars
        self.retries_whole: list[asyncio.Task] = []

    async def run(self, jobs: list[Job], progress: Progress | None = None) -> Run:
        """Every chunk of every page in one pool, longest first; each page written when all its chunks passed."""
        self.progress = progress
        plans, self.chunk_size = plan_jobs(jobs, self.settings)
        pages = [_PageRun(plan, job, Outcome(job.rel, job.reason)) for plan, job in zip(plans, jobs, strict=True)]
        work = sorted(((chunk, page) for page in pages for chunk in page.plan.chunks), key=lambda pair: -pair[0].weight)
        self.chunks_total = len(work)
        self._report()
        for page in pages:
            page.outcome.parts_kept = page.plan.parts_kept
            page.outcome.parts_sent = len(page.plan.parts) - page.plan.parts_kept
            if not page.plan.chunks:
                self._finish(page)  # nothing changed that needs the model
        await asyncio.gather(*(self._run_chunk(chunk, page, rank) for rank, (chunk, page) in enumerate(work)))
        while self.retries_whole:  # pages sent again whole (see _finish)
            batch, self.retries_whole = self.retries_whole, []
            await asyncio.gather(*batch)
        level = {
            "ceiling": self.settings.concurrency,
            "final": self.limiter.allowed,
            "lowest": max(1, int(self.limiter.lowest)),
            "backoffs": self.limiter.backoffs,
        }
        return Run([page.outcome for page in pages], self.chunks_total, level)

    def _report(self) -> None:
        if self.progress is not None:
            self.progress(self.chunks_done, self.chunks_total, self.pages_finished, self.limiter.allowed)

    async def _run_chunk(self, chunk: Chunk, page: _PageRun, rank: int) -> None:
        try:
            chunk.reply = await self._translate_chunk(chunk, page, rank)
        except _PageFailed:
            pass
        except RequestFailed as failure:
            message, fatal = describe_api_error(failure.error, self.settings, failure.attempts)
            if fatal and self.fatal is None:
                self.fatal = message
            self._fail(page, message)
        except ValueError as error:
            self._fail(page, self.settings.scrub(str(error)))
        else:
            page.done += 1
            if page.done == len(page.plan.chunks) and not page.outcome.error:
                self._finish(page)
        self.chunks_done += 1
        self._report()

    def _send_whole(self, page: _PageRun) -> None:
        """The kept old Chinese fails the page's checks (a flaw from before, or a hand edit):
        send every section again, each with its old Chinese as reference, ahead of the rest."""
        page.sent_whole, page.done = True, 0
        page.plan = plan_page(page.job.english, page.job.previous, whole=True)
        page.plan.cut(self.chunk_size)
        page.outcome.parts_kept, page.outcome.parts_sent = 0, len(page.plan.parts)
        self.chunks_total += len(page.plan.chunks)
        self.retries_whole += [asyncio.ensure_future(self._run_chunk(chunk, page, -1)) for chunk in page.plan.chunks]

    def _fail(self, page: _PageRun, message: str) -> None:
        if not page.outcome.error:
            page.outcome.error = message
            self.pages_finished += 1

    def _still_wanted(self, page: _PageRun) -> None:
        if page.outcome.error:
            raise _PageFailed()
        if self.fatal:
            self._fail(page, f"{'not attempted' if not page.outcome.requests else 'stopped'}: {self.fatal}")
            raise _PageFailed()

    async def _translate_chunk(self, chunk: Chunk, page: _PageRun, rank: int) -> str:
        """One chunk, retried with the rejection fed back until it passes the chunk checks."""
        messages = [{"role": "system", "content": self.system}, {"role": "user", "content": chunk.request}]
        problems: list[str] = []
        for attempt in range(self.settings.retries + 1):
            if attempt:
                messages = messages[:2] + [{"role": "user", "content": retry_note(problems)}]
            reply, finish = await self._chat(messages, page, rank)
            problems = chunk.problems(reply, finish)
            if not problems:  # its rendered HTML must match the English chunk's but for text
                problems = markup_differences(
                    chunk.html(chunk.document, self.renderer), chunk.html(reply, self.renderer)
                )
            if not problems:
                return reply
        raise ValueError("; ".join(problems))

    async def _chat(self, messages: list[dict], page: _PageRun, rank: int) -> tuple[str, str]:
        """One completion through the limiter, retrying what may pass on a later try."""
        extra = {"thinking": {"type": "disabled"}} if self.settings.thinking_disabled else None
        failures = overloads = attempts = 0
        while True:
            self._still_wanted(page)
            epoch = await self.limiter.acquire(rank)
            try:
                self._still_wanted(page)
                attempts += 1
                page.outcome.requests += 1
                response = await self.client.chat.completions.create(
                    model=self.settings.model,
                    messages=messages,
                    temperature=self.settings.temperature,
                    stream=False,
                    extra_body=extra,
                )
                self.limiter.succeeded()
            except openai.APIError as error:
                wait = retry_after_seconds(getattr(getattr(error, "response", None), "headers", None))
                status = getattr(error, "status_code", None)
                if status in OVERLOADED:
                    self.limiter.overloaded(epoch, wait)
                    overloads += 1
                else:
                    failures += 1
                if not _retryable(error) or failures > self.settings.retries or overloads > self.overload_retries:
                    raise RequestFailed(error, attempts) from None
            else:
                return self._account(response, page.outcome)
            finally:
                self.limiter.release()
            await asyncio.sleep(wait if wait is not None else backoff_seconds(failures + overloads))

    @staticmethod
    def _account(response, outcome: Outcome) -> tuple[str, str]:
        usage = response.usage
        if usage is not None:
            outcome.tokens_in += usage.prompt_tokens or 0
            outcome.tokens_out += usage.completion_tokens or 0
            cached = getattr(usage, "prompt_cache_hit_tokens", None)
            if cached is None and usage.prompt_tokens_details is not None:
                cached = usage.prompt_tokens_details.cached_tokens
            outcome.tokens_cached += cached or 0
        choice = response.choices[0] if response.choices else None
        if choice is None:
            return "", "missing"
        return choice.message.content or "", choice.finish_reason or ""

    def _finish(self, page: _PageRun) -> None:
        """Put the page together, check it whole, and write it atomically; or record why not."""
        rel = page.job.rel
        try:
            text = page.plan.assemble(self.settings.model, self.glossary.source_hash_of(rel))
        except ValueError as error:
            return self._fail(page, self.settings.scrub(str(error)))
        problems = structure_problems(page.job.english, parse_translation(text, rel), self.page_renderer)
        if problems and page.plan.parts_kept and not page.sent_whole:
            return self._send_whole(page)
        if problems:
            return self._fail(page, self.settings.scrub("; ".join(problems)))
        target = self.glossary.lang_dir(TARGET_LANG) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        # The image step picks the Chinese variant of each diagram, where one exists.
        written = parse_page(text, target, f"glossary/{TARGET_LANG}/{rel}", rel, TARGET_LANG)
        text, _ = fix_text(self.glossary, written)
        try:
            write_text_atomic(target, text)
        except OSError as error:
            return self._fail(page, f"cannot write glossary/{TARGET_LANG}/{rel}: {error.strerror or error}")
        page.outcome.status = "translated"
        self.pages_finished += 1


async def run_jobs(
    jobs: list[Job], settings: Settings, terminology: Terminology, glossary: Glossary, progress: Progress | None = None
) -> Run:
    """Translate `jobs`; outcomes in input order."""
    client = make_client(settings)
    try:
        await check_model(client, settings)
        return await Translator(client, settings, terminology, glossary).run(jobs, progress)
    finally:
        await client.close()


@dataclass
class Totals:
    translated: int = 0
    unchanged: int = 0
    failed: int = 0
    requests: int = 0
    tokens_in: int = 0
    tokens_cached: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    wall_seconds: float = 0.0


def totals(outcomes: list[Outcome], unchanged: int, prices: dict, seconds: float) -> Totals:
    total = Totals(unchanged=unchanged, wall_seconds=seconds)
    for outcome in outcomes:
        total.translated += outcome.status == "translated"
        total.failed += outcome.status != "translated"
        total.requests += outcome.requests
        total.tokens_in += outcome.tokens_in
        total.tokens_cached += outcome.tokens_cached
        total.tokens_out += outcome.tokens_out
    total.cost_usd = cost(total.tokens_in, total.tokens_cached, total.tokens_out, prices)
    return total


def cost(tokens_in: int, tokens_cached: int, tokens_out: int, prices: dict) -> float:
    return (
        (tokens_in - tokens_cached) * prices["input"] + tokens_cached * prices["cached"] + tokens_out * prices["output"]
    ) / 1e6


def estimate_jobs(jobs: list[Job], system: str, settings: Settings) -> list[tuple[int, int]]:
    """(input, output) tokens each job should take, without calling anything."""
    estimates = []
    for plan in plan_jobs(jobs, settings)[0]:
        sent = sum(estimate_tokens(system) + estimate_tokens(chunk.request) for chunk in plan.chunks)
        estimates.append((sent, int(sum(chunk.weight for chunk in plan.chunks) / 4 * 1.2)))
    return estimates
