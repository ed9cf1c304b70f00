"""`make site`'s live preview: an edit rebuilds the language(s) it touched, open pages reload,
and a broken page shows its checker messages instead of stopping the server."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import pytest
from conftest import small_project

from gpu_glossary.site.live import LivePreview, languages_for
from gpu_glossary.site.serve import serve_in_background

DEADLINE = 120  # seconds a rebuild may take on a loaded 2-core machine


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read().decode("utf-8")


def wait_until(condition, what: str):
    """Poll `condition` until it returns something true, or fail after DEADLINE."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


@pytest.fixture
def tab(browser):
    """A page of its own context. At the end it leaves for about:blank before closing: a page
    closed while its reload script is mid-reload (a late rebuild) can hang Playwright's close."""
    context = browser.new_context()
    page = context.new_page()
    yield page
    from playwright.sync_api import Error

    for _ in range(3):  # a reload the page's script starts can interrupt this navigation: go again
        try:
            page.goto("about:blank")
            break
        except Error:
            continue
    context.close()


def test_an_edit_rebuilds_only_the_languages_it_touches(tmp_path):
    root = tmp_path
    assert languages_for(root, {root / "glossary/zh/perf/alpha.md"}) == ("zh",)
    assert languages_for(root, {root / "mkdocs.zh.yml"}) == ("zh",)
    for shared in (
        "glossary/en/perf/alpha.md",
        "glossary/images/x.svg",
        "glossary/terminology.yml",
        "mkdocs.yml",
        "overrides/main.html",
    ):
        assert languages_for(root, {root / shared}) == ("en", "zh"), shared
    assert languages_for(root, {root / "site/index.html", root / "glossary/en/.alpha.md.x.tmp"}) == ()


@pytest.fixture
def live_site(tmp_path):
    root = small_project(tmp_path / "project")
    site_dir = root / "site"
    site_dir.mkdir()
    live = LivePreview(root, site_dir, "", log=lambda message: None)
    server = serve_in_background(site_dir, live=live)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    live.site_url = url
    assert live.rebuild()
    stop = threading.Event()
    watcher = threading.Thread(target=live.watch, args=(stop,), daemon=True)
    watcher.start()
    assert live.watching.wait(DEADLINE), "the watcher never started"
    yield root, url, live
    stop.set()
    server.shutdown()
    watcher.join(timeout=10)


def test_edits_in_each_language_are_served_and_open_pages_reload(live_site, tab):
    root, url, live = live_site
    page = tab
    page.goto(url + "perf/alpha/")
    assert "Alpha comes before" in page.inner_text("article")
    english = root / "glossary/en/perf/alpha.md"
    english.write_text(
        english.read_text(encoding="utf-8").replace("Alpha comes before", "Alpha now precedes"), encoding="utf-8"
    )
    # The page reloads itself (waiting with locators: the pages' CSP forbids evaluated strings).
    page.locator("article", has_text="Alpha now precedes").wait_for(timeout=DEADLINE * 1000)

    generation = live.state.generation
    chinese = root / "glossary/zh/perf/beta.md"
    chinese.write_text(chinese.read_text(encoding="utf-8").replace("Beta comes after", "Beta 在后"), encoding="utf-8")
    wait_until(lambda: "Beta 在后" in fetch(url + "zh/perf/beta/"), "the Chinese edit to be served")
    # The pages are written before the build counts as done: wait for the count, then check it is one build.
    wait_until(lambda: live.state.generation > generation, "the rebuild to finish")
    assert live.state.generation == generation + 1
    assert "Alpha now precedes" in fetch(url + "perf/alpha/")  # the English site stayed


def test_a_broken_page_shows_its_messages_and_the_server_keeps_serving(live_site, tab):
    root, url, live = live_site
    page = tab
    page.goto(url + "perf/beta/")
    beta = root / "glossary/en/perf/beta.md"
    good = beta.read_text(encoding="utf-8")
    beta.write_text(good.replace("[alpha](alpha.md)", "[gamma](gamma.md)"), encoding="utf-8")
    page.wait_for_selector("#gg-live-errors", timeout=DEADLINE * 1000)
    shown = page.inner_text("#gg-live-errors")
    assert "glossary/en/perf/beta.md:6: error: link 'gamma.md' points at perf/gamma.md" in shown
    assert "Beta comes after" in fetch(url + "perf/beta/")  # the last good build is still served
    state = json.loads(fetch(url + "__live/state?since=-1"))
    assert "glossary/en/perf/beta.md:6" in state["errors"]
    beta.write_text(good.replace("Beta comes after", "Beta is fixed after"), encoding="utf-8")
    page.locator("article", has_text="Beta is fixed after").wait_for(timeout=DEADLINE * 1000)
    assert page.query_selector("#gg-live-errors") is None


def test_served_pages_carry_the_reload_script_only_when_watching(live_site, tmp_path):
    root, url, live = live_site
    html = fetch(url + "perf/alpha/")
    assert '<script src="/__live/reload.js" data-generation="' in html
    assert "location.reload()" in fetch(url + "__live/reload.js")
    for asset in ("perf/alpha/", "assets/stylesheets/glossary.css"):  # an edit shows on the next load
        with urllib.request.urlopen(url + asset) as response:
            assert response.headers["Cache-Control"] == "no-store", asset
    plain = serve_in_background(root / "site")
    try:
        assert "__live" not in fetch(f"http://127.0.0.1:{plain.server_address[1]}/perf/alpha/")
    finally:
        plain.shutdown()
