"""The built site in a real headless Chromium, served on 127.0.0.1."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from gpu_glossary.glossary import load_glossary

from conftest import ROOT

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def page(browser):
    context = browser.new_context(color_scheme="light")
    tab = context.new_page()
    yield tab
    context.close()


def open_language_menu_and_pick(tab, lang: str) -> None:
    tab.hover(".md-header__option .md-select")
    with tab.expect_navigation():
        tab.click(f".md-select__link[hreflang={lang}]")


def test_language_switcher_goes_to_same_page_and_back(site, page):
    page.goto(site.url + "device-software/warp/")
    open_language_menu_and_pick(page, "zh")
    assert page.url == site.url + "zh/device-software/warp/"
    assert page.get_attribute("html", "lang") == "zh"
    assert page.inner_text("h1") == "线程束"
    open_language_menu_and_pick(page, "en")
    assert page.url == site.url + "device-software/warp/"
    assert page.inner_text("h1") == "Warp"


@pytest.mark.parametrize("prefix, query", [("", "warp"), ("zh/", "线程束")])
def test_search_lists_the_warp_page_first(site, page, prefix, query):
    page.goto(site.url + prefix)
    page.wait_for_load_state("networkidle")
    page.keyboard.press("/")  # Material's keyboard shortcut focuses the search box (and loads the index)
    search = page.locator("input[data-md-component=search-query]")
    assert search.evaluate("el => el === document.activeElement")
    search.press_sequentially(query)
    # Chinese arrives through an input method, which ends with a keyup; Material searches on keyup.
    search.press("End")
    first = page.locator(".md-search-result__item").first
    first.wait_for(timeout=30000)
    href = first.locator("a").first.get_attribute("href")
    assert urlsplit(href).path.rstrip("/").endswith(prefix + "device-software/warp"), href


PAGE_BUDGET = 150_000  # bytes on the wire, gzip, for the first load of a term page


@pytest.mark.parametrize("prefix, query", [("", "warp"), ("zh/", "线程束")])
def test_term_page_first_load_is_under_budget_and_loads_the_search_index_only_for_search(site, browser, prefix, query):
    context = browser.new_context(viewport=PHONE)  # a fresh context: nothing cached
    tab = context.new_page()
    finished = []
    context.on("requestfinished", lambda request: finished.append(request))
    url = site.url + prefix + "device-software/warp/"
    response = tab.goto(url)
    tab.wait_for_load_state("networkidle")
    assert response.headers.get("content-encoding") == "gzip"
    first_load = list(finished)
    transferred = sum(r.sizes()["responseBodySize"] + r.sizes()["responseHeadersSize"] for r in first_load)
    assert any("/javascripts/bundle." in r.url for r in first_load)  # the measurement sees the page's scripts
    assert [r.url for r in first_load if "search_index" in r.url] == []
    assert 20_000 < transferred <= PAGE_BUDGET, f"{transferred} bytes: " + ", ".join(
        f"{r.url.removeprefix(site.url)} {r.sizes()['responseBodySize']}" for r in first_load)
    # A reader on a phone taps the search button: now the index loads, and search works.
    tab.click("label.md-header__button[for=__search]")
    search = tab.locator("input[data-md-component=search-query]")
    search.press_sequentially(query)
    search.press("End")
    first = tab.locator(".md-search-result__item").first
    first.wait_for(timeout=30000)
    assert [r.url for r in finished if "search_index" in r.url] == [site.url + prefix + "search/search_index.json"]
    assert urlsplit(first.locator("a").first.get_attribute("href")).path.rstrip("/").endswith(prefix + "device-software/warp")
    context.close()


def test_page_opened_from_a_search_result_loads_the_index_to_highlight(site, page):
    """search.highlight marks the searched words on the page a result leads to (?h=)."""
    requested = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(site.url + "device-software/warp/?h=lane")
    page.locator("article mark").first.wait_for(timeout=30000)
    assert site.url + "search/search_index.json" in requested


def test_link_preview_shows_the_linked_terms_summary(site, page):
    glossary = load_glossary(ROOT)
    for prefix, lang in (("", "en"), ("zh/", "zh")):
        page.goto(site.url + prefix + "device-hardware/streaming-multiprocessor/")
        link = page.locator("article a[data-gg-summary][href*='warp']").first
        link.hover()
        tooltip = page.locator("#gg-tooltip")
        tooltip.wait_for(state="visible")
        assert glossary.resolved_page(lang, "device-software/warp.md").summary in tooltip.inner_text()
        page.mouse.move(0, 0)
        tooltip.wait_for(state="hidden")
        link.focus()  # keyboard users get the same preview
        tooltip.wait_for(state="visible")
        assert link.get_attribute("aria-describedby") == "gg-tooltip"


def test_abbreviation_inside_chinese_text_expands(site, page):
    page.goto(site.url + "zh/device-software/warp/")
    index = page.evaluate("""() => [...document.querySelectorAll('article abbr')].findIndex(a => {
        const before = a.previousSibling && a.previousSibling.textContent.trimEnd().slice(-1);
        const after = a.nextSibling && a.nextSibling.textContent.trimStart().slice(0, 1);
        return /[\\u4e00-\\u9fff]/.test(before || '') || /[\\u4e00-\\u9fff]/.test(after || '');
    })""")
    assert index >= 0, "no abbreviation next to a Chinese character"
    abbr = page.locator("article abbr").nth(index)
    abbr.hover()
    tooltip = page.locator("#gg-tooltip")
    tooltip.wait_for(state="visible")
    assert re.search(r"[\u4e00-\u9fff]", tooltip.inner_text()), tooltip.inner_text()


def test_dark_scheme_toggles_and_persists_across_pages_and_languages(site, page):
    page.goto(site.url)
    for _ in range(3):
        if page.get_attribute("body", "data-md-color-scheme") == "slate":
            break
        page.locator("form[data-md-component=palette] label:not([hidden])").first.click()
    assert page.get_attribute("body", "data-md-color-scheme") == "slate"
    page.goto(site.url + "perf/occupancy/")
    assert page.get_attribute("body", "data-md-color-scheme") == "slate"
    page.goto(site.url + "zh/perf/occupancy/")
    assert page.get_attribute("body", "data-md-color-scheme") == "slate"


def test_each_language_has_its_own_404(site, page):
    page.goto(site.url + "zh/no-such-page/")
    page.wait_for_load_state("load")
    assert page.inner_text("h1") == "页面不存在"
    page.goto(site.url + "no-such-page/")
    assert page.inner_text("h1") == "Page not found"


# Every attribute named on…, every javascript:/data:/vbscript: URL, and the page's CSP <meta>.
SCRIPT_SURFACE = """() => ({
    handlers: [...document.querySelectorAll('*')].flatMap(el => [...el.attributes]
        .filter(a => /^on/i.test(a.name) || /^\\s*(javascript|data|vbscript):/i.test(a.value) && /href|src|action/i.test(a.name))
        .map(a => `<${el.tagName.toLowerCase()} ${a.name}="${a.value}">`)),
    policies: [...document.querySelectorAll('meta[http-equiv="Content-Security-Policy"]')].map(m => m.content),
    firstInHead: document.head.querySelector('meta[http-equiv="Content-Security-Policy"], script') ===
        document.head.querySelector('meta[http-equiv="Content-Security-Policy"]'),
})"""


TABS = 6  # pages loading at once: most of a visit is waiting for the network to go idle


@pytest.fixture(scope="module")
def every_page_on_a_phone(site, browser):
    """Load every page of both languages at 390 px; record requests, console errors, overflow,
    dialogs, and what in each page could run script. Several tabs load at once; each still
    waits until its page's network is idle."""
    context = browser.new_context(viewport=PHONE, color_scheme="dark")
    outside, errors, overflow, dialogs, surfaces = [], [], [], [], {}

    def watched_tab():
        tab = context.new_page()
        tab.on("request", lambda r: None if r.url.startswith(site.url) or r.url.startswith("data:") else outside.append(r.url))
        tab.on("console", lambda m: errors.append(f"{tab.url}: {m.text}") if m.type == "error" else None)
        tab.on("pageerror", lambda e: errors.append(f"{tab.url}: {e}"))
        tab.on("dialog", lambda d: (dialogs.append(f"{tab.url}: {d.type} {d.message}"), d.dismiss()))
        return tab

    tabs = [watched_tab() for _ in range(TABS)]
    urls = site.page_urls("") + site.page_urls("zh")
    for start in range(0, len(urls), TABS):
        batch = list(zip(tabs, urls[start:start + TABS]))
        for tab, url in batch:
            tab.goto(url, wait_until="commit")
        for tab, url in batch:
            tab.wait_for_load_state("networkidle")
            width = tab.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            if width[0] > width[1]:
                overflow.append(f"{url}: scrollWidth {width[0]} > {width[1]}")
            surfaces[url] = tab.evaluate(SCRIPT_SURFACE)
    context.close()
    return {"urls": urls, "outside": outside, "errors": errors, "overflow": overflow, "dialogs": dialogs,
            "surfaces": surfaces}


