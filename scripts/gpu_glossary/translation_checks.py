"""Checks a model's translation must pass before it may replace anything on disk.

A reply is untrusted input: it can be cut off, wrapped in a fence, prefixed with chatter,
missing a code block, pointing a link elsewhere, carrying a <script>, or be the English
text echoed back. `clean_reply` undoes the harmless wrappers; `structure_problems` lists
every difference in structure between the English page and the translation.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from .images import base_name
from .page import Page, parse_page

_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
_TAG = re.compile(r"<\s*/?\s*([A-Za-z][A-Za-z0-9-]*)")
_WRAPPER = re.compile(r"^\s*(`{3,}|~{3,})[ \t]*(?:markdown|md|yaml)?[ \t]*\n(?P<inner>.*)\n\1[ \t]*\s*$", re.S)
MIN_CHINESE_SHARE = 0.25


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


def _link_key(link) -> tuple[bool, str]:
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


def _tags(page: Page) -> Counter:
    return Counter(match.lower() for _, line in page.prose_lines() for match in _TAG.findall(line))


def chinese_share(page: Page) -> float:
    """Share of Chinese characters among the letters of the prose (code and links excluded)."""
    text = " ".join(re.sub(r"\]\([^)]*\)|https?://\S+", "", line) for _, line in page.prose_lines())
    text += " " + page.title + " " + page.summary
    cjk, latin = len(_CJK.findall(text)), len(_LATIN.findall(text))
    return cjk / max(cjk + latin, 1)


def parse_translation(text: str, rel: str) -> Page:
    return parse_page(text, Path(rel), rel, rel, "zh")


def structure_problems(source: Page, translation: Page) -> list[str]:
    """Every way the translation's structure differs from the English page's."""
    problems = [problem.message for problem in translation.problems]
    if problems:
        return problems
    source_code = [(f.lang, f.code) for f in source.fences()]
    translated_code = [(f.lang, f.code) for f in translation.fences()]
    if source_code != translated_code:
        problems.append(f"code blocks differ from the English page ({len(translated_code)} blocks, expected {len(source_code)}, or their text changed)")
    source_links = sorted(_link_key(l) for l in source.links())
    translated_links = sorted(_link_key(l) for l in translation.links())
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
    new_tags = sorted(set(_tags(translation)) - set(_tags(source)))
    if new_tags:
        problems.append(f"raw HTML the English page does not have: {', '.join('<' + tag + '>' for tag in new_tags)}")
    for key in ("title", "summary"):
        if not translation.meta.get(key):
            problems.append(f"front matter lacks a translated '{key}'")
    if not problems and chinese_share(translation) < MIN_CHINESE_SHARE:
        problems.append(f"too little Chinese ({chinese_share(translation):.0%} of letters): the reply looks like English echoed back")
    return problems

