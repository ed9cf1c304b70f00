"""Conventions of Chinese pages that a reader sees drift across pages: where an English gloss
goes, how a source is cited, how bold text ends, how parentheses nest.

Each rule is a small function of a page that returns `path:line` problems; the checker runs
them on every Chinese page. Code blocks and inline code are never read.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator

from gpu_glossary.page import Page, Problem

SOURCES_ID = "sources"
_HAN = re.compile(r"[\u3400-\u9fff]")
_CHINESE_TEXT = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")  # Han and full-width punctuation
# Link text that is a Chinese term followed by its English gloss: 线程束（warp）, 线程束 (warp).
_GLOSS_IN_LINK = re.compile(r"^(?P<term>.*?\S)\s*[（(](?P<gloss>[^（）()]*[A-Za-z][^（）()]*)[）)]$")
# A title in Sources: the link text up to its description in parentheses, if any.
_SOURCE_TITLE = re.compile(r"(?<!!)\[(?P<title>[^\[\]（(]*)")
# A full-width colon right after a Latin letter or digit: "Programming Guide：Warp Shuffle Functions".
_COLON_AFTER_LATIN = re.compile(r"[A-Za-z0-9)]\s*：")
_ASCII_QUOTED = re.compile(r'"(?P<quoted>[^"\n]+)"')
# An admonition or a content tab quotes its title in Markdown's own syntax: `!!! tip "…"`, `=== "…"`.
_QUOTED_TITLE_SYNTAX = re.compile(r'^\s*(?:!!!|\?\?\?\+?|===[+!]?)\s+(?:[\w-]+\s+)*"[^"]*"\s*$')
_HTML = re.compile(r"<!--.*?-->|</?[A-Za-z][^<>]*>")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_BOLD = re.compile(r"\*\*")


def _sources_lines(page: Page) -> set[int]:
    """Line numbers of the Sources section (the heading with id `sources` up to the next heading
    of the same or a higher level)."""
    headings = page.headings()
    lines: set[int] = set()
    for index, heading in enumerate(headings):
        if heading.id != SOURCES_ID:
            continue
        end = next((h.line for h in headings[index + 1 :] if h.level <= heading.level), 10**9)
        lines.update(number for number, _ in page.prose_lines() if heading.line < number < end)
    return lines


def _raw(page: Page, number: int) -> str:
    """The body line as written (prose_lines masks inline code; messages quote the real text)."""
    return page.body.split("\n")[number - page.body_line]


def _blank(match: re.Match) -> str:
    return " " * len(match.group(0))


def _plain(line: str) -> str:
    """A prose line with HTML and link targets blanked out (same length: columns still line up)."""
    return _LINK_TARGET.sub(lambda m: "](" + " " * (len(m.group(0)) - 3) + ")", _HTML.sub(_blank, line))


def gloss_inside_link(page: Page) -> Iterator[Problem]:
    """`[线程束（warp）](…)` → `[线程束](…)（warp）`: the link text stays the Chinese term
    (the same text the linked page's title has), the gloss follows it."""
    sources = _sources_lines(page)
    for link in page.links():
        match = _GLOSS_IN_LINK.match(link.text)
        # a source's description in parentheses is part of its title, not a gloss
        if match and not link.is_image and link.line not in sources and _HAN.search(match.group("term")):
            yield page.problem(
                link.line,
                f"English gloss inside the link text '[{link.text}]': "
                f"put it after the link, '[{match.group('term')}](…)（{match.group('gloss')}）'",
            )


def english_title_colons(line: str) -> list[int]:
    """Columns of the full-width colons that split an English source title (no Chinese before
    them in the link text): "CUDA Driver API：Rules for version mixing", not "CUTLASS 示例 48：…"."""
    columns = []
    for title in _SOURCE_TITLE.finditer(_plain(line)):
        for colon in _COLON_AFTER_LATIN.finditer(title.group("title")):
            if not _HAN.search(title.group("title")[: colon.start()]):
                columns.append(title.start("title") + colon.end() - 1)
    return columns


def sources_colon(page: Page) -> Iterator[Problem]:
    """An English title in Sources keeps its ASCII colon: `CUDA C++ Programming Guide: …`."""
    sources = _sources_lines(page)
    for number, line in page.prose_lines():
        for column in english_title_colons(line) if number in sources else []:
            title = _raw(page, number)[: column + 1].rsplit("[", 1)[-1]
            yield page.problem(
                number,
                f"full-width colon after the English title '{title}': "
                "Sources keep the title's ASCII colon and a space, 'CUDA C++ Programming Guide: …'",
            )


def ascii_quotes(page: Page) -> Iterator[Problem]:
    """Quotes in Chinese text, paper titles in Sources among them, are “…”."""
    for number, line in page.prose_lines():
        if '"' not in line or not _CHINESE_TEXT.search(line) or _QUOTED_TITLE_SYNTAX.match(line):
            continue
        for match in _ASCII_QUOTED.finditer(_plain(line)):
            if match.group("quoted").strip():
                yield page.problem(
                    number,
                    f'ASCII quotes around "{match.group("quoted")}": Chinese text, paper titles included, '
                    f"quotes with “…”: “{match.group('quoted')}”",
                )


def _is_punctuation(char: str) -> bool:
    return bool(char) and unicodedata.category(char).startswith("P")


def _is_plain(char: str) -> bool:
    """A character that is neither whitespace, nor punctuation, nor the edge of the line."""
    return bool(char) and not char.isspace() and not _is_punctuation(char)


def bold_spacing(page: Page) -> Iterator[Problem]:
    """`**常见误区。**正文` renders on the site (Python-Markdown) but not in CommonMark (GitHub's
    file view, most editors): a `**` next to punctuation closes only before a space or
    punctuation, and opens only after one. Write `**常见误区。** 正文`."""
    for number, line in page.prose_lines():
        runs = [match.start() for match in _BOLD.finditer(line)]
        raw = _raw(page, number) if runs else ""
        for opening, closing in zip(runs[::2], runs[1::2], strict=False):
            inner = raw[opening + 2 : closing]
            before, after = line[opening - 1 : opening] if opening else "", line[closing + 2 : closing + 3]
            if _is_punctuation(inner[-1:]) and _is_plain(after):
                yield page.problem(
                    number,
                    f"no space after the bold text '**{inner}**': a bold run that ends in punctuation "
                    f"needs a space after it ('**{inner}** {after}…'), or CommonMark renderers leave it unclosed",
                )
            if _is_punctuation(inner[:1]) and _is_plain(before):
                yield page.problem(
                    number,
                    f"no space before the bold text '**{inner}**': a bold run that starts with punctuation "
                    "needs a space before it, or CommonMark renderers leave it unopened",
                )


def nested_parentheses(page: Page) -> Iterator[Problem]:
    """（…（…）…） reads badly in Chinese: separate the inner remark with '，' instead."""
    for number, line in page.prose_lines():
        opened: list[int] = []
        for column, char in enumerate(_plain(line)):
            if char == "（":
                opened.append(column)
            elif char == "）" and opened:
                inner = opened.pop()
                if opened:
                    text = _raw(page, number)[inner : column + 1]
                    yield page.problem(
                        number,
                        f"'{text}' sits inside another pair of full-width parentheses: separate it with '，' "
                        "(“（H100 SXM5 为 700 W，即其[热设计功耗](…)，TDP）”) or move it out of the brackets",
                    )
                    break


RULES: tuple[Callable[[Page], Iterator[Problem]], ...] = (
    gloss_inside_link,
    sources_colon,
    ascii_quotes,
    bold_spacing,
    nested_parentheses,
)


def style_problems(page: Page) -> list[Problem]:
    """Every convention a Chinese page breaks, in line order."""
    return sorted((problem for rule in RULES for problem in rule(page)), key=lambda p: p.line)
