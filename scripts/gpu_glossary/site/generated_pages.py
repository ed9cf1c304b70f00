"""The pages the site generates in each language: the A–Z index and the terminology table
(the reading path's page is reading_path.py's)."""

from __future__ import annotations

import re

from gpu_glossary.glossary import SOURCE_LANG, Glossary
from gpu_glossary.page import front_matter_block
from gpu_glossary.site.i18n import strings
from gpu_glossary.site.search_index import term_names
from gpu_glossary.terminology import Terminology


def generated_front_matter(title: str, summary: str) -> str:
    return front_matter_block({"title": title, "summary": summary}) + "\n"


def escape_markdown(text: str) -> str:
    """Plain text (summaries, terms) placed into Markdown: no accidental emphasis, links or cells."""
    escaped = re.sub(r"([\\`*_\[\]|])", r"\\\1", text.replace("\n", " "))
    return escaped.replace("<", "&lt;")


def index_page(glossary: Glossary, lang: str) -> str:
    """Markdown of the A–Z index: terms grouped by the first letter of their English title."""
    words = strings(lang)
    entries = []
    for page in glossary.term_pages(lang):
        english = glossary.page(SOURCE_LANG, page.rel) or page
        key = english.title or page.slug
        label = page.title or key
        if lang != SOURCE_LANG and english.title and english.title != label:
            label = f"{label}（{english.title}）"
        entries.append((key.casefold(), key, label, page))
    entries.sort()
    out = [generated_front_matter(words["index_title"], words["index_summary"]), words["index_intro"], "\n"]
    letter = None
    for _, key, label, page in entries:
        first = key[0].upper() if key[0].isalpha() else "#"
        if first != letter:
            letter = first
            anchor = first.lower() if first.isalpha() else "other"
            # Out of search: every summary here is already in its own page's entry.
            out.append(f"\n## {first} {{#{anchor} data-search-exclude}}\n\n")
        abbreviation = ""
        if page.abbreviation and page.abbreviation not in label:  # Chinese text takes full-width brackets
            abbreviation = f"（{page.abbreviation}）" if lang == "zh" else f" ({page.abbreviation})"
        link = f"**[{escape_markdown(label)}]({page.rel})**"
        out.append(f"- {link}{abbreviation}{words['colon']}{escape_markdown(page.summary)}\n")
    return "".join(out)


def term_pages_by_name(glossary: Glossary) -> dict[str, str]:
    """Each English title, abbreviation and alias (case-folded) -> the page that defines it."""
    found: dict[str, str] = {}
    for page in glossary.term_pages(SOURCE_LANG):
        for name in term_names(page, None):
            found.setdefault(name.casefold(), page.rel)
    return found


def terminology_page(terminology: Terminology, lang: str, glossary: Glossary | None = None) -> str:
    """Markdown of the English↔Chinese terminology table; a term with a page links to it."""
    words = strings(lang)
    english, chinese, avoid = words["terminology_columns"]
    pages = term_pages_by_name(glossary) if glossary is not None else {}
    out = [
        generated_front_matter(words["terminology_title"], words["terminology_summary"]),
        words["terminology_intro"],
        "\n\n",
    ]
    out.append(f"| {english} | {chinese} | {avoid} |\n|---|---|---|\n")
    for term in sorted(terminology.terms, key=lambda t: t.en.casefold()):
        name = escape_markdown(term.en)
        rel = pages.get(term.en.casefold())
        if rel is not None:  # a term page in English, so every language shows one at rel
            name = f"[{name}]({rel})"
        out.append(f"| {name} | {escape_markdown(term.zh)} | {escape_markdown('、'.join(term.avoid_labels()))} |\n")
    out.append(f"\n## {words['keep_english']} {{#keep-english}}\n\n")
    out.append(", ".join(f"`{name}`" for name in terminology.keep_english) + "\n")
    return "".join(out)
