"""`gpu-glossary new <section>/<slug>`: start a term page from the template and put it in the nav.

The page is written from the same template CONTRIBUTING.md shows, and its path is inserted
into `nav` in mkdocs.yml as a line of text (after the section's last page, or after a page
you name), so the file's comments and layout stay exactly as they were.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.glossary import SOURCE_LANG, load_glossary
from gpu_glossary.page import SECTIONS, front_matter_block

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")

SUMMARY = (
    "{title} is … (one plain sentence under 200 characters that defines it; shown in link previews and the index)."
)
BODY = """
{title} is … Open with the definition in one or two sentences a newcomer can follow.

## How it works {{#how-it-works}}

How it works, with links to the terms a reader needs, e.g. [warp](../device-software/warp.md).

## Why it matters {{#why-it-matters}}

Why it matters for writing or running fast GPU code; numbers name their GPU or version.

## Pitfalls {{#pitfalls}}

- A common confusion, and how to avoid it.

## Sources {{#sources}}

- [CUDA C++ Programming Guide](https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html)
"""


class NewTermError(ValueError):
    """Why a page cannot be created, in words a contributor can act on."""


def _nav_lines(lines: list[str], section: str) -> dict[int, str]:
    """The nav lines that list pages of `section` (`      - perf/tiling.md`): index -> its indent and dash."""
    pattern = re.compile(rf"^(\s*-\s+)(?:[^:#]+:\s*)?{re.escape(section)}/[^\s#]+\.md\s*(?:#.*)?$")
    return {index: match.group(1) for index, line in enumerate(lines) if (match := pattern.match(line))}


def insert_into_nav(config_text: str, section: str, rel: str, after: str | None = None) -> str:
    """mkdocs.yml's text with `rel` listed after the section's last page (or after `after`)."""
    lines = config_text.split("\n")
    listed = _nav_lines(lines, section)
    if not listed:
        raise NewTermError(f"mkdocs.yml has no nav entries for section '{section}'")
    if after is not None:
        target = f"{section}/{after.removesuffix('.md')}.md"
        matches = [index for index in listed if re.search(rf"\s{re.escape(target)}\s*(?:#.*)?$", lines[index])]
        if not matches:
            raise NewTermError(f"--after: '{target}' is not in the nav of mkdocs.yml")
        position = matches[0]
    else:
        position = max(listed)
    lines.insert(position + 1, f"{listed[position]}{rel}")
    return "\n".join(lines)


def create_term(root: Path, spec: str, title: str, after: str | None = None) -> Path:
    """Write glossary/en/<section>/<slug>.md from the template and list it in the nav."""
    section, _, slug = spec.removesuffix(".md").partition("/")
    if section not in SECTIONS or not slug:
        raise NewTermError(f"'{spec}' is not <section>/<slug>; sections: {', '.join(SECTIONS)}")
    if not SLUG.match(slug):
        raise NewTermError(f"slug '{slug}' must be lower-case words joined by '-', e.g. bank-conflict")
    if not title.strip() or "\n" in title:
        raise NewTermError("--title must be one line, the term as people write it")
    glossary = load_glossary(root)
    for existing in glossary.pages[SOURCE_LANG].values():
        if existing.slug == slug:
            raise NewTermError(f"slug '{slug}' already exists: {existing.display_path}")
        if existing.title.casefold() == title.strip().casefold():
            raise NewTermError(f"title '{title}' already exists: {existing.display_path}")
    rel = f"{section}/{slug}.md"
    config = root / "mkdocs.yml"
    new_config = insert_into_nav(config.read_text(encoding="utf-8"), section, rel, after)
    path = glossary.lang_dir(SOURCE_LANG) / rel
    title = title.strip()
    meta = {"title": title, "summary": SUMMARY.format(title=title)}
    write_text_atomic(path, front_matter_block(meta) + BODY.format(title=title))
    write_text_atomic(config, new_config)
    return path
