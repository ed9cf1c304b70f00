"""`gpu-glossary translate`: what the maintainer sees — selection, dry run, progress, summary, report."""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import click
from tqdm import tqdm

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.glossary import SOURCE_LANG, Glossary, load_glossary
from gpu_glossary.terminology import Terminology, TerminologyError, load_terminology
from gpu_glossary.translate.defaults import Settings
from gpu_glossary.translate.prompt import system_message
from gpu_glossary.translate.translator import (
    TARGET_LANG,
    FatalAPIError,
    Job,
    Outcome,
    Run,
    Totals,
    cost,
    estimate_jobs,
    orphans,
    run_jobs,
    select_comment_jobs,
    select_jobs,
    totals,
    unmatched_patterns,
)

KEY_VARIABLE = "DEEPSEEK_API_KEY"


@dataclass
class Selection:
    """The command's flags that choose pages and what to do with them (Settings says how to translate)."""

    patterns: list[str] = field(default_factory=list)
    force: bool = False
    comments_only: bool = False
    dry_run: bool = False
    check: bool = False
    prune: bool = False
    yes: bool = False
    report: Path | None = None


def _zh_path(rel: str) -> str:
    return f"glossary/{TARGET_LANG}/{rel}"


def run_translate(root: Path, settings: Settings, options: Selection) -> int:
    """Run the command; returns the exit code."""
    glossary = load_glossary(root)
    if options.prune:
        return _prune(glossary, options.yes)
    unknown = unmatched_patterns(glossary, options.patterns)
    if unknown:
        raise click.ClickException(
            f"no English page matches {', '.join(unknown)} "
            f"(paths or globs under glossary/{SOURCE_LANG} or glossary/{TARGET_LANG})"
        )
    if options.comments_only:
        jobs = select_comment_jobs(glossary, options.patterns)
    else:
        jobs = select_jobs(glossary, options.patterns, options.force)
    in_scope = len(select_jobs(glossary, options.patterns, force=True))
    if options.check:
        for job in jobs:
            click.echo(f"{_zh_path(job.rel)}: {job.reason} (from glossary/{SOURCE_LANG}/{job.rel})")
        click.echo(f"{len(jobs)} of {in_scope} translation(s) missing or stale", err=True)
        return 1 if any(job.reason != "forced" for job in jobs) else 0
    try:
        terminology = load_terminology(glossary.terminology_path)
    except TerminologyError as error:
        raise click.ClickException(str(error)) from None
    if options.dry_run:
        return _dry_run(jobs, in_scope, settings, terminology)
    if not jobs:
        click.echo(f"Nothing to translate: all {in_scope} page(s) are current.", err=True)
        _write_report(options.report, settings, [], totals([], in_scope, settings.prices, 0.0), {})
        return 0
    settings.api_key = os.environ.get(KEY_VARIABLE, "").strip()
    if not settings.api_key:
        raise click.ClickException(
            f"{KEY_VARIABLE} is not set: export {KEY_VARIABLE}=<your API key> (or use --dry-run)"
        )

    started = time.perf_counter()
    bar = tqdm(total=0, unit="chunk", desc="Translating", disable=None)

    def progress(done: int, total: int, pages: int, level: int) -> None:
        bar.total = total
        bar.set_postfix_str(f"{pages}/{len(jobs)} pages, concurrency {level}", refresh=False)
        if done > bar.n:
            bar.update(done - bar.n)
        else:
            bar.refresh()

    try:
        run = asyncio.run(run_jobs(jobs, settings, terminology, glossary, progress))
    except FatalAPIError as error:
        bar.close()
        raise click.ClickException(settings.scrub(str(error))) from None
    except KeyboardInterrupt:
        bar.close()
        click.echo(
            "Interrupted: every page is either as it was or completely translated; run again to continue.", err=True
        )
        return 130
    bar.close()
    summary = totals(run.outcomes, in_scope - len(jobs), settings.prices, time.perf_counter() - started)
    _print_summary(summary, run)
    for outcome in run.outcomes:
        if outcome.status != "translated":
            click.echo(f"{_zh_path(outcome.rel)}: failed: {outcome.error}")
    _write_report(options.report, settings, run.outcomes, summary, run.concurrency)
    return 1 if summary.failed else 0


def _prune(glossary: Glossary, delete: bool) -> int:
    stale = orphans(glossary)
    for page in stale:
        if delete:
            page.path.unlink()
            click.echo(f"deleted {page.display_path}")
        else:
            click.echo(f"{page.display_path}: no English page glossary/{SOURCE_LANG}/{page.rel}")
    if stale and not delete:
        click.echo(f"{len(stale)} orphaned page(s); run again with --yes to delete them", err=True)
    elif not stale:
        click.echo("No orphaned Chinese pages.", err=True)
    return 0


