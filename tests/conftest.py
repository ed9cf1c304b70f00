"""Shared fixtures: a copy of the project to break, the built site served on 127.0.0.1, Chromium."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers import CHROMIUM_FLAGS, NEW_TERM, ROOT, ServedSite, copy_project, small_project

from gpu_glossary.site.build import build_site
from gpu_glossary.site.serve import serve_in_background


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto`: one test process per core and one more. Part of the suite waits (a browser
    for a quiet network, a rebuild, a fake server's delays), and the extra process fills those
    waits; more processes than that only compete for the cores (tests/README.md has the figures)."""
    return (os.cpu_count() or 1) + 1


# The files that run longest, started first (with --no-loadscope-reorder in pyproject.toml;
# xdist would otherwise start the files with the most tests first). Each file runs in one
# process (--dist loadfile): a long file started last runs on alone while the other cores idle.
LONGEST_FIRST = (
    "test_every_page.py",
    "test_translate.py",
    "test_browser.py",
    "test_reading.py",
    "test_live.py",
    "test_accessibility.py",
    "test_search.py",
)


# What makes a test a browser, build or slow test (pyproject.toml's markers): the fixtures it
# asks for, or its file (a file of end-to-end runs whose units are tested apart).
BROWSER_FIXTURES = {"browser"}
BUILD_FIXTURES = {"site", "fixture_site", "small", "live_site"}
SLOW_FILES = {"test_translate.py"}  # whole translation runs over real HTTP; units: test_translate_units.py
SLOW_FIXTURES = {"fake_gpus"}  # `examples run` end to end on stand-in GPUs (test_examples_devices.py)


def pytest_collection_modifyitems(items) -> None:
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        if fixtures & BUILD_FIXTURES:
            item.add_marker(pytest.mark.build)
        if item.path.name in SLOW_FILES or fixtures & SLOW_FIXTURES:
            item.add_marker(pytest.mark.slow)

    def rank(item) -> int:
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: the other files, and the tests in each file, keep their order


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_project(tmp_path / "project")


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """A throwaway small project (below): for tests of the build machinery, not the content."""
    return small_project(tmp_path / "small")


# Each site below is built once per run, for an address of its own, and shared by every test
# process of the run (pytest-xdist workers); each process serves it on a port of its own. No
# page may fetch anything from the address it was built for: the browser tests count such a
# request as one that leaves 127.0.0.1.
FULL_SITE_ADDRESS = "https://gpu-glossary.test/"
FIXTURE_SITE_ADDRESS = "https://fixture.gpu-glossary.test/"


def run_temp(tmp_path_factory) -> Path:
    """The temporary folder of this run, shared by its xdist workers (each has a subfolder)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once_per_run(tmp_path_factory, name: str, build) -> Path:
    """The folder `build(folder)` fills, made by the first test process that asks for it; the
    others wait for it and reuse it. A failed build is tried again by the next that asks."""
    from filelock import FileLock

    shared = run_temp(tmp_path_factory)
    folder, done = shared / name, shared / f"{name}.built"
    with FileLock(str(shared / f"{name}.lock")):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            build(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> ServedSite:
    """The real glossary, built once per run and served on 127.0.0.1."""
    site_dir = built_once_per_run(
        tmp_path_factory, "full-site", lambda folder: build_site(ROOT, site_dir=folder, site_url=FULL_SITE_ADDRESS)
    )
    served = ServedSite(serve_in_background(site_dir), site_dir, FULL_SITE_ADDRESS)
    yield served
    served.server.shutdown()


def build_fixture_site(folder: Path) -> None:
    from gpu_glossary.new_term import create_term

    root = small_project(folder / "project")
    create_term(root, NEW_TERM, "Example new term", after="alpha")
    (root / "glossary/zh/perf/beta.md").unlink()
    english = root / "glossary/en/perf/alpha.md"
    english.write_text(english.read_text(encoding="utf-8") + "\nAn added English sentence.\n", encoding="utf-8")
    build_site(root, site_dir=folder / "site", site_url=FIXTURE_SITE_ADDRESS)


@pytest.fixture(scope="session")
def fixture_site(tmp_path_factory) -> ServedSite:
    """The small project with its Chinese beta page removed (untranslated), its English alpha
    page edited (stale), and one term started with `gpu-glossary new` (NEW_TERM, after alpha)."""
    site_dir = built_once_per_run(tmp_path_factory, "fixture-site", build_fixture_site) / "site"
    served = ServedSite(serve_in_background(site_dir), site_dir, FIXTURE_SITE_ADDRESS)
    yield served
    served.server.shutdown()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    # Debian's chromium-headless-shell: the same Blink and V8 as its chromium package without
    # the desktop browser around them (Playwright runs headless tests in this build too), on
    # less CPU a page load (tests/README.md).
    chromium = shutil.which("chromium-headless-shell")
    if not chromium:
        pytest.fail(
            "Chromium is not installed: run `make test`, which installs Debian's chromium-headless-shell package"
        )
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        yield launched
        launched.close()
