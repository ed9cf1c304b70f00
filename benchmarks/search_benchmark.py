"""Search quality and cost: the query set of tests/search_queries.yml typed into the site's search box.

Builds both languages (or takes a built site with --site), serves them with the project's gzip
server and drives the search dialog in headless Chromium as a reader does: the query goes into
the box (an `input` event, as a paste makes), and the results are read from the dialog. Prints,
per language, the top-1 and top-3 hit rates (overall and per kind of query) and the queries that
missed; then the cost of a reader's first search on a fresh page: bytes fetched from the first
keystroke to the results (gzip, as served), the time until results show, and the CPU time of all
of Chromium's processes meanwhile (read from /proc, so a search worker counts too), and the
median time of the later searches.

It drives either search the site has had: ours (overrides/partials/search.html) or Material's
(lunr in a worker), told apart by the dialog's markup, so `--root` measures another checkout:

    python benchmarks/search_benchmark.py                    # this checkout
    python benchmarks/search_benchmark.py --root /tmp/old     # e.g. a checkout before the switch
    python benchmarks/search_benchmark.py --site /tmp/site    # a site built already (both languages)

Timings depend on how busy the machine is; hit rates do not.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))  # the browser tests' wait for a loaded page

from helpers import load  # noqa: E402

from gpu_glossary import fast_yaml  # noqa: E402
from gpu_glossary.glossary import GENERATED_PAGES  # noqa: E402
from gpu_glossary.site.build import build_site  # noqa: E402
from gpu_glossary.site.serve import serve_in_background  # noqa: E402

QUERIES = ROOT / "tests" / "search_queries.yml"
LANGUAGES = {"en": "", "zh": "zh/"}
MARKER = "--gg-search-benchmark"  # on the browser's command line, to find its processes in /proc

# The result links, in order, and whether the list shows the results of `query` yet.
OURS = {
    "box": "form[data-gg-search] input",
    "done": "q => document.querySelector('form[data-gg-search]').getAttribute('data-gg-searched') === q",
    "links": "[data-gg-search-list] > li > a",
}
MATERIAL = {
    "box": "input[data-md-component=search-query]",
    # Material's list has no marker of the query it shows: wait until its count is written for a
    # non-empty query (or "no results"), after the list was emptied for the query before.
    "done": """() => { const m = document.querySelector('.md-search-result__meta');
        return !!m && !/Initializ|初始化|Type to|键入/.test(m.textContent)
            && (document.querySelectorAll('.md-search-result__item').length > 0
                || /No matching|没有/.test(m.textContent)); }""",
    "links": ".md-search-result__item > a.md-search-result__link",
}


def load_queries(path: Path = QUERIES) -> dict[str, list[dict]]:
    return fast_yaml.load(path.read_text(encoding="utf-8"))


def page_of(href: str, prefix: str) -> str:
    """`device-software/warp.md` for a result link to /zh/device-software/warp/#section?h=…."""
    from urllib.parse import urlsplit

    path = urlsplit(href).path.lstrip("/").removeprefix(prefix).rstrip("/")
    if not path:
        return "index.md"
    if "/" not in path and path + ".md" not in GENERATED_PAGES:  # a section's overview
        return path + "/index.md"
    return path + ".md"


def chromium_cpu_seconds() -> float:
    """CPU time of the benchmark's browser and every process under it, from /proc."""
    parents, cpu, browser = {}, {}, None
    tick = os.sysconf("SC_CLK_TCK")
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            parents[proc.name], cpu[proc.name] = fields[1], (int(fields[11]) + int(fields[12])) / tick
            if browser is None and MARKER.encode() in (proc / "cmdline").read_bytes():
                browser = proc.name
        except (OSError, ValueError):
            continue
    if browser is None:
        return 0.0
    tree, grew = {browser}, True
    while grew:
        grown = {pid for pid, parent in parents.items() if parent in tree}
        grew = not grown <= tree
        tree |= grown
    return sum(cpu.get(pid, 0.0) for pid in tree)


class SearchBox:
    """The search dialog of one open page, ours or Material's."""

    def __init__(self, tab):
        self.tab = tab
        self.ui = OURS if tab.locator("form[data-gg-search]").count() else MATERIAL

    def ask(self, query: str, timeout: float = 30.0) -> list[str]:
        """Put `query` in the box as a paste would (one `input` event); the result links, in order."""
        box = self.tab.locator(self.ui["box"])
        if self.ui is MATERIAL:  # Material searches on keyup only
            box.fill("")
            box.dispatch_event("keyup")
            self.tab.wait_for_timeout(100)
            box.fill(query)
            box.dispatch_event("keyup")
            self.tab.wait_for_function(self.ui["done"], timeout=timeout * 1000)
            self.tab.wait_for_timeout(150)  # the list is written after the count
        else:
            box.fill(query)
            self.tab.wait_for_function(self.ui["done"], arg=query, timeout=timeout * 1000)
        return self.tab.eval_on_selector_all(self.ui["links"], "els => els.map(e => e.href)")


