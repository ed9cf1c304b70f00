"""Time `make site`'s edit-to-reload loop: save a page, wait until the page open in Chromium
has reloaded with the change.

Works on a throwaway copy of the project (the working tree is left alone), at each --scales
factor (1: the glossary as it is; 4: four times the term pages, benchmarks/scaled.py). For a
prose edit of an English page and of a Chinese page (a sentence appended, --runs times each),
prints the seconds from the save to the reloaded page in the browser, median and worst, and
the builder's own share (from the save's arrival to the new pages written); also how long
the first build took.

    python benchmarks/live_reload_benchmark.py [--runs 5] [--scales 1 4] [--browser chromium]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))  # the browser's flags live with the browser tests

from helpers import CHROMIUM_FLAGS  # noqa: E402
from scaled import scaled_copy  # noqa: E402

from gpu_glossary.site.live import LivePreview  # noqa: E402
from gpu_glossary.site.serve import serve_in_background  # noqa: E402

EDITS = {  # page file, its address
    "English page": ("glossary/en/device-software/warp.md", "device-software/warp/"),
    "Chinese page": ("glossary/zh/device-software/warp.md", "zh/device-software/warp/"),
}


def measure(scale: float, runs: int, browser_path: str, scratch: Path) -> None:
    root = scaled_copy(scratch / f"project-{scale:g}", scale)
    site_dir = root / "site"
    builds: list[float] = []

    def log(message: str) -> None:
        seconds = re.match(r"Rebuilt .* in ([\d.]+) s$", message)
        if seconds:
            builds.append(float(seconds.group(1)))

    live = LivePreview(root, site_dir, "", log=log)
    server = serve_in_background(site_dir, live=live)
    url = live.site_url = f"http://127.0.0.1:{server.server_address[1]}/"
    stop = threading.Event()
    started = time.perf_counter()
    live.start(stop)
    state = live.wait_for_change(0, 600)
    assert not state.errors, state.errors
    first = time.perf_counter() - started
    pages = sum(1 for _ in (root / "glossary/en").rglob("*.md"))
    print(f"scale {scale:g} ({pages} pages a language): first build {first:.1f} s (watcher start included)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=browser_path, args=CHROMIUM_FLAGS)
        page = browser.new_page()
        print(f"{'edit':<14} {'median s':>9} {'worst s':>8} {'builder s':>10} {'runs':>5}")
        for label, (file, address) in EDITS.items():
            page.goto(url + address)
            path = root / file
            times, builder = [], []
            for run in range(runs):
                assert live.wait_until_idle(600)
                done = len(builds)
                marker = f"Live reload marker {label} {run}."
                path.write_text(path.read_text(encoding="utf-8") + f"\n{marker}\n", encoding="utf-8")
                saved = time.perf_counter()
                page.locator("article", has_text=marker).wait_for(timeout=300_000)
                times.append(time.perf_counter() - saved)
                assert live.wait_until_idle(600) and not live.state.errors, live.state.errors
                builder.append(sum(builds[done:]))
            print(
                f"{label:<14} {statistics.median(times):>9.2f} {max(times):>8.2f}"
                f" {statistics.median(builder):>10.2f} {len(times):>5}"
            )
        browser.close()
    stop.set()
    live.wait_until_idle(60)
    server.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--scales", type=float, nargs="+", default=[1, 4])
    parser.add_argument("--browser", default="chromium", help="chromium or chromium-headless-shell")
    args = parser.parse_args()
    browser_path = shutil.which(args.browser)
    if not browser_path:
        sys.exit(f"{args.browser} is not installed (make test installs it)")
    for scale in args.scales:
        with tempfile.TemporaryDirectory() as scratch:
            measure(scale, args.runs, browser_path, Path(scratch))


if __name__ == "__main__":
    main()
