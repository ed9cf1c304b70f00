"""The built site in a real headless Chromium, served on 127.0.0.1."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from helpers import PHONE, ROOT, QuietNetwork, load, open_language_menu_and_pick, type_query, wait_for_search

from gpu_glossary.glossary import load_glossary


@pytest.fixture
def page(browser):
    context = browser.new_context(color_scheme="light")
    tab = context.new_page()
    yield tab
    context.close()


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
    quiet = QuietNetwork(page)
    page.goto(site.url + prefix)
    quiet.wait()
    page.keyboard.press("/")  # the keyboard shortcut focuses the search box (and loads the index)
    search = page.locator("form[data-gg-search] input")
    assert search.evaluate("el => el === document.activeElement")
    type_query(search, query)
    # Each key searches: wait for the list of the whole query, not of its first characters
    # (under load the list of 线程 showed the thread page first).
    wait_for_search(page, query)
    href = page.locator(".md-search-result__item a").first.get_attribute("href")
    assert urlsplit(href).path.rstrip("/").endswith(prefix + "device-software/warp"), href


PAGE_BUDGET = 150_000  # bytes on the wire, gzip, for the first load of a term page


@pytest.mark.parametrize("prefix, query", [("", "warp"), ("zh/", "线程束")])
def test_term_page_first_load_is_under_budget_and_starts_search_only_for_search(site, browser, prefix, query):
    context = browser.new_context(viewport=PHONE)  # a fresh context: nothing cached
    tab = context.new_page()
    quiet = QuietNetwork(tab)
    finished = []
    context.on("requestfinished", lambda request: finished.append(request))
    url = site.url + prefix + "device-software/warp/"
    response = tab.goto(url)
    quiet.wait()
    assert response.headers.get("content-encoding") == "gzip"
    first_load = list(finished)
    transferred = sum(r.sizes()["responseBodySize"] + r.sizes()["responseHeadersSize"] for r in first_load)
    assert any("/javascripts/bundle." in r.url for r in first_load)  # the measurement sees the page's scripts
    index, worker = "search_index", "/workers/search."  # the search index, and Material's search worker
    assert [r.url for r in first_load if index in r.url or worker in r.url] == []
    assert 20_000 < transferred <= PAGE_BUDGET, f"{transferred} bytes: " + ", ".join(
        f"{r.url.removeprefix(site.url)} {r.sizes()['responseBodySize']}" for r in first_load
    )
    # A reader on a phone taps the search button: now the index loads, once, and search works.
    tab.click("label.md-header__button[for=__search]")
    search = tab.locator("form[data-gg-search] input")
    assert search.evaluate("el => el === document.activeElement")
    type_query(search, query)
    wait_for_search(tab, query)
    first = tab.locator(".md-search-result__item").first
    assert [r.url for r in finished if index in r.url] == [site.url + prefix + "search/search_index.json"]
    assert [r.url for r in finished if worker in r.url] == []  # Material's search is not started
    assert (
        urlsplit(first.locator("a").first.get_attribute("href"))
        .path.rstrip("/")
        .endswith(prefix + "device-software/warp")
    )
    context.close()


def test_quiet_network_waits_for_a_late_request_and_names_one_that_never_ends(site, page):
    """The browser tests' wait (conftest.QuietNetwork): a request made after the load event is
    waited for; a request that never ends fails the wait with its URL."""
    html = (
        "<!doctype html><title>t</title><script>addEventListener('load', () => setTimeout(() => "
        "fetch('/late').then(() => document.title = 'late done'), 0))</script><p>t"
    )
    page.route(site.url + "quiet-test/", lambda route: route.fulfill(status=200, content_type="text/html", body=html))
    page.route(site.url + "late", lambda route: route.fulfill(status=200, body="ok"))
    quiet = QuietNetwork(page)
    page.goto(site.url + "quiet-test/", wait_until="commit")
    quiet.wait()
    assert page.title() == "late done"
    never = site.url + "never"
    page.route(never, lambda route: None)  # left unanswered: the request stays in flight
    with page.expect_request(never):  # the request has started (its event has arrived)
        page.evaluate("url => { fetch(url); }", never)
    quiet.TIMEOUT = 2
    with pytest.raises(TimeoutError, match=re.escape(f"still loads after 2 s: ['{never}']")):
        quiet.wait()


def test_page_opened_from_a_search_result_marks_the_searched_words(site, page):
    """A result links to its page with ?h=words; that page marks them, without the index."""
    requested = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(site.url + "device-software/warp/?h=lane%20divergence")
    page.locator("article mark").first.wait_for(timeout=30000)
    marked = {text.lower() for text in page.locator("article mark").all_inner_texts()}
    assert marked == {"lane", "divergence"}
    assert not [url for url in requested if "search_index" in url]


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


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_names_in_code_without_their_span_keep_the_colour_material_gives_names(site, browser, scheme):
    """The build unwraps Pygments' <span class="n"> (material_fixes): only right while Material
    colours a name exactly like the code around it, in both schemes."""
    context = browser.new_context(color_scheme=scheme)
    tab = context.new_page()
    tab.goto(site.url + "perf/roofline-model/")
    code_colour, name_colour = tab.evaluate("""() => {
        const code = [...document.querySelectorAll('.highlight code')].find(c => c.textContent.includes('#include'));
        const name = document.createElement('span');
        name.className = 'n';
        name.textContent = 'blockDim';
        code.appendChild(name);
        return [getComputedStyle(code).color, getComputedStyle(name).color];
    }""")
    assert tab.evaluate("document.body.dataset.mdColorScheme") == ("slate" if scheme == "dark" else "default")
    context.close()
    assert code_colour == name_colour


def injected(html: str) -> str:
    """A built page with what the sanitizer keeps out: an inline script and a handler attribute."""
    return html.replace(
        "</article>", "<script>alert('inline')</script><img src=x onerror=\"alert('handler')\"></article>", 1
    )


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
    page.add_init_script(
        "window.__violations = []; document.addEventListener('securitypolicyviolation', "
        "e => window.__violations.push(e.violatedDirective))"
    )
    load(page, url)
    assert page.evaluate("() => typeof __md_scope") == "object"  # Material's inline script ran (by hash)
    assert page.evaluate("() => document.documentElement.classList.contains('js')")  # Material's bundle ran
    if keep_policy:
        assert dialogs == []
        assert "script-src-elem" in page.evaluate("() => window.__violations")
    else:
        assert sorted(dialogs) == ["handler", "inline"]
