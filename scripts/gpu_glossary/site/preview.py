"""The live preview's builder: each language's site kept in memory by a process of its own, so
that an edit to a page rebuilds the pages it touched instead of the whole site.

The server process plans (`PreviewBuilder`): it reads the edited pages, works out which pages
of each language show them, and checks those pages and the pages that link to them with the
checker's rules before anything is built. A worker process per language (`LanguageSite`)
built its language whole once, with MkDocs' own build and our plugin, and keeps what that
build made: configuration, files, navigation, templates, pages and search index. For an edit
it renders the touched pages again through the same MkDocs steps and plugin hooks (Markdown,
content, context, template) and rewrites their HTML, Markdown twins, search entries and the
llms files; the two languages work in parallel.

What an edit touches, in each language:
- the page itself, where the language shows it: a Chinese page in Chinese; an English page
  in English, and in Chinese where it has no translation or its translation's staleness
  changed;
- the pages it starts or stops linking to (their "Referenced by" list and search weight);
- everything, when a title, summary, abbreviation or aliases changed (previews, navigation,
  the A-Z index and llms.txt show them), when a page was added or removed, when anything
  but a page changed (images, terminology, runs, theme, configuration), and after a failure
  of unknown cause. Everything is MkDocs' whole build, as `make build` does it.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import time
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.check import check_glossary
from gpu_glossary.examples.runs import Runs, load_runs
from gpu_glossary.glossary import CONFIGS, LANGUAGES, SOURCE_LANG, Glossary, load_glossary, url_prefix
from gpu_glossary.page import Page, parse_page, read_page
from gpu_glossary.site.build import SiteBuildError, build_process_context, install_languages
from gpu_glossary.site.term_index import backlinks, link_targets
from gpu_glossary.terminology import Terminology, TerminologyError, load_terminology

if TYPE_CHECKING:
    import jinja2
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import File, Files
    from mkdocs.structure.nav import Navigation
    from mkdocs.structure.pages import Page as MkDocsPage

    from gpu_glossary.site.plugin import GlossaryPlugin

# What the server asks a worker: a whole build into a folder, or an update of edited pages
# ({(lang, rel): text}, the rels to rebuild, the served folder); None asks it to stop.
Request = tuple[Literal["whole"], str] | tuple[Literal["update"], dict[tuple[str, str], str], list[str], str]
# ("ok", seconds), or ("failed", the build's messages) or ("error", a traceback).
Reply = tuple[str, float | str]

SHARED_KEYS = ("title", "summary", "abbreviation", "aliases")  # front matter that other pages show


def languages_for(root: Path, changed: set[Path]) -> tuple[str, ...]:
    """Which builds an edit affects: a translation's own files rebuild that language only;
    English pages, images, shared data, theme and base config rebuild every language
    (translations fall back to English pages and link to them)."""
    touched: set[str] = set()
    for path in changed:
        try:
            parts = path.resolve().relative_to(root.resolve()).parts
        except ValueError:
            continue
        if not parts or parts[0] == "site" or any(part.startswith(".") for part in parts):
            continue
        if parts[0] == "glossary" and len(parts) > 1 and parts[1] in LANGUAGES and parts[1] != SOURCE_LANG:
            touched.add(parts[1])
        elif parts[0] == CONFIGS["zh"]:
            touched.add("zh")
        else:
            touched.update(LANGUAGES)
    return tuple(lang for lang in LANGUAGES if lang in touched)


def page_key(root: Path, path: Path) -> tuple[str, str] | None:
    """(lang, rel) of a page file under glossary/<lang>/, else None."""
    try:
        parts = path.resolve().relative_to(root.resolve()).parts
    except ValueError:
        return None
    if len(parts) > 2 and parts[0] == "glossary" and parts[1] in LANGUAGES and parts[-1].endswith(".md"):
        return parts[1], "/".join(parts[2:])
    return None


def _shared(page: Page | None) -> tuple:
    return tuple(repr(page.meta.get(key)) for key in SHARED_KEYS) if page else ()


def _with_pages(glossary: Glossary, pages: dict[tuple[str, str], Page | None]) -> Glossary:
    """A copy of `glossary` with `pages` put in (None: removed); the other pages are shared."""
    copy = Glossary(glossary.root, {lang: dict(found) for lang, found in glossary.pages.items()}, list(glossary.nav))
    for (lang, rel), page in pages.items():
        if page is None:
            copy.pages[lang].pop(rel, None)
        else:
            copy.pages.setdefault(lang, {})[rel] = page
    return copy


@dataclass
class Plan:
    """One round of the preview's builder."""

    whole: set[str] = field(default_factory=set)  # languages built whole
    pages: dict[str, set[str]] = field(default_factory=dict)  # lang -> pages rebuilt
    edited: dict[tuple[str, str], Page | None] = field(default_factory=dict)  # (lang, rel) -> as read
    models: dict[str, Glossary] = field(default_factory=dict)  # lang -> the pages it is built from after
    terminology: Terminology | None = None  # read again for a whole build
    runs: Runs | None = None  # likewise

    def describe(self) -> str:
        parts = [f"{lang} (whole)" for lang in LANGUAGES if lang in self.whole]
        parts += [f"{len(self.pages[lang])} {lang} page(s)" for lang in LANGUAGES if self.pages.get(lang)]
        return ", ".join(parts) or "nothing"


