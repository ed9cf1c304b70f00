"""Every page of both languages, loaded in headless Chromium on a phone-sized screen.

A file of its own, so pytest-xdist runs this long visit beside the other browser tests."""

from __future__ import annotations

import re
from collections import deque

import pytest
from helpers import (
    DRAW_EVERY_BLOCK,
    IMAGES_IN_THE_ARTICLE,
    PHONE,
    ROOT,
    QuietNetwork,
    follow_system_scheme,
    image_problems,
)

# Every attribute named on…, every javascript:/data:/vbscript: URL, and the page's CSP <meta>.
SCRIPT_SURFACE = """() => ({
    handlers: [...document.querySelectorAll('*')].flatMap(el => [...el.attributes]
        .filter(a => /^on/i.test(a.name)
            || /^\\s*(javascript|data|vbscript):/i.test(a.value) && /href|src|action/i.test(a.name))
        .map(a => `<${el.tagName.toLowerCase()} ${a.name}="${a.value}">`)),
    policies: [...document.querySelectorAll('meta[http-equiv="Content-Security-Policy"]')].map(m => m.content),
    firstInHead: document.head.querySelector('meta[http-equiv="Content-Security-Policy"], script') ===
        document.head.querySelector('meta[http-equiv="Content-Security-Policy"]'),
})"""


ANYTHING_WIDER_THAN_THE_SCREEN = """() => {
    const article = document.querySelector('article');
    if (!article) return [];
    const screen = document.documentElement.clientWidth;
    const scrolls = el => {  // inside a box that scrolls or clips (code, tables): not the page's width
        for (let box = el.parentElement; box && box !== article; box = box.parentElement) {
            if (/auto|scroll|hidden|clip/.test(getComputedStyle(box).overflowX)) return true;
        }
        return false;
    };
    return [...article.querySelectorAll('*')]
        .filter(el => el.getBoundingClientRect().right > screen + 0.5 && !scrolls(el))
        .slice(0, 3).map(el => el.tagName.toLowerCase() + (el.className ? '.' + el.className : ''));
}"""

# What search engines and chat apps read: the title, the description and the social tags.
META = """() => ({title: document.title, ...Object.fromEntries(
    [...document.querySelectorAll('meta[name=description], meta[property^="og:"], meta[name^="twitter:"]')]
        .map(m => [m.getAttribute('name') || m.getAttribute('property'), m.content]))})"""

# A box that scrolls sideways (a wide table) and shows no sign of it at its edge (figures.js).
UNCUED_SCROLLING = """() => [...document.querySelectorAll('article :is([data-gg-scroll-box], .md-typeset__scrollwrap)')]
    .filter(box => box.scrollWidth > box.clientWidth + 1
        && !box.hasAttribute('data-gg-more-right') && !box.hasAttribute('data-gg-more-left'))
    .map(box => box.textContent.trim().slice(0, 60))"""

# The page's width as loaded; then (blocks off screen are drawn only near the reader, with
# content-visibility, and clip what overflows them) every block drawn, and anything wider than
# the screen; what could run script; the images.
EVERYTHING_MEASURED = f"""() => {{
    const width = [document.documentElement.scrollWidth, document.documentElement.clientWidth];
    const uncued = ({UNCUED_SCROLLING})();
    ({DRAW_EVERY_BLOCK})();
    return {{width, wide: ({ANYTHING_WIDER_THAN_THE_SCREEN})(), surface: ({SCRIPT_SURFACE})(),
             images: ({IMAGES_IN_THE_ARTICLE})(), meta: ({META})(), uncued}};
}}"""

TABS = 6  # pages loading at once: each tab waits for its page's network to go quiet


def pages_with_images(site) -> set[str]:
    """The address of every built page whose HTML has an <img>, found in the files."""
    found = set()
    for html in site.dir.rglob("index.html"):
        if "<img" in html.read_text(encoding="utf-8"):
            rel = html.parent.relative_to(site.dir).as_posix()
            found.add(site.url + ("" if rel == "." else rel + "/"))
    return found


