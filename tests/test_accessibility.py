"""axe-core (from the npm registry, tests/tools) injected into headless Chromium: no serious
or critical violation on a sample of pages, in both languages and both colour schemes,
including a hovered link with its preview and the search dialog showing results."""

from __future__ import annotations

import pytest

from conftest import DRAW_EVERY_BLOCK, ROOT

AXE = ROOT / "tests" / "tools" / "node_modules" / "axe-core" / "axe.min.js"
SAMPLE = ["", "device-software/warp/", "perf/roofline-model/", "host-software/nvcc/", "terms/"]
QUERIES = {"": "warp", "zh/": "线程束"}


def serious_violations(tab) -> list[str]:
    tab.evaluate(DRAW_EVERY_BLOCK)
    tab.add_script_tag(path=str(AXE))
    result = tab.evaluate("axe.run(document, {resultTypes: ['violations']})")
    assert result["testEngine"]["name"] == "axe-core"
    return [f"{tab.url} [{label}]: {v['id']} ({v['impact']}) at {[n['target'] for n in v['nodes'][:3]]}: {v['help']}"
            for v in result["violations"] if v["impact"] in ("serious", "critical")
            for label in [tab.evaluate("document.body.dataset.mdColorScheme")]]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_serious_accessibility_violations_in_either_language(site, browser, scheme):
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run `make test`, which installs tests/tools with npm ci")
    # bypass_csp: the pages' policy refuses inline script, and axe is injected as one.
    context = browser.new_context(color_scheme=scheme, bypass_csp=True)
    tab = context.new_page()
    problems = []
    for prefix, query in QUERIES.items():
        for path in SAMPLE:
            tab.goto(site.url + prefix + path)
            tab.wait_for_load_state("networkidle")
            assert tab.evaluate("document.body.dataset.mdColorScheme") == ("slate" if scheme == "dark" else "default")
            problems += serious_violations(tab)
        # Hover colours and the preview box, then the search dialog with results.
        tab.goto(site.url + prefix + "device-software/warp/")
        tab.locator("article p a[data-gg-summary]").first.hover()
        tab.locator("#gg-tooltip").wait_for(state="visible")
        problems += serious_violations(tab)
        tab.keyboard.press("/")
        search = tab.locator("input[data-md-component=search-query]")
        search.press_sequentially(query)
        search.press("End")
        tab.locator(".md-search-result__item").first.wait_for(timeout=30000)
        problems += serious_violations(tab)
    context.close()
    assert problems == []
