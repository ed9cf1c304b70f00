"""Helpers shared by the test files: the project's files, copies of it to break, a small
project, and what the browser tests read from a page. The fixtures are in conftest.py."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[1]
PROJECT_FILES = ("mkdocs.yml", "mkdocs.zh.yml", "overrides", "glossary")
NEW_TERM = "perf/example-new-term"  # created in fixture_site by `gpu-glossary new`
# The article's blocks off screen are drawn only when the reader scrolls near them
# (content-visibility in glossary.css); checks of the drawn page (axe's contrast, overflow) draw
# them all first, as a reader who scrolls through sees them.
DRAW_EVERY_BLOCK = """() => { for (const el of document.querySelectorAll('article *')) {
    if (getComputedStyle(el).contentVisibility !== 'visible') el.style.contentVisibility = 'visible'; } }"""
# Each image of a page's article: whether it loaded, and whether it shows. Diagrams come as a
# light and a dark file (name.svg, name.dark.svg), marked #only-light and #only-dark.
IMAGES_IN_THE_ARTICLE = """() => [...document.querySelectorAll('article img')].map(img => ({
    src: img.getAttribute('src'), loaded: img.complete && img.naturalWidth > 0,
    shown: getComputedStyle(img).display !== 'none' && img.getBoundingClientRect().width > 0}))"""


def image_problems(url: str, images: list[dict], scheme: str) -> list[str]:
    """What is wrong with a page's IMAGES_IN_THE_ARTICLE in `scheme`: an image that did not
    load, or one shown in the wrong scheme (each scheme shows its own variant, and only it)."""
    hidden = "#only-dark" if scheme == "light" else "#only-light"
    problems = []
    for image in images:
        if not image["loaded"]:
            problems.append(f"{url}: {image['src']} did not load")
        if image["shown"] == image["src"].endswith(hidden):
            problems.append(
                f"{url}: {image['src']} is {'shown' if image['shown'] else 'hidden'} in the {scheme} scheme"
            )
    return problems


# The reader's system colour scheme and the scheme Material shows for it.
SCHEMES = {"light": "default", "dark": "slate"}


def follow_system_scheme(tab, system: str) -> None:
    """Set the reader's system colour scheme to `system` on the open page and wait until
    Material shows it: it follows the system setting on the open page (palette `media`), so
    one load serves both schemes, and it marks the body while it swaps colours (transitions off)."""
    tab.emulate_media(color_scheme=system)
    tab.locator(f"body[data-md-color-scheme={SCHEMES[system]}]:not([data-md-color-switching])").wait_for(
        state="attached"
    )


CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
]


PHONE = {"width": 390, "height": 844}  # a phone's viewport, in CSS pixels


class QuietNetwork:
    """Waits, like Playwright's "networkidle", until a page has loaded and no request of it has
    been in flight for half a second, counted from the page's own request events, so the count
    cannot drift from them (tests/README.md says why not Playwright's own); a page that really
    stays busy is reported with what it still loads (test_browser tests both)."""

    QUIET, TIMEOUT = 0.5, 30.0  # seconds: Playwright's idle time and default timeout

    def __init__(self, page):
        self.page, self.pending, self.last_change = page, set(), time.monotonic()
        page.on("request", self._started)
        page.on("requestfinished", self._ended)
        page.on("requestfailed", self._ended)

    def _started(self, request) -> None:
        self.pending.add(request)
        self.last_change = time.monotonic()

    def _ended(self, request) -> None:
        self.pending.discard(request)
        self.last_change = time.monotonic()

    def wait(self) -> None:
        """Return once the page has loaded and its network has been quiet for QUIET seconds."""
        deadline = time.monotonic() + self.TIMEOUT
        self.page.wait_for_load_state("load", timeout=self.TIMEOUT * 1000)
        while self.pending or time.monotonic() - self.last_change < self.QUIET:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{self.page.url} still loads after {self.TIMEOUT:.0f} s: {sorted(r.url for r in self.pending)}"
                )
            # Playwright delivers the page's events while this waits; with nothing in flight,
            # wait for the rest of the quiet time at once.
            rest = 0.05 if self.pending else self.QUIET - (time.monotonic() - self.last_change)
            self.page.wait_for_timeout(max(rest, 0.01) * 1000)


def load(tab, url: str) -> None:
    """Open `url` and wait until the page has loaded and its network is quiet."""
    quiet = QuietNetwork(tab)
    tab.goto(url)
    quiet.wait()


def type_query(box, query: str) -> None:
    """Type a query into the focused search box as a reader does: Latin key by key, Chinese as
    one commit of an input method (insertText for the word), which is what an IME sends. Chinese
    typed character by character through CDP's insertText came out scrambled under load (the
    box held 程束线 for 线程束), an artefact of the tool, not of a reader's keyboard."""
    if re.search(r"[\u4e00-\u9fff]", query):
        box.page.keyboard.insert_text(query)
    else:
        box.press_sequentially(query)


