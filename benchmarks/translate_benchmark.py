"""Translate the whole glossary against a local OpenAI-compatible server that simulates time.

Two models of a request's time:

- realistic (the default): a fixed latency plus the reply's tokens at a rate (1 s + 40
  tokens/s), as a model streams its answer. Prints the naive way (one page per request,
  one after the other, a 2 s sleep between calls), estimated from the same model because
  running it would take about an hour; ours (default settings); and the limit, the
  longest single request of our run, with the ratio of ours to it. Then adds one sentence
  to a paragraph of the middle section of the longest page, the median-length one and then
  the longest one, re-running after each (tokens sent, against what translating the whole
  page took), then re-runs with no change (expect zero requests).
- latency: a fixed latency per request, replies instant (the earlier benchmark); the naive
  way is run for real, next to its estimate.

Works on copies of the glossary; the repository is untouched.

    python benchmarks/translate_benchmark.py [--mode realistic|latency] [--latency S]
        [--tokens-per-second N] [--concurrency N]
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
sys.path.insert(0, str(ROOT / "tests"))  # the OpenAI-compatible test server lives with the tests

import openai  # noqa: E402
from fake_openai import FakeOpenAI, count_tokens, fake_translate  # noqa: E402

from gpu_glossary.glossary import load_glossary  # noqa: E402
from gpu_glossary.terminology import load_terminology  # noqa: E402
from gpu_glossary.translate.prompt import system_message, translate_request  # noqa: E402
from gpu_glossary.translate.protect import ProtectedText  # noqa: E402
from gpu_glossary.translate.sections import split_blocks  # noqa: E402
from gpu_glossary.translate.translator import Settings, run_jobs, select_jobs  # noqa: E402

NAIVE_SLEEP = 2.0
MODES = {"realistic": (1.0, 40.0), "latency": (1.5, 0.0)}


def fresh_copy(target: Path) -> Path:
    """The glossary with no Chinese pages, so every page needs translating."""
    shutil.copytree(ROOT / "glossary", target / "glossary")
    for config in ("mkdocs.yml", "mkdocs.zh.yml"):  # the translation checks render as the site does
        shutil.copy2(ROOT / config, target / config)
    shutil.rmtree(target / "glossary" / "zh")
    (target / "glossary" / "zh").mkdir()
    return target


def naive_requests(root: Path) -> list[list[dict]]:
    """The naive way's requests: each page's raw Markdown in one message, in path order."""
    glossary = load_glossary(root)
    system = system_message(load_terminology(glossary.terminology_path))
    return [
        [{"role": "system", "content": system}, {"role": "user", "content": translate_request(page.text)}]
        for page in sorted(glossary.pages["en"].values(), key=lambda p: p.rel)
    ]


def naive_estimate(root: Path, server: FakeOpenAI) -> tuple[float, int, int]:
    """What the naive way would take, from the server's own model of time and tokens."""
    seconds = tokens = 0
    requests = naive_requests(root)
    for messages in requests:
        reply = fake_translate(messages[1]["content"].split("\n\n", 1)[1])
        seconds += server.reply_seconds(reply)
        tokens += sum(count_tokens(m["content"]) for m in messages) + count_tokens(reply)
    return seconds + NAIVE_SLEEP * (len(requests) - 1), len(requests), tokens


def naive_run(root: Path, server: FakeOpenAI) -> tuple[float, int, int]:
    """The naive way, run: one page at a time, a sleep between calls."""
    client = openai.OpenAI(api_key="sk-benchmark", base_url=server.url, max_retries=0)
    started, tokens = time.perf_counter(), 0
    requests = naive_requests(root)
    for index, messages in enumerate(requests):
        response = client.chat.completions.create(model="deepseek-flash", messages=messages)
        tokens += response.usage.total_tokens
        if index < len(requests) - 1:
            time.sleep(NAIVE_SLEEP)
    return time.perf_counter() - started, len(requests), tokens


def ours(root: Path, server: FakeOpenAI, concurrency: int):
    """(seconds, requests, longest request in seconds, run) of one run with default settings."""
    glossary = load_glossary(root)
    terminology = load_terminology(glossary.terminology_path)
    settings = Settings(api_key="sk-benchmark", base_url=server.url, concurrency=concurrency)
    jobs = select_jobs(glossary, [], force=False)
    before = len(server.chat_requests())
    started = time.perf_counter()
    run = asyncio.run(run_jobs(jobs, settings, terminology, glossary)) if jobs else None
    seconds = time.perf_counter() - started
    failed = [o for o in run.outcomes if o.status != "translated"] if run else []
    if failed:
        raise SystemExit(f"benchmark run failed: {failed[0].rel}: {failed[0].error}")
    requests = server.chat_requests()[before:]
    longest = max((r.get("seconds", 0.0) for r in requests), default=0.0)
    return seconds, len(requests), longest, run


def tokens_of(outcomes) -> tuple[int, int]:
    """(all tokens in + out, the same without the cached prefix: the system prompt, identical in every request)."""
    everything = sum(o.tokens_in + o.tokens_out for o in outcomes)
    return everything, everything - sum(o.tokens_cached for o in outcomes)


