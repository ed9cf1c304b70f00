"""What each page knows about the others: previews, abbreviations, backlinks."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from pathlib import Path

from gpu_glossary.cache import in_memory
from gpu_glossary.glossary import SOURCE_LANG, Glossary
from gpu_glossary.markdown_ext import GlossaryState, TermInfo
from gpu_glossary.page import SECTIONS, Page, resolve_link
from gpu_glossary.site.generated_pages import escape_markdown
from gpu_glossary.site.i18n import strings


def index_terms(glossary: Glossary, lang: str, state: GlossaryState) -> dict[str, list[str]]:
    """Fill in summaries for link previews and abbreviations; return who links to each page."""
    state.terms.clear()
    state.abbreviations.clear()
    for page in glossary.term_pages(lang):
        english = glossary.page(SOURCE_LANG, page.rel) or page
        state.terms[page.rel] = TermInfo(page.title, page.summary)
        if page.abbreviation and page.abbreviation != page.title:
            expansion = page.title
            if english.title and english.title not in expansion:
                expansion = f"{expansion}（{english.title}）"
            state.abbreviations[page.abbreviation] = expansion
    return backlinks(glossary, lang)


def backlinks(glossary: Glossary, lang: str) -> dict[str, list[str]]:
    """Who links to each page, as a reader of `lang` sees the pages, in path order."""
    found = defaultdict(list)
    for rel in sorted(set(glossary.pages[SOURCE_LANG]) | set(glossary.pages[lang])):
        for target in link_targets(glossary.require_resolved_page(lang, rel)):
            found[target].append(rel)
    return dict(found)


def link_targets(page: Page) -> tuple[str, ...]:
    """The pages `page` links to (paths in its language folder), each once, itself left out."""
    return _link_targets(page.rel, page.body)


@in_memory(maxsize=4096)  # a page's links are read once per body, not once per build of a page
def _link_targets(rel: str, body: str) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for link in Page(Path(rel), rel, rel, SOURCE_LANG, body=body).links():
        target = link.target.split("#")[0]
        if link.is_image or not target.endswith(".md") or "://" in target:
            continue
        target_rel = resolve_link(rel, target)
        if target_rel != rel:
            found[target_rel] = None
    return tuple(found)


def with_referenced_by(markdown: str, rel: str, referrers: list[str], glossary: Glossary, lang: str) -> str:
    """Append the "Referenced by" list, one line per section in reading order (a flat list ran
    to 45 entries); search skips it (a list of titles only adds weight)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for source in referrers:
        link = posixpath.relpath(source, posixpath.dirname(rel) or ".")
        page = glossary.require_resolved_page(lang, source)
        groups[page.section or ""].append(f"[{escape_markdown(page.title)}]({link})")
    words = strings(lang)
    separator = "、" if lang == "zh" else ", "
    lines = []
    for section in sorted(groups, key=lambda s: SECTIONS.index(s) if s in SECTIONS else -1):
        index = glossary.resolved_page(lang, f"{section}/index.md") if section else None
        name = index.title if index is not None else words["overview"]
        lines.append(f"- **{escape_markdown(name)}**{words['colon']}{separator.join(groups[section])}")
    heading = f"## {words['referenced_by']} {{#referenced-by data-search-exclude}}"
    return markdown.rstrip() + f"\n\n{heading}\n\n" + "\n".join(lines) + "\n"
