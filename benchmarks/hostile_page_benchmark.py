"""How long `gpu-glossary check` takes over one page: the slowest page of the glossary, and
hostile pages built to sit just inside the limits of page_limits.py (and some far over them).

Each page is checked as the checker checks it (limits, its own rules, its code against the
English page, its rendered HTML through the sanitizer), rendered afresh (no cache), once.

    python benchmarks/hostile_page_benchmark.py [--top 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
os.environ["GPU_GLOSSARY_CACHE"] = ""  # every page rendered afresh

from gpu_glossary import page_limits as limits  # noqa: E402
from gpu_glossary.check import translation_problems  # noqa: E402
from gpu_glossary.glossary import load_glossary  # noqa: E402
from gpu_glossary.page import parse_page  # noqa: E402
from gpu_glossary.terminology import load_terminology  # noqa: E402

WORDS = "the warp scheduler issues one instruction for all lanes of a warp each cycle "


def paragraphs(unit: str, per_block: int, blocks: int) -> str:
    return "\n\n".join(f"Block {n}: " + unit * per_block for n in range(blocks))


def hostile_pages() -> dict[str, str]:
    """Bodies at the limits (the worst inputs found for Python-Markdown's inline parser), and over them."""
    blocks = limits.MAX_OPENERS_PER_PAGE["["] // limits.MAX_OPENERS_PER_BLOCK["["]
    return {
        "[a]( at the limits": paragraphs("[a](", limits.MAX_OPENERS_PER_BLOCK["["], blocks),
        "[a][ at the limits": paragraphs("[a][", limits.MAX_OPENERS_PER_BLOCK["["] // 2, blocks),
        "[ runs at the limits": paragraphs("[", limits.MAX_OPENERS_PER_BLOCK["["], blocks),
        "![ at the limits": paragraphs("![", limits.MAX_OPENERS_PER_BLOCK["["], blocks),
        "<a at the limits": paragraphs("<a ", limits.MAX_OPENERS_PER_BLOCK["<"], blocks),
        "<http: at the limits": paragraphs("<http://a ", limits.MAX_OPENERS_PER_BLOCK["<"], blocks),
        "backticks at the limits": paragraphs("`a ", limits.MAX_OPENERS_PER_BLOCK["`"], blocks),
        "\\( at the limits": paragraphs("\\(", limits.MAX_OPENERS_PER_BLOCK["\\"], blocks),
        "headings at the limit": "\n\n".join(f"## Heading {n}" for n in range(limits.MAX_HEADINGS)),
        "longest paragraphs": paragraphs(WORDS + "\n", (limits.MAX_BLOCK_CHARS - 20) // (len(WORDS) + 1), 9),
        "deepest nesting": "".join(" " * (2 * n) + "- x\n" for n in range(limits.MAX_INDENT // 2))
        + "\n"
        + "".join("> " * n + "x\n" for n in range(1, limits.MAX_QUOTE_DEPTH + 1))
        + "\n"
        + '<div markdown="1">\n' * limits.MAX_HTML_DEPTH
        + "x\n"
        + "</div>\n" * limits.MAX_HTML_DEPTH,
        "20,000 [ (over: refused)": "[" * 20_000,
        "40,000 [ (over: refused)": "[" * 40_000,
        "nested divs (over: refused)": '<div markdown="1">\n' * 500 + "x\n" + "</div>\n" * 500,
    }


def timed(glossary, page, terminology) -> tuple[float, int]:
    started = time.perf_counter()
    problems = translation_problems(glossary, page, terminology)
    return time.perf_counter() - started, len(problems)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=3, help="slowest pages of the glossary to list (default 3)")
    args = parser.parse_args()
    glossary = load_glossary(ROOT)
    terminology = load_terminology(glossary.terminology_path)
    times = []
    for pages in glossary.pages.values():
        for page in pages.values():
            seconds, _ = timed(glossary, page, terminology)
            times.append((seconds, page.display_path))
    times.sort(reverse=True)
    print(f"glossary: {len(times)} pages, all checked in {sum(t for t, _ in times):.2f} s; slowest:")
    for seconds, path in times[: args.top]:
        print(f"  {seconds:7.3f} s  {path}")
    print("hostile pages (one page each, checked alone):")
    rel = "perf/hostile.md"
    glossary.nav.append(rel)
    for name, body in hostile_pages().items():
        text = f"---\ntitle: Hostile\nsummary: A page built to be slow.\n---\n\n{body}\n"
        page = parse_page(text, ROOT / "glossary/en" / rel, f"glossary/en/{rel}", rel, "en")
        glossary.pages["en"][rel] = page
        seconds, problems = timed(glossary, page, terminology)
        verdict = f"{problems} problem(s)" if "over" in name else ("passes the limits" if not problems else "REFUSED")
        print(f"  {seconds:7.3f} s  {name:<30} {len(text):>8,} chars, {verdict}")


if __name__ == "__main__":
    main()