def edit_one_sentence(root: Path, pick: str) -> tuple[str, str, float]:
    """Append a sentence to the median-length or the longest paragraph of the middle section of
    the longest English page; returns the page, the section's heading and the paragraph's share of the page."""
    glossary = load_glossary(root)
    page = max(glossary.pages["en"].values(), key=lambda p: len(p.text))
    blocks = split_blocks(page)
    section = next(s for s in range(len(blocks) // 2, len(blocks)) if any(b[:1].isalpha() for b in blocks[s][1:]))
    paragraphs = sorted(
        (i for i, block in enumerate(blocks[section]) if i and block[:1].isalpha()),
        key=lambda i: len(blocks[section][i]),
    )
    index = paragraphs[-1] if pick == "longest" else paragraphs[(len(paragraphs) - 1) // 2]
    block = blocks[section][index]
    share = len(ProtectedText().protect(block)) / len(ProtectedText().protect(page.body))
    blocks[section][index] = (
        block.rstrip("\n") + f" This sentence was added to the {pick} paragraph." + block[len(block.rstrip("\n")) :]
    )
    page.path.write_text(
        page.text[: len(page.text) - len(page.body)] + "".join("".join(b) for b in blocks), encoding="utf-8"
    )
    return page.rel, f"section {section + 1} of {len(blocks)}, {blocks[section][0].split(' {')[0].strip()}", share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=MODES, default="realistic")
    parser.add_argument("--latency", type=float, help="seconds per request (realistic 1.0, latency 1.5)")
    parser.add_argument(
        "--tokens-per-second", type=float, help="simulated output speed (realistic 40, latency 0: instant)"
    )
    parser.add_argument("--concurrency", type=int, default=Settings().concurrency)
    args = parser.parse_args()
    latency, rate = MODES[args.mode]
    latency = latency if args.latency is None else args.latency
    rate = rate if args.tokens_per_second is None else args.tokens_per_second
    server = FakeOpenAI(latency=latency, tokens_per_second=rate).start()
    say = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    try:
        with tempfile.TemporaryDirectory() as naive_dir, tempfile.TemporaryDirectory() as ours_dir:
            naive_root = fresh_copy(Path(naive_dir))
            estimate = naive_estimate(naive_root, server)
            if args.mode == "latency":
                say(f"naive run (sequential, {NAIVE_SLEEP:g} s sleep), about {estimate[0] / 60:.0f} min…")
                naive = naive_run(naive_root, server)
            else:
                naive = estimate
            say(f"our run (concurrency up to {args.concurrency})…")
            root = fresh_copy(Path(ours_dir))
            our_time, our_requests, limit, run = ours(root, server, args.concurrency)
            edits = []
            for pick in ("median", "longest"):
                rel, where, share = edit_one_sentence(root, pick)
                say(f"one-sentence edit to the {pick} paragraph of {rel}…")
                edits.append((pick, where, share, *ours(root, server, args.concurrency)))
            same_time, same_requests, _, _ = ours(root, server, args.concurrency)
    finally:
        server.stop()

    pages = len(run.outcomes)
    speed = (
        f"{latency:g} s per request + {rate:g} output tokens/s"
        if rate
        else f"{latency:g} s per request, replies instant"
    )
    naive_label = "naive (est.)" if args.mode == "realistic" else "naive"
    our_tokens = tokens_of(run.outcomes)
    print(f"{args.mode} model: {speed}; {pages} English pages")
    print(f"{'':<24}{naive_label:>14}{'ours':>12}{'limit':>12}")
    print(f"{'wall time (s)':<24}{naive[0]:>14,.1f}{our_time:>12.1f}{limit:>12.1f}")
    print(f"{'requests':<24}{naive[1]:>14,}{our_requests:>12,}{1:>12}")
    print(f"{'tokens (in + out)':<24}{naive[2]:>14,}{our_tokens[0]:>12,}")
    print(f"ours / limit: {our_time / limit:.2f}x; speed-up over naive: {naive[0] / our_time:.0f}x")
    if args.mode == "realistic":
        print(f"naive: estimated from the server's model of time (running it would take {naive[0] / 60:.0f} min)")
    else:
        print(f"naive: run; the same model estimates {estimate[0]:.1f} s")
    level = run.concurrency
    print(
        f"pool: {run.chunks} chunks, concurrency {level['final']} at the end (ceiling {level['ceiling']}, "
        f"{level['backoffs']} back-offs)"
    )
    page_tokens = tokens_of([o for o in run.outcomes if o.rel == rel])
    print(f"one-sentence edits to {rel}, {where}; page tokens are in + out without the system prompt")
    print(
        f"  (cached, the same in every request); translating the whole page took {page_tokens[1]:,} "
        f"({page_tokens[0]:,} with the system prompt)"
    )
    for pick, _, share, edit_time, edit_requests, _, edit_run in edits:
        sent = tokens_of(edit_run.outcomes)
        print(
            f"  {pick} paragraph ({share:.0%} of the page): {edit_requests} request(s), {edit_time:.1f} s, "
            f"{sent[1]:,} page tokens = {sent[1] / page_tokens[1]:.0%} "
            f"(with the system prompt {sent[0]:,} = {sent[0] / page_tokens[0]:.0%})"
        )
    print(f"with no change: {same_requests} request(s), {same_time:.2f} s")


if __name__ == "__main__":
    main()
