"""A throwaway copy of the project with more term pages, for timing a bigger glossary.

Each term page (not a section's index) is copied under a new slug (`warp-x2.md`) in its
section, in both languages, with its title marked (`Warp (copy 2)`), without abbreviation or
aliases (each stays with one page), its Chinese copy current where the original is, and
listed in the navigation right after its original. A copy's links to term pages point at
their copies of the same number where there are some, so each page is linked about as often
as in the glossary itself. The copy passes `gpu-glossary check`.

    from scaled import scaled_copy
    root = scaled_copy(Path("/tmp/x"), 4)   # 4x the term pages; 1.25: a quarter more
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from gpu_glossary.glossary import SOURCE_LANG, load_glossary  # noqa: E402
from gpu_glossary.page import resolve_link, source_hash, with_front_matter, with_source_hash  # noqa: E402

PROJECT_FILES = ("mkdocs.yml", "mkdocs.zh.yml", "overrides", "glossary")


def scaled_copy(target: Path, factor: float, source: Path = ROOT) -> Path:
    """Copy the project at `source` into `target` with `factor` times its term pages."""
    target.mkdir(parents=True, exist_ok=True)
    for name in PROJECT_FILES:
        (shutil.copytree if (source / name).is_dir() else shutil.copy2)(source / name, target / name)
    glossary = load_glossary(target)
    terms = glossary.term_pages(SOURCE_LANG)
    extra = round((factor - 1) * len(terms))
    planned = [(terms[number % len(terms)], 2 + number // len(terms)) for number in range(extra)]
    copied = {(original.rel, copy_number) for original, copy_number in planned}
    copies: dict[str, list[str]] = {}  # original rel -> its copies' rels, in order
    for original, copy_number in planned:
        rel = _copy_rel(original.rel, copy_number)
        copies.setdefault(original.rel, []).append(rel)
        english_text = _copied(original, f"{original.title} (copy {copy_number})", copy_number, copied)
        (glossary.lang_dir(SOURCE_LANG) / rel).write_text(english_text, encoding="utf-8")
        for lang, pages in glossary.pages.items():
            translated = pages.get(original.rel) if lang != SOURCE_LANG else None
            if translated is None:
                continue
            text = _copied(translated, f"{translated.title}（副本 {copy_number}）", copy_number, copied)
            if glossary.translation_status(lang, original.rel) == "current":
                text = with_source_hash(text, source_hash(english_text))
            (glossary.lang_dir(lang) / rel).write_text(text, encoding="utf-8")
    config = target / "mkdocs.yml"
    lines = []
    for line in config.read_text(encoding="utf-8").split("\n"):
        lines.append(line)
        listed = re.fullmatch(r"(\s*- )(\S+\.md)\s*", line)
        if listed and listed.group(2) in copies:
            lines.extend(listed.group(1) + rel for rel in copies[listed.group(2)])
    config.write_text("\n".join(lines), encoding="utf-8")
    return target


def _copy_rel(rel: str, copy_number: int) -> str:
    return rel.removesuffix(".md") + f"-x{copy_number}.md"


def _copied(page, title: str, copy_number: int, copied: set[tuple[str, int]]) -> str:
    """The page's text as its copy: the new title, and links to term pages that have a copy of
    this number pointing at it."""

    def relink(match: re.Match) -> str:
        target = match.group(2)
        if (resolve_link(page.rel, target), copy_number) not in copied:
            return match.group(0)
        return match.group(1) + _copy_rel(target, copy_number)

    text = _LINK.sub(relink, page.text)
    return with_front_matter(text, {"title": title, "abbreviation": None, "aliases": None})


_LINK = re.compile(r"(\]\(\s*)([^)#\s:]+\.md)(?=[#)\s])")
