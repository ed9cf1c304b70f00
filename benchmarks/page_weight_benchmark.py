"""Page weight and Lighthouse scores of the built site, served with gzip as GitHub Pages does.

Builds both languages into a temporary folder, serves them on 127.0.0.1 with the project's
server (gzip on), and runs Lighthouse 12 (from tests/tools, `npm ci --prefix tests/tools`)
in Debian's Chromium, mobile form factor, against three pages per language. Prints, per
page, the bytes transferred on first load (gzip, headers included), the same resources
uncompressed, the number of requests, whether a search index was fetched, the four
Lighthouse scores and Lighthouse's CPU benchmark index: the performance score depends on
how busy the machine is, so compare runs of similar index. site/ is left alone.

    python benchmarks/page_weight_benchmark.py [--runs 1] [--pages device-software/warp/ ...]
    python benchmarks/page_weight_benchmark.py --root /tmp/old-checkout   # "before" figures

--root builds another checkout of the project (its pages, theme overrides and plugin code),
still served by this checkout's gzip server, so two commits compare on equal terms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))  # the browser's flags live with the browser tests

from helpers import CHROMIUM_FLAGS  # noqa: E402

from gpu_glossary.site.build import build_site  # noqa: E402
from gpu_glossary.site.serve import serve_in_background  # noqa: E402

LIGHTHOUSE = ROOT / "tests" / "tools" / "node_modules" / "lighthouse" / "cli" / "index.js"
CHROMIUM = os.environ.get("CHROME_PATH", "/usr/bin/chromium")
CHROME_FLAGS = " ".join(CHROMIUM_FLAGS)
PAGES = ["", "device-software/warp/", "perf/roofline-model/"]
LANGUAGES = {"en": "", "zh": "zh/"}
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]


def lighthouse(url: str, out_dir: Path) -> dict:
    """One Lighthouse run (mobile, simulated throttling); the figures this benchmark prints."""
    report = out_dir / "report.json"
    command = [
        "node",
        str(LIGHTHOUSE),
        url,
        "--quiet",
        "--output=json",
        f"--output-path={report}",
        f"--chrome-flags={CHROME_FLAGS}",
        f"--only-categories={','.join(CATEGORIES)}",
    ]
    subprocess.run(command, check=True, env=dict(os.environ, CHROME_PATH=CHROMIUM), cwd=out_dir)
    data = json.loads(report.read_text(encoding="utf-8"))
    requests = data["audits"]["network-requests"]["details"]["items"]
    return {
        "transferred": sum(r.get("transferSize", 0) for r in requests),
        "uncompressed": sum(r.get("resourceSize", 0) for r in requests),
        "requests": len(requests),
        "index": any("search_index" in r["url"] for r in requests),
        "scores": {c: round(100 * (data["categories"][c]["score"] or 0)) for c in CATEGORIES},
        "cpu": data["environment"]["benchmarkIndex"],
    }


def median_run(runs: list[dict]) -> dict:
    """Median of each figure over the runs (one run: that run)."""
    return {
        "transferred": statistics.median(r["transferred"] for r in runs),
        "uncompressed": statistics.median(r["uncompressed"] for r in runs),
        "requests": statistics.median(r["requests"] for r in runs),
        "index": any(r["index"] for r in runs),
        "scores": {c: statistics.median(r["scores"][c] for r in runs) for c in CATEGORIES},
        "cpu": statistics.median(r["cpu"] for r in runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="Lighthouse runs per page; medians are printed (default 1)")
    parser.add_argument(
        "--pages", nargs="+", default=PAGES, help="paths under each language's root (default: %(default)s)"
    )
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout to build (default: this one)")
    args = parser.parse_args()
    root = args.root.resolve()
    if root != ROOT:  # the build's MkDocs imports that checkout's plugin, not this one's
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root / "scripts"), os.environ.get("PYTHONPATH")]))
    if not LIGHTHOUSE.is_file():
        sys.exit(f"{LIGHTHOUSE} is missing: run `npm ci --prefix tests/tools` (or `make test`) first")
    with tempfile.TemporaryDirectory() as temporary:
        site_dir = Path(temporary) / "site"
        site_dir.mkdir()
        server = serve_in_background(site_dir)
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        try:
            print(f"building both languages of {root}…", file=sys.stderr)
            build_site(root, site_dir=site_dir, site_url=base)
            results = {}
            for lang, prefix in LANGUAGES.items():
                for page in args.pages:
                    runs = []
                    for run in range(args.runs):
                        print(f"lighthouse {run + 1}/{args.runs}: /{prefix}{page}", file=sys.stderr)
                        runs.append(lighthouse(base + prefix + page, Path(temporary)))
                    results[(lang, page)] = median_run(runs)
        finally:
            server.shutdown()
    header = (
        f"{'lang':<5}{'page':<28}{'KB gzip':>9}{'KB raw':>9}{'reqs':>6}{'index':>7}"
        f"{'perf':>6}{'a11y':>6}{'best':>6}{'seo':>6}{'cpu':>7}"
    )
    print(f"Lighthouse 12 mobile, {args.runs} run(s) per page (medians), served with gzip; KB = 1000 bytes;")
    print("cpu = Lighthouse's benchmarkIndex (higher is a faster, less loaded machine); performance follows it")
    print(header)
    for lang in LANGUAGES:
        for page in args.pages:
            r = results[(lang, page)]
            s = r["scores"]
            print(
                f"{lang:<5}{'/' + LANGUAGES[lang] + page:<28}"
                f"{r['transferred'] / 1000:>9.1f}{r['uncompressed'] / 1000:>9.1f}"
                f"{r['requests']:>6.0f}{'yes' if r['index'] else 'no':>7}"
                f"{s['performance']:>6.0f}{s['accessibility']:>6.0f}"
                f"{s['best-practices']:>6.0f}{s['seo']:>6.0f}{r['cpu']:>7.0f}"
            )
        total = sum(results[(lang, p)]["transferred"] for p in args.pages)
        print(f"{lang:<5}{'sum, each cold':<28}{total / 1000:>9.1f}")


if __name__ == "__main__":
    main()
