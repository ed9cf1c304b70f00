"""Translate the whole glossary against a local OpenAI-compatible server with simulated latency.

Prints, side by side, the naive way public scripts do it (one page per request, one after
the other, a 2 s sleep between calls) and ours (concurrent, default concurrency), then
edits one English page and re-runs ours (expect exactly one request), then re-runs with
no change (expect zero). Works on a copy of the glossary; the repository is untouched.

    python benchmarks/translate_benchmark.py [--latency 1.5] [--tokens-per-second 0]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import openai  # noqa: E402

from gpu_glossary.fake_openai import FakeOpenAI  # noqa: E402
from gpu_glossary.glossary import load_glossary  # noqa: E402
from gpu_glossary.prompt import system_message  # noqa: E402
from gpu_glossary.terminology import load_terminology  # noqa: E402
from gpu_glossary.translator import Settings, run_jobs, select_jobs  # noqa: E402

NAIVE_SLEEP = 2.0


def fresh_copy(target: Path) -> Path:
    """The glossary with no Chinese pages, so every page needs translating."""
    shutil.copytree(ROOT / "glossary", target / "glossary")
    shutil.copy2(ROOT / "mkdocs.yml", target / "mkdocs.yml")
    shutil.rmtree(target / "glossary" / "zh")
    (target / "glossary" / "zh").mkdir()
    return target


def naive(root: Path, server: FakeOpenAI) -> tuple[float, int, int]:
    """One page at a time, the raw Markdown in one request, a sleep between calls."""
    glossary = load_glossary(root)
    system = system_message(load_terminology(glossary.terminology_path))
    client = openai.OpenAI(api_key="sk-benchmark", base_url=server.url, max_retries=0)
    started, tokens = time.perf_counter(), 0
    pages = sorted(glossary.pages["en"].values(), key=lambda p: p.rel)
    for index, page in enumerate(pages):
        response = client.chat.completions.create(model="deepseek-flash", messages=[
            {"role": "system", "content": system},
            {"role": "user", "content": f"Translate this page into Simplified Chinese.\n\n{page.text}"}])
        tokens += response.usage.total_tokens
        if index < len(pages) - 1:
            time.sleep(NAIVE_SLEEP)
    return time.perf_counter() - started, len(pages), tokens


def ours(root: Path, server: FakeOpenAI, concurrency: int) -> tuple[float, int, int]:
    glossary = load_glossary(root)
    terminology = load_terminology(glossary.terminology_path)
    settings = Settings(api_key="sk-benchmark", base_url=server.url, concurrency=concurrency)
    jobs = select_jobs(glossary, [], force=False)
    before = len(server.chat_requests())
    started = time.perf_counter()
    outcomes = asyncio.run(run_jobs(jobs, settings, terminology, glossary)) if jobs else []
    failed = [o for o in outcomes if o.status != "translated"]
    if failed:
        raise SystemExit(f"benchmark run failed: {failed[0].rel}: {failed[0].error}")
    tokens = sum(o.tokens_in + o.tokens_out for o in outcomes)
    return time.perf_counter() - started, len(server.chat_requests()) - before, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=1.5, help="seconds per request (default 1.5)")
    parser.add_argument("--tokens-per-second", type=float, default=0.0, help="simulated output speed (0: instant)")
    parser.add_argument("--concurrency", type=int, default=Settings().concurrency)
    args = parser.parse_args()
    server = FakeOpenAI(latency=args.latency, tokens_per_second=args.tokens_per_second).start()
    try:
        with tempfile.TemporaryDirectory() as naive_dir, tempfile.TemporaryDirectory() as ours_dir:
            print(f"latency {args.latency} s per request, {args.tokens_per_second or 'unlimited'} tokens/s", file=sys.stderr)
            print("naive run (sequential, 2 s sleep)…", file=sys.stderr)
            naive_time, naive_requests, naive_tokens = naive(fresh_copy(Path(naive_dir)), server)
            print(f"our run (concurrency {args.concurrency})…", file=sys.stderr)
            root = fresh_copy(Path(ours_dir))
            our_time, our_requests, our_tokens = ours(root, server, args.concurrency)
            page = next(iter(sorted((root / "glossary" / "en").rglob("*.md"))))
            page.write_text(page.read_text(encoding="utf-8") + "\nOne more sentence.\n", encoding="utf-8")
            edit_time, edit_requests, _ = ours(root, server, args.concurrency)
            same_time, same_requests, _ = ours(root, server, args.concurrency)
    finally:
        server.stop()
    print(f"{'':<28}{'naive':>12}{'ours':>12}")
    print(f"{'wall time (s)':<28}{naive_time:>12.1f}{our_time:>12.1f}")
    print(f"{'requests':<28}{naive_requests:>12}{our_requests:>12}")
    print(f"{'tokens (in + out)':<28}{naive_tokens:>12,}{our_tokens:>12,}")
    print(f"speed-up: {naive_time / our_time:.1f}x")
    print(f"after editing one English page: {edit_requests} request(s), {edit_time:.1f} s")
    print(f"with no change: {same_requests} request(s), {same_time:.2f} s")


if __name__ == "__main__":
    main()
