"""Pages cut into requests, and replies put back together into pages.

Each page to translate becomes parts, sections or blocks, each kept or to send (see
sections.py); consecutive parts to send are grouped into chunks of similar size, one
request each, cut only between parts. The chunk
size is the pool's fair share of the run (all text to send ÷ concurrency), at least
MIN_CHUNK_CHARS and at most --max-chars: smaller chunks would not finish the run sooner,
only cost more requests; larger ones would leave one long request running alone at the
end. Each chunk has its own placeholders, so its reply is checked and restored on its
own; a page is put together only when every one of its chunks came back.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from gpu_glossary.page import SOURCE_HASH_KEY, Page, front_matter_block
from gpu_glossary.render import Renderer
from gpu_glossary.translate.checks import Renders, clean_reply, parse_translation
from gpu_glossary.translate.prompt import translate_request, update_request
from gpu_glossary.translate.protect import PLACEHOLDER, ProtectedText
from gpu_glossary.translate.sections import (
    SECTION_HASHES_KEY,
    TRANSLATED_KEYS,
    Part,
    balanced_groups,
    format_hashes,
    plan_sections,
    section_hashes,
    translatable_meta,
)

MODEL_KEY = "translation_model"
MIN_CHUNK_CHARS = 3000


def chunk_size(total: int, concurrency: int, max_chars: int) -> int:
    """The size to cut chunks to: the pool's fair share of `total`, within [MIN_CHUNK_CHARS, max_chars]."""
    return min(max_chars, max(MIN_CHUNK_CHARS, math.ceil(total / max(concurrency, 1))))


def compose_page(
    english: Page, translated: dict, body: str, model: str, source_hash: str, hashes: list[list[str]] | None = None
) -> str:
    """The Chinese page: English front matter keys in order, translated values, hashes and model."""
    meta = {}
    for key, value in english.meta.items():
        if key in (SOURCE_HASH_KEY, SECTION_HASHES_KEY, MODEL_KEY):
            continue
        meta[key] = translated.get(key, value) if key in TRANSLATED_KEYS else value
    meta[SOURCE_HASH_KEY] = source_hash
    if hashes:
        meta[SECTION_HASHES_KEY] = format_hashes(hashes)
    meta[MODEL_KEY] = model
    return front_matter_block(meta) + "\n" + body.lstrip("\n")


@dataclass
class Chunk:
    """Consecutive parts (sections or blocks) of one page sent in one request."""

    page: PagePlan
    parts: list[int]
    english: str  # the parts' English text, exactly as on the page
    document: str  # what is sent to be translated: front matter (first chunk) and placeholders
    request: str  # the user message
    protected: ProtectedText
    weight: int  # characters sent to be translated (the reply's length, and time, follow it)
    reply: str | None = None  # the checked reply, placeholders still in
    note: list[str] = field(default_factory=list)  # why the page was rejected, told with the first request

    def html(self, text: str, renderer: Renders) -> str:
        """The HTML the chunk's document or a reply renders to: placeholders filled, front matter left out.

        Code blocks come back short: their text comes back exactly (a placeholder), and
        highlighting all of it would take most of the check's time."""
        filled = self.protected.fill(clean_reply(text, front_matter=self.first), short_code=True)
        filled = _indented_like(self.english, filled)
        return renderer.html(parse_translation(filled, "chunk.md").body if self.first else filled)

    def restored_text(self, reply: str) -> str:
        """The reply as Markdown: placeholders filled (unchecked), indented like the English."""
        return _indented_like(self.english, self.protected.fill(clean_reply(reply, front_matter=self.first)))

    def pages(self, reply: str) -> tuple[Page, Page]:
        """(English, reply) of this chunk as pages of the page they come from, for the gate."""
        rel = self.page.english.rel
        if self.first:
            english = parse_translation(self.page.front_matter + "\n" + self.english, rel)
            english.lang = self.page.english.lang
            return english, parse_translation(self.restored_text(reply), rel)
        return _part(self.english, rel, self.page.english.lang), _part(self.restored_text(reply), rel, "zh")

    @property
    def first(self) -> bool:
        """The chunk carries the front matter (title, summary, aliases)."""
        return 0 in self.parts

    def problems(self, reply: str, finish: str) -> list[str]:
        """What is wrong with a reply to this chunk, before it is put together with the others."""
        if finish != "stop":
            return [
                f"the reply was cut off (finish_reason={finish or 'none'}); a smaller --max-chars splits pages further"
            ]
        text = clean_reply(reply, front_matter=self.first)
        if not text.strip():
            return ["the reply was empty"]
        problems = []
        if self.first:
            problems += [p.message for p in parse_translation(text, "reply.md").problems]
        expected = range(len(self.protected.pieces))
        found = [int(n) for n in PLACEHOLDER.findall(text)]
        missing = [n for n in expected if n not in found]
        repeated = sorted({n for n in found if found.count(n) > 1 and n in expected})
        invented = sorted({n for n in found if n not in expected})
        for label, numbers in (("missing", missing), ("repeated", repeated), ("not in the page", invented)):
            if numbers:
                problems.append(f"placeholders {label}: " + ", ".join(f"⟦P{n}⟧" for n in numbers))
        return problems

    def restored(self) -> tuple[dict, str]:
        """(translated front matter, body text) of the checked reply, with the English chunk's trailing newlines."""
        text = clean_reply(self.reply or "", front_matter=self.first)
        meta: dict = {}
        if self.first:
            head = parse_translation(text, "reply.md")
            meta, text = {k: head.meta[k] for k in TRANSLATED_KEYS if k in head.meta}, head.body
        body = _indented_like(self.english, self.protected.restore(text).strip("\n"))
        return meta, body + "\n" * (len(self.english) - len(self.english.rstrip("\n")))


