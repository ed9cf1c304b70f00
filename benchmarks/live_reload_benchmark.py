"""Time `make site`'s edit-to-reload loop on the whole glossary: save a page, wait until the
open page in Chromium has reloaded with the change.

Works on a throwaway copy of the project (the working tree is left alone); prints, for an
English edit (rebuilds both languages) and a Chinese edit (rebuilds Chinese only), the
seconds from the save to the reloaded page, median of --runs.

    python benchmarks/live_reload_benchmark.py [--runs 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from gpu_glossary.site.live import LivePreview  # noqa: E402
from gpu_glossary.site.serve import serve_in_background  # noqa: E402

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
]
EDITS = {  # page file, its URL, the language(s) the edit rebuilds
    "English page": ("glossary/en/device-software/warp.md", "device-software/warp/", "en + zh"),
    "Chinese page": ("glossary/zh/device-software/warp.md", "zh/device-software/warp/", "zh"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "project"
        root.mkdir()
        for name in ("mkdocs.yml", "mkdocs.zh.yml", "overrides", "glossary"):
            (shutil.copytree if (ROOT / name).is_dir() else shutil.copy2)(ROOT / name, root / name)
        site_dir = root / "site"
        site_dir.mkdir()
        live = LivePreview(root, site_dir, "", log=lambda message: None)
        server = serve_in_background(site_dir, live=live)
        url = live.site_url = f"http://127.0.0.1:{server.server_address[1]}/"
        started = time.perf_counter()
        live.rebuild()
        print(f"first build of both languages: {time.perf_counter() - started:.1f} s")
        stop = threading.Event()
        threading.Thread(target=live.watch, args=(stop,), daemon=True).start()
        time.sleep(1)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=shutil.which("chromium") or "/usr/bin/chromium", args=FLAGS
            )
            page = browser.new_page()
            print(f"{'edit':<14} {'rebuilds':<9} {'median s':>9} {'runs':>6}")
            for label, (file, address, languages) in EDITS.items():
                page.goto(url + address)
                path = root / file
                times = []
                for run in range(args.runs):
                    marker = f"Live reload marker {label} {run}."
                    path.write_text(path.read_text(encoding="utf-8") + f"\n{marker}\n", encoding="utf-8")
                    saved = time.perf_counter()
                    page.locator("article", has_text=marker).wait_for(timeout=300_000)
                    times.append(time.perf_counter() - saved)
                print(f"{label:<14} {languages:<9} {statistics.median(times):>9.1f} {len(times):>6}")
            browser.close()
        stop.set()
        server.shutdown()


if __name__ == "__main__":
    main()
