"""Checks a model's translation must pass before it may replace anything on disk.

A reply is untrusted input: it can be cut off, wrapped in a fence, prefixed with chatter,
missing a code block, pointing a link elsewhere, carrying a <script> or an `{: onclick=… }`,
or be the English text echoed back. `clean_reply` undoes the harmless wrappers;
`structure_problems` lists every difference in structure between the English page and the
translation; `markup_differences` compares their rendered HTML, which may differ in text only.
"""

from __future__ import annotations

import html as html_lib
import re
from collections import Counter
from pathlib import Path
from typing import Protocol

from gpu_glossary.cache import in_memory
from gpu_glossary.chinese import han_share
from gpu_glossary.code_comments import first_code_difference
from gpu_glossary.images.names import base_name
from gpu_glossary.page import Link, Page, parse_page
from gpu_glossary.sanitize import elements

# Attributes that hold text a translation translates.
TEXT_ATTRIBUTES = frozenset({"alt", "title", "data-gg-title", "data-gg-summary"})
# Emphasis without attributes may come and go: Chinese typesetting avoids italics.
EMPHASIS = frozenset({"em", "strong", "b", "i"})
BLOCK_TAGS = frozenset(
    {
        "p",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "ul",
        "ol",
        "li",
        "dl",
        "dt",
        "dd",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "blockquote",
        "pre",
        "div",
        "details",
        "summary",
        "figure",
        "hr",
    }
)
_WRAPPER = re.compile(r"^\s*(`{3,}|~{3,})[ \t]*(?:markdown|md|yaml)?[ \t]*\n(?P<inner>.*)\n\1[ \t]*\s*$", re.S)
MIN_CHINESE_SHARE = 0.25


