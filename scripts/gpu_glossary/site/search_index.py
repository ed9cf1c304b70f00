"""The site's search index: each page's names, summary and text by section, for `search.js`.

Material's search (lunr in a worker) ranked a pasted error message badly: it appends a
wildcard to every word, so "is" and "for" match "issue" and "format", it has no notion of a
phrase, and its Chinese depends on jieba's segmentation at build time agreeing with a
greedy one in the browser (benchmarks/README.md has the measurements behind the switch).
This index is plain text, not a prebuilt inverted index: `search.js` tokenizes pages and
queries with one tokenizer (words for Latin script, character pairs for Chinese), so the
two sides cannot disagree, and it matches phrases against the same text.

Material's search plugin stays enabled for its header button and dialog; the overrides'
search partial leaves its scripts nothing to bind to, the plugin marks every page excluded
from Material's index (so Material parses none), and this file replaces that index.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.page import Page

INDEX_PATH = "search/search_index.json"
FORMAT = 1

# Elements whose text runs on inside a line of prose; every other tag separates words.
_INLINE = {"a", "abbr", "b", "code", "em", "i", "kbd", "mark", "small", "span", "strong", "sub", "sup", "time"}
_HEADINGS = {"h2", "h3"}
_SPACE = re.compile(r"\s+")
# A code listing (not a program's output or a shell session) is kept as its names only:
# the API names readers search for (cudaMemcpyAsync, __syncthreads), each once, at a quarter
# of the listing's size. Output is kept whole: that is where the error messages are.
_LISTING = re.compile(r"[;{}]|#include|^\s*(?:def|import|from|class)\s", re.M)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_]")


@dataclass
class SearchPage:
    """One page as search sees it. `sections` are (anchor, heading, text); the first has no
    anchor and holds the text before the first heading."""

    url: str
    title: str
    names: list[str]
    summary: str
    section: str
    weight: float
    sections: list[tuple[str, str, str]] = field(default_factory=list)

    def as_json(self) -> dict:
        return {
            "u": self.url,
            "t": self.title,
            "n": self.names,
            "s": self.summary,
            "p": self.section,
            "w": self.weight,
            "x": [list(section) for section in self.sections],
        }


class _SectionText(HTMLParser):
    """Text of an article by section (h2/h3 with an id). Left out: the h1 (the title is in
    the names), permalinks (¶), run provenance lines, and sections marked
    `data-search-exclude` ("Referenced by", the A–Z letters) up to the next heading."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[list] = [["", "", [], False]]  # anchor, heading, text parts, excluded
        self.skip_depth = 0  # > 0 inside an element left out
        self.skip_tag = ""
        self.excluded = False  # inside a data-search-exclude section
        self.heading: list[str] | None = None
        self.code: list[str] | None = None  # the text of the <pre> being read

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if self.skip_depth:
            if tag == self.skip_tag:
                self.skip_depth += 1
            return
        if tag in _HEADINGS and attributes.get("id"):
            self.excluded = "data-search-exclude" in attributes
            self.sections.append([attributes["id"], "", [], self.excluded])
            self.heading = []
            return
        if tag == "h1" or "headerlink" in classes or "gg-run" in classes:
            self.skip_depth, self.skip_tag = 1, tag
            return
        if tag == "pre":
            self.code = []
            return
        if tag not in _INLINE:
            self._text(" ")

    def handle_endtag(self, tag: str) -> None:
        if self.skip_depth:
            if tag == self.skip_tag:
                self.skip_depth -= 1
            return
        if tag == "pre" and self.code is not None:
            code, self.code = "".join(self.code), None
            if _LISTING.search(code):
                code = " ".join(dict.fromkeys(name for name in _NAME.findall(code) if len(name) > 2))
            self._text(f" {code} ")
            return
        if tag in _HEADINGS and self.heading is not None:
            self.sections[-1][1] = _SPACE.sub(" ", "".join(self.heading)).strip()
            self.heading = None
        elif tag not in _INLINE:
            self._text(" ")

    def handle_data(self, data: str) -> None:
        if self.code is not None:
            self.code.append(data)
        elif not self.skip_depth:
            self._text(data)

    def _text(self, data: str) -> None:
        if self.heading is not None:
            self.heading.append(data)
        elif not self.excluded:
            self.sections[-1][2].append(data)

    def result(self) -> list[tuple[str, str, str]]:
        out = []
        for anchor, heading, parts, excluded in self.sections:
            text = _SPACE.sub(" ", "".join(parts)).strip()
            if not excluded and (text or heading):
                out.append((anchor, heading, text))
        return out


def page_sections(html: str) -> list[tuple[str, str, str]]:
    """(anchor, heading, text) of each section of a page's article HTML."""
    parser = _SectionText()
    parser.feed(html)
    parser.close()
    return parser.result()


def page_weight(kind: str, referrers: int) -> float:
    """How much a page counts against another with the same match: a term that many pages
    link to is the central one among its neighbours (`warp` over `warpgroup`); an overview
    names every term of its section and should not outrank their pages; a generated page
    (the A–Z index, the terminology table) repeats what the term pages say."""
    if kind == "term":
        return round(1 + min(referrers, 40) / 80, 2)
    return 0.6 if kind == "overview" else 0.3


def term_names(model: Page, english: Page | None) -> list[str]:
    """Every name a reader may search a page by: its title, the English title, the
    abbreviation and the aliases, each once."""
    aliases = model.meta.get("aliases") or []
    names = [model.title, english.title if english is not None else "", model.abbreviation, *aliases]
    return list(dict.fromkeys(str(name) for name in names if name))


def search_page(
    url: str, html: str, model: Page, english: Page | None, kind: str, referrers: int, section: str
) -> SearchPage:
    """One page's entry from its built article HTML and its page model."""
    return SearchPage(
        url=url,
        title=model.title,
        names=term_names(model, english),
        summary=model.summary,
        section=section,
        weight=page_weight(kind, referrers),
        sections=page_sections(html),
    )


def write_search_index(path: Path, lang: str, pages: list[SearchPage]) -> int:
    """Write one language's index (compact UTF-8); return its size in bytes."""
    text = json.dumps(
        {"v": FORMAT, "lang": lang, "pages": [page.as_json() for page in pages]},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, text, durable=False)  # the built site: a build writes it again
    return len(text.encode("utf-8"))
