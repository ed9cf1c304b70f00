"""The MkDocs plugin that turns the glossary folders into one language's site.

One plugin serves both builds (English `mkdocs.yml`, Chinese `mkdocs.zh.yml`, which
inherits it); the language comes from `theme.language`. It adds what Material lacks:
untranslated and stale Chinese pages, same-page language links, link previews,
CJK-safe abbreviations, "Referenced by", the A–Z and terminology pages, the jieba
dictionary for Chinese search, and llms.txt with Markdown twins of every page.
"""

from __future__ import annotations

import logging
import os
import posixpath
import tempfile
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlencode, urljoin

from mkdocs.config import config_options
from mkdocs.config.base import Config
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File, Files, InclusionLevel

from .check import IMAGE_EXTENSIONS, check_glossary
from .csp import with_policy
from .examples import load_runs, with_provenance
from .generated_pages import escape_markdown, index_page, terminology_page
from .glossary import LANGUAGE_NAMES, LANGUAGES, SOURCE_LANG, Glossary, load_glossary, url_prefix
from .i18n import strings
from .llms import SitePage, llms_full, llms_txt, markdown_twin, twin_url
from .markdown_ext import GlossaryExtension, GlossaryState, TermInfo
from .page import Page, Problem, parse_page, resolve_link
from .sanitize import cached_html_problems, sanitize
from .terminology import TerminologyError, load_terminology

log = logging.getLogger(f"mkdocs.plugins.{__name__}")

# Material's language selector fetches `sitemap.xml` beside every <link rel=alternate>,
# assuming they point at site roots; our per-page hreflang and Markdown links make that a
# 404 on every page load (mkdocs-material#6582). Our selector links straight to the same
# page, so the lookup is switched off: no link carries the attribute the patch asks for.
_MATERIAL_ALTERNATE_SELECTOR = '"link[rel=alternate]"'
_PATCHED_ALTERNATE_SELECTOR = '"link[rel=alternate][data-gg-site-root]"'


class GlossaryPluginConfig(Config):
    branch = config_options.Type(str, default="main")