def in_the_light_scheme(tab) -> list[dict]:
    """IMAGES_IN_THE_ARTICLE with the reader's system set to light, on the page as loaded;
    then dark again for the tab's next page."""
    follow_system_scheme(tab, "light")
    images = tab.evaluate(IMAGES_IN_THE_ARTICLE)
    tab.emulate_media(color_scheme="dark")
    return images


@pytest.fixture(scope="module")
def every_page_on_a_phone(site, browser):
    """Load every page of both languages at 390 px in the dark scheme; record requests, console
    errors, overflow, dialogs, images, and what in each page could run script; on each page
    with an image, its images in the light scheme too. Several tabs load at once; each still
    waits until its page's network is quiet before its page is measured."""
    context = browser.new_context(viewport=PHONE, color_scheme="dark")
    outside, errors, overflow, dialogs, surfaces, images, quiet, metas = [], [], [], [], {}, {}, {}, {}
    with_images, images_in_light = pages_with_images(site), {}

    def watched_tab():
        tab = context.new_page()
        quiet[tab] = QuietNetwork(tab)
        tab.on(
            "request",
            lambda r: None if r.url.startswith(site.url) or r.url.startswith("data:") else outside.append(r.url),
        )
        tab.on("console", lambda m: errors.append(f"{tab.url}: {m.text}") if m.type == "error" else None)
        tab.on("pageerror", lambda e: errors.append(f"{tab.url}: {e}"))
        tab.on("dialog", lambda d: (dialogs.append(f"{tab.url}: {d.type} {d.message}"), d.dismiss()))
        return tab

    def record(tab, url) -> None:
        found = tab.evaluate(EVERYTHING_MEASURED)  # one call into the page, not five
        width = found["width"]
        if width[0] > width[1]:
            overflow.append(f"{url}: scrollWidth {width[0]} > {width[1]}")
        if found["wide"]:
            overflow.append(f"{url}: wider than the screen once drawn: {found['wide']}")
        surfaces[url], images[url], metas[url] = found["surface"], found["images"], found["meta"]
        if found["uncued"]:
            overflow.append(f"{url}: scrolls sideways with no cue at its edge: {found['uncued']}")
        if url in with_images:
            images_in_light[url] = in_the_light_scheme(tab)

    urls = site.page_urls("") + site.page_urls("zh")
    waiting, loading = deque(urls), deque()

    def load_next(tab) -> None:  # a rolling queue: a tab that is done takes the next page
        if waiting:
            loading.append((tab, waiting.popleft()))
            tab.goto(loading[-1][1], wait_until="commit")

    for _ in range(TABS):
        load_next(watched_tab())
    while loading:
        tab, url = loading.popleft()
        quiet[tab].wait()
        record(tab, url)
        load_next(tab)
    context.close()
    return {
        "urls": urls,
        "outside": outside,
        "errors": errors,
        "overflow": overflow,
        "dialogs": dialogs,
        "surfaces": surfaces,
        "images": images,
        "with_images": with_images,
        "images_in_light": images_in_light,
        "metas": metas,
    }


def test_every_page_was_visited(every_page_on_a_phone):
    urls = every_page_on_a_phone["urls"]
    assert len(urls) >= 2 * 12 and any("/zh/" in u for u in urls)


def test_no_page_requests_anything_outside_127_0_0_1(every_page_on_a_phone):
    assert every_page_on_a_phone["outside"] == []


def test_every_image_loads_and_only_the_dark_variant_shows(every_page_on_a_phone):
    with_images = [url for url, found in every_page_on_a_phone["images"].items() if found]
    assert any("/zh/" in u for u in with_images) and any("/zh/" not in u for u in with_images), with_images
    problems = [p for url, found in every_page_on_a_phone["images"].items() for p in image_problems(url, found, "dark")]
    assert problems == []


def test_every_image_loads_and_only_the_light_variant_shows(every_page_on_a_phone):
    """Every page whose built HTML has an <img>, read again after switching to light."""
    urls = every_page_on_a_phone["with_images"]
    assert any("/zh/" in u for u in urls) and any("/zh/" not in u for u in urls), urls
    assert set(every_page_on_a_phone["images_in_light"]) == urls
    problems = [
        p
        for url, found in every_page_on_a_phone["images_in_light"].items()
        for p in image_problems(url, found, "light")
    ]
    assert problems == []