def test_every_page_was_visited(every_page_on_a_phone):
    urls = every_page_on_a_phone["urls"]
    assert len(urls) >= 2 * 12 and any("/zh/" in u for u in urls)


def test_no_page_requests_anything_outside_127_0_0_1(every_page_on_a_phone):
    assert every_page_on_a_phone["outside"] == []


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
        assert sources[0] == "'self'" and all(re.fullmatch(r"'sha256-[A-Za-z0-9+/]+={0,2}'", s) for s in sources[1:]), url
        assert directives["default-src"] == "'self'" and directives["object-src"] == "'none'", url
        assert directives["base-uri"] == "'self'" and "unsafe" not in found["policies"][0], url


def injected(html: str) -> str:
    """A built page with what the sanitizer keeps out: an inline script and a handler attribute."""
    return html.replace("</article>", "<script>alert('inline')</script><img src=x onerror=\"alert('handler')\"></article>", 1)


@pytest.mark.parametrize("keep_policy", [True, False])
def test_the_policy_stops_script_that_is_not_ours(site, page, keep_policy):
    """Script that got into a page anyway does not run, while ours still does; without the
    policy the same page opens two dialogs, so the test can tell."""
    url = site.url + "device-software/warp/"
    html = injected((site.dir / "device-software/warp/index.html").read_text(encoding="utf-8"))
    if not keep_policy:
        html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    page.route(url, lambda route: route.fulfill(status=200, content_type="text/html; charset=utf-8", body=html))
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.add_init_script("window.__violations = []; document.addEventListener('securitypolicyviolation', e => window.__violations.push(e.violatedDirective))")
    page.goto(url)
    page.wait_for_load_state("networkidle")
    assert page.evaluate("() => typeof __md_scope") == "object"  # Material's inline script ran (by hash)
    assert page.evaluate("() => document.documentElement.classList.contains('js')")  # Material's bundle ran
    if keep_policy:
        assert dialogs == []
        assert "script-src-elem" in page.evaluate("() => window.__violations")
    else:
        assert sorted(dialogs) == ["handler", "inline"]


