"""A local OpenAI-compatible server for the translator's tests and benchmark.

It answers `GET /models` and `POST /chat/completions` on 127.0.0.1 over real HTTP, so the
real `openai` client is exercised. It "translates" deterministically (each English word
becomes two Chinese characters chosen by a hash, placeholders and Markdown untouched),
counts tokens by DeepSeek's rule of thumb, simulates prefix caching and time (a fixed
latency per request plus the reply's tokens at a given rate, as a model streams them),
can take at most N requests at once (429 above that), and can be told to misbehave per
page: rate limits, server errors, hangs, cut-off or wrapped replies, broken
placeholders, injected HTML or event-handler attribute lists, empty or echoed replies,
bad key, no balance. Self-contained on purpose: it imports nothing from the package it tests.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PLACEHOLDER = re.compile(r"(⟦P\d+⟧)")
CJK = re.compile(r"[\u3400-\u9fff]")
NEW_TEXT = "=== New English text ===\n"
OLD_TEXT = "\n\n=== Existing Chinese translation ==="
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
FRONT_KEY = re.compile(r"^(title|summary|aliases):")
QUOTED = re.compile(r'"([^"\n]*)"')

BEHAVIOURS = (
    "ok",
    "429",
    "500",
    "503",
    "hang",
    "drop",
    "length",
    "fenced",
    "preamble",
    "drop_code",
    "alter_code",
    "change_url",
    "script",
    "attribute",
    "empty",
    "echo",
    "400",
    "401",
    "402",
    "422",
)


def fake_translate(document: str) -> str:
    """Deterministic 'Chinese': every English word becomes two CJK characters, "…" becomes “…”."""

    def word(match: re.Match) -> str:
        value = zlib.crc32(match.group(0).lower().encode())
        return chr(0x4E00 + value % 0x4000) + chr(0x4E00 + (value >> 14) % 0x4000)

    def prose(part: str, in_body: bool) -> str:
        part = WORD.sub(word, part)
        return QUOTED.sub(r"“\1”", part) if in_body else part  # Chinese quotes, as a model writes them

    out = []
    for line in document.split("\n"):
        key = FRONT_KEY.match(line)
        prefix, rest = (line[: key.end()], line[key.end() :]) if key else ("", line)
        parts = PLACEHOLDER.split(rest)
        out.append(prefix + "".join(p if PLACEHOLDER.fullmatch(p) else prose(p, not key) for p in parts))
    return "\n".join(out)


def count_tokens(text: str) -> int:
    """DeepSeek's rule of thumb: about 0.3 token per English character, 0.6 per Chinese one."""
    cjk = len(CJK.findall(text))
    return int(0.3 * (len(text) - cjk) + 0.6 * cjk) + 1


def page_document(prompt: str) -> str:
    """The text the translator sent: after the instruction line, before any earlier translation."""
    if NEW_TEXT in prompt:
        return prompt.split(NEW_TEXT, 1)[1].split(OLD_TEXT, 1)[0]
    return prompt.split("\n\n", 1)[1] if "\n\n" in prompt else prompt


def _with_handler_on_a_paragraph(reply: str) -> str:
    """`{: onclick=… }` under the first paragraph of the body: the page's own paragraph gets a handler."""
    lines = reply.split("\n")
    start = lines.index("---", 1) + 1 if lines and lines[0] == "---" and "---" in lines[1:] else 0
    for index in range(start, len(lines) - 1):
        line = lines[index].strip()
        if line and not lines[index + 1].strip() and not line.startswith(("⟦", "#", "-", "|", "!", ">", "*")):
            lines.insert(index + 1, '{: onclick="alert(7)" }')
            break
    return "\n".join(lines)


