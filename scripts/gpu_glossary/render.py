"""Rendering a page's Markdown to HTML: one home for the checker, the translator and the site.

The site renders through MkDocs, with the Markdown extensions `mkdocs.yml` names (our own
among them: `markdown_ext` for link previews and abbreviations, `highlight` for kept code
highlighting). The checker and the translation checks need the same HTML without running
MkDocs (loading its configuration is slow), so the extensions are read here from
`mkdocs.yml` and the language's config that inherits it exactly as MkDocs reads them (a test
compares the two), and `Renderer` renders with them.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import markdown

from gpu_glossary.cache import in_memory
from gpu_glossary.glossary import CONFIGS, SOURCE_LANG, read_mkdocs_config
from gpu_glossary.markdown_ext import GlossaryExtension, GlossaryState

# MkDocs puts these in front of every site's markdown_extensions.
MKDOCS_BUILTIN_EXTENSIONS = ("toc", "tables", "fenced_code")


def _extension_mapping(value: Any) -> dict[str, dict]:  # value: as read from YAML
    """markdown_extensions as MkDocs accepts it (a mapping, or a list of names and one-key mappings)."""
    items = (
        value.items()
        if isinstance(value, dict)
        else [next(iter(item.items())) if isinstance(item, dict) else (item, None) for item in value or []]
    )
    return {str(name): dict(options or {}) for name, options in items}


def markdown_settings(root: Path, lang: str) -> tuple[list[str], dict[str, dict]]:
    """(extension names in MkDocs' order, their options) for one language's build."""
    extensions = _extension_mapping(read_mkdocs_config(root / CONFIGS[SOURCE_LANG]).get("markdown_extensions"))
    if lang != SOURCE_LANG:  # INHERIT merges mappings: the language's options win key by key
        own = _extension_mapping(read_mkdocs_config(root / CONFIGS[lang]).get("markdown_extensions"))
        for name, options in own.items():
            extensions[name] = {**extensions.get(name, {}), **options}
    names = list(dict.fromkeys([*MKDOCS_BUILTIN_EXTENSIONS, *extensions]))
    return names, {name: options for name, options in extensions.items() if options}


class Renderer:
    """One Markdown converter, reused page after page (reset in between, as MkDocs' is fresh).

    Our own extension runs with no terms and no abbreviations: link previews and
    abbreviations only add attributes the sanitizer allows, so they cannot change a verdict.
    """

    def __init__(self, extensions: list[str], options: dict[str, dict]):
        self.settings = (list(extensions), {name: dict(value) for name, value in options.items()})
        self._markdown = markdown.Markdown(
            extensions=[*extensions, GlossaryExtension(GlossaryState())], extension_configs=options
        )
        # The same text gives the same HTML: the translation checks render an English page
        # once for each reply they compare with it. Emptied with the renderers (clear_caches).
        self.html = functools.lru_cache(maxsize=1024)(self._convert)

    @classmethod
    def for_language(cls, root: Path, lang: str) -> Renderer:
        """The renderer of one language's settings, shared by every caller with the same settings."""
        return shared_renderer(markdown_settings(root, lang))

    def _convert(self, text: str) -> str:
        self._markdown.reset()
        return self._markdown.convert(text)


def shared_renderer(settings: tuple[list[str], dict[str, dict]]) -> Renderer:
    """The one renderer of these `markdown_settings`, made on first use."""
    return _renderer_of(json.dumps(settings, sort_keys=True))


@in_memory(maxsize=8)
def _renderer_of(settings: str) -> Renderer:
    return Renderer(*json.loads(settings))
