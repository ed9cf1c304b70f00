"""A local OpenAI-compatible server for the translator's tests and benchmark.

It answers `GET /models` and `POST /chat/completions` on 127.0.0.1 over real HTTP, so the
real `openai` client is exercised. It "translates" deterministically (each English word
becomes two Chinese characters chosen by a hash, placeholders and Markdown untouched),
counts tokens by DeepSeek's rule of thumb, simulates prefix caching and time (a fixed
latency per request plus the reply's tokens at a given rate, as a model streams them),
can take at most N requests at once (429 above that), and can be told to misbehave per
page: rate limits, server errors, hangs, cut-off or wrapped replies, broken
placeholders, injected HTML or event-handler attribute lists, empty or echoed replies,
bad key, no balance; replies in Japanese or Traditional Chinese, with links moved between
paragraphs, changed numbers, a lone surrogate or a NUL, added text, URLs or attribute lists, a
bad or duplicate title, an avoided term, a run of `[`, comments broken or left in English;
200s that are HTML or have no choices, bodies that trickle or send blank lines, and connection
resets (also beyond N requests at once). Self-contained on purpose: it imports nothing from the package it tests.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PLACEHOLDER = re.compile(r"(⟦P\d+⟧)")
CJK = re.compile(r"[\u3400-\u9fff]")
# A line of translated prose: not a code comment (after a placeholder), front matter, heading, table, list or quote.
PROSE_LINE = re.compile(r"(?m)^(?![ \t]*(?:⟦P|---|[a-z_]+:|#|\||-|\d+\.|!!!|>))(?=.*[\u4e00-\u9fff]).+$")
NEW_TEXT = "=== New English text ===\n"
OLD_TEXT = "\n\n=== Existing Chinese translation ==="
WORD = re.compile(r"(?<!\w)[A-Za-z][A-Za-z'’-]*(?!\w)")  # not glued to digits: H100, sm_90 stay
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
    # replies the translation gate must refuse
    "japanese",
    "traditional",
    "swap_links",
    "numbers",
    "surrogate",
    "nul",
    "chatty",
    "bare_url",
    "literal_attribute",
    "html_title",
    "avoided_variant",
    "brackets",
    "duplicate_title",
    "split_comment",
    "english_comments",
    # replies that are not chat completions, and transports that never finish
    "html_200",
    "html_200_as_json",
    "no_choices",
    "trickle",
    "blank_lines",
    "reset",
)
# Common Simplified characters (none of them a numeral): what the fake translation is written in,
# so a faithful fake reply passes the gate's Simplified-script check. Taken once from the glossary's pages.
ALPHABET = (
    "的个程数线存是在用时每内块分上核行器有不中能以函和它这为次动同到束运算量要序计可多只加出把指都作会间"
    "本了成之字或所对据通而于与代条编件下共度就后令工调并启最发大寄流机率享值驱节码载来其部区文读主译里定"
    "设自也拷模限步实常相带全从更取等位式贝需理写没及单果组版例结过整误如开合入因前法使接由样速重让见面心"
    "缓向执问比张些参进射标完元小宽示构备道期力化格少制们列新页者留性各原第处种点地么那访占给乘放当按包做"
    "变容型测此输再何配周支得库保倍被路约回局置错还则起持查几表片正阵方链即空应资统网层具显储术建什看告矩"
    "达任生考无哪经长耗操提现换己必料形直活素明簇子报快硬规环但体钟高求已才传受先图段你选类手某很引低待记"
    "决须级另交状意装循他好峰说析冲水布功连独随检册系名立源较号顶搬控别延语址供架迟始驻芯屏障外像除命仍复"
    "返逐打融态特目板然端利平屋请销差锁跃价关际档未增录总波管闲着预切失停溢效依归排确互该改转反集满维异事"
    "身径份注认致且安慢续擎近卡越解含信软积去固精情填围扇忙许基叠针往台吞吐称侧负真旧默秒产半普义头项属范"
    "花乎我索超移题优顺累收否非远降映界赖口况却途找足根走播择试充盖论热均准务隐兼言缩获掉混印采够断顿密双"
    "划尾藏减展批齐掩户边权强"
)
# Scale words a faithful translation keeps with their number (the fake writes them as they are).
KEPT_WORDS = frozenset({"thousand", "million", "billion", "trillion"})


def fake_translate(document: str) -> str:
    """Deterministic 'Chinese': every English word becomes two CJK characters, "…" becomes “…”."""

    def one_word(text: str) -> str:
        if text.lower() in KEPT_WORDS:
            return text
        value = zlib.crc32(text.lower().encode())
        return ALPHABET[value % len(ALPHABET)] + ALPHABET[(value >> 9) % len(ALPHABET)]

    def word(match: re.Match) -> str:
        # each part of a compound on its own: "70-billion-parameter" keeps its scale word
        return "-".join(one_word(part) if part else part for part in match.group(0).split("-"))

    def prose(part: str) -> str:
        return WORD.sub(word, part)

    out = []
    for line in document.split("\n"):
        key = FRONT_KEY.match(line)
        prefix, rest = (line[: key.end()], line[key.end() :]) if key else ("", line)
        parts = PLACEHOLDER.split(rest)
        body = "".join(p if PLACEHOLDER.fullmatch(p) else prose(p) for p in parts)
        # Chinese quotes, as a model writes them, also around a placeholder ("[a link]" is "⟦P1⟧")
        out.append(prefix + (body if key else QUOTED.sub(r"“\1”", body)))
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


def _on_prose_lines(reply: str, change, count: int = 0) -> str:
    """`change(line)` on each line of translated prose (not code, front matter, headings or tables)."""
    return PROSE_LINE.sub(lambda m: change(m.group(0)), reply, count=count)


def _swap_links_between_paragraphs(reply: str) -> str:
    """The link targets of the first two paragraphs that have links, exchanged."""
    paragraphs = reply.split("\n\n")
    found = [i for i, p in enumerate(paragraphs) if re.search(r"\]\(⟦P\d+⟧\)", p)]
    if len(found) < 2:
        return reply
    first, second = (re.search(r"\]\((⟦P\d+⟧)\)", paragraphs[i]).group(1) for i in found[:2])
    paragraphs[found[0]] = paragraphs[found[0]].replace(first, "⟦SWAP⟧", 1)
    paragraphs[found[1]] = paragraphs[found[1]].replace(second, first, 1)
    paragraphs[found[0]] = paragraphs[found[0]].replace("⟦SWAP⟧", second, 1)
    return "\n\n".join(paragraphs)


def _every_number_plus_one(reply: str) -> str:
    parts = PLACEHOLDER.split(reply)
    return "".join(
        p if PLACEHOLDER.fullmatch(p) else re.sub(r"(?<![\w.])\d+", lambda m: str(int(m.group(0)) + 1), p)
        for p in parts
    )


def _with_title(reply: str, title: str) -> str:
    return re.sub(r"(?m)^title:.*$", lambda _: f"title: {title}", reply, count=1)


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
        over_capacity: str = "429",
    ):
        super().__init__(("127.0.0.1", port), _Handler)
        self.latency = latency
        self.tokens_per_second = tokens_per_second
        self.max_concurrent = max_concurrent  # 0: no limit; else refuse above this many chat requests at once
        self.over_capacity = over_capacity  # how: "429", or "reset" (the connection is reset, as by a proxy)
        self.title = "核函数"  # the title the "html_title" fault decorates (the kernel page's, for duplicates)
        self.variant = "经线"  # the avoided terminology variant the "avoided_variant" fault writes
        self.trickle_seconds = 0.5  # between bytes of "trickle", and between the blank lines of "blank_lines"
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

    def _reset(self) -> None:
        """Close the connection with a TCP reset (SO_LINGER 0), as an overloaded proxy does."""
        self.close_connection = True
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()

    def _raw(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _slowly(self, body: bytes, blank_lines: bool) -> None:
        """A 200 whose body comes a byte at a time (or after blank lines, DeepSeek's keep-alive
        while a request waits), chunked, for as long as `hang_seconds` allows and then whole."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        deadline = time.monotonic() + self.server.hang_seconds
        try:
            pieces = iter(body)
            while time.monotonic() < deadline:
                piece = b"\n" if blank_lines else bytes([next(pieces, 32)])
                self.wfile.write(b"1\r\n" + piece + b"\r\n")
                self.wfile.flush()
                time.sleep(self.server.trickle_seconds)
            self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
        except OSError:
            pass  # the client gave up, as it should

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
            if self.server.over_capacity == "reset":
                return self._reset()
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
        self._prompt = prompt
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
        if behaviour == "reset":
            return self._reset()
        if behaviour == "html_200":
            return self._raw(200, "text/html", b"<html><body><h1>502 Bad Gateway</h1></body></html>")
        if behaviour == "html_200_as_json":
            return self._raw(200, "application/json", b"<html><body><h1>502 Bad Gateway</h1></body></html>")
        reply, finish = self._reply(behaviour, document)
        self._complete(messages, reply, finish, behaviour)

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
        return self._faulty(behaviour, reply), "stop"

    def _comments_left_english(self, reply: str) -> str:
        """The translation, but with each comment of a code block as the English had it."""
        document = page_document(self._prompt)
        english = dict(re.findall(r"(⟦P\d+⟧)([^⟦\n]*[A-Za-z][^⟦\n]*)$", document, re.M))
        return re.sub(
            r"(⟦P\d+⟧)([^⟦\n]+)$", lambda m: m.group(1) + english.get(m.group(1), m.group(2)), reply, flags=re.M
        )

    def _faulty(self, behaviour: str, reply: str) -> str:
        """A reply with one of the faults the translation gate refuses."""
        faults = {
            "japanese": lambda: _on_prose_lines(
                reply, lambda line: re.sub(r"([\u4e00-\u9fff]{2})", r"\1の", line) + "です。"
            ),
            "traditional": lambda: _on_prose_lines(reply, lambda line: "這個線程區塊" + line),
            "swap_links": lambda: _swap_links_between_paragraphs(reply),
            "numbers": lambda: _every_number_plus_one(reply),
            "surrogate": lambda: _on_prose_lines(reply, lambda line: line + "\ud800", count=1),
            "nul": lambda: _on_prose_lines(reply, lambda line: line + "\x00", count=1),
            "chatty": lambda: _on_prose_lines(
                reply, lambda line: "Sure, here is the translation you asked for: " + line, count=1
            ),
            "bare_url": lambda: _on_prose_lines(reply, lambda line: line + " https://evil.example/more", count=1),
            "literal_attribute": lambda: _on_prose_lines(
                reply, lambda line: line + ' {: onclick="alert(1)" } 的', count=1
            ),
            "html_title": lambda: _with_title(reply, f"<b>{self.server.title}</b>"),
            "duplicate_title": lambda: _with_title(reply, self.server.title),
            "avoided_variant": lambda: _on_prose_lines(reply, lambda line: line + self.server.variant, count=1),
            "brackets": lambda: _on_prose_lines(reply, lambda line: line + "[" * 20000, count=1),
            # a comment's words broken over two lines: the second is no longer a comment
            "split_comment": lambda: re.sub(r"(⟧[^⟦\n]+?) ", r"\1\n", reply, count=1),
            "english_comments": lambda: self._comments_left_english(reply),
        }
        return faults[behaviour]() if behaviour in faults else reply

    def _complete(self, messages: list[dict], reply: str, finish: str, behaviour: str = "ok") -> None:
        prompt_tokens = sum(count_tokens(m.get("content") or "") for m in messages)
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        with self.server.lock:
            cached = count_tokens(system) if system in self.server.seen_prefixes else 0
            self.server.seen_prefixes.add(system)
        completion_tokens = count_tokens(reply)
        time.sleep(self.server.reply_seconds(reply))
        payload = {
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
        }
        if behaviour == "no_choices":
            payload["choices"] = []
        if behaviour in ("trickle", "blank_lines"):
            return self._slowly(json.dumps(payload).encode(), blank_lines=behaviour == "blank_lines")
        if behaviour == "surrogate":  # only JSON's \u escapes can carry a lone surrogate
            body = json.dumps(payload).encode()
            return self._raw(200, "application/json", body)
        self._json(200, payload)
