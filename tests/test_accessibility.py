"""axe-core (from the npm registry, tests/tools) injected into headless Chromium: no serious
or critical violation on a sample of pages, in both languages and both colour schemes,
including a hovered link with its preview and the search dialog showing results."""

from __future__ import annotations

import pytest
from helpers import DRAW_EVERY_BLOCK, ROOT, SCHEMES, QuietNetwork, follow_system_scheme, type_query, wait_for_search

AXE = ROOT / "tests" / "tools" / "node_modules" / "axe-core" / "axe.min.js"
SAMPLE = ["", "device-software/warp/", "perf/roofline-model/", "host-software/nvcc/", "terms/"]
QUERIES = {"": "warp", "zh/": "线程束"}


def serious_violations(tab) -> list[str]:
    tab.evaluate(DRAW_EVERY_BLOCK)
    # A block drawn just now takes the scheme's colours then, and some fade in (a tab's label:
    # Material's transition); a colour half-way is not what a reader reads.
    tab.wait_for_function("document.getAnimations().every(a => !(a instanceof CSSTransition))")
    if not tab.evaluate("typeof axe !== 'undefined'"):  # once per page load
        tab.add_script_tag(path=str(AXE))
    result = tab.evaluate("axe.run(document, {resultTypes: ['violations']})")
    assert result["testEngine"]["name"] == "axe-core"
    return [
        f"{tab.url} [{label}]: {v['id']} ({v['impact']}) at {[n['target'] for n in v['nodes'][:3]]}: {v['help']}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
        for label in [tab.evaluate("document.body.dataset.mdColorScheme")]
    ]


def in_both_schemes(tab) -> list[str]:
    """Violations with the reader's system set to light, then to dark, on one page load."""
    problems = []
    for system in SCHEMES:
        follow_system_scheme(tab, system)
        problems += serious_violations(tab)
    return problems


def test_no_serious_accessibility_violations_in_either_language_or_scheme(site, browser):
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run `make test`, which installs tests/tools with npm ci")
    # bypass_csp: the pages' policy refuses inline script, and axe is injected as one.
    context = browser.new_context(bypass_csp=True)
    tab = context.new_page()
    quiet = QuietNetwork(tab)
    problems = []
    for prefix, query in QUERIES.items():
        for path in SAMPLE:
            tab.goto(site.url + prefix + path)
            quiet.wait()
            problems += in_both_schemes(tab)
        # Hover colours and the preview box, then the search dialog with results.
        tab.goto(site.url + prefix + "device-software/warp/")
        tab.locator("article p a[data-gg-summary]").first.hover()
        tooltip = tab.locator("#gg-tooltip")
        tooltip.wait_for(state="visible")
        problems += in_both_schemes(tab)
        assert tooltip.is_visible()  # still open after both checks: they measured it
        tab.keyboard.press("/")
        search = tab.locator("form[data-gg-search] input")
        type_query(search, query)
        wait_for_search(tab, query)  # the list of the whole query, drawn
        results = tab.locator(".md-search-result__item")
        problems += in_both_schemes(tab)
        assert results.first.is_visible()
    context.close()
    assert problems == []