def _dry_run(jobs: list[Job], in_scope: int, settings: Settings, terminology: Terminology) -> int:
    system = system_message(terminology)
    rows, tokens_in, tokens_out = [], 0, 0
    for job, (estimate_in, estimate_out) in zip(jobs, estimate_jobs(jobs, system, settings), strict=True):
        tokens_in, tokens_out = tokens_in + estimate_in, tokens_out + estimate_out
        rows.append((_zh_path(job.rel), job.reason, estimate_in, estimate_out))
    width = max([len(r[0]) for r in rows] + [4])
    click.echo(f"{'page':<{width}}  {'reason':<8} {'in':>8} {'out':>8}")
    for path, reason, estimate_in, estimate_out in rows:
        click.echo(f"{path:<{width}}  {reason:<8} {estimate_in:>8,} {estimate_out:>8,}")
    cached = max(len(jobs) - 1, 0) * (len(system) // 4)
    price = cost(tokens_in, min(cached, tokens_in), tokens_out, settings.prices)
    click.echo(
        f"\n{len(jobs)} to translate, {in_scope - len(jobs)} unchanged; about {tokens_in:,} input tokens "
        f"(~{min(cached, tokens_in):,} cached) and {tokens_out:,} output tokens, ~${price:.4f} with {settings.model}"
    )
    return 0


def _print_summary(summary: Totals, run: Run) -> None:
    level = run.concurrency
    sent = sum(o.parts_sent for o in run.outcomes)
    kept = sum(o.parts_kept for o in run.outcomes)
    rows = [
        ("translated", f"{summary.translated}"),
        ("unchanged", f"{summary.unchanged}"),
        ("failed", f"{summary.failed}"),
        ("parts", f"{sent} sections or blocks sent in {run.chunks} chunks, {kept} kept as they were"),
        ("requests", f"{summary.requests}"),
        (
            "concurrency",
            f"{level['final']} at the end (ceiling {level['ceiling']}, lowest {level['lowest']}, "
            f"{level['backoffs']} back-offs)",
        ),
        ("tokens in", f"{summary.tokens_in:,} ({summary.tokens_cached:,} cached)"),
        ("tokens out", f"{summary.tokens_out:,}"),
        ("cost (est.)", f"${summary.cost_usd:.4f}"),
        ("wall time", f"{summary.wall_seconds:.1f} s"),
    ]
    for name, value in rows:
        click.echo(f"{name:<12} {value}", err=True)


def _write_report(
    path: Path | None, settings: Settings, outcomes: list[Outcome], summary: Totals, concurrency: dict[str, int]
) -> None:
    if path is None:
        return
    report = {
        "model": settings.model,
        "base_url": settings.base_url,
        "totals": asdict(summary),
        "concurrency": concurrency,
        "pages": [{**asdict(o), "path": _zh_path(o.rel)} for o in outcomes],
    }
    write_text_atomic(path, settings.scrub(json.dumps(report, ensure_ascii=False, indent=2)) + "\n")


def summary_markdown(report: dict) -> str:
    """A translation run's report as the body of its pull request."""
    totals, pages = report["totals"], report["pages"]
    lines = [
        f"Translated with `{report['model']}` by `scripts/translate.py`.",
        "",
        "| | |",
        "|---|---|",
        f"| translated | {totals['translated']} |",
        f"| unchanged | {totals['unchanged']} |",
        f"| failed | {totals['failed']} |",
        f"| tokens in (cached) | {totals['tokens_in']:,} ({totals['tokens_cached']:,}) |",
        f"| tokens out | {totals['tokens_out']:,} |",
        f"| estimated cost | ${totals['cost_usd']:.4f} |",
        f"| wall time | {totals['wall_seconds']:.0f} s |",
        "",
    ]
    translated = [p for p in pages if p["status"] == "translated"]
    if translated:
        lines += ["Pages:", ""] + [f"- `{p['path']}` ({p['reason']})" for p in translated] + [""]
    failed = [p for p in pages if p["status"] != "translated"]
    if failed:
        lines += ["Failed (left as they were):", ""] + [f"- `{p['path']}`: {p['error']}" for p in failed] + [""]
    lines.append(
        "Review the Chinese text like any change; the checks already passed on structure, code, links and terminology."
    )
    return "\n".join(lines) + "\n"