class GlossaryPlugin(BasePlugin[GlossaryPluginConfig]):
    def __init__(self):
        self.state = GlossaryState()
        self.glossary: Glossary | None = None
        self.lang = SOURCE_LANG
        self.untranslated: set[str] = set()
        self.generated_sources: dict[str, str] = {}
        self.backlinks: dict[str, list[str]] = {}
        self.site_pages: list = []
        self.nav_order: list[str] = []
        self.root_site_url = ""
        self._jieba_dict: str | None = None
        self.unsafe_html: list[Problem] = []

    # -- configuration ------------------------------------------------------------
    @event_priority(100)  # before Material's search plugin reads jieba_dict_user
    def on_config(self, config):
        self.lang = config.theme.get("language") or SOURCE_LANG
        if self.lang not in LANGUAGES:
            raise PluginError(f"theme.language '{self.lang}' is not one of the glossary's languages {LANGUAGES}")
        root = Path(config.config_file_path).resolve().parent
        self.glossary = load_glossary(root)
        try:
            self.terminology = load_terminology(self.glossary.terminology_path)
        except TerminologyError as exc:
            raise PluginError(str(exc)) from None
        self._refuse_broken_pages()
        self.runs = load_runs(root)
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
        if self.lang == "zh":
            self._install_jieba_dictionary(config)
        config.markdown_extensions.append(GlossaryExtension(self.state))
        return config

    def _refuse_broken_pages(self) -> None:
        """Stop with the checker's `path:line` messages rather than MkDocs' later, vaguer ones.

        The sanitizer's verdict is left to on_page_content, which judges the HTML this
        build really renders (the checker renders the same pages the same way).
        """
        errors = [p for p in check_glossary(self.glossary, self.terminology, rendered=False) if p.severity == "error"]
        for problem in errors:
            log.error(str(problem))
        if errors:
            raise PluginError(f"{len(errors)} error(s) in the glossary pages (listed above); `gpu-glossary check` shows them too")

    def _install_jieba_dictionary(self, config) -> None:
        search = next((p for p in config.plugins.values() if hasattr(p.config, "jieba_dict_user")), None)
        if search is None:
            return
        handle, path = tempfile.mkstemp(prefix="gpu-glossary-jieba-", suffix=".txt")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(self.terminology.jieba_dictionary())
        self._jieba_dict = path
        search.config.jieba_dict_user = path

    # -- files --------------------------------------------------------------------
    def on_files(self, files: Files, config) -> Files:
        glossary = self.glossary
        for image in sorted(glossary.images_dir.rglob("*")) if glossary.images_dir.is_dir() else []:
            if image.is_file() and image.suffix.lower() in IMAGE_EXTENSIONS:  # not PALETTE.md
                src_uri = "images/" + image.relative_to(glossary.images_dir).as_posix()
                files.append(File(src_uri, str(glossary.glossary_dir), config.site_dir, config.use_directory_urls))
        self.untranslated = set()
        if self.lang != SOURCE_LANG:
            for rel, english in glossary.pages[SOURCE_LANG].items():
                if glossary.page(self.lang, rel) is None:
                    files.append(File.generated(config, rel, content=english.text, inclusion=InclusionLevel.INCLUDED))
                    self.untranslated.add(rel)
        self.generated_sources = {
            "terms.md": index_page(glossary, self.lang),
            "terminology.md": terminology_page(self.terminology, self.lang),
        }
        for rel, content in self.generated_sources.items():
            files.append(File.generated(config, rel, content=content))
        self._index_terms()
        return files

    def _index_terms(self) -> None:
        """Summaries for link previews, abbreviations, and who links to whom."""
        glossary, lang = self.glossary, self.lang
        self.state.terms.clear()
        self.state.abbreviations.clear()
        for page in glossary.term_pages(lang):
            english = glossary.page(SOURCE_LANG, page.rel) or page
            self.state.terms[page.rel] = TermInfo(page.title, page.summary)
            if page.abbreviation and page.abbreviation != page.title:
                expansion = page.title
                if english.title and english.title not in expansion:
                    expansion = f"{expansion}（{english.title}）"
                self.state.abbreviations[page.abbreviation] = expansion
        backlinks = defaultdict(list)
        rels = sorted(set(glossary.pages[SOURCE_LANG]) | set(glossary.pages[lang]))
        for rel in rels:
            source = glossary.resolved_page(lang, rel)
            for link in source.links():
                target = link.target.split("#")[0]
                if link.is_image or not target.endswith(".md") or "://" in target:
                    continue
                target_rel = resolve_link(rel, target)
                if target_rel != rel and rel not in backlinks[target_rel]:
                    backlinks[target_rel].append(rel)
        self.backlinks = dict(backlinks)

    # -- pages --------------------------------------------------------------------
    def on_page_markdown(self, markdown: str, page, config, files) -> str:
        rel = page.file.src_uri
        self.state.page_rel = rel
        if rel in self.untranslated:
            page.meta["gg_status"] = "untranslated"
            page.meta["search"] = {"exclude": True}  # keeps English text out of the Chinese index
        elif self.lang != SOURCE_LANG and self.glossary.translation_status(self.lang, rel) == "stale":
            page.meta["gg_status"] = "stale"
        model = self.glossary.resolved_page(self.lang, rel)
        if model is not None and model.body == markdown:
            markdown = with_provenance(model, self.runs, strings(self.lang))
        referrers = self.backlinks.get(rel)
        if referrers and rel not in self.generated_sources:
            words = strings(self.lang)
            items = []
            for source in referrers:
                source_page = self.glossary.resolved_page(self.lang, source)
                link = posixpath.relpath(source, posixpath.dirname(rel) or ".")
                items.append(f"- [{escape_markdown(source_page.title)}]({link})")
            markdown = markdown.rstrip() + f"\n\n## {words['referenced_by']} {{#referenced-by}}\n\n" + "\n".join(items) + "\n"
        return markdown

    def on_page_content(self, html: str, page, config, files) -> str:
        """Publish only what the sanitizer allows; anything it removes fails the build (on_env)."""
        rel = page.file.src_uri
        self.unsafe_html.extend(cached_html_problems(self._source_page(rel), html))
        return sanitize(html)

    def _source_page(self, rel: str) -> Page:
        """The page model behind a built page: its file, the English fallback or generated text."""
        generated = self.generated_sources.get(rel)
        if generated is not None:
            return parse_page(generated, Path(rel), f"{rel} (generated by the gpu_glossary plugin)", rel, self.lang)
        return self.glossary.resolved_page(self.lang, rel)

    def on_env(self, env, config, files):
        """Every page is rendered by now and nothing is written yet: refuse unsafe HTML here."""
        problems = sorted(set(self.unsafe_html), key=lambda p: (p.path, p.line, p.message))
        self.unsafe_html = []
        for problem in problems:
            log.error(str(problem))
        if problems:
            raise PluginError(f"{len(problems)} error(s) in the glossary pages' HTML (listed above); `gpu-glossary check` shows them too")
        return env

    def on_post_page(self, output: str, page, config) -> str:
        return with_policy(output)

    def on_post_template(self, output_content: str, template_name: str, config) -> str:
        return with_policy(output_content) if template_name.endswith(".html") else output_content

    def on_page_context(self, context, page, config, nav):
        rel = page.file.src_uri
        self._add_search_terms(page, rel)
        base_url = context.get("base_url") or "."
        if rel in self.untranslated or rel in self.generated_sources:
            page.edit_url = self._edit_url(config, SOURCE_LANG, rel) if rel in self.untranslated else None
        context["gg"] = self._template_data(config, base_url, page.url, page.meta.get("gg_status"))
        context["gg"]["report_url"] = self._report_url(config, page)
        self.site_pages.append(page)
        return context

    def _add_search_terms(self, page, rel: str) -> None:
        """Help search put a term's own page first.

        The term's names become search tags (Material weighs tags far above text), and
        pages that many others link to get a higher boost: Material matches prefixes, so
        "warp" also hits the rarer "Warpgroup", and how often a page is referenced is
        what tells the central term from its neighbours.
        """
        model = self.glossary.resolved_page(self.lang, rel)
        if model is None or not model.section or model.is_index:
            return
        english = self.glossary.page(SOURCE_LANG, rel) or model
        # Aliases stay out: "warp group" would make "warp" find Warpgroup as strongly as Warp.
        names = [model.title, english.title, model.abbreviation]
        page.meta["tags"] = list(dict.fromkeys(name for name in names if name))
        search = page.meta.setdefault("search", {})
        if isinstance(search, dict) and not search.get("exclude"):
            search.setdefault("boost", round(1 + len(self.backlinks.get(rel, [])) / 10, 2))

    def on_template_context(self, context, template_name, config):
        context["gg"] = self._template_data(config, context.get("base_url") or ".", None, None)
        return context

    def _report_url(self, config, page) -> str | None:
        """A new issue from the 'Error in a page' form, naming this page and language."""
        if not config.repo_url:
            return None
        address = (config.site_url or "") + page.url
        query = urlencode({"template": "page-error.yml", "title": f"[Page]: {page.title}",
                           "page": address, "language": LANGUAGE_NAMES[self.lang]})
        return urljoin(config.repo_url.rstrip("/") + "/", f"issues/new?{query}")

    def _edit_url(self, config, lang: str, rel: str) -> str:
        return urljoin(config.repo_url.rstrip("/") + "/", f"edit/{self.config.branch}/glossary/{lang}/{rel}")

    def _template_data(self, config, base_url: str, url: str | None, status: str | None) -> dict:
        """Links to this page in every language, and the notices, for the theme overrides."""
        site_root = base_url if self.lang == SOURCE_LANG else posixpath.join(base_url, "..")
        # Material keeps the colour scheme per scope; one scope for both languages keeps it.
        config.extra["scope"] = site_root.rstrip("/") + "/"
        alternates = []
        for lang in LANGUAGES:
            path = url_prefix(lang) + (url or "")
            alternates.append({
                "lang": lang,
                "name": LANGUAGE_NAMES[lang],
                "href": posixpath.join(site_root, path) if path else site_root.rstrip("/") + "/",
                "absolute": (self.root_site_url + path) if self.root_site_url else "",
                "current": lang == self.lang,
            })
        english = next(a for a in alternates if a["lang"] == SOURCE_LANG)
        return {
            "lang": self.lang,
            "t": strings(self.lang),
            "status": status,
            "alternates": alternates,
            "is_page": url is not None,
            "english_href": english["href"],
            "markdown_href": twin_url(url).rsplit("/", 1)[-1] if url is not None else None,
        }

    # -- after the build ----------------------------------------------------------
    def on_post_build(self, config) -> None:
        site_dir = Path(config.site_dir)
        self._patch_material_alternate_lookup(site_dir)
        self._write_llms_files(config, site_dir)
        if self._jieba_dict:
            Path(self._jieba_dict).unlink(missing_ok=True)
            self._jieba_dict = None
        self.site_pages = []

    def _patch_material_alternate_lookup(self, site_dir: Path) -> None:
        bundles = list((site_dir / "assets" / "javascripts").glob("bundle.*.min.js"))
        for bundle in bundles:
            code = bundle.read_text(encoding="utf-8")
            if _PATCHED_ALTERNATE_SELECTOR in code:
                continue
            if _MATERIAL_ALTERNATE_SELECTOR not in code:
                raise PluginError(
                    f"{bundle}: Material's language-selector code changed; "
                    "update _MATERIAL_ALTERNATE_SELECTOR in scripts/gpu_glossary/plugin.py"
                )
            bundle.write_text(code.replace(_MATERIAL_ALTERNATE_SELECTOR, _PATCHED_ALTERNATE_SELECTOR), encoding="utf-8")

    def _write_llms_files(self, config, site_dir: Path) -> None:
        site_url = config.site_url or ""
        pages: list[SitePage] = []
        home_summary = config.site_description or ""
        order = {rel: index for index, rel in enumerate(self.nav_order)}
        for page in sorted(self.site_pages, key=lambda p: order.get(p.file.src_uri, len(order))):
            rel = page.file.src_uri
            model = self._source_page(rel)
            section = page.parent.title if page.parent else ""
            site_page = SitePage(model, page.url, model.title or page.title or "", model.summary, section)
            if rel == "index.md":
                home_summary = model.summary
            pages.append(site_page)
        by_rel = {p.page.rel: p for p in pages}
        for site_page in pages:
            target = site_dir / twin_url(site_page.url)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(markdown_twin(site_page, by_rel, site_url), encoding="utf-8")
        words = strings(self.lang)
        (site_dir / "llms.txt").write_text(llms_txt(config.site_name, home_summary, pages, site_url, words["full_text"],
                                                    words["overview"]), encoding="utf-8")
        (site_dir / "llms-full.txt").write_text(llms_full(config.site_name, home_summary, pages, site_url), encoding="utf-8")

    # -- navigation ---------------------------------------------------------------
    def on_nav(self, nav, config, files):
        """Section titles come from each section's index page, so they follow the language."""
        self.nav_order = [page.file.src_uri for page in nav.pages]
        for item in nav.items:
            if getattr(item, "is_section", False):
                index = next((c for c in item.children if getattr(c, "is_page", False) and c.file.src_uri.endswith("/index.md")), None)
                if index is not None:
                    model = self.glossary.resolved_page(self.lang, index.file.src_uri)
                    if model and model.title:
                        item.title = model.title
        return nav
