"""The reading path (glossary/reading-path.yml): its page, and each stop's place on it.

The path is a list of pages in reading order, kept apart from the navigation, which groups
terms by section: a newcomer reads a kernel, a warp and an SM before memory coalescing, though
they sit in three sections. The site shows it three ways: the generated page `path.md`, a
marker on each stop naming its neighbours, and the stop's "Next" (footer and `n` key). The
list itself is read and checked by gpu_glossary.reading_path.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from gpu_glossary.glossary import Glossary
from gpu_glossary.site.generated_pages import escape_markdown, generated_front_matter
from gpu_glossary.site.i18n import strings

PATH_PAGE = "path.md"


@dataclass(frozen=True)
class Stop:
    position: int  # 1-based
    total: int
    previous: str | None  # rel of the stop before, None for the first
    next: str | None


def stops_by_page(stops: list[str]) -> dict[str, Stop]:
    return {
        rel: Stop(i + 1, len(stops), stops[i - 1] if i else None, stops[i + 1] if i + 1 < len(stops) else None)
        for i, rel in enumerate(stops)
    }


def path_page(glossary: Glossary, lang: str, stops: list[str]) -> str:
    """Markdown of the path page: each stop numbered, with its summary."""
    words = strings(lang)
    out = [generated_front_matter(words["path_title"], words["path_summary"])]
    out.append(words["path_intro"] + "\n\n")
    for rel in stops:
        page = glossary.require_resolved_page(lang, rel)
        out.append(f"1. **[{escape_markdown(page.title)}]({rel})**{words['colon']}{escape_markdown(page.summary)}\n")
    return "".join(out)


def marker(glossary: Glossary, lang: str, rel: str, stop: Stop) -> dict:
    """What the theme shows on a stop: where it stands, and links to its neighbours."""

    here = posixpath.dirname(rel.removesuffix(".md") + "/")

    def href(target: str) -> str:
        return posixpath.relpath(target.removesuffix(".md") + "/", here) + "/"

    def link(target: str | None) -> dict | None:
        if target is None:
            return None
        return {"href": href(target), "title": glossary.require_resolved_page(lang, target).title}

    return {
        "position": stop.position,
        "total": stop.total,
        "page": href(PATH_PAGE),
        "previous": link(stop.previous),
        "next": link(stop.next),
    }
