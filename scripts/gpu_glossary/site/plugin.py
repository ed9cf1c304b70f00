"""The MkDocs plugin that turns the glossary folders into one language's site.

One plugin serves both builds (English `mkdocs.yml`, Chinese `mkdocs.zh.yml`, which
inherits it); the language comes from `theme.language`. Each MkDocs event has one hook
here, and each hook hands the work to the module that owns it:

- `files`: images, untranslated fallbacks, generated pages;
- `term_index`: link previews, abbreviations, "Referenced by";
- `theme_context`: language links, notices, edit and report links for the overrides;
- `seo`: each page's title, description and social tags; `reading_path`: the path's stops;
- `gpu_glossary.sanitize` and `csp`: only allowlisted HTML, under a content security policy;
- `llms`, `search_index`, `material_fixes`: what is written after the build (the search index
  from each page's HTML, collected as it is rendered);
- `template_cache`: theme templates compiled once, not on every build.
"""

from __future__ import annotations

import html
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from mkdocs.config import config_options
from mkdocs.config.base import Config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page as MkDocsPage
from mkdocs.utils.templates import TemplateContext

from gpu_glossary.check import check_glossary
from gpu_glossary.examples.runs import Runs, load_runs
from gpu_glossary.glossary import LANGUAGES, SOURCE_LANG, Glossary, load_glossary, url_prefix
from gpu_glossary.markdown_ext import GlossaryExtension, GlossaryState
from gpu_glossary.page import Page, Problem, parse_page
from gpu_glossary.reading_path import load_path
from gpu_glossary.sanitize import cached_html_problems, sanitize
from gpu_glossary.site.csp import with_policy
from gpu_glossary.site.files import ExtraFiles, add_extra_files
from gpu_glossary.site.i18n import strings
from gpu_glossary.site.llms import SitePage, write_llms_files
from gpu_glossary.site.material_fixes import lighten_code_spans, patch_alternate_lookup
from gpu_glossary.site.provenance import with_provenance
from gpu_glossary.site.reading_path import PATH_PAGE, Stop, marker, stops_by_page
from gpu_glossary.site.search_index import INDEX_PATH, SearchPage, search_page, write_search_index
from gpu_glossary.site.seo import page_meta
from gpu_glossary.site.template_cache import with_bytecode_cache
from gpu_glossary.site.term_index import index_terms, with_referenced_by
from gpu_glossary.site.theme_context import edit_url, report_url, template_data
from gpu_glossary.terminology import Terminology, TerminologyError, load_terminology

log = logging.getLogger(f"mkdocs.plugins.{__name__}")


def _refuse(problems: list[Problem], what: str) -> None:
    """Stop the build with the checker's `path:line` messages rather than MkDocs' vaguer ones."""
    for problem in problems:
        log.error(str(problem))
    if problems:
        raise PluginError(
            f"{len(problems)} error(s) in the glossary {what} (listed above); `gpu-glossary check` shows them too"
        )


class GlossaryPluginConfig(Config):
    branch = config_options.Type(str, default="main")


class _Context(TemplateContext, total=False):
    """MkDocs' template context with what our overrides read."""

    gg: dict[str, Any]


@dataclass(frozen=True)
class _Loaded:
    """What on_config reads for each build."""

    glossary: Glossary
    terminology: Terminology
    runs: Runs


