"""The site's search in headless Chromium: the query set of tests/search_queries.yml, pasting,
and the keyboard. benchmarks/search_benchmark.py prints the same hit rates with timings."""

from __future__ import annotations

import sys

import pytest
from helpers import ROOT, load, wait_for_search

sys.path.insert(0, str(ROOT / "benchmarks"))
from search_benchmark import load_queries, run_queries  # noqa: E402

# The rates benchmarks/README.md reports; the query set must not fall below them.
TOP3_FLOOR = {"en": 1.0, "zh": 1.0}
TOP1_FLOOR = {"en": 0.95, "zh": 0.95}
PREFIXES = {"en": "", "zh": "zh/"}


@pytest.fixture
def tab(browser):
    context = browser.new_context()
    page = context.new_page()
    yield page
    context.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_query_set_hit_rates_hold_their_floor(site, tab, lang):
    """Every query of the set typed into the box: the share with a right page in the first three
    and first; a query marked `first` (the version-mismatch messages) must have one first."""
    queries = load_queries()[lang]
    assert len(queries) >= 30
    tab.goto(site.url + PREFIXES[lang])
    result = run_queries(tab, site.url, PREFIXES[lang], queries)
    total, top1, top3 = result["total"]
    must_be_first = [m for m in result["misses"] if m.endswith(", first)")]
    assert top3 / total >= TOP3_FLOOR[lang] and top1 / total >= TOP1_FLOOR[lang], result["misses"]
    assert must_be_first == []


@pytest.mark.parametrize("prefix", ["", "zh/"])
def test_a_pasted_error_message_is_searched_without_a_key_press(site, tab, prefix):
    """A paste with the mouse or by touch fires `input` and no key event; the error's page comes
    first, linked to the section that quotes it, and the words are marked on that page."""
    load(tab, site.url + prefix + "device-software/warp/")
    box = tab.locator("form[data-gg-search] input")
    box.click()  # as a reader's right click or long press before "Paste"
    tab.evaluate(
        """el => { el.value = 'CUDA driver version is insufficient for CUDA runtime version';
        el.dispatchEvent(new InputEvent('input', {inputType: 'insertFromPaste', bubbles: true})); }""",
        box.element_handle(),
    )
    first = tab.locator("[data-gg-search-list] > li > a").first
    first.wait_for(timeout=30000)
    href = first.get_attribute("href")
    assert f"/{prefix}host-software/libcudart/" in href and href.endswith("#insufficient-driver"), href
    with tab.expect_navigation():
        first.click()
    assert tab.locator("article mark").count() >= 5


def test_keyboard_opens_moves_through_results_and_closes_search_returning_focus(site, tab):
    tab.goto(site.url + "perf/occupancy/")
    link = tab.locator("article p a").first
    link.focus()
    tab.keyboard.press("/")
    box = tab.locator("form[data-gg-search] input")
    assert box.evaluate("el => el === document.activeElement")
    assert tab.evaluate("document.getElementById('__search').checked")
    box.press_sequentially("warp")
    wait_for_search(tab, "warp")
    tab.keyboard.press("ArrowDown")
    assert tab.evaluate("document.activeElement.matches('[data-gg-search-list] a')")
    tab.keyboard.press("Escape")
    assert not tab.evaluate("document.getElementById('__search').checked")
    assert link.evaluate("el => el === document.activeElement")  # focus is back where it was
    with tab.expect_navigation():  # Enter in the box goes to the first result
        tab.keyboard.press("/")
        box.press("Enter")
    assert tab.url.split("?")[0].endswith("/device-software/warp/")
