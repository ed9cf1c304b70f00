"""A throwaway copy of the project with more term pages, for timing a bigger glossary.

Each term page (not a section's index) is copied under a new slug (`warp-x2.md`) in its
section, in both languages, with its title marked (`Warp (copy 2)`), without abbreviation or
aliases (each stays with one page), its Chinese copy current where the original is, and
listed in the navigation right after its original. The copies' links still point at the
originals, so the originals are linked more, as central terms are. The copy passes
`gpu-glossary check`.

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
from gpu_glossary.page import with_front_matter, with_source_hash  # noqa: E402

PROJECT_FILES = ("mkdocs.yml", "mkdocs.zh.yml", "overrides", "glossary")


def scaled_copy(target: Path, factor: float, source: Path = ROOT) -> Path:
    """Copy the project at `source` into `target` with `factor` times its term pages."""
    target.mkdir(parents=True, exist_ok=True)
    for name in PROJECT_FILES:
        (shutil.copytree if (source / name).is_dir() else shutil.copy2)(source / name, target / name)
    glossary = load_glossary(target)
    terms = [page for page in glossary.term_pages(SOURCE_LANG)]
    extra = round((factor - 1) * len(terms))
    copies: dict[str, list[str]] = {}  # original rel -> its copies' rels, in order
    for number in range(extra):
        original = terms[number % len(terms)]
        copy_number = 2 + number // len(terms)
        rel = original.rel.removesuffix(".md") + f"-x{copy_number}.md"
        copies.setdefault(original.rel, []).append(rel)
        english_text = _copied(original.text, f"{original.title} (copy {copy_number})")
        (glossary.lang_dir(SOURCE_LANG) / rel).write_text(english_text, encoding="utf-8")
        for lang, pages in glossary.pages.items():
            translated = pages.get(original.rel) if lang != SOURCE_LANG else None
            if translated is None:
                continue
            text = _copied(translated.text, f"{translated.title}（副本 {copy_number}）")
            if glossary.translation_status(lang, original.rel) == "current":
                text = with_source_hash(text, _hash(english_text))
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


def _copied(text: str, title: str) -> str:
    return with_front_matter(text, {"title": title, "abbreviation": None, "aliases": None})


def _hash(text: str) -> str:
    from gpu_glossary.page import source_hash

    return source_hash(text)