def pages_with_images(site) -> list[str]:
    found = []
    for html in sorted(site.dir.rglob("index.html")):
        if "<img" in html.read_text(encoding="utf-8"):
            rel = html.parent.relative_to(site.dir).as_posix()
            found.append(site.url + ("" if rel == "." else rel + "/"))
    return found


@pytest.mark.parametrize("scheme, hidden", [("light", "#only-dark"), ("dark", "#only-light")])
def test_every_image_loads_and_only_this_schemes_variant_shows(site, browser, scheme, hidden):
    urls = pages_with_images(site)
    assert any("/zh/" in u for u in urls) and any("/zh/" not in u for u in urls), urls
    context = browser.new_context(color_scheme=scheme)
    tab = context.new_page()
    problems = []
    for url in urls:
        tab.goto(url)
        tab.wait_for_load_state("load")
        images = tab.evaluate("""() => [...document.querySelectorAll('article img')].map(img => ({
            src: img.getAttribute('src'), loaded: img.complete && img.naturalWidth > 0,
            shown: getComputedStyle(img).display !== 'none' && img.getBoundingClientRect().width > 0}))""")
        for image in images:
            if not image["loaded"]:
                problems.append(f"{url}: {image['src']} did not load")
            if image["shown"] == image["src"].endswith(hidden):
                problems.append(f"{url}: {image['src']} is {'shown' if image['shown'] else 'hidden'} in the {scheme} scheme")
    context.close()
    assert problems == []