def wait_for_search(tab, query: str, timeout: float = 30.0) -> None:
    """Wait until the search list is the list of the whole query (search.js marks the form with
    the query it shows): each key searches, so the list of the first characters comes first. A
    list that never comes is reported with what the box holds and what the search last showed."""
    try:
        tab.wait_for_function(
            "q => document.querySelector('form[data-gg-search]').getAttribute('data-gg-searched') === q",
            arg=query,
            timeout=timeout * 1000,
        )
    except PlaywrightTimeout:
        state = tab.evaluate("""() => { const form = document.querySelector('form[data-gg-search]');
            const meta = document.querySelector('[data-gg-search-meta]');
            return {box: form.querySelector('input').value, searched: form.getAttribute('data-gg-searched'),
                    meta: meta && meta.textContent, open: document.getElementById('__search').checked}; }""")
        raise AssertionError(f"no search list for {query!r} after {timeout:.0f} s: {state}") from None


def open_language_menu_and_pick(tab, lang: str, url: str | None = None) -> None:
    """Open the language menu with the mouse and click a language once its link is drawn where
    the pointer goes: clicked while the menu still fades in, Playwright retries by scrolling the
    link into view, which scrolls the page under the sticky header."""
    link = f".md-select__link[hreflang={lang}]"
    tab.hover(".md-header__option .md-select")
    tab.wait_for_function(
        """selector => { const link = document.querySelector(selector), box = link.getBoundingClientRect();
            const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
            return box.height > 0 && link.contains(hit)
                && getComputedStyle(link.closest('.md-select__inner')).opacity === '1'; }""",
        arg=link,
    )
    with tab.expect_navigation(url=url):
        tab.click(link)


def edit(path: Path, old: str, new: str) -> Path:
    """Replace `old`, which must be there, with `new` in the file at `path`."""
    text = path.read_text(encoding="utf-8")
    assert old in text, path
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def cli(*args: str, env: dict[str, str] | None = None):
    """`gpu-glossary ARGS` in this process: its exit code, stdout and stderr; an exception fails the test."""
    from click.testing import CliRunner

    from gpu_glossary.cli import main

    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def on_a_thread_of_its_own(function, timeout: float):
    """`function()` on a fresh thread, its result or its exception; TimeoutError after
    `timeout` s. For code that runs asyncio: a browser test earlier in this process leaves
    Playwright's event loop on the main thread, where asyncio.run() refuses to start."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(function).result(timeout=timeout)


def copy_project(target: Path) -> Path:
    """A throwaway copy of everything a build or check reads."""
    target.mkdir(parents=True, exist_ok=True)
    for name in PROJECT_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name)
        else:
            shutil.copy2(source, target / name)
    return target


SMALL_NAV = """nav:
  - index.md
  - Device software:
      - device-software/index.md
      - device-software/warp.md
  - Performance:
      - perf/index.md
      - perf/alpha.md
      - perf/beta.md
  - terms.md
  - terminology.md
