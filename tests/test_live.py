"""`make site`'s live preview: an edit rebuilds what it touched, open pages reload, no edit is
lost (during the first build or a rebuild), and a failed build, of any kind, shows its
messages instead of stopping the preview.

The loop itself is tested with a fake builder and events (no build, no browser); the real
builder on the small project without a browser; and one browser test reads the overlay.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from helpers import edit, small_project

from gpu_glossary.site.build import SiteBuildError
from gpu_glossary.site.live import LivePreview
from gpu_glossary.site.preview import PreviewBuilder, languages_for
from gpu_glossary.site.serve import serve_in_background

DEADLINE = 120  # seconds a real build may take on a loaded 2-core machine
SOON = 10  # seconds for anything without a real build


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read().decode("utf-8")


def served(url: str) -> str:
    """The page at `url`, or "" while there is none (before the first build, or a 404)."""
    try:
        return fetch(url)
    except urllib.error.HTTPError:
        return ""


def wait_until(condition, what: str, deadline: float = DEADLINE):
    """Poll `condition` until it returns something true, or fail after `deadline` seconds."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


class FakeBuilder:
    """Records each build's paths. Build number i waits for `gates[i]` where there is one
    (`held` of them), then raises the next of `failures`, if any are left."""

    def __init__(self, held: int = 0, failures=()):
        self.calls: list[set[Path] | None] = []
        self.gates = [threading.Event() for _ in range(held)]
        self.failures = list(failures)

    def __call__(self, changed):
        number = len(self.calls)
        self.calls.append(None if changed is None else set(changed))
        if number < len(self.gates):
            assert self.gates[number].wait(SOON), f"the test never let build {number} go on"
        if self.failures:
            raise self.failures.pop(0)
        return "the fake site"

    def wait_for_call(self, count: int) -> None:
        wait_until(lambda: len(self.calls) >= count, f"build number {count - 1} to start", SOON)


def run_loop(builder: FakeBuilder):
    """A LivePreview of `builder`, its build loop running on a thread (no watcher)."""
    live = LivePreview(Path("/nowhere"), Path("/nowhere/site"), "", log=lambda message: None, builder=builder)
    stop = threading.Event()
    threading.Thread(target=live.build_forever, args=(stop,), daemon=True).start()
    return live, stop


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


def test_any_failure_is_shown_and_the_next_edit_builds_everything():
    """An OSError (rmtree, os.replace) is not the build's own error: it used to end the
    watcher's thread for good, leaving pages that waited forever for a reload."""
    builder = FakeBuilder(failures=[OSError(39, "Directory not empty", "site.build/previous")])
    live, stop = run_loop(builder)
    try:
        live.request({Path("glossary/en/perf/alpha.md")})
        state = live.wait_for_change(0, SOON)
        assert state.generation == 1
        assert "The live preview failed unexpectedly" in state.errors
        assert "OSError: [Errno 39] Directory not empty: 'site.build/previous'" in state.errors  # the traceback
        live.request({Path("glossary/en/perf/beta.md")})
        state = live.wait_for_change(1, SOON)
        assert (state.generation, state.errors) == (2, "")
        assert builder.calls == [{Path("glossary/en/perf/alpha.md")}, None]  # everything, after an unknown failure
    finally:
        stop.set()


def test_a_failed_build_s_edits_are_built_again_with_the_next():
    builder = FakeBuilder(failures=[SiteBuildError("glossary/en/perf/a.md:6: error: link 'x.md' points at nothing")])
    live, stop = run_loop(builder)
    try:
        live.request({Path("a.md")})
        assert live.wait_for_change(0, SOON).errors == "glossary/en/perf/a.md:6: error: link 'x.md' points at nothing"
        live.request({Path("b.md")})
        assert live.wait_for_change(1, SOON).errors == ""
        assert builder.calls == [{Path("a.md")}, {Path("a.md"), Path("b.md")}]
    finally:
        stop.set()


