"""Time the site build: English alone from a cold cache (time a page), then both languages
in parallel against one after the other.

Builds into a temporary folder, so site/ is left alone. `--scale N` builds a throwaway copy
of the project with N times the term pages (benchmarks/scaled.py) instead of the project
itself. "Cold" means an empty cache folder (GPU_GLOSSARY_CACHE): no page's HTML verdict, no
compiled template, no highlighted code kept from an earlier build. Prints, per mode, the best
and median wall-clock seconds of --runs, and for the cold English build the milliseconds a
page (its HTML pages: the term pages and the generated ones). The fork server that build
processes come from is started first, so no build counts its imports.

    python benchmarks/build_benchmark.py [--scale 1] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from scaled import scaled_copy  # noqa: E402

from gpu_glossary.site.build import build_process_context, build_site  # noqa: E402


def html_pages(site_dir: Path) -> list[Path]:
    """The built pages of the language at `site_dir` (not its other languages, not 404)."""
    return [p for p in site_dir.rglob("*.html") if p.name != "404.html" and not p.is_relative_to(site_dir / "zh")]


def start_build_processes() -> None:
    """Start the fork server that build processes come from (it imports MkDocs once per
    command): its start is not part of any build's time."""
    import multiprocessing.forkserver

    if build_process_context().get_start_method() == "forkserver":
        multiprocessing.forkserver.ensure_running()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="builds per mode (default 3)")
    parser.add_argument("--scale", type=float, default=1, help="times the term pages (default 1: the project)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        scratch = Path(temporary)
        root = ROOT if args.scale == 1 else scaled_copy(scratch / "project", args.scale)
        site_dir = scratch / "site"
        start_build_processes()
        cold: list[float] = []
        for run in range(args.runs):
            os.environ["GPU_GLOSSARY_CACHE"] = str(scratch / f"cold-cache-{run}")  # empty: nothing kept
            result = build_site(root, site_dir=site_dir, languages=("en",))
            cold.append(result.per_language["en"])
            print(f"run {run + 1}/{args.runs} English, cold cache: {cold[-1]:6.2f} s", file=sys.stderr)
        pages = len(html_pages(site_dir))
        os.environ["GPU_GLOSSARY_CACHE"] = str(scratch / "warm-cache")
        build_site(root, site_dir=site_dir)  # fills the cache for the runs below
        timings: dict[str, list[float]] = {"parallel": [], "sequential": []}
        for run in range(args.runs):
            for mode in timings:  # alternate the modes so both see the same machine state
                result = build_site(root, site_dir=site_dir, parallel=(mode == "parallel"))
                timings[mode].append(result.seconds)
                print(f"run {run + 1}/{args.runs} {mode:>10}: {result.seconds:6.2f} s", file=sys.stderr)
        both = len(list(site_dir.rglob("*.html"))) - 2  # the two 404 pages
    print(f"scale {args.scale:g}: {pages} English HTML pages, {both} in both languages")
    print(f"{'mode':<34}{'best s':>8}{'median s':>10}{'ms a page':>11}")
    print(
        f"{'English alone, cold cache':<34}{min(cold):>8.2f}{statistics.median(cold):>10.2f}"
        f"{statistics.median(cold) / pages * 1000:>11.1f}"
    )
    for mode, values in timings.items():
        label = f"both languages, {mode}, warm cache"
        print(f"{label:<40}{min(values):>8.2f}{statistics.median(values):>10.2f}")
    speedup = statistics.median(timings["sequential"]) / statistics.median(timings["parallel"])
    print(f"speed-up of parallel over sequential (median): {speedup:.2f}x")


if __name__ == "__main__":
    main()