"""


def small_project(target: Path) -> Path:
    """The real configuration, theme and plugin with a three-term glossary: builds in seconds,
    for tests of the build machinery rather than of the content."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "overrides", target / "overrides")
    shutil.copy2(ROOT / "mkdocs.zh.yml", target / "mkdocs.zh.yml")
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    (target / "mkdocs.yml").write_text(config[: config.index("\nnav:\n") + 1] + SMALL_NAV, encoding="utf-8")
    glossary = target / "glossary"
    glossary.mkdir()
    shutil.copy2(ROOT / "glossary" / "terminology.yml", glossary / "terminology.yml")
    pages = {
        "index.md": ("Home", "The home page.", "Two terms: [alpha](perf/alpha.md) and [beta](perf/beta.md)."),
        "perf/index.md": ("Performance", "The section.", "Read [alpha](alpha.md), then [beta](beta.md)."),
        "perf/alpha.md": ("Alpha", "The first term.", "Alpha comes before [beta](beta.md)."),
        "perf/beta.md": ("Beta", "The second term.", "Beta comes after [alpha](alpha.md)."),
        # The page the new-term template links to.
        "device-software/index.md": ("Device software", "The other section.", "See [warp](warp.md)."),
        "device-software/warp.md": ("Warp", "A third term.", "A warp reads [alpha](../perf/alpha.md)."),
    }
    for lang, suffix in (("en", ""), ("zh", "（中文）")):
        for rel, (title, summary, body) in pages.items():
            path = glossary / lang / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"---\ntitle: {title}{suffix}\nsummary: {summary}\n---\n\n{body}\n", encoding="utf-8")
    from gpu_glossary.glossary import load_glossary
    from gpu_glossary.page import with_source_hash

    english = load_glossary(target)
    for rel in pages:
        path = glossary / "zh" / rel
        path.write_text(
            with_source_hash(path.read_text(encoding="utf-8"), english.source_hash_of(rel)), encoding="utf-8"
        )
    return target


class ServedSite:
    """A built site served on 127.0.0.1. `built_for` is the address it was built for (its
    sitemap, hreflang and llms.txt links); `url` is where this process serves it."""

    def __init__(self, server, site_dir: Path, built_for: str | None = None):
        self.server = server
        self.dir = site_dir
        self.url = f"http://127.0.0.1:{server.server_address[1]}/"
        self.built_for = built_for or self.url

    def page_urls(self, lang_prefix: str = "") -> list[str]:
        """Every page of one language, from its sitemap, at the address it is served on."""
        sitemap = (self.dir / lang_prefix / "sitemap.xml").read_text(encoding="utf-8")
        return [self.url + loc.removeprefix(self.built_for) for loc in re.findall(r"<loc>([^<]+)</loc>", sitemap)]


def glossary_of(texts: dict[str, str], root: Path = Path("/in-memory"), nav: list[str] | None = None):
    """A glossary made in memory of `texts` ("en/perf/x.md" -> page text), for the checker's
    rules; every page is in the nav unless `nav` says otherwise. Under `root` it finds (or
    not) images, recorded runs and, for rendering, the Markdown settings."""
    from gpu_glossary.glossary import Glossary
    from gpu_glossary.page import parse_page

    glossary = Glossary(root, {"en": {}, "zh": {}})
    for path, text in texts.items():
        lang, rel = path.split("/", 1)
        glossary.pages[lang][rel] = parse_page(text, root / "glossary" / path, f"glossary/{path}", rel, lang)
    glossary.nav = nav if nav is not None else sorted({p.split("/", 1)[1] for p in texts})
    return glossary


def checker_messages(texts: dict[str, str], severity: str = "error", rendered: bool = False, **where) -> list[str]:
    """The checker's messages of one severity about `glossary_of(texts, **where)`; with
    `rendered`, the sanitizer's verdict on each page's HTML too (give `root=ROOT`)."""
    from gpu_glossary.check import check_glossary
    from gpu_glossary.terminology import load_terminology

    glossary = glossary_of(texts, **where)
    found = check_glossary(glossary, load_terminology(ROOT / "glossary/terminology.yml"), rendered=rendered)
    return [str(p) for p in found if p.severity == severity]
