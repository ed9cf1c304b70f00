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
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.chinese import HAN
from gpu_glossary.glossary import SOURCE_LANG, Glossary
from gpu_glossary.images.links import fix_text
from gpu_glossary.page import Page, parse_page
from gpu_glossary.page_limits import bad_characters, excesses
from gpu_glossary.render import Renderer
from gpu_glossary.terminology import Terminology
from gpu_glossary.translate.checks import ReplyRejected, markup_differences
from gpu_glossary.translate.chunks import Chunk, PagePlan, chunk_size, plan_page
from gpu_glossary.translate.comments import plan_comments, untranslated_blocks
from gpu_glossary.translate.defaults import Settings
from gpu_glossary.translate.gate import Gate, comment_problems
from gpu_glossary.translate.limiter import AdaptiveLimiter, retry_after_seconds
from gpu_glossary.translate.prompt import retry_note, system_message

TARGET_LANG = "zh"
OVERLOADED = (429, 503)  # the server asks for fewer requests at once
# DeepSeek's models think before answering unless told not to: time and tokens a translation does not need.
DEEPSEEK_WITHOUT_THINKING = {"thinking": {"type": "disabled"}}


class FatalAPIError(RuntimeError):
    """An error that will fail every request alike (bad key, no balance): stop the run."""


@dataclass
class Job:
    rel: str
    reason: str  # "missing", "stale", "forced" or "comments" (translate --comments)
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


def select_comment_jobs(glossary: Glossary, patterns: list[str]) -> list[Job]:
    """Current Chinese pages whose code still has comments of the English page (translate --comments)."""
    jobs = []
    for rel, english in sorted(glossary.pages[SOURCE_LANG].items()):
        if patterns and not any(_matches(rel, pattern, glossary) for pattern in patterns):
            continue
        chinese = glossary.page(TARGET_LANG, rel)
        if chinese is None or glossary.translation_status(TARGET_LANG, rel) != "current":
            continue
        if untranslated_blocks(english, chinese):
            jobs.append(Job(rel, "comments", english, chinese))
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
    cjk = len(HAN.findall(text))
    return int((len(text) - cjk) / 4 + cjk * 0.6) + 1


def plan_jobs(jobs: list[Job], settings: Settings) -> tuple[list[PagePlan], int]:
    """Each job's parts to keep and to send, cut into chunks of the run's chunk size (returned too)."""
    plans = [
        plan_comments(job.english, job.previous)
        if job.reason == "comments" and job.previous is not None
        else plan_page(job.english, job.previous if job.reason == "stale" else None)
        for job in jobs
    ]
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
    """A request that failed for good: the last error and how many attempts were made."""

    def __init__(self, error: Exception, attempts: int):
        super().__init__(str(error))
        self.error = error
        self.attempts = attempts


class DeadlineExceeded(Exception):
    """No complete reply within the request's deadline (--timeout): the server is silent, trickles
    bytes or sends blank lines while the request waits; another try would wait as long."""


class BadReply(Exception):
    """A reply that is not a chat completion (a proxy's HTML page, no choices, no text): retried."""


