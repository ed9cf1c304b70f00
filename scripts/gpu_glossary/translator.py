"""Translate English pages into Chinese through any OpenAI-compatible chat API.

Only pages whose translation is missing or stale are sent (unchanged pages cost nothing);
requests run concurrently under a bound; every reply is checked before it may replace a
page, and a page is written atomically or not at all. The API key never leaves the
client: messages that could echo it are scrubbed.
"""

from __future__ import annotations

import asyncio
import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path

import openai

from .atomic import write_text_atomic
from .glossary import SOURCE_LANG, Glossary
from .images import fix_text
from .page import SOURCE_HASH_KEY, Page, front_matter_block, parse_page
from .prompt import retry_note, system_message, translate_request, update_request
from .protect import PLACEHOLDER, ProtectedText
from .render import Renderer
from .terminology import Terminology
from .translation_checks import clean_reply, markup_differences, parse_translation, structure_problems

TARGET_LANG = "zh"
TRANSLATED_KEYS = ("title", "summary", "aliases")
MODEL_KEY = "translation_model"
DEFAULT_BASE_URL = "https://api.deepseek.com"
DEFAULT_MODEL = "deepseek-flash"
# USD per million tokens, for estimates only (DeepSeek's published list prices; override
# with --price-input/--price-cached/--price-output for another provider).
DEFAULT_PRICES = {"input": 0.28, "cached": 0.028, "output": 0.42}


class FatalAPIError(RuntimeError):
    """An error that will fail every request alike (bad key, no balance): stop the run."""


@dataclass
class Settings:
    api_key: str = ""
    base_url: str = DEFAULT_BASE_URL
    model: str = DEFAULT_MODEL
    concurrency: int = 8
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


# -- documents --------------------------------------------------------------------------
def _translatable_meta(page: Page) -> dict:
    return {key: page.meta[key] for key in TRANSLATED_KEYS if key in page.meta}


def split_at_headings(text: str, max_chars: int) -> list[str]:
    """Split at `## ` headings into pieces of at most about max_chars; ''.join(pieces) == text."""
    starts = [0] + [m.start() + 1 for m in re.finditer(r"\n(?=#{1,2} )", text)]
    sections = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    chunks: list[str] = []
    for section in sections:
        if chunks and len(chunks[-1]) + len(section) <= max_chars:
            chunks[-1] += section
        else:
            chunks.append(section)
    return chunks or [text]


def estimate_tokens(text: str) -> int:
    """A rough token count: ~4 Latin characters or ~1.6 Chinese characters per token."""
    cjk = len(re.findall(r"[\u3400-\u9fff]", text))
    return int((len(text) - cjk) / 4 + cjk * 0.6) + 1


def compose_page(english: Page, translated: dict, body: str, model: str, source_hash: str) -> str:
    """The Chinese page: English front matter keys in order, translated values, hash and model."""
    meta = {}
    for key, value in english.meta.items():
        if key in (SOURCE_HASH_KEY, MODEL_KEY):
            continue
        meta[key] = translated.get(key, value) if key in TRANSLATED_KEYS else value
    meta[SOURCE_HASH_KEY] = source_hash
    meta[MODEL_KEY] = model
    return front_matter_block(meta) + "\n" + body.lstrip("\n")


@dataclass
class PreparedPage:
    """One page made ready for the model: placeholders, chunks and their reference text."""

    protected: ProtectedText
    chunks: list[str]
    references: list[str | None]


def prepare(job: Job, max_chars: int) -> PreparedPage:
    protected = ProtectedText()
    body = protected.protect(job.english.body)
    chunks = split_at_headings(body, max_chars)
    chunks[0] = front_matter_block(_translatable_meta(job.english)) + "\n" + chunks[0]
    references: list[str | None] = [None] * len(chunks)
    if job.previous is not None and job.reason == "stale" and not job.previous.problems:
        previous = front_matter_block(_translatable_meta(job.previous)) + "\n" + protected.protect_reference(job.previous.body)
        if len(chunks) == 1:
            references = [previous]
        else:
            sections = split_at_headings(previous, 1)
            for index, chunk in enumerate(chunks):
                wanted = set(PLACEHOLDER.findall(chunk))
                matching = [s for s in sections if set(PLACEHOLDER.findall(s.split("\n", 1)[0])) & wanted]
                references[index] = "".join(matching) or None
    return PreparedPage(protected, chunks, references)