def test_an_edit_requested_during_a_build_is_built_after_it():
    builder = FakeBuilder(held=1)
    live, stop = run_loop(builder)
    try:
        live.request(None)
        builder.wait_for_call(1)
        live.request({Path("glossary/en/perf/alpha.md")})  # while the first build runs
        live.request({Path("glossary/zh/perf/alpha.md")})
        builder.gates[0].set()
        builder.wait_for_call(2)
        assert live.wait_until_idle(SOON)
        assert builder.calls == [None, {Path("glossary/en/perf/alpha.md"), Path("glossary/zh/perf/alpha.md")}]
        assert live.state.generation == 2
    finally:
        stop.set()


def test_edits_during_the_first_build_and_during_a_rebuild_reach_the_builder(tmp_path):
    """With the real watcher: an edit saved while a build runs is recorded at once and built next."""
    root = tmp_path
    (root / "glossary/en").mkdir(parents=True)
    page = root / "glossary/en/alpha.md"
    page.write_text("one\n", encoding="utf-8")
    builder = FakeBuilder(held=2)
    live = LivePreview(root, root / "site", "", log=lambda message: None, builder=builder)
    stop = threading.Event()
    live.start(stop)
    try:
        builder.wait_for_call(1)
        page.write_text("two\n", encoding="utf-8")  # during the first build
        wait_until(lambda: page in (live.pending() or ()), "the watcher to record the edit", SOON)
        builder.gates[0].set()
        builder.wait_for_call(2)
        page.write_text("three\n", encoding="utf-8")  # during the rebuild
        wait_until(lambda: page in (live.pending() or ()), "the watcher to record the second edit", SOON)
        builder.gates[1].set()
        builder.wait_for_call(3)
        assert live.wait_until_idle(SOON)
        assert builder.calls == [None, {page}, {page}]
    finally:
        stop.set()


class StubLive:
    """What the server asks of a LivePreview: its state, and to wait for a change."""

    def __init__(self, generation: int = 3, errors: str = ""):
        from gpu_glossary.site.live import BuildState

        self.state = BuildState(generation, errors)

    def wait_for_change(self, since: int, timeout: float):
        return self.state


def test_served_pages_carry_the_reload_script_only_when_watching(tmp_path):
    site = tmp_path / "site"
    (site / "assets").mkdir(parents=True)
    (site / "index.html").write_text("<html><body><p>Home</p></body></html>", encoding="utf-8")
    (site / "assets/glossary.css").write_text("p{}", encoding="utf-8")
    live = serve_in_background(site, live=StubLive(3, "glossary/en/x.md:1: error: broken"))
    plain = serve_in_background(site)
    try:
        url = f"http://127.0.0.1:{live.server_address[1]}/"
        html = fetch(url)
        assert '<script src="/__live/reload.js" data-generation="3" defer></script></body>' in html
        assert "location.reload()" in fetch(url + "__live/reload.js")
        assert json.loads(fetch(url + "__live/state?since=2")) == {
            "generation": 3,
            "errors": "glossary/en/x.md:1: error: broken",
        }
        for asset in ("", "assets/glossary.css"):  # an edit shows on the next load
            with urllib.request.urlopen(url + asset) as response:
                assert response.headers["Cache-Control"] == "no-store", asset
        assert "__live" not in fetch(f"http://127.0.0.1:{plain.server_address[1]}/")
    finally:
        live.shutdown()
        plain.shutdown()


def test_before_the_first_build_the_preview_serves_a_page_that_waits_for_it(tmp_path):
    server = serve_in_background(tmp_path / "site-not-built-yet", live=StubLive(0))
    try:
        with pytest.raises(urllib.error.HTTPError) as answer:
            fetch(f"http://127.0.0.1:{server.server_address[1]}/perf/alpha/")
        body = answer.value.read().decode("utf-8")
        assert answer.value.code == 404
        assert "The site is being built" in body and 'data-generation="0"' in body
    finally:
        server.shutdown()