class GlossaryPlugin(BasePlugin[GlossaryPluginConfig]):
    def __init__(self) -> None:
        self.lang = SOURCE_LANG
        self._loaded: _Loaded | None = None  # the glossary, read in on_config
        self.root_site_url = ""
        self.path_stops: list[str] = []  # the reading path's pages (glossary/reading-path.yml)
        self.path_places: dict[str, Stop] = {}  # each stop's place on it
        # What our Markdown extension reads. Besides the terms, the page being rendered: set
        # before each page (on_page_markdown), as MkDocs sets config._current_page.
        self.state = GlossaryState()
        # What one build collects, emptied in on_pre_build.
        self.extra = ExtraFiles()
        self.backlinks: dict[str, list[str]] = {}
        self.nav_order: list[str] = []
        self.site_pages: dict[str, MkDocsPage] = {}  # by src_uri, as built
        self.search_pages: dict[str, SearchPage] = {}  # by src_uri, in the order built
        self.nav_pages: dict[str, MkDocsPage] = {}  # by src_uri
        self.unsafe_html: list[Problem] = []
        self.llms_parts: dict[str, tuple] = {}  # each page's part of llms-full.txt (llms.llms_full)
        # The build's files, navigation and templates, kept for the live preview, which
        # rebuilds single pages with them (site/preview.py).
        self.files: Files | None = None
        self.nav: Navigation | None = None
        self.env: jinja2.Environment | None = None

    def _read(self) -> _Loaded:
        if self._loaded is None:
            raise PluginError("the gpu_glossary plugin's hooks ran before its on_config read the glossary")
        return self._loaded

    @property
    def glossary(self) -> Glossary:
        return self._read().glossary

    @property
    def terminology(self) -> Terminology:
        return self._read().terminology

    @property
    def runs(self) -> Runs:
        return self._read().runs

    @event_priority(100)
    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self.lang = config.theme.get("language") or SOURCE_LANG
        if self.lang not in LANGUAGES:
            raise PluginError(f"theme.language '{self.lang}' is not one of the glossary's languages {LANGUAGES}")
        root = Path(config.config_file_path).resolve().parent
        glossary = load_glossary(root)
        try:
            terminology = load_terminology(glossary.terminology_path)
        except TerminologyError as exc:
            raise PluginError(str(exc)) from None
        self._loaded = _Loaded(glossary, terminology, load_runs(root))
        # The sanitizer's verdict waits for on_page_content, which judges the HTML really built.
        _refuse(
            [
                p
                for p in check_glossary(self.glossary, self.terminology, rendered=False, runs=self.runs)
                if p.severity == "error"
            ],
            "pages",
        )
        self.path_stops = load_path(self.glossary)[0]  # its problems are check_glossary's, refused above
        self.path_places = stops_by_page(self.path_stops)
        expected_docs = self.glossary.lang_dir(self.lang).resolve()
        if Path(config.docs_dir).resolve() != expected_docs:
            raise PluginError(f"docs_dir must be {expected_docs} for language '{self.lang}'")
        # repo_url is set once, in mkdocs.yml; each language edits its own folder.
        config.edit_uri = f"edit/{self.config.branch}/glossary/{self.lang}/"
        site_url, prefix = config.site_url or "", url_prefix(self.lang)
        if prefix and site_url and not site_url.endswith("/" + prefix):
            site_url += prefix  # the Chinese build inherits the English site_url
        config.site_url = site_url or None
        self.root_site_url = site_url.removesuffix(prefix) if prefix else site_url
        # MkDocs types the list as extension names; Python-Markdown takes instances too.
        config.markdown_extensions.append(GlossaryExtension(self.state))  # type: ignore[arg-type]
        return config

    def on_pre_build(self, config: MkDocsConfig) -> None:
        self.extra = ExtraFiles()
        self.backlinks = {}
        self.nav_order = []
        self.nav_pages = {}
        self.site_pages = {}
        self.search_pages = {}
        self.unsafe_html = []
        self.llms_parts = {}

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        self.files = files
        self.extra = add_extra_files(files, config, self.glossary, self.lang, self.terminology, self.path_stops)
        self.backlinks = index_terms(self.glossary, self.lang, self.state)
        return files

    def on_nav(self, nav: Navigation, config: MkDocsConfig, files: Files) -> Navigation:
        """Section titles come from each section's index page, so they follow the language."""
        self.nav = nav
        self.nav_order = [page.file.src_uri for page in nav.pages]
        self.nav_pages = {page.file.src_uri: page for page in nav.pages}
        for item in nav.items:
            if getattr(item, "is_section", False):
                index = next(
                    (c for c in item.children if getattr(c, "is_page", False) and c.file.src_uri.endswith("/index.md")),
                    None,
                )
                model = self.glossary.resolved_page(self.lang, index.file.src_uri) if index else None
                if model and model.title:
                    item.title = model.title
        return nav

    def on_page_markdown(self, markdown: str, page: MkDocsPage, config: MkDocsConfig, files: Files) -> str:
        rel = page.file.src_uri
        self.state.page_rel = rel
        # Material's search plugin stays for its header button and dialog; its index is replaced by
        # ours (search_index.py), so every page takes its documented `search: exclude` and it
        # parses none of them.
        page.meta["search"] = {"exclude": True}
        if rel in self.extra.untranslated:
            page.meta["gg_status"] = "untranslated"
        elif self.lang != SOURCE_LANG and self.glossary.translation_status(self.lang, rel) == "stale":
            page.meta["gg_status"] = "stale"
        model = self.glossary.resolved_page(self.lang, rel)
        if model is not None and model.body == markdown:
            markdown = with_provenance(model, self.runs, strings(self.lang))
        if self.backlinks.get(rel) and rel not in self.extra.generated:
            markdown = with_referenced_by(markdown, rel, self.backlinks[rel], self.glossary, self.lang)
        return markdown

    def on_page_content(self, html: str, page: MkDocsPage, config: MkDocsConfig, files: Files) -> str:
        """Publish only what the sanitizer allows; anything it removes fails the build (on_env)."""
        html = lighten_code_spans(html)
        self.unsafe_html.extend(cached_html_problems(self._source_page(page.file.src_uri), html))
        return sanitize(html)

    def on_env(self, env: jinja2.Environment, config: MkDocsConfig, files: Files) -> jinja2.Environment:
        """Every page is rendered by now and nothing is written yet: refuse unsafe HTML here.
        No template is compiled yet either: they may come compiled from an earlier build."""
        self.refuse_unsafe_html()
        self.env = with_bytecode_cache(env)
        return self.env

    def refuse_unsafe_html(self) -> None:
        """Stop with the sanitizer's messages about the pages rendered since the last call."""
        problems, self.unsafe_html = sorted(set(self.unsafe_html), key=lambda p: (p.path, p.line, p.message)), []
        _refuse(problems, "pages' HTML")

    def on_page_context(
        self, context: TemplateContext, page: MkDocsPage, config: MkDocsConfig, nav: Navigation
    ) -> TemplateContext:
        rel = page.file.src_uri
        if rel in self.extra.untranslated:
            page.edit_url = edit_url(config, self.config.branch, SOURCE_LANG, rel)
        elif rel in self.extra.generated:
            page.edit_url = None
        gg = template_data(
            config, self.lang, self.root_site_url, context.get("base_url") or ".", page.url, page.meta.get("gg_status")
        )
        gg["report_url"] = report_url(config, self.lang, page)
        model, english = self._source_page(rel), self.glossary.page(SOURCE_LANG, rel)
        self._describe(page, model, english, config, gg)
        self._place_on_path(page, rel, gg)
        self.site_pages[rel] = page
        self._index_for_search(page, rel, model, english)
        ours: _Context = {**context, "gg": gg}
        return ours

    def on_template_context(
        self, context: TemplateContext, template_name: str, config: MkDocsConfig
    ) -> TemplateContext:
        gg = template_data(config, self.lang, self.root_site_url, context.get("base_url") or ".", None, None)
        ours: _Context = {**context, "gg": gg}
        return ours

    def on_post_page(self, output: str, page: MkDocsPage, config: MkDocsConfig) -> str:
        return with_policy(output)

    def on_post_template(self, output_content: str, template_name: str, config: MkDocsConfig) -> str:
        return with_policy(output_content) if template_name.endswith(".html") else output_content

    @event_priority(-50)  # after Material's search plugin has written its (empty) index
    def on_post_build(self, config: MkDocsConfig) -> None:
        site_dir = Path(config.site_dir)
        patch_alternate_lookup(site_dir)
        self.write_search_index(site_dir)
        self.write_llms_files(config, site_dir)

    def write_search_index(self, site_dir: Path) -> None:
        """Our search index (search_index.py) of the pages built so far, Material's replaced."""
        write_search_index(site_dir / INDEX_PATH, self.lang, list(self.search_pages.values()))

    def write_llms_files(self, config: MkDocsConfig, site_dir: Path, rels: set[str] | None = None) -> None:
        """llms.txt, llms-full.txt and the Markdown twins of `rels` (default: every page)."""
        order = {rel: index for index, rel in enumerate(self.nav_order)}
        pages = []
        for rel, page in sorted(self.site_pages.items(), key=lambda item: order.get(item[0], len(order))):
            model = self._source_page(rel)
            section = page.parent.title if page.parent else ""
            pages.append(SitePage(model, page.url, model.title or page.title or "", model.summary, section))
        write_llms_files(
            site_dir,
            config.site_name,
            config.site_url or "",
            config.site_description or "",
            pages,
            strings(self.lang),
            rels,
            self.llms_parts,
        )

    def _place_on_path(self, page: MkDocsPage, rel: str, gg: dict[str, Any]) -> None:
        """A stop of the reading path shows its place on it, and its Next and Previous (the
        footer, the `n` and `p` keys) follow the path instead of the sidebar."""
        if rel == PATH_PAGE and self.path_stops:
            page.next_page = self.nav_pages.get(self.path_stops[0], page.next_page)
        stop = self.path_places.get(rel)
        if stop is None:
            return
        gg["path"] = marker(self.glossary, self.lang, rel, stop)
        page.previous_page = self.nav_pages.get(stop.previous or PATH_PAGE, page.previous_page)
        if stop.next:
            page.next_page = self.nav_pages.get(stop.next, page.next_page)

    def _describe(
        self, page: MkDocsPage, model: Page, english: Page | None, config: MkDocsConfig, gg: dict[str, Any]
    ) -> None:
        """The page's own summary as its description, its title and social tags (seo.py)."""
        if model.summary:  # Material writes <meta name="description"> from it, as it is: escaped here
            page.meta["description"] = html.escape(model.summary, quote=True)
        gg["seo"] = page_meta(
            model,
            english,
            self.lang,
            config.site_name,
            config.site_description or "",
            page.canonical_url or page.url,
            gg["alternates"],
        )

    def _index_for_search(self, page: MkDocsPage, rel: str, model: Page, english: Page | None) -> None:
        if rel in self.extra.untranslated:  # English text stays out of the Chinese index
            self.search_pages.pop(rel, None)  # the live preview may rebuild a page that lost its translation
            return
        kind = (
            "generated"
            if rel in self.extra.generated
            else "overview"
            if model.is_index or not model.section
            else "term"
        )
        section = page.parent.title if page.parent else ""
        referrers = len(self.backlinks.get(rel, []))
        self.search_pages[rel] = search_page(page.url, page.content or "", model, english, kind, referrers, section)

    def _source_page(self, rel: str) -> Page:
        """The page model behind a built page: its file, the English fallback or generated text."""
        generated = self.extra.generated.get(rel)
        if generated is not None:
            return parse_page(generated, Path(rel), f"{rel} (generated by the gpu_glossary plugin)", rel, self.lang)
        return self.glossary.require_resolved_page(self.lang, rel)