class PreviewBuilder:
    """The live preview's builder (a `live.Builder`): plans each round, checks it, and has the
    language workers carry it out; whole builds are put in place as `make build` does."""

    def __init__(self, root: Path, site_dir: Path, site_url: str):
        self.root, self.site_dir, self.site_url = root, site_dir, site_url
        self.staging = site_dir.parent / f".{site_dir.name}.preview"  # beside it: renames stay atomic
        self.built: dict[str, Glossary] = {}  # per language: the pages its site was last built from
        self.terminology: Terminology | None = None  # as last built whole (a change to it builds whole)
        self.runs: Runs | None = None  # the recorded runs, likewise
        self._workers: dict[str, _Worker] = {}
        self._stale: set[str] = set(LANGUAGES)  # no build of the served site in that language's worker

    def __call__(self, changed: set[Path] | None) -> str:
        try:
            plan = self.plan(changed)
            self._check(plan)
            self._carry_out(plan)
        except SiteBuildError:
            raise
        except BaseException:  # a worker died, or a bug: the next round builds everything, in new workers
            self._stale = set(LANGUAGES)
            self.close()
            raise
        return plan.describe()

    def close(self) -> None:
        for worker in self._workers.values():
            worker.stop()
        self._workers = {}
        shutil.rmtree(self.staging, ignore_errors=True)

    # -- planning -------------------------------------------------------------------
    def plan(self, changed: set[Path] | None) -> Plan:
        """What this round builds, from the paths changed since the last good round (None: all)."""
        plan = Plan(whole=set(LANGUAGES) if changed is None else set(self._stale))
        for path in sorted(changed or ()):
            key = page_key(self.root, path)
            if key is None:
                plan.whole.update(languages_for(self.root, {path}))
            else:
                lang, rel = key
                plan.edited[key] = (
                    read_page(path, self.root, self.root / "glossary" / lang, lang) if path.is_file() else None
                )
        for lang in LANGUAGES:
            if lang not in plan.whole and not self._plan_pages(plan, lang):
                plan.whole.add(lang)
        if plan.whole:  # read before the workers do: an edit made after it is built again next round
            snapshot = load_glossary(self.root)
            plan.models.update({lang: snapshot for lang in plan.whole})
            try:
                plan.terminology = load_terminology(snapshot.terminology_path)
            except TerminologyError:
                plan.terminology = None  # the whole build reports it
            plan.runs = load_runs(self.root)
        for lang in plan.whole:
            plan.pages.pop(lang, None)
        return plan

    def _plan_pages(self, plan: Plan, lang: str) -> bool:
        """The pages of `lang` that `plan.edited` touches, into `plan.pages[lang]`; False if
        the language must be built whole."""
        before = self.built[lang]
        after = _with_pages(before, plan.edited)
        rebuild: set[str] = set()
        for (edited_lang, rel), page in plan.edited.items():
            old = before.page(edited_lang, rel)
            if edited_lang != lang and edited_lang != SOURCE_LANG:
                continue  # another translation: not shown here
            if old is None and page is None:
                continue
            if old is None or page is None:
                return False  # a page added or removed: navigation, index, links
            if old.text == page.text:
                continue
            if _shared(old) != _shared(page):
                return False  # its title or summary shows on other pages
            if edited_lang == lang or after.page(lang, rel) is None:  # shown here, translated or not
                rebuild.add(rel)
                changed_links = set(link_targets(old)) ^ set(link_targets(page))
                rebuild.update(target for target in changed_links if after.resolved_page(lang, target))
            elif before.translation_status(lang, rel) != after.translation_status(lang, rel):
                rebuild.add(rel)  # its translation's notice comes or goes
        plan.pages[lang] = rebuild
        plan.models[lang] = after
        return True

    def _check(self, plan: Plan) -> None:
        """The checker's rules on the pages a round rebuilds and the pages that link to them
        (a whole build checks everything itself)."""
        if not any(plan.pages.values()):
            return
        models = {lang: plan.models[lang] for lang in LANGUAGES}
        glossary = Glossary(self.root, {lang: models[lang].pages[lang] for lang in LANGUAGES}, models[SOURCE_LANG].nav)
        scope = {key for key, page in plan.edited.items() if page is not None}
        # A link into an edited page can break only where the page's headings (anchors) changed.
        moved = set()
        for (lang, rel), page in plan.edited.items():
            before = self.built[lang].page(lang, rel) if lang in self.built else None
            if page is None or before is None or page.anchors() != before.anchors():
                moved.add(rel)
        for lang in LANGUAGES:
            scope.update((lang, rel) for rel, page in glossary.pages[lang].items() if moved & set(link_targets(page)))
        terminology = plan.terminology or self.terminology
        runs = plan.runs or self.runs
        errors = [
            p
            for p in check_glossary(glossary, terminology, rendered=False, pages=scope, runs=runs)
            if p.severity == "error"
        ]
        if errors:
            raise SiteBuildError(
                "\n".join(str(p) for p in errors)
                + f"\n{len(errors)} error(s) in the glossary pages; `gpu-glossary check` shows them too"
            )

    # -- carrying out ---------------------------------------------------------------
    def _carry_out(self, plan: Plan) -> None:
        if plan.whole:
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging.mkdir(parents=True)
        texts = {key: page.text for key, page in plan.edited.items() if page is not None}
        asked = []
        for lang in LANGUAGES:
            request: Request
            if lang in plan.whole:
                request = ("whole", str(self.staging / lang))
            elif plan.edited:
                request = ("update", texts, sorted(plan.pages.get(lang, ())), str(self._live_dir(lang)))
            else:
                continue
            worker = self._worker(lang)
            try:
                worker.send(request)
            except RuntimeError as exc:
                raise RuntimeError(f"the {lang} preview worker failed:\n{exc}") from exc
            asked.append((lang, worker))
        replies = [(lang, *worker.receive()) for lang, worker in asked]  # every reply, so none is left unread
        for lang, status, detail in replies:
            if status == "error":
                raise RuntimeError(f"the {lang} preview worker failed:\n{detail}")
        failures: list[str] = []
        for _, status, detail in replies:
            if status == "failed":
                failures.extend(line for line in str(detail).split("\n") if line not in failures)
        if failures:
            self._stale |= plan.whole  # their builds are not the served site
            raise SiteBuildError("\n".join(failures))
        if plan.whole:
            install_languages(self.staging, self.site_dir, tuple(lang for lang in LANGUAGES if lang in plan.whole))
            shutil.rmtree(self.staging, ignore_errors=True)
        self.built.update(plan.models)
        if plan.whole:
            self.terminology, self.runs = plan.terminology, plan.runs
        self._stale -= plan.whole

    def _live_dir(self, lang: str) -> Path:
        return self.site_dir / url_prefix(lang)

    def _worker(self, lang: str) -> _Worker:
        if lang not in self._workers:
            self._workers[lang] = _Worker(self.root, lang, self.site_url)
        return self._workers[lang]