class FakeOpenAI(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # hundreds of clients connect at once; the default backlog of 5 would stall them

    def __init__(
        self,
        port: int = 0,
        latency: float = 0.0,
        tokens_per_second: float = 0.0,
        models=("deepseek-flash", "deepseek-pro"),
        hang_seconds: float = 30.0,
        max_concurrent: int = 0,
        retry_after_ms: int = 1000,
    ):
        super().__init__(("127.0.0.1", port), _Handler)
        self.latency = latency
        self.tokens_per_second = tokens_per_second
        self.max_concurrent = max_concurrent  # 0: no limit; else 429 above this many chat requests at once
        self.retry_after_ms = retry_after_ms
        self.active = 0
        self.peak_active = 0
        self.rejected = 0
        self.models = list(models)
        self.hang_seconds = hang_seconds
        self.plan: dict[str, list[str]] = {}  # substring of the page -> behaviours, one per request
        self.default = "ok"
        self.requests: list[dict] = []
        self.seen_prefixes: set[str] = set()
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def chat_requests(self) -> list[dict]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def reply_seconds(self, reply: str) -> float:
        """How long a request answered with `reply` takes: latency, then its tokens at the given rate."""
        seconds = self.latency
        if self.tokens_per_second:
            seconds += count_tokens(reply) / self.tokens_per_second
        return seconds

    def _admit(self) -> bool:
        with self.lock:
            if self.max_concurrent and self.active >= self.max_concurrent:
                self.rejected += 1
                return False
            self.active += 1
            self.peak_active = max(self.peak_active, self.active)
            return True

    def _leave(self) -> None:
        with self.lock:
            self.active -= 1

    def behaviour_for(self, document: str) -> str:
        with self.lock:
            for needle, behaviours in self.plan.items():
                if needle in document and behaviours:
                    return behaviours.pop(0)
        return self.default

    def handle_error(self, request, client_address) -> None:
        """A client that gave up (timed out, interrupted) is expected here: no traceback for it."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def start(self) -> FakeOpenAI:
        # As gpu_glossary.site.serve.run_in_background, repeated: this file imports nothing from the package.
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def _json(self, status: int, payload: dict, headers: dict | None = None) -> None:
        body = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, headers: dict | None = None) -> None:
        self._json(status, {"error": {"message": message, "type": "error", "code": status}}, headers)

    def do_GET(self):
        self.server.requests.append(
            {"path": self.path, "method": "GET", "authorization": self.headers.get("Authorization")}
        )
        if self.path.rstrip("/").endswith("/models"):
            self._json(
                200,
                {
                    "object": "list",
                    "data": [{"id": m, "object": "model", "owned_by": "test"} for m in self.server.models],
                },
            )
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        record = {
            "path": self.path,
            "method": "POST",
            "body": request,
            "authorization": self.headers.get("Authorization"),
        }
        self.server.requests.append(record)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._error(404, f"no route {self.path}")
        if not self.server._admit():
            record["behaviour"] = "over capacity"
            return self._error(
                429,
                "Rate limit reached: too many requests at once",
                {
                    "Retry-After": str(max(1, round(self.server.retry_after_ms / 1000))),
                    "retry-after-ms": str(self.server.retry_after_ms),
                },
            )
        started = time.monotonic()
        try:
            self._answer(request.get("messages", []), record)
        finally:
            record["seconds"] = time.monotonic() - started
            self.server._leave()

    def _answer(self, messages: list[dict], record: dict) -> None:
        prompt = next((m["content"] for m in messages if m["role"] == "user"), "")
        document = page_document(prompt)
        behaviour = self.server.behaviour_for(document)
        record["behaviour"] = behaviour
        if behaviour == "hang":
            time.sleep(self.server.latency + self.server.hang_seconds)
            return self._error(504, "too late")
        if behaviour == "drop":
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if behaviour == "429":
            return self._error(429, "Rate limit reached", {"Retry-After": "1"})
        if behaviour in ("500", "503", "400", "422"):
            return self._error(int(behaviour), f"simulated {behaviour}")
        if behaviour == "401":
            key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            return self._error(401, f"Authentication Fails, your api key: {key} is invalid")
        if behaviour == "402":
            return self._error(402, "Insufficient Balance")
        reply, finish = self._reply(behaviour, document)
        self._complete(messages, reply, finish)

    def _reply(self, behaviour: str, document: str) -> tuple[str, str]:
        if behaviour == "echo":
            return document, "stop"
        if behaviour == "empty":
            return "", "stop"
        reply = fake_translate(document)
        if behaviour == "length":
            return reply[: len(reply) // 2], "length"
        if behaviour == "fenced":
            return f"```markdown\n{reply}\n```", "stop"
        if behaviour == "preamble":
            return f"Here is the translation:\n\n{reply}", "stop"
        if behaviour == "script":
            return reply + "\n<script>alert('x')</script>\n", "stop"
        if behaviour == "attribute":
            return _with_handler_on_a_paragraph(reply), "stop"
        if behaviour in ("drop_code", "alter_code"):
            replacement = "" if behaviour == "drop_code" else "```cuda\n// changed by the model\n```"
            return re.sub(r"(?m)^[ \t]*⟦P\d+⟧[ \t]*$", replacement, reply, count=1), "stop"
        if behaviour == "change_url":
            return re.sub(r"\]\(⟦P\d+⟧\)", "](https://evil.example/)", reply, count=1), "stop"
        return reply, "stop"

    def _complete(self, messages: list[dict], reply: str, finish: str) -> None:
        prompt_tokens = sum(count_tokens(m.get("content") or "") for m in messages)
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        with self.server.lock:
            cached = count_tokens(system) if system in self.server.seen_prefixes else 0
            self.server.seen_prefixes.add(system)
        completion_tokens = count_tokens(reply)
        time.sleep(self.server.reply_seconds(reply))
        self._json(
            200,
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": "test",
                "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": reply}}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                    "prompt_cache_hit_tokens": cached,
                    "prompt_cache_miss_tokens": prompt_tokens - cached,
                },
            },
        )