def test_no_page_logs_a_console_error(every_page_on_a_phone):
    assert every_page_on_a_phone["errors"] == []


def test_no_page_scrolls_horizontally_at_390px(every_page_on_a_phone):
    assert every_page_on_a_phone["overflow"] == []


def test_no_page_opens_a_dialog_or_carries_a_handler_or_script_url(every_page_on_a_phone):
    assert every_page_on_a_phone["dialogs"] == []
    handlers = {url: found["handlers"] for url, found in every_page_on_a_phone["surfaces"].items() if found["handlers"]}
    assert handlers == {}


def test_every_page_has_a_policy_that_runs_only_our_scripts(every_page_on_a_phone):
    """One CSP <meta> before any script: script files from this site and Material's inline
    scripts by hash, nothing inline besides, no eval; Material runs under it (no console
    error above, where a refused script would be reported)."""
    for url, found in every_page_on_a_phone["surfaces"].items():
        assert len(found["policies"]) == 1 and found["firstInHead"], url
        directives = dict(d.strip().split(" ", 1) for d in found["policies"][0].split(";"))
        sources = directives["script-src"].split()
        assert sources[0] == "'self'" and all(re.fullmatch(r"'sha256-[A-Za-z0-9+/]+={0,2}'", s) for s in sources[1:]), (
            url
        )
        assert directives["default-src"] == "'self'" and directives["object-src"] == "'none'", url
        assert directives["base-uri"] == "'self'" and "unsafe" not in found["policies"][0], url


def expected_summary(site, glossary, url: str) -> tuple[str, str]:
    """The language and summary of the page at `url`: its page model's, or a generated page's."""
    from gpu_glossary.site.i18n import strings

    path = url.removeprefix(site.url)
    lang = "zh" if path.startswith("zh/") else "en"
    path = path.removeprefix("zh/").rstrip("/")
    generated = {"terms": "index_summary", "terminology": "terminology_summary", "path": "path_summary"}
    if path in generated:
        return lang, strings(lang)[generated[path]]
    rel = "index.md" if not path else f"{path}/index.md" if "/" not in path else f"{path}.md"
    return lang, glossary.resolved_page(lang, rel).summary


def test_every_page_describes_itself_by_its_summary_to_search_engines_and_chat_apps(site, every_page_on_a_phone):
    """<meta name=description>, og:description and twitter:description are the page's own summary,
    in its language; og:title is the <title> without the site's name; og:locale is the language."""
    from gpu_glossary.glossary import load_glossary

    glossary, wrong = load_glossary(ROOT), []
    for url, meta in every_page_on_a_phone["metas"].items():
        lang, summary = expected_summary(site, glossary, url)
        for key in ("description", "og:description", "twitter:description"):
            if meta.get(key) != summary:
                wrong.append(f"{url}: {key} = {meta.get(key)!r}, summary {summary!r}")
        if meta.get("og:locale") != {"en": "en_US", "zh": "zh_CN"}[lang] or not meta.get("og:url", "").endswith(
            url.removeprefix(site.url)
        ):
            wrong.append(f"{url}: og:locale {meta.get('og:locale')}, og:url {meta.get('og:url')}")
        if not meta["title"].startswith(meta.get("og:title", "")) or meta["title"].count(" - ") > 1:
            wrong.append(f"{url}: title {meta['title']!r}, og:title {meta.get('og:title')!r}")
    assert wrong == []
    titles = {url.removeprefix(site.url): meta["title"] for url, meta in every_page_on_a_phone["metas"].items()}
    assert titles["device-software/warp/"] == "What is a warp? - GPU Glossary"
    assert titles["zh/device-software/warp/"] == "什么是线程束？ - GPU 术语表"
    assert titles[""] == "GPU Glossary" and titles["zh/"] == "GPU 术语表"