class ReplyRejected(Exception):
    """A model's reply failed the checks; `problems` says why, in words fed back to the model."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


def clean_reply(reply: str, front_matter: bool = True) -> str:
    """Remove a wrapping ```markdown fence and (for a whole page) any preamble before the front matter."""
    text = reply.replace("\r\n", "\n")
    wrapped = _WRAPPER.match(text)
    if wrapped:
        text = wrapped.group("inner")
    if not front_matter:
        return text.strip("\n") + "\n"
    lines = text.split("\n")
    for index, line in enumerate(lines[:5]):
        if line.strip() == "---":
            return "\n".join(lines[index:]).strip("\n") + "\n"
    return text.strip("\n") + "\n"


def _link_key(link: Link) -> tuple[bool, str]:
    """A link's target; an image counts as the same picture in any language or scheme variant."""
    if not link.is_image:
        return False, link.target
    folder, _, name = link.target.rpartition("/")
    return True, f"{folder}/{base_name(name)}" if folder else base_name(name)


def _tables(page: Page) -> list[tuple[int, int]]:
    """(rows, columns) of each table outside code."""
    shapes: list[tuple[int, int]] = []
    rows = 0
    columns = 0
    for _, line in [*page.prose_lines(), (0, "")]:
        stripped = line.strip()
        if stripped.startswith("|"):
            cells = len(re.split(r"(?<!\\)\|", stripped.strip("|")))
            columns = columns or cells
            rows += 1
        elif rows:
            shapes.append((rows, columns))
            rows = columns = 0
    return shapes


@in_memory(maxsize=1024)  # an English page's HTML is compared with each reply for it
def _markup(html: str) -> tuple[tuple[str, tuple], ...]:
    """The HTML's elements with the attributes a translation must keep as they are.

    Text attributes are left out; ids (the translation's own heading ids among them) are
    numbered in order of appearance, and image files stand for all their variants.
    """
    found = elements(html)
    ids: dict[str, int] = {}
    for element in found:
        element_id = element.get("id")
        if element_id is not None:
            ids.setdefault(element_id, len(ids))
    result = []
    for element in found:
        attributes = []
        for name, value in element.attributes:
            if name in TEXT_ATTRIBUTES:
                continue
            if name in ("id", "name") and value in ids:
                value = f"<id {ids[value]}>"
            elif name == "href" and value.startswith("#") and value[1:] in ids:
                value = f"#<id {ids[value[1:]]}>"
            elif name == "src":
                path, hash_, fragment = value.partition("#")
                folder, slash, file = path.rpartition("/")
                value = folder + slash + base_name(file) + hash_ + fragment
            attributes.append((name, value))
        if element.tag in EMPHASIS and not attributes:
            continue
        result.append((element.tag, tuple(attributes)))
    return tuple(result)


def _describe(element: tuple[str, tuple]) -> str:
    tag, attributes = element
    return "<" + " ".join([tag, *(f'{name}="{html_lib.escape(value)}"' for name, value in attributes)]) + ">"


def markup_differences(source_html: str, translated_html: str) -> list[str]:
    """How the translation's HTML differs from the English page's in anything but text.

    Elements are compared as a multiset (a translation may reorder a sentence's links and
    code) and blocks in order; an added element or attribute or a changed URL is caught.
    """
    source, translated = _markup(source_html), _markup(translated_html)
    added = Counter(translated) - Counter(source)
    lost = Counter(source) - Counter(translated)
    problems = []
    if added:
        problems.append("adds " + ", ".join(_describe(e) for e in list(added)[:5]))
    if lost:
        problems.append("loses " + ", ".join(_describe(e) for e in list(lost)[:5]))
    if not problems:  # same elements: then the blocks must come in the same order
        source_blocks = [e for e in source if e[0] in BLOCK_TAGS]
        translated_blocks = [e for e in translated if e[0] in BLOCK_TAGS]
        for index, (expected, got) in enumerate(zip(source_blocks, translated_blocks, strict=True)):
            if expected != got:
                problems.append(
                    f"orders its blocks differently: block {index + 1} should be {_describe(expected)}, "
                    f"is {_describe(got)}"
                )
                break
    return [f"rendered HTML differs from the English page's beyond its text: {problem}" for problem in problems]


def chinese_share(page: Page) -> float:
    """Share of Chinese characters among the letters of the prose (code and links excluded)."""
    text = " ".join(re.sub(r"\]\([^)]*\)|https?://\S+", "", line) for _, line in page.prose_lines())
    text += " " + page.title + " " + page.summary
    return han_share(text)


def parse_translation(text: str, rel: str) -> Page:
    return parse_page(text, Path(rel), rel, rel, "zh")


class Renders(Protocol):
    def html(self, text: str) -> str: ...


def structure_problems(source: Page, translation: Page, renderer: Renders | None = None) -> list[str]:
    """Every way the translation's structure differs from the English page's (with a
    renderer, also its rendered HTML)."""
    problems = [problem.message for problem in translation.problems]
    if problems:
        return problems
    source_code, translated_code = source.fences(), translation.fences()
    if len(source_code) != len(translated_code) or any(
        a.lang != b.lang or first_code_difference(a.code, b.code, a.lang)
        for a, b in zip(source_code, translated_code, strict=True)
    ):
        problems.append(
            f"code blocks differ from the English page ({len(translated_code)} blocks, expected {len(source_code)}, "
            "or their code changed: only comments are translated)"
        )
    source_links = sorted(_link_key(link) for link in source.links())
    translated_links = sorted(_link_key(link) for link in translation.links())
    if source_links != translated_links:
        lost = sorted(set(source_links) - set(translated_links))
        added = sorted(set(translated_links) - set(source_links))
        problems.append(f"link and image targets differ (lost: {[t for _, t in lost]}, added: {[t for _, t in added]})")
    source_headings = [(h.level, h.id if h.explicit_id else None) for h in source.headings()]
    translated_headings = [(h.level, h.id if h.explicit_id else None) for h in translation.headings()]
    if source_headings != translated_headings:
        problems.append(f"headings differ: expected levels and ids {source_headings}, got {translated_headings}")
    if _tables(source) != _tables(translation):
        problems.append(f"table shapes differ: expected {_tables(source)} (rows, columns), got {_tables(translation)}")
    if renderer is not None:
        problems.extend(markup_differences(renderer.html(source.body), renderer.html(translation.body)))
    for key in ("title", "summary"):
        if not translation.meta.get(key):
            problems.append(f"front matter lacks a translated '{key}'")
    if not problems and chinese_share(translation) < MIN_CHINESE_SHARE:
        problems.append(
            f"too little Chinese ({chinese_share(translation):.0%} of letters): "
            "the reply looks like English echoed back"
        )
    return problems
