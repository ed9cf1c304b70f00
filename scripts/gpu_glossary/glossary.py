"""The whole glossary on disk: both languages' pages, the navigation and the terminology.

Loaded once per command or build; the checker, the plugin and the translator ask it
questions (which page is at this path, is this translation stale) instead of walking
the folders themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from gpu_glossary import fast_yaml
from gpu_glossary.page import Page, read_page, source_hash

SOURCE_LANG = "en"
LANGUAGES = ("en", "zh")
LANGUAGE_NAMES = {"en": "English", "zh": "中文"}
# Each language's MkDocs configuration, relative to the project root.
CONFIGS = {"en": "mkdocs.yml", "zh": "mkdocs.zh.yml"}
# Pages the MkDocs plugin generates in every language; the navigation may list them.
GENERATED_PAGES = ("terms.md", "terminology.md", "path.md")


def url_prefix(lang: str) -> str:
    """Where a language lives under the site root: English at '', others at 'zh/'."""
    return "" if lang == SOURCE_LANG else f"{lang}/"


def _skip_tags(loader: type[yaml.constructor.SafeConstructor]) -> None:
    """Read tagged values (!ENV, !!python/name:...) as null instead of executing the tags."""
    loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


class _TolerantLoader(yaml.SafeLoader):
    """Reads mkdocs.yml without executing its tags."""


_skip_tags(_TolerantLoader)
_tolerant_c_loader: type[yaml.CSafeLoader] | None = None
if fast_yaml.C_LOADER is not None:

    class _TolerantCLoader(yaml.CSafeLoader):
        """The same through libyaml: 2 ms for mkdocs.yml instead of 22, and every command reads it."""

    _skip_tags(_TolerantCLoader)
    _tolerant_c_loader = _TolerantCLoader


def read_mkdocs_config(path: Path) -> dict:
    return fast_yaml.load(path.read_text(encoding="utf-8"), _TolerantLoader, _tolerant_c_loader) or {}


def nav_paths(nav: object) -> list[str]:
    """Every Markdown path the navigation lists, in order."""
    found: list[str] = []
    if isinstance(nav, str):
        if nav.endswith(".md"):
            found.append(nav)
    elif isinstance(nav, list):
        for item in nav:
            found.extend(nav_paths(item))
    elif isinstance(nav, dict):
        for value in nav.values():
            found.extend(nav_paths(value))
    return found


def find_root(start: Path | None = None) -> Path:
    """The project root: the nearest folder, upwards, that holds mkdocs.yml and glossary/."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "mkdocs.yml").is_file() and (folder / "glossary").is_dir():
            return folder
    raise FileNotFoundError(f"no mkdocs.yml with a glossary/ folder beside it in {here} or above")


@dataclass
class Glossary:
    root: Path
    pages: dict[str, dict[str, Page]] = field(default_factory=dict)  # lang -> rel -> page
    nav: list[str] = field(default_factory=list)

    @property
    def glossary_dir(self) -> Path:
        return self.root / "glossary"

    @property
    def images_dir(self) -> Path:
        return self.glossary_dir / "images"

    @property
    def terminology_path(self) -> Path:
        return self.glossary_dir / "terminology.yml"

    def lang_dir(self, lang: str) -> Path:
        return self.glossary_dir / lang

    def page(self, lang: str, rel: str) -> Page | None:
        return self.pages.get(lang, {}).get(rel)

    def source_hash_of(self, rel: str) -> str:
        english = self.page(SOURCE_LANG, rel)
        return source_hash(english.text) if english else ""

    def translation_status(self, lang: str, rel: str) -> str:
        """'missing', 'stale' or 'current' for the translation of English page `rel`."""
        translated = self.page(lang, rel)
        if translated is None:
            return "missing"
        if translated.recorded_source_hash != self.source_hash_of(rel):
            return "stale"
        return "current"

    def resolved_page(self, lang: str, rel: str) -> Page | None:
        """The page a reader of `lang` sees at `rel`: the translation, else the English page."""
        return self.page(lang, rel) or self.page(SOURCE_LANG, rel)

    def require_resolved_page(self, lang: str, rel: str) -> Page:
        """`resolved_page` where `rel` must exist (a listed page, a checked link or reading-path stop)."""
        page = self.resolved_page(lang, rel)
        if page is None:
            raise LookupError(f"no page {rel} in glossary/{lang} or glossary/{SOURCE_LANG}")
        return page

    def term_pages(self, lang: str) -> list[Page]:
        """Every term page a reader of `lang` sees (translated or English fallback), by path."""
        rels = sorted(set(self.pages.get(SOURCE_LANG, {})) | set(self.pages.get(lang, {})))
        pages = [self.resolved_page(lang, rel) for rel in rels]
        return [p for p in pages if p and p.section and not p.is_index]


def load_glossary(root: Path) -> Glossary:
    glossary = Glossary(root=root)
    config = read_mkdocs_config(root / "mkdocs.yml")
    glossary.nav = nav_paths(config.get("nav") or [])
    for lang in LANGUAGES:
        lang_dir = glossary.lang_dir(lang)
        glossary.pages[lang] = (
            {
                path.relative_to(lang_dir).as_posix(): read_page(path, root, lang_dir, lang)
                for path in sorted(lang_dir.rglob("*.md"))
            }
            if lang_dir.is_dir()
            else {}
        )
    return glossary
