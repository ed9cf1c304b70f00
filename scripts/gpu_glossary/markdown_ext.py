"""A Python-Markdown extension: abbreviations that also work between CJK characters, and
link-preview data on links to term pages.

Python-Markdown's `abbr` matches on `\\b`, which never fires between Chinese characters
("每个SM有"), so abbreviations are matched here on "no ASCII letter or digit beside it".
Links still carry their `.md` targets at this point (MkDocs rewrites them later), so a
link to a term page is recognised by its path and given the term's title and summary.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as etree
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from markdown import Extension, Markdown
from markdown.treeprocessors import Treeprocessor

from gpu_glossary.page import resolve_link

_SKIP_TAGS = {"code", "pre", "a", "abbr", "script", "style", "kbd", "samp"}


@dataclass
class TermInfo:
    title: str
    summary: str


@dataclass
class GlossaryState:
    """What the extension needs to know; the plugin fills it before each page."""

    abbreviations: dict[str, str] = field(default_factory=dict)  # "SM" -> "Streaming Multiprocessor"
    terms: dict[str, TermInfo] = field(default_factory=dict)  # "device-software/warp.md" -> info
    page_rel: str = ""

    def abbreviation_pattern(self) -> re.Pattern[str] | None:
        if not self.abbreviations:
            return None
        names = sorted(self.abbreviations, key=len, reverse=True)
        alternatives = "|".join(re.escape(name) for name in names)
        # Not glued to ASCII letters/digits; a plural "s" may follow ("SMs").
        return re.compile(rf"(?<![A-Za-z0-9_])({alternatives})(?=s?(?![A-Za-z0-9_]))")


class _GlossaryTreeprocessor(Treeprocessor):
    def __init__(self, md: Markdown, state: GlossaryState):
        super().__init__(md)
        self.state = state

    def run(self, root: etree.Element) -> None:
        pattern = self.state.abbreviation_pattern()
        for element in list(root.iter()):
            if element.tag == "a":
                self._annotate_link(element)
        if pattern is not None:
            self._wrap_abbreviations(root, pattern)

    def _annotate_link(self, link: etree.Element) -> None:
        href = link.get("href", "")
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or not parts.path.endswith(".md"):
            return
        target = resolve_link(self.state.page_rel, parts.path)
        info = self.state.terms.get(target)
        if info and target != self.state.page_rel:
            link.set("data-gg-title", info.title)
            link.set("data-gg-summary", info.summary)

    def _wrap_abbreviations(self, element: etree.Element, pattern: re.Pattern[str]) -> None:
        if element.tag in _SKIP_TAGS:
            return
        children = list(element)
        for child in children:
            self._wrap_abbreviations(child, pattern)
        split = self._split(element.text, pattern)
        if split:
            element.text, nodes = split
            for index, node in enumerate(nodes):
                element.insert(index, node)
        for child in children:  # a child's tail is text of this element, even after <code> or <a>
            split = self._split(child.tail, pattern)
            if split:
                child.tail, nodes = split
                position = list(element).index(child)
                for offset, node in enumerate(nodes, start=1):
                    element.insert(position + offset, node)

    def _split(self, text: str | None, pattern: re.Pattern[str]) -> tuple[str, list[etree.Element]] | None:
        """Text before the first match, and one <abbr> (its tail the following text) per match;
        None where the text has no abbreviation."""
        matches = list(pattern.finditer(text or ""))
        if not text or not matches:
            return None
        head = text[: matches[0].start()]
        nodes = []
        for index, match in enumerate(matches):
            abbr = etree.Element("abbr", {"title": self.state.abbreviations[match.group(1)]})
            abbr.text = match.group(1)
            end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
            abbr.tail = text[match.end() : end]
            nodes.append(abbr)
        return head, nodes


class GlossaryExtension(Extension):
    """Registered by the MkDocs plugin with a shared `GlossaryState`."""

    def __init__(self, state: GlossaryState, **kwargs: object):
        self.state = state
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:
        # After attr_list (8) has taken `{#id}` off headings, before toc (5) and before
        # MkDocs rewrites .md links (relpath, 0).
        md.treeprocessors.register(_GlossaryTreeprocessor(md, self.state), "gpu_glossary", 6)