class _Worker:
    """The parent's end of one language's worker process."""

    def __init__(self, root: Path, lang: str, site_url: str):
        context = build_process_context()
        self.connection, child = context.Pipe()
        self.process = context.Process(
            target=serve_language, args=(str(root), lang, site_url, child), name=f"live preview {lang}", daemon=True
        )
        self.process.start()
        child.close()

    def send(self, request: Request) -> None:
        try:
            self.connection.send(request)
        except OSError as exc:  # the process is gone
            self.process.join(timeout=1)
            raise RuntimeError(f"the process ended (exit code {self.process.exitcode}): {exc}") from exc

    def receive(self) -> Reply:
        try:
            return self.connection.recv()
        except EOFError:
            return "error", f"the process ended (exit code {self.process.exitcode})"

    def stop(self) -> None:
        with contextlib.suppress(OSError):  # it ended already
            self.connection.send(None)
        self.process.join(timeout=10)
        if self.process.is_alive():  # busy with a request nobody waits for any more
            self.process.kill()
            self.process.join()


# -- in a worker process -----------------------------------------------------------------
def serve_language(root: str, lang: str, site_url: str, connection: Connection) -> None:
    """A worker process: keep `lang`'s site in memory and answer the server's requests (a
    whole build, or an update of edited pages) until it sends None or goes away."""
    import os

    os.chdir(root)
    os.environ["NO_MKDOCS_2_WARNING"] = "1"  # Material's end-of-life banner, once per build, is noise here
    if site_url:
        os.environ["SITE_URL"] = site_url
    site = LanguageSite(Path(root), lang)
    try:
        while True:
            try:
                request: Request | None = connection.recv()
            except EOFError:
                return
            if request is None:
                return
            started = time.perf_counter()
            reply: Reply
            try:
                if request[0] == "whole":
                    site.build_whole(Path(request[1]))
                else:
                    site.update(request[1], set(request[2]), Path(request[3]))
                reply = ("ok", time.perf_counter() - started)
            except SiteBuildError as exc:
                reply = ("failed", str(exc))
            except Exception:
                reply = ("error", traceback.format_exc())
            connection.send(reply)
    finally:
        site.close()


