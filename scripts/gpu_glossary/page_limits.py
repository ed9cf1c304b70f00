"""Limits on a page's shape, measured before Markdown ever sees it, so no page can stall a check or a build.

Python-Markdown's inline parser takes time that grows with the square of the openers in one
paragraph (a run of `[`, Python-Markdown issue #798; `<`, `` ` ``, `\\(` likewise), its table of
contents with the square of the headings, and nested `<div markdown>` blocks recurse until Python
gives up. Every count below is made in one pass over the text; a page over any limit is an error
naming its line and the limit, and is never handed to Markdown (the checker skips its rendering,
the build refuses it in `on_config`, before any page is rendered, the translation gate refuses
such a reply). The limits are many times what any page of the glossary needs.

Characters that break tools are refused here too: control characters (a NUL ends a C string in
half) and lone surrogates or non-characters (no UTF-8 encoder writes them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpu_glossary.page import Page, Problem

MAX_PAGE_CHARS = 100_000
MAX_LINE_CHARS = 5_000
MAX_BLOCK_CHARS = 10_000  # a paragraph, list item or table: text between blank lines, outside code
MAX_OPENERS_PER_BLOCK = {"[": 200, "<": 200, "`": 400, "\\": 200}
MAX_OPENERS_PER_PAGE = {"[": 1_000, "<": 1_000, "`": 2_000, "\\": 1_000}
MAX_HEADINGS = 300
MAX_INDENT = 100  # columns of leading spaces on a line outside code: nesting of lists and admonitions
MAX_QUOTE_DEPTH = 8
MAX_HTML_DEPTH = 20

# C0 and C1 controls but tab, newline and carriage return; lone surrogates; U+FFFE and U+FFFF.
BAD_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_QUOTES = re.compile(r"^(?:[ \t]*>)+")
_HEADING = re.compile(r"^#{1,6}[ \t]")
_HTML_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)[^<>]*?(/?)>")
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "col", "wbr", "source", "area", "base", "embed"})


def problems_of(page: Page) -> list[Problem]:
    """The page's excesses as the checker's errors."""
    return [page.problem(excess.line, excess.message) for excess in excesses(page.text)]


@dataclass(frozen=True)
class Excess:
    """One limit a text goes over: the line (1-based, in the text) and what the limit is."""

    line: int
    message: str


def bad_characters(text: str) -> list[tuple[int, str]]:
    """(line, character code) of each character no page may hold, in order."""
    found = []
    for match in BAD_CHARACTERS.finditer(text):
        found.append((text.count("\n", 0, match.start()) + 1, f"U+{ord(match.group(0)):04X}"))
    return found


def excesses(text: str) -> list[Excess]:
    """Every limit `text` (a whole page, or a part of one) goes over, with the line where it does."""
    found: list[Excess] = []
    bad = bad_characters(text)
    if bad:
        first_line, code = bad[0]
        found.append(
            Excess(first_line, f"holds {len(bad)} control or invalid character(s), the first {code}: remove them")
        )
    if len(text) > MAX_PAGE_CHARS:
        found.append(Excess(1, f"page is {len(text):,} characters; the limit is {MAX_PAGE_CHARS:,}"))
    page_openers = dict.fromkeys(MAX_OPENERS_PER_PAGE, 0)
    headings = depth = 0
    fence = ""
    block_start, block_chars = 0, 0
    block_openers = dict.fromkeys(MAX_OPENERS_PER_BLOCK, 0)
    reported: set[str] = set()

    def report(key: str, line: int, message: str) -> None:
        if key not in reported:  # one message per kind of excess: the first place it happens
            reported.add(key)
            found.append(Excess(line, message))

    def end_block() -> None:
        nonlocal block_chars
        if block_chars > MAX_BLOCK_CHARS:
            report("block", block_start, f"paragraph is {block_chars:,} characters; the limit is {MAX_BLOCK_CHARS:,}")
        for opener, count in block_openers.items():
            if count > MAX_OPENERS_PER_BLOCK[opener]:
                report(
                    f"block {opener}",
                    block_start,
                    f"paragraph holds {count:,} '{opener}'; the limit is {MAX_OPENERS_PER_BLOCK[opener]} "
                    "(Markdown's time grows with their square)",
                )
            block_openers[opener] = 0
        block_chars = 0

    for number, line in enumerate(text.split("\n"), start=1):
        if len(line) > MAX_LINE_CHARS:
            report("line", number, f"line is {len(line):,} characters; the limit is {MAX_LINE_CHARS:,}")
        opened = _FENCE.match(line)
        if fence:
            stripped = line.strip()
            if len(stripped) >= len(fence) and set(stripped) == {fence[0]}:
                fence = ""  # the closing fence
            continue
        if opened:
            end_block()
            fence = opened.group(1)
            continue
        if not line.strip():
            end_block()
            block_start = number + 1
            continue
        if not block_chars:
            block_start = number
        block_chars += len(line) + 1
        for opener in block_openers:
            count = line.count(opener)
            block_openers[opener] += count
            page_openers[opener] += count
        indent = len(line) - len(line.lstrip(" \t"))
        if indent > MAX_INDENT:
            report("indent", number, f"line is indented {indent} columns; the limit is {MAX_INDENT}")
        quotes = _QUOTES.match(line)
        if quotes and quotes.group(0).count(">") > MAX_QUOTE_DEPTH:
            report("quote", number, f"quotes nest {quotes.group(0).count('>')} deep; the limit is {MAX_QUOTE_DEPTH}")
        if _HEADING.match(line):
            headings += 1
            if headings > MAX_HEADINGS:
                report("headings", number, f"page has more than {MAX_HEADINGS} headings")
        if "<" in line:
            for tag in _HTML_TAG.finditer(line):
                closing, name, self_closing = tag.groups()
                if self_closing or name.lower() in _VOID:
                    continue
                depth = max(depth - 1, 0) if closing else depth + 1
                if depth > MAX_HTML_DEPTH:
                    report("html", number, f"HTML elements nest more than {MAX_HTML_DEPTH} deep")
    end_block()
    for opener, count in page_openers.items():
        if count > MAX_OPENERS_PER_PAGE[opener]:
            report(
                f"page {opener}",
                1,
                f"page holds {count:,} '{opener}' outside code; the limit is {MAX_OPENERS_PER_PAGE[opener]:,}",
            )
    return sorted(found, key=lambda excess: excess.line)
