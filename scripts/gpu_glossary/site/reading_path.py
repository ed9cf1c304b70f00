"""The reading path (glossary/reading-path.yml): its page, and each stop's place on it.

The path is a list of pages in reading order, kept apart from the navigation, which groups
terms by section: a newcomer reads a kernel, a warp and an SM before memory coalescing, though
they sit in three sections. The site shows it three ways: the generated page `path.md`, a
marker on each stop naming its neighbours, and the stop's "Next" (footer and `n` key).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

import yaml

from gpu_glossary.glossary import SOURCE_LANG, Glossary
from gpu_glossary.page import Problem, front_matter_block
from gpu_glossary.site.generated_pages import escape_markdown
from gpu_glossary.site.i18n import strings

PATH_FILE = "reading-path.yml"
PATH_PAGE = "path.md"


@dataclass(frozen=True)
class Stop:
    position: int  # 1-based
    total: int
    previous: str | None  # rel of the stop before, None for the first
    next: str | None


def load_path(glossary: Glossary) -> tuple[list[str], list[Problem]]:
    """The path's pages in order, and a problem (file and line) for each entry that is not a
    page of the English glossary, is repeated, or is not a path."""
    path = glossary.glossary_dir / PATH_FILE
    if not path.is_file():
        return [], []
    display = f"glossary/{PATH_FILE}"
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        entries = yaml.safe_load("\n".join(lines)) or []
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", 0) + 1
        return [], [Problem(display, line, "error", f"not valid YAML: {exc}")]
    if not isinstance(entries, list):
        return [], [Problem(display, 1, "error", "must be a list of page paths, one `- section/page.md` per line")]
    stops, problems = [], []
    item_lines = [n for n, text in enumerate(lines, 1) if text.lstrip().startswith("-")]  # one per entry
    for index, entry in enumerate(entries):
        line = item_lines[index] if index < len(item_lines) else 1
        if not isinstance(entry, str) or glossary.page(SOURCE_LANG, entry) is None:
            problems.append(Problem(display, line, "error", f"'{entry}' is not a page in glossary/{SOURCE_LANG}"))
        elif entry in stops:
            problems.append(Problem(display, line, "error", f"'{entry}' is on the path twice"))
        else:
            stops.append(entry)
    return stops, problems


def stops_by_page(stops: list[str]) -> dict[str, Stop]:
    return {
        rel: Stop(i + 1, len(stops), stops[i - 1] if i else None, stops[i + 1] if i + 1 < len(stops) else None)
        for i, rel in enumerate(stops)
    }


def path_page(glossary: Glossary, lang: str, stops: list[str]) -> str:
    """Markdown of the path page: each stop numbered, with its summary."""
    words = strings(lang)
    out = [front_matter_block({"title": words["path_title"], "summary": words["path_summary"]}), "\n"]
    out.append(words["path_intro"] + "\n\n")
    colon = "：" if lang == "zh" else ": "
    for rel in stops:
        page = glossary.resolved_page(lang, rel)
        out.append(f"1. **[{escape_markdown(page.title)}]({rel})**{colon}{escape_markdown(page.summary)}\n")
    return "".join(out)


def marker(glossary: Glossary, lang: str, rel: str, stop: Stop) -> dict:
    """What the theme shows on a stop: where it stands, and links to its neighbours."""

    def link(target: str | None) -> dict | None:
        if target is None:
            return None
        href = posixpath.relpath(target.removesuffix(".md") + "/", posixpath.dirname(rel.removesuffix(".md") + "/"))
        return {"href": href + "/", "title": glossary.resolved_page(lang, target).title}

    path_href = posixpath.relpath("path/", posixpath.dirname(rel.removesuffix(".md") + "/")) + "/"
    return {
        "position": stop.position,
        "total": stop.total,
        "page": path_href,
        "previous": link(stop.previous),
        "next": link(stop.next),
    }