def hits(pages: list[str], expect: list[str]) -> tuple[bool, bool]:
    return bool(pages) and pages[0] in expect, any(p in expect for p in pages[:3])


def run_queries(tab, base: str, prefix: str, queries: list[dict]) -> dict:
    """Every query of one language on one open page: hit rates and misses."""
    box = SearchBox(tab)
    by_kind = defaultdict(lambda: [0, 0, 0])
    misses, times = [], []
    for item in queries:
        started = time.perf_counter()
        links = box.ask(item["q"])
        times.append(time.perf_counter() - started)
        pages = list(dict.fromkeys(page_of(link.removeprefix(base), prefix) for link in links))
        top1, top3 = hits(pages, item["expect"])
        kind = by_kind[item["kind"]]
        kind[0] += 1
        kind[1] += top1
        kind[2] += top3
        if not top3 or (item.get("first") and not top1):
            misses.append(
                f"{item['q']!r} -> {pages[:3]} (want {item['expect']}{', first' if item.get('first') else ''})"
            )
    total = [sum(k[i] for k in by_kind.values()) for i in range(3)]
    return {"total": total, "by_kind": dict(by_kind), "misses": misses, "median_s": statistics.median(times)}


def first_search(browser, base: str, prefix: str, query: str) -> dict:
    """A reader's first search on a freshly loaded page: bytes, seconds and CPU-seconds."""
    context = browser.new_context()
    tab = context.new_page()
    fetched = []
    tab.on("requestfinished", lambda r: fetched.append(r))
    load(tab, base + prefix + "device-software/warp/")
    tab.wait_for_timeout(500)
    fetched.clear()
    box = SearchBox(tab)
    cpu, started = chromium_cpu_seconds(), time.perf_counter()
    box.ask(query)
    seconds, cpu = time.perf_counter() - started, chromium_cpu_seconds() - cpu
    tab.wait_for_timeout(300)  # the worker's script may finish after the results show
    size = sum(r.sizes()["responseBodySize"] + r.sizes()["responseHeadersSize"] for r in fetched)
    context.close()
    return {"bytes": size, "seconds": seconds, "cpu": cpu, "files": len(fetched)}


def measure(site_dir: Path) -> dict:
    from playwright.sync_api import sync_playwright

    queries = load_queries()
    server = serve_in_background(site_dir)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    results = {}
    chromium = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", MARKER])
            for lang, prefix in LANGUAGES.items():
                print(f"searching /{prefix} ({len(queries[lang])} queries)…", file=sys.stderr)
                first = first_search(browser, base, prefix, queries[lang][0]["q"])
                context = browser.new_context(bypass_csp=True)
                tab = context.new_page()
                tab.goto(base + prefix)
                results[lang] = {"first": first, **run_queries(tab, base, prefix, queries[lang])}
                context.close()
            browser.close()
    finally:
        server.shutdown()
    return results


def report(results: dict) -> None:
    for lang, r in results.items():
        n, top1, top3 = r["total"]
        print(f"{lang}: {n} queries: top-1 {top1}/{n} = {top1 / n:.0%}, top-3 {top3}/{n} = {top3 / n:.0%}")
        for kind, (k, k1, k3) in sorted(r["by_kind"].items()):
            print(f"    {kind:<13} {k:>3}   top-1 {k1:>3}   top-3 {k3:>3}")
        f = r["first"]
        print(
            f"  first search on a fresh page: {f['bytes'] / 1000:.1f} KB over {f['files']} request(s), "
            f"{f['seconds'] * 1000:.0f} ms to results, {f['cpu']:.2f} CPU-s in Chromium; "
            f"later searches: median {r['median_s'] * 1000:.0f} ms"
        )
        for miss in r["misses"]:
            print(f"  miss: {miss}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout to build (default: this one)")
    parser.add_argument("--site", type=Path, help="a built site (both languages) to measure instead of building")
    args = parser.parse_args()
    if args.site:
        report(measure(args.site.resolve()))
        return
    root = args.root.resolve()
    if root != ROOT:  # the build's MkDocs imports that checkout's plugin, not this one's
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root / "scripts"), os.environ.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as temporary:
        site_dir = Path(temporary) / "site"
        print(f"building both languages of {root}…", file=sys.stderr)
        build_site(root, site_dir=site_dir)
        report(measure(site_dir))


if __name__ == "__main__":
    main()