class _Messages(logging.Handler):
    """What MkDocs and our plugin log at warning level or above during one request."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        self.lines.append(message if record.levelno >= logging.ERROR else f"warning: {message}")

    def text(self, error: BaseException | str | None = None) -> str:
        return "\n".join([*self.lines, *([str(error)] if error and str(error) not in self.lines else [])])


@contextmanager
def _captured() -> Iterator[_Messages]:
    """MkDocs' log records go to a _Messages instead of the terminal."""
    logger = logging.getLogger("mkdocs")
    messages, propagate = _Messages(), logger.propagate
    logger.addHandler(messages)
    logger.propagate = False
    try:
        yield messages
    finally:
        logger.removeHandler(messages)
        logger.propagate = propagate


class LanguageSite:
    """One language's site as MkDocs built it, kept in memory between edits."""

    def __init__(self, root: Path, lang: str):
        self.root, self.lang = root, lang
        self.config: MkDocsConfig | None = None  # MkDocs' configuration of the last whole build, with its plugins

    def _built_config(self) -> MkDocsConfig:
        if self.config is None:
            raise SiteBuildError(f"no whole build of {CONFIGS[self.lang]} to update")
        return self.config

    @property
    def plugin(self) -> GlossaryPlugin:
        from gpu_glossary.site.plugin import GlossaryPlugin

        plugin = self._built_config().plugins["gpu_glossary"]
        if not isinstance(plugin, GlossaryPlugin):
            raise SiteBuildError(f"{CONFIGS[self.lang]} does not use the gpu_glossary plugin")
        return plugin

    def build_whole(self, out_dir: Path) -> None:
        """MkDocs' whole build into `out_dir`, as `mkdocs build --strict` makes it; kept."""
        from mkdocs.commands.build import build
        from mkdocs.config import load_config
        from mkdocs.exceptions import MkDocsException

        self.close()
        with _captured() as messages:
            try:
                config = load_config(str(self.root / CONFIGS[self.lang]), site_dir=str(out_dir))
                config.plugins.on_startup(command="build", dirty=False)
                build(config)
            except MkDocsException as exc:
                raise SiteBuildError(messages.text(exc)) from None
        self.config = config

    def update(self, texts: dict[tuple[str, str], str], rels: set[str], live_dir: Path) -> None:
        """Take in the edited pages' texts and rebuild the pages `rels` into the served `live_dir`."""
        from mkdocs.commands.build import _populate_page
        from mkdocs.exceptions import MkDocsException
        from mkdocs.structure.files import InclusionLevel

        glossary = self.plugin.glossary
        for (lang, rel), text in texts.items():
            path = glossary.lang_dir(lang) / rel
            glossary.pages[lang][rel] = parse_page(text, path, path.relative_to(self.root).as_posix(), rel, lang)
        self.plugin.backlinks = backlinks(glossary, self.lang)
        config, files, nav, env = self._built_config(), self.plugin.files, self.plugin.nav, self.plugin.env
        if files is None or nav is None or env is None:
            raise SiteBuildError(f"the last build of {CONFIGS[self.lang]} did not get as far as its pages")
        pages = [_built_page(files, rel) for rel in sorted(rels)]
        written: list[tuple[str, str]] = []  # (path in the site, HTML)
        with _captured() as messages:
            try:
                for page in pages:
                    page.file.content_string = glossary.require_resolved_page(self.lang, page.file.src_uri).text
                    _populate_page(page, config, files)
                self.plugin.refuse_unsafe_html()
                doc_files = files.documentation_pages(inclusion=InclusionLevel.is_included)
                for page in pages:
                    written.append((page.file.dest_uri, _page_html(page, config, doc_files, nav, env)))
                    page.validate_anchor_links(files=files, log_level=config.validation.links.anchors)
            except MkDocsException as exc:
                raise SiteBuildError(messages.text(exc)) from None
        if messages.lines and config.strict:
            raise SiteBuildError(messages.text("Aborted: warnings in strict mode"))
        for dest_uri, html in written:
            write_text_atomic(live_dir / dest_uri, html, durable=False)
        self.plugin.write_search_index(live_dir)  # the rebuilt pages' entries replace theirs
        self.plugin.write_llms_files(config, live_dir, rels)

    def close(self) -> None:
        if self.config is not None:
            self.config.plugins.on_shutdown()
            self.config = None


def _built_page(files: Files, rel: str) -> MkDocsPage:
    """The page MkDocs built from `rel` in the last whole build."""
    file = files.get_file_from_path(rel)
    if file is None or file.page is None:
        raise SiteBuildError(f"{rel} was not a page of the last whole build")
    return file.page


def _page_html(
    page: MkDocsPage, config: MkDocsConfig, doc_files: Sequence[File], nav: Navigation, env: jinja2.Environment
) -> str:
    """A page's HTML as MkDocs' build writes it (mkdocs.commands.build._build_page, which
    also writes the file: the preview writes it atomically into the served site)."""
    from mkdocs.commands.build import get_context

    config._current_page = page
    page.active = True
    try:
        context = get_context(nav, doc_files, config, page)
        template = env.get_template(page.meta.get("template", "main.html"))
        context = config.plugins.on_page_context(context, page=page, config=config, nav=nav)
        output = template.render(context)
        return config.plugins.on_post_page(output, page=page, config=config)
    finally:
        page.active = False
        config._current_page = None