# -- the real builder, on the small project --------------------------------------------
@pytest.fixture
def live_site(tmp_path):
    root = small_project(tmp_path / "project")
    site_dir = root / "site"
    live = LivePreview(root, site_dir, "", log=lambda message: None)
    server = serve_in_background(site_dir, live=live)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    live.site_url = url
    stop = threading.Event()
    live.start(stop)
    state = live.wait_for_change(0, DEADLINE)
    assert (state.generation, state.errors) == (1, ""), "the first build failed or never ended"
    yield root, url, live
    stop.set()
    server.shutdown()


def test_edits_in_each_language_are_served(live_site):
    root, url, live = live_site
    edit(root / "glossary/en/perf/alpha.md", "Alpha comes before", "Alpha now precedes")
    wait_until(lambda: "Alpha now precedes" in fetch(url + "perf/alpha/"), "the English edit to be served")
    assert live.wait_until_idle(DEADLINE)
    generation = live.state.generation
    edit(root / "glossary/zh/perf/beta.md", "Beta comes after", "Beta 在后")
    wait_until(lambda: "Beta 在后" in fetch(url + "zh/perf/beta/"), "the Chinese edit to be served")
    # The pages are written before the build counts as done: wait for the count, then check it is one build.
    wait_until(lambda: live.state.generation > generation, "the rebuild to finish")
    assert live.wait_until_idle(DEADLINE) and live.state.generation == generation + 1
    assert "Alpha now precedes" in fetch(url + "perf/alpha/")  # the English site stayed


def test_edits_made_during_the_first_build_and_during_a_rebuild_are_served(small):
    """Each edit lands after the builder has read the pages and before its build ends: the
    moment an edit used to be lost."""
    root = small
    live = LivePreview(root, root / "site", "", log=lambda message: None)
    server = serve_in_background(root / "site", live=live)
    url = live.site_url = f"http://127.0.0.1:{server.server_address[1]}/"
    real, edits = (
        None,
        iter(
            [
                ("alpha", "Alpha comes before", "Edited during the first build"),
                ("beta", "Beta comes after", "Edited during a rebuild"),
            ]
        ),
    )

    def builder(changed):
        nonlocal real
        if real is None:
            real = PreviewBuilder(root, root / "site", url)
        what = real(changed)
        step = next(edits, None)
        if step:  # the build has read everything; the edit comes before it ends
            name, old, new = step
            path = root / f"glossary/en/perf/{name}.md"
            edit(path, old, new)
            wait_until(lambda: path in (live.pending() or ()), f"the watcher to record the edit of {name}", SOON)
        return what

    live.builder = builder
    stop = threading.Event()
    live.start(stop)
    try:
        wait_until(lambda: "Edited during the first build" in served(url + "perf/alpha/"), "the first edit")
        wait_until(lambda: "Edited during a rebuild" in served(url + "perf/beta/"), "the second edit")
        assert live.wait_until_idle(DEADLINE) and live.state.errors == ""
    finally:
        stop.set()
        server.shutdown()
        if real is not None:
            real.close()


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


def test_an_open_page_reloads_on_an_edit_and_shows_a_broken_page_s_messages(live_site, tab):
    root, url, live = live_site
    page = tab
    page.goto(url + "perf/beta/")
    beta = root / "glossary/en/perf/beta.md"
    edit(beta, "Beta comes after", "Beta now follows")
    # The page reloads itself (waiting with locators: the pages' CSP forbids evaluated strings).
    page.locator("article", has_text="Beta now follows").wait_for(timeout=DEADLINE * 1000)
    edit(beta, "[alpha](alpha.md)", "[gamma](gamma.md)")
    page.wait_for_selector("#gg-live-errors", timeout=DEADLINE * 1000)
    shown = page.inner_text("#gg-live-errors")
    assert "glossary/en/perf/beta.md:6: error: link 'gamma.md' points at perf/gamma.md" in shown, shown
    assert "Beta now follows" in fetch(url + "perf/beta/")  # the last good build is still served
    edit(beta, "[gamma](gamma.md)", "[alpha](alpha.md)")
    page.locator("article", has_text="Beta now follows").wait_for(timeout=DEADLINE * 1000)
    page.wait_for_selector("#gg-live-errors", state="detached", timeout=DEADLINE * 1000)