# -- talking to the API -----------------------------------------------------------------
def make_client(settings: Settings) -> openai.AsyncOpenAI:
    # The client retries 408/409/429/5xx, timeouts and dropped connections with
    # exponential backoff and jitter, honouring Retry-After; never 400/401/402/422.
    return openai.AsyncOpenAI(api_key=settings.api_key, base_url=settings.base_url,
                              timeout=settings.timeout, max_retries=settings.retries)


def describe_api_error(error: Exception, settings: Settings) -> tuple[str, bool]:
    """A plain message for an API error, and whether it dooms every other request too."""
    status = getattr(error, "status_code", None)
    detail = settings.scrub(_error_detail(error))
    if isinstance(error, openai.APITimeoutError):
        return f"timed out after {settings.timeout:g} s ({settings.retries} retries)", False
    if isinstance(error, openai.APIConnectionError):
        return f"connection failed ({settings.retries} retries): {detail}", False
    if status == 401:
        return "the API rejected the key (401): check DEEPSEEK_API_KEY", True
    if status == 402:
        return "insufficient balance (402): top up the account of this API key", True
    if status == 403:
        return f"access denied (403): {detail}", True
    if status == 404:
        return f"not found (404): check --base-url and --model: {detail}", True
    if status == 429:
        return f"rate limited (429) after {settings.retries} retries: {detail}", False
    if status in (400, 422):
        return f"the API rejected the request ({status}): {detail}", False
    if status is not None and status >= 500:
        return f"server error ({status}) after {settings.retries} retries: {detail}", False
    return settings.scrub(f"{type(error).__name__}: {detail}"), False


def _error_detail(error: Exception) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(error, "message", None) or error)[:300]


async def check_model(client: openai.AsyncOpenAI, settings: Settings) -> None:
    """Fail early, with the list of models, when the model does not exist there."""
    try:
        models = [model.id async for model in client.models.list()]
    except openai.APIError as error:
        message, _ = describe_api_error(error, settings)
        raise FatalAPIError(f"cannot list the models of {settings.base_url}: {message}") from None
    if settings.model not in models:
        raise FatalAPIError(f"model '{settings.model}' does not exist at {settings.base_url}; "
                            f"it offers: {', '.join(sorted(models)) or 'nothing'} (choose one with --model)")


class Translator:
    """Translates jobs; one instance per run, shared by the concurrent tasks."""

    def __init__(self, client: openai.AsyncOpenAI, settings: Settings, terminology: Terminology, glossary: Glossary):
        self.client = client
        self.settings = settings
        self.system = system_message(terminology)
        self.glossary = glossary
        self.renderer = Renderer.for_language(glossary.root, TARGET_LANG)
        self.fatal: str | None = None

    async def chat(self, messages: list[dict], outcome: Outcome) -> tuple[str, str]:
        extra = {"thinking": {"type": "disabled"}} if self.settings.thinking_disabled else None
        outcome.requests += 1
        response = await self.client.chat.completions.create(
            model=self.settings.model, messages=messages, temperature=self.settings.temperature,
            stream=False, extra_body=extra)
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

    async def translate_chunk(self, request: str, first: bool, expected: list[str], outcome: Outcome,
                              english: str, protected: ProtectedText) -> str:
        """One chunk, retried with the rejection fed back until it passes the chunk checks,
        its rendered HTML matching the English chunk's (`english`, with placeholders) but for text."""
        messages = [{"role": "system", "content": self.system}, {"role": "user", "content": request}]
        problems: list[str] = []
        for attempt in range(self.settings.retries + 1):
            if attempt:
                messages = messages[:2] + [{"role": "user", "content": retry_note(problems)}]
            reply, finish = await self.chat(messages, outcome)
            problems = chunk_problems(reply, finish, first, expected)
            text = clean_reply(reply, front_matter=first) if not problems else ""
            if not problems:
                problems = markup_differences(self.chunk_html(english, first, protected),
                                              self.chunk_html(text, first, protected))
            if not problems:
                return text
        raise ValueError("; ".join(problems))

    def chunk_html(self, chunk: str, first: bool, protected: ProtectedText) -> str:
        """The HTML a chunk renders to, placeholders filled in and (first chunk) front matter left out."""
        text = protected.fill(chunk)
        return self.renderer.html(parse_translation(text, "chunk.md").body if first else text)

    async def translate(self, job: Job) -> Outcome:
        outcome = Outcome(job.rel, job.reason)
        if self.fatal:
            outcome.error = f"not attempted: {self.fatal}"
            return outcome
        try:
            text = await self._translate_page(job, outcome)
        except openai.APIError as error:
            message, fatal = describe_api_error(error, self.settings)
            if fatal:
                self.fatal = message
            outcome.error = message
            return outcome
        except ValueError as error:
            outcome.error = self.settings.scrub(str(error))
            return outcome
        target = self.glossary.lang_dir(TARGET_LANG) / job.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        # The image step picks the Chinese variant of each diagram, where one exists.
        written = parse_page(text, target, f"glossary/{TARGET_LANG}/{job.rel}", job.rel, TARGET_LANG)
        text, _ = fix_text(self.glossary, written)
        write_text_atomic(target, text)
        outcome.status = "translated"
        return outcome

    async def _translate_page(self, job: Job, outcome: Outcome) -> str:
        prepared = prepare(job, self.settings.max_chars)
        replies = []
        for index, (chunk, reference) in enumerate(zip(prepared.chunks, prepared.references)):
            request = update_request(chunk, reference) if reference else translate_request(chunk)
            expected = PLACEHOLDER.findall(chunk)
            replies.append(await self.translate_chunk(request, index == 0, expected, outcome, chunk, prepared.protected))
        joined = "".join(replies)
        head = parse_translation(joined, job.rel)
        if head.problems:
            raise ValueError("; ".join(p.message for p in head.problems))
        body = prepared.protected.restore(head.body)
        translated_meta = {key: head.meta[key] for key in TRANSLATED_KEYS if key in head.meta}
        text = compose_page(job.english, translated_meta, body, self.settings.model,
                            self.glossary.source_hash_of(job.rel))
        problems = structure_problems(job.english, parse_translation(text, job.rel), self.renderer)
        if problems:
            raise ValueError("; ".join(problems))
        return text


