"""Time the full bilingual build: both languages in parallel vs one after the other.

Prints wall-clock seconds for each mode (best and median of --runs), the speed-up, and
the number of HTML pages and their average size. Builds into a temporary folder, so
site/ is left alone.

    python benchmarks/build_benchmark.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from gpu_glossary.site.build import build_site  # noqa: E402


def html_stats(site_dir: Path) -> tuple[int, float]:
    pages = [p for p in site_dir.rglob("*.html") if p.name != "404.html"]
    return len(pages), sum(p.stat().st_size for p in pages) / max(len(pages), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="builds per mode (default 3)")
    args = parser.parse_args()
    timings: dict[str, list[float]] = {"parallel": [], "sequential": []}
    with tempfile.TemporaryDirectory() as temporary:
        site_dir = Path(temporary) / "site"
        for run in range(args.runs):
            for mode in timings:  # alternate the modes so both see the same machine state
                result = build_site(ROOT, site_dir=site_dir, parallel=(mode == "parallel"))
                timings[mode].append(result.seconds)
                print(f"run {run + 1}/{args.runs} {mode:>10}: {result.seconds:6.2f} s", file=sys.stderr)
        pages, average = html_stats(site_dir)
    print(f"{'mode':<12}{'best s':>8}{'median s':>10}")
    for mode, values in timings.items():
        print(f"{mode:<12}{min(values):>8.2f}{statistics.median(values):>10.2f}")
    speedup = statistics.median(timings["sequential"]) / statistics.median(timings["parallel"])
    print(f"speed-up of parallel over sequential (median): {speedup:.2f}x")
    print(f"HTML pages: {pages} (both languages), average {average / 1024:.1f} KiB per page")


if __name__ == "__main__":
    main()