def describe_api_error(error: Exception, settings: Settings, attempts: int = 1) -> tuple[str, bool]:
    """A plain message for an API error, and whether it dooms every other request too."""
    status = getattr(error, "status_code", None)
    detail = settings.scrub(_error_detail(error))
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    if isinstance(error, DeadlineExceeded | openai.APITimeoutError):
        return f"no complete reply within {settings.timeout:g} s (--timeout), so not retried ({tries})", False
    if isinstance(error, BadReply):
        return f"{error} ({tries})", False
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
        self.gate = Gate(glossary, terminology, self.renderer)
        self.stop_at = float("inf")
        self.fatal: str | None = None
        self.progress: Progress | None = None
        self.chunks_total = self.chunks_done = self.pages_finished = 0
        self.chunk_size = settings.max_chars
        self.retries_whole: list[asyncio.Task] = []

    async def run(self, jobs: list[Job], progress: Progress | None = None) -> Run:
        """Every chunk of every page in one pool, longest first; each page written when all its chunks passed."""
        self.progress = progress
        self.stop_at = asyncio.get_running_loop().time() + self.settings.run_timeout
        plans, self.chunk_size = plan_jobs(jobs, self.settings)
        pages = [
            _PageRun(plan, job, Outcome(job.rel, job.reason), sent_whole=job.reason == "comments")  # never its prose
            for plan, job in zip(plans, jobs, strict=True)
        ]
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
        except ReplyRejected as rejection:
            self._fail(page, self.settings.scrub(str(rejection)))
        else:
            page.done += 1
            if page.done == len(page.plan.chunks) and not page.outcome.error:
                self._finish(page)
        self.chunks_done += 1
        self._report()

    def _send_whole(self, page: _PageRun, problems: list[str]) -> None:
        """The page put together fails the page's checks (a flaw in the kept old Chinese, a hand
        edit, or what only the whole page shows): send every section again, each with its old
        Chinese as reference and the rejection as a note, ahead of the rest."""
        page.sent_whole, page.done = True, 0
        page.plan = plan_page(page.job.english, page.job.previous, whole=True)
        page.plan.cut(self.chunk_size)
        for chunk in page.plan.chunks:
            chunk.note = problems
        page.outcome.parts_kept, page.outcome.parts_sent = 0, len(page.plan.parts)
        self.chunks_total += len(page.plan.chunks)
        self.retries_whole += [asyncio.ensure_future(self._run_chunk(chunk, page, -1)) for chunk in page.plan.chunks]

    def _fail(self, page: _PageRun, message: str) -> None:
        if not page.outcome.error:
            page.outcome.error = message
            self.pages_finished += 1

    def _time_left(self) -> float:
        return self.stop_at - asyncio.get_running_loop().time()

    def _still_wanted(self, page: _PageRun) -> None:
        if page.outcome.error:
            raise _PageFailed()
        if self._time_left() <= 0:
            self._fail(page, f"not finished within the run's {self.settings.run_timeout:g} s (--run-timeout)")
            raise _PageFailed()
        if self.fatal:
            self._fail(page, f"{'not attempted' if not page.outcome.requests else 'stopped'}: {self.fatal}")
            raise _PageFailed()

    async def _translate_chunk(self, chunk: Chunk, page: _PageRun, rank: int) -> str:
        """One chunk, retried with the rejection fed back until it passes the gate."""
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": self.system},
            {"role": "user", "content": chunk.request},
        ]
        problems: list[str] = list(chunk.note)
        for _ in range(self.settings.retries + 1):
            if problems:
                messages = messages[:2] + [{"role": "user", "content": retry_note(problems)}]
            reply, finish = await self._chat(messages, page, rank)
            problems = self.chunk_problems(chunk, reply, finish, page.job.english)
            if not problems:
                return reply
        raise ReplyRejected(problems)

    def chunk_problems(self, chunk: Chunk, reply: str, finish: str, english: Page) -> list[str]:
        """Everything wrong with a reply to one chunk; nothing is rendered before its bytes and
        shape are known to be safe."""
        bad = bad_characters(reply)
        if bad:
            codes = ", ".join(dict.fromkeys(code for _, code in bad))
            return [f"the reply holds control or invalid characters ({codes}): write plain text"]
        problems = chunk.problems(reply, finish)
        if problems:
            return problems
        excess = excesses(chunk.restored_text(reply))
        if excess:
            return [excess_.message for excess_ in excess]
        english_part, reply_part = chunk.pages(reply)
        problems = self.gate.code_problems(english_part, reply_part)
        if problems:
            return problems
        problems = markup_differences(chunk.html(chunk.document, self.renderer), chunk.html(reply, self.renderer))
        if problems:  # its rendered HTML must match the English chunk's but for text
            return problems
        return self.gate.text_problems(english_part, reply_part, whole_english=english) + comment_problems(
            english_part, reply_part
        )

    async def _chat(self, messages: list[ChatCompletionMessageParam], page: _PageRun, rank: int) -> tuple[str, str]:
        """One completion through the limiter, retrying what may pass on a later try."""
        extra = DEEPSEEK_WITHOUT_THINKING if self.settings.is_deepseek else None
        failures = overloads = attempts = 0
        while True:
            self._still_wanted(page)
            epoch = await self.limiter.acquire(rank)
            wait = None
            try:
                self._still_wanted(page)
                attempts += 1
                page.outcome.requests += 1
                try:
                    async with asyncio.timeout(min(self.settings.timeout, self._time_left())):
                        response = await self.client.chat.completions.create(
                            model=self.settings.model,
                            messages=messages,
                            temperature=self.settings.temperature,
                            stream=False,
                            extra_body=extra,
                        )
                except TimeoutError:
                    self._still_wanted(page)  # the run's own time is up: say so
                    raise RequestFailed(DeadlineExceeded(), attempts) from None
                except json.JSONDecodeError as error:
                    raise BadReply(_not_json(error.doc)) from None
                reply = self._account(response, page.outcome)
                self.limiter.succeeded()
                return reply
            except BadReply as error:
                failures += 1
                if failures > self.settings.retries:
                    raise RequestFailed(error, attempts) from None
            except openai.APIConnectionError as error:  # refused or reset: the server (or a proxy) is overloaded
                self.limiter.overloaded(epoch)
                overloads += 1
                if overloads > self.overload_retries:
                    raise RequestFailed(error, attempts) from None
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
            finally:
                self.limiter.release()
            await asyncio.sleep(wait if wait is not None else backoff_seconds(failures + overloads))

    @staticmethod
    def _account(response: ChatCompletion | str | bytes, outcome: Outcome) -> tuple[str, str]:
        """(text, finish reason) of a chat completion, its tokens counted; BadReply for any other shape."""
        if isinstance(response, str | bytes):  # openai hands back the text of a 200 that is not JSON
            raise BadReply(_not_json(response))
        try:
            usage = response.usage
            if usage is not None:
                outcome.tokens_in += usage.prompt_tokens or 0
                outcome.tokens_out += usage.completion_tokens or 0
                cached = getattr(usage, "prompt_cache_hit_tokens", None)
                if cached is None and usage.prompt_tokens_details is not None:
                    cached = usage.prompt_tokens_details.cached_tokens
                outcome.tokens_cached += cached or 0
            choices = response.choices
        except (AttributeError, TypeError) as error:  # fields of the wrong type: openai does not validate
            raise BadReply(f"the reply is not a chat completion ({error})") from None
        if not choices:
            raise BadReply("the reply has no choices (an empty 'choices' list): the server produced nothing")
        choice = choices[0]
        content = getattr(getattr(choice, "message", None), "content", None)
        if not isinstance(content, str):
            raise BadReply("the reply's first choice has no text (message.content is missing)")
        return content, str(getattr(choice, "finish_reason", None) or "")

    def _finish(self, page: _PageRun) -> None:
        """Put the page together, pass it through the gate whole, and write it atomically; or record why not."""
        rel = page.job.rel
        target = self.glossary.lang_dir(TARGET_LANG) / rel
        try:
            text = page.plan.assemble(self.settings.model, self.glossary.source_hash_of(rel))
        except ReplyRejected as rejection:
            return self._fail(page, self.settings.scrub(str(rejection)))
        # The image step picks the Chinese variant of each diagram, where one exists.
        text, _ = fix_text(self.glossary, parse_page(text, target, f"glossary/{TARGET_LANG}/{rel}", rel, TARGET_LANG))
        written = parse_page(text, target, f"glossary/{TARGET_LANG}/{rel}", rel, TARGET_LANG)
        if page.job.reason == "comments":
            problems = self.gate.comment_page_problems(page.job.english, written)
        else:
            problems = self.gate.page_problems(page.job.english, written)
        if problems and not page.sent_whole:
            return self._send_whole(page, problems)
        if problems:
            return self._fail(page, self.settings.scrub("; ".join(problems)))
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            write_text_atomic(target, text)
        except (OSError, UnicodeError) as error:
            return self._fail(
                page, f"cannot write glossary/{TARGET_LANG}/{rel}: {getattr(error, 'strerror', None) or error}"
            )
        page.outcome.status = "translated"
        self.pages_finished += 1


def _not_json(body: str | bytes) -> str:
    start = body[:60] if isinstance(body, str) else body[:60].decode("utf-8", "replace")
    return (
        f"the server answered 200 with a body that is not JSON ({start.strip()!r}…): "
        "usually a proxy's or gateway's page; retried"
    )


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