def chunk_problems(reply: str, finish: str, first: bool, expected: list[str]) -> list[str]:
    """What is wrong with one reply before it is put together with the others."""
    if finish != "stop":
        return [f"the reply was cut off (finish_reason={finish or 'none'}); a shorter --max-chars splits pages further"]
    text = clean_reply(reply, front_matter=first)
    if not text.strip():
        return ["the reply was empty"]
    problems = []
    if first:
        page = parse_translation(text, "reply.md")
        problems += [p.message for p in page.problems]
    found = PLACEHOLDER.findall(text)
    missing = sorted(set(expected) - set(found), key=int)
    repeated = sorted({n for n in found if found.count(n) > 1 and n in expected}, key=int)
    invented = sorted(set(found) - set(expected), key=int)
    if missing:
        problems.append("placeholders missing: " + ", ".join(f"⟦P{n}⟧" for n in missing))
    if repeated:
        problems.append("placeholders repeated: " + ", ".join(f"⟦P{n}⟧" for n in repeated))
    if invented:
        problems.append("placeholders not in the page: " + ", ".join(f"⟦P{n}⟧" for n in invented))
    return problems


async def run_jobs(jobs: list[Job], settings: Settings, terminology: Terminology, glossary: Glossary,
                   progress=None) -> list[Outcome]:
    """Translate `jobs` concurrently (at most settings.concurrency at once), in input order."""
    client = make_client(settings)
    try:
        await check_model(client, settings)
        translator = Translator(client, settings, terminology, glossary)
        gate = asyncio.Semaphore(settings.concurrency)

        async def one(job: Job) -> Outcome:
            async with gate:
                outcome = await translator.translate(job)
            if progress is not None:
                progress(outcome)
            return outcome

        return list(await asyncio.gather(*(one(job) for job in jobs)))
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
    return ((tokens_in - tokens_cached) * prices["input"] + tokens_cached * prices["cached"]
            + tokens_out * prices["output"]) / 1e6


def estimate_job(job: Job, system: str, max_chars: int) -> tuple[int, int]:
    """(input, output) tokens a job should take, without calling anything."""
    prepared = prepare(job, max_chars)
    sent = sum(estimate_tokens(c) + estimate_tokens(r or "") for c, r in zip(prepared.chunks, prepared.references))
    document = sum(estimate_tokens(c) for c in prepared.chunks)
    return sent + estimate_tokens(system) * len(prepared.chunks), int(document * 1.2)