class CheckRenderer:
    """Renders a whole page for the rendered-HTML check as the site does, but with each code
    block cut to one line (its text is compared byte for byte on its own) and each text
    rendered once: the English pages are rendered while the replies are awaited."""

    def __init__(self, renderer: Renderer):
        self.renderer = renderer
        self._done: dict[str, str] = {}

    def html(self, text: str) -> str:
        if text not in self._done:
            protected = ProtectedText()
            self._done[text] = self.renderer.html(protected.fill(protected.protect(text), short_code=True))
        return self._done[text]


def _part(text: str, rel: str, lang: str) -> Page:
    """A part of a page, without front matter, as a Page (its lines counted from 1)."""
    return Page(path=Path(rel), display_path=rel, rel=rel, lang=lang, text=text, body=text)


def _indented_like(english: str, body: str) -> str:
    """A block inside an admonition or list is indented: keep the reply's lines indented as much."""
    lines = [line for line in english.split("\n") if line.strip()]
    indent = os.path.commonprefix([line[: len(line) - len(line.lstrip(" \t"))] for line in lines]) if lines else ""
    if not indent:
        return body
    return "\n".join(
        line if not line.strip() or line.startswith(indent) else indent + line.lstrip(" \t")
        for line in body.split("\n")
    )


@dataclass
class PagePlan:
    """One page: which parts are kept and which are sent, and the chunks that send them."""

    english: Page
    previous: Page | None  # the translation to update, or None to translate afresh
    parts: list[Part]
    protected: list[tuple[str, ProtectedText]]  # each part's English with its placeholders
    front_matter: str  # the English title, summary and aliases, as sent with the first part
    chunks: list[Chunk] = field(default_factory=list)
    kept_front_matter: str | None = None  # the page's own front matter, kept as it is (translate --comments)

    @property
    def weights(self) -> list[int]:
        return [len(text) + (len(self.front_matter) if i == 0 else 0) for i, (text, _) in enumerate(self.protected)]

    @property
    def to_send(self) -> int:
        return sum(w for part, w in zip(self.parts, self.weights, strict=True) if part.to_translate)

    @property
    def parts_kept(self) -> int:
        return sum(not part.to_translate for part in self.parts)

    def cut(self, size: int) -> list[Chunk]:
        """Group each run of consecutive parts to send into chunks of about `size` characters."""
        self.chunks = []
        weights = self.weights
        run: list[int] = []
        for index, part in enumerate([*self.parts, None]):
            if part is not None and part.to_translate:
                run.append(index)
                continue
            for group in balanced_groups([weights[i] for i in run], size):
                self.chunks.append(self._chunk([run[i] for i in group]))
            run = []
        return self.chunks

    def _chunk(self, indices: list[int]) -> Chunk:
        parts = [self.parts[i] for i in indices]
        document, protected = ProtectedText.joined([self.protected[i] for i in indices])
        references: list[str] = []
        for part in parts:
            if part.reference and (not references or references[-1] != part.reference):
                references.append(part.reference)
        reference = "".join(references)
        if 0 in indices:
            document = self.front_matter + "\n" + document
            if reference and self.parts[0].reference and self.previous is not None:
                reference = front_matter_block(translatable_meta(self.previous)) + "\n" + reference
        whole = len(indices) == len(self.parts)
        if reference:
            request = update_request(document, protected.protect_reference(reference), whole)
        else:
            request = translate_request(document, whole)
        english = "".join(part.english for part in parts)
        return Chunk(self, indices, english, document, request, protected, len(document))

    def assemble(self, model: str, source_hash: str) -> str:
        """The whole Chinese page from kept parts and checked replies; ReplyRejected if a reply cannot be restored."""
        meta = translatable_meta(self.previous) if self.previous is not None else {}
        starts = {chunk.parts[0]: chunk for chunk in self.chunks}
        pieces = []
        for index, part in enumerate(self.parts):
            if part.kept is not None:  # not to translate
                pieces.append(part.kept)
            elif index in starts:
                translated_meta, body = starts[index].restored()
                meta = translated_meta if starts[index].first else meta
                pieces.append(body)
        if self.kept_front_matter is not None:
            return self.kept_front_matter + "".join(pieces)
        return compose_page(self.english, meta, "".join(pieces), model, source_hash, section_hashes(self.english))


def plan_page(english: Page, previous: Page | None, whole: bool = False) -> PagePlan:
    """Plan a page: `previous` is the Chinese page to update (None: translate every section);
    `whole` sends every section, even unchanged ones, with its old Chinese."""
    parts = plan_sections(english, previous, whole)
    protected = []
    for part in parts:
        holder = ProtectedText()
        protected.append((holder.protect(part.english), holder))
    return PagePlan(english, previous, parts, protected, front_matter_block(translatable_meta(english)))
