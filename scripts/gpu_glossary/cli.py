"""The `gpu-glossary` command: check pages, build and serve the site, stamp translations."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.glossary import SOURCE_LANG, find_root, load_glossary
from gpu_glossary.page import SOURCE_HASH_KEY, with_front_matter
from gpu_glossary.site.build import SiteBuildError, build_site
from gpu_glossary.translate import defaults as translator_defaults
from gpu_glossary.translate.sections import SECTION_HASHES_KEY, format_hashes, same_sections, section_hashes

if TYPE_CHECKING:  # the example commands import these when they run: other commands start faster without them
    from gpu_glossary.examples.blocks import Example
    from gpu_glossary.examples.runner import RunOutcome
    from gpu_glossary.examples.runs import Record, Runs
    from gpu_glossary.glossary import Glossary


def _root() -> Path:
    try:
        return find_root()
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from None


@click.group()
@click.version_option(package_name="gpu-glossary")
def main() -> None:
    """Tools for the GPU Glossary: run them from anywhere inside the repository."""


@main.command()
def check() -> None:
    """Validate every page of both languages; exit 1 on any error."""
    # Imported here: the checker needs the sanitizer's packages, which the examples commands
    # must do without on a GPU machine that has only its image's packages.
    from gpu_glossary.check import github_annotation, group_by_severity, run_check

    problems = run_check(_root())
    annotate = os.environ.get("GITHUB_ACTIONS") == "true"
    for problem in problems:
        click.echo(str(problem))
        if annotate:
            click.echo(github_annotation(problem))
    counts = group_by_severity(problems)
    errors, warnings = counts.get("error", 0), counts.get("warning", 0)
    click.echo(f"{errors} error(s), {warnings} warning(s)", err=True)
    sys.exit(1 if errors else 0)


@main.command()
@click.option("--sequential", is_flag=True, help="Build one language after the other (for comparison).")
@click.option("--site-url", envvar="SITE_URL", default=None, help="Public address of the site (default: mkdocs.yml's).")
def build(sequential: bool, site_url: str | None) -> None:
    """Build English and Chinese into site/ (strict: any warning fails the build)."""
    root = _root()
    click.echo("Building English and Chinese" + (" one after the other…" if sequential else " in parallel…"), err=True)
    try:
        result = build_site(root, parallel=not sequential, site_url=site_url)
    except SiteBuildError as exc:
        raise click.ClickException(f"the build failed:\n{exc}") from None
    timings = ", ".join(f"{lang} {seconds:.1f} s" for lang, seconds in result.per_language.items())
    click.echo(f"Built {result.site_dir.relative_to(root)}/ in {result.seconds:.1f} s ({timings})", err=True)


@main.command()
@click.option("--port", default=8000, show_default=True, help="Port on 127.0.0.1.")
@click.option("--no-build", is_flag=True, help="Serve site/ as it is.")
@click.option(
    "--watch/--no-watch",
    default=True,
    show_default=True,
    help="Rebuild the language(s) an edit touches and reload open pages.",
)
def serve(port: int, no_build: bool, watch: bool) -> None:
    """Build both languages for this address and serve them on 127.0.0.1, rebuilding on edits (Ctrl-C stops)."""
    import threading

    from gpu_glossary.site.live import LivePreview
    from gpu_glossary.site.serve import make_server

    root = _root()
    address = f"http://127.0.0.1:{port}/"
    live = LivePreview(root, root / "site", address, log=lambda message: click.echo(message, err=True))
    try:
        server = make_server(root / "site", port=port, live=live if watch else None)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}; try --port") from None
    stop = threading.Event()
    if not no_build:
        click.echo("Building English and Chinese in parallel…", err=True)
        if not watch:
            built = live.rebuild()
            live.close()
            if not built:
                raise click.ClickException("the build failed (messages above)")
    if watch:  # builds once the watcher is in place, so an edit during the first build counts
        live.start(stop, build_first=not no_build)
    click.echo(
        f"Serving English at {address} and Chinese at {address}zh/"
        + (" — edits to glossary/, overrides/ and mkdocs*.yml rebuild and reload" if watch else "")
        + " (Ctrl-C stops)",
        err=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        server.server_close()


@main.command()
@click.argument("spec", metavar="SECTION/SLUG")
@click.option("--title", required=True, help='The term as people write it, e.g. "Bank conflict".')
@click.option(
    "--after",
    default=None,
    metavar="SLUG",
    help="Place it in the nav after this page of the section [default: at the end].",
)
def new(spec: str, title: str, after: str | None) -> None:
    """Start a term page from the template and add it to the nav in mkdocs.yml."""
    from gpu_glossary.new_term import NewTermError, create_term

    root = _root()
    try:
        path = create_term(root, spec, title, after)
    except NewTermError as exc:
        raise click.ClickException(str(exc)) from None
    rel = path.relative_to(root).as_posix()
    click.echo(
        f"Created {rel} and listed it in the nav of mkdocs.yml.\n\nNext:\n"
        f"  1. Write it: definition first, links to other terms, a Sources list (CONTRIBUTING.md).\n"
        f"  2. Preview: make site  (the page reloads as you save), and fix what `make check` says.\n"
        f"  3. Chinese: leave it to the translation pull request, or write glossary/zh/{rel.split('/', 2)[2]}\n"
        f"     and run `gpu-glossary stamp` on it."
    )


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
def stamp(paths: tuple[Path, ...]) -> None:
    """Mark Chinese pages as translated from the current English page (after a hand review).

    Writes the English page's hash into each page's `source_hash`, so the page is no
    longer reported stale. Only do this when the translation matches the English text.
    """
    root = _root()
    glossary = load_glossary(root)
    failed = False
    for path in paths:
        path = path.resolve()
        try:
            lang, rel = path.relative_to(glossary.glossary_dir).as_posix().split("/", 1)
        except ValueError:
            click.echo(f"{path}: error: not a page under glossary/<lang>/", err=True)
            failed = True
            continue
        page = glossary.page(lang, rel)
        if lang == SOURCE_LANG or page is None:
            click.echo(f"{path}: error: not a translated page (English pages carry no hash)", err=True)
            failed = True
            continue
        if page.problems:
            click.echo(f"{page.problems[0]}", err=True)
            failed = True
            continue
        english = glossary.page(SOURCE_LANG, rel)
        if english is None:
            click.echo(f"{page.display_path}: error: no English page glossary/{SOURCE_LANG}/{rel}", err=True)
            failed = True
            continue
        # Section hashes only where the sections line up; without them the next update is whole-page.
        hashes = format_hashes(section_hashes(english)) if same_sections(page, english) else None
        write_text_atomic(
            page.path,
            with_front_matter(page.text, {SOURCE_HASH_KEY: glossary.source_hash_of(rel), SECTION_HASHES_KEY: hashes}),
        )
        click.echo(f"{page.display_path}: {SOURCE_HASH_KEY} = {glossary.source_hash_of(rel)}")
    sys.exit(1 if failed else 0)


@main.command()
@click.argument("paths", nargs=-1)
@click.option(
    "--base-url", default=None, help=f"OpenAI-compatible API address [default: {translator_defaults.DEFAULT_BASE_URL}]"
)
@click.option("--model", default=None, help=f"Model name [default: {translator_defaults.DEFAULT_MODEL}]")
@click.option(
    "--concurrency",
    default=translator_defaults.DEFAULT_CONCURRENCY,
    show_default=True,
    type=click.IntRange(1, 1024),
    help="Most requests at once; fewer while the server refuses requests or drops connections.",
)
@click.option(
    "--timeout",
    default=translator_defaults.DEFAULT_TIMEOUT,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds one request may take in all, reply included; one past it is not retried.",
)
@click.option(
    "--run-timeout",
    default=translator_defaults.DEFAULT_RUN_TIMEOUT,
    show_default=True,
    type=click.FloatRange(min=1),
    help="Seconds the whole run may take; pages not finished by then are left as they were.",
)
@click.option(
    "--retries",
    default=translator_defaults.DEFAULT_RETRIES,
    show_default=True,
    type=click.IntRange(0, 10),
    help="Retries per request (5xx, malformed replies, dropped connections; 429/503 and refused "
    "connections get log2(--concurrency) more) and per rejected reply.",
)
@click.option(
    "--temperature",
    default=translator_defaults.DEFAULT_TEMPERATURE,
    show_default=True,
    type=float,
    help="Sampling temperature.",
)
@click.option(
    "--max-chars",
    default=translator_defaults.DEFAULT_MAX_CHARS,
    show_default=True,
    type=click.IntRange(min=500),
    help="Largest part of a page sent in one request "
    "(pages are split at headings; further when many pages share the pool).",
)
@click.option("--force", is_flag=True, help="Retranslate the selected pages even if current.")
@click.option(
    "--comments",
    "comments_only",
    is_flag=True,
    help="Translate only the code comments still in English on current Chinese pages; prose is left as it is.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Show what would be translated and the estimated tokens and cost; no key, no network.",
)
@click.option("--check", "check_only", is_flag=True, help="Exit 1 if any translation is missing or stale; no network.")
@click.option("--prune", is_flag=True, help="List Chinese pages whose English page no longer exists.")
@click.option("--yes", is_flag=True, help="With --prune: delete them.")
@click.option("--report", type=click.Path(dir_okay=False, path_type=Path), help="Write the run's summary as JSON.")
@click.option(
    "--price-input",
    default=translator_defaults.DEFAULT_PRICES["input"],
    show_default=True,
    help="USD per million input tokens (estimates).",
)
@click.option(
    "--price-cached",
    default=translator_defaults.DEFAULT_PRICES["cached"],
    show_default=True,
    help="USD per million cached input tokens.",
)
@click.option(
    "--price-output",
    default=translator_defaults.DEFAULT_PRICES["output"],
    show_default=True,
    help="USD per million output tokens.",
)
def translate(
    paths: tuple[str, ...],
    base_url: str | None,
    model: str | None,
    concurrency: int,
    timeout: float,
    run_timeout: float,
    retries: int,
    temperature: float,
    max_chars: int,
    force: bool,
    comments_only: bool,
    dry_run: bool,
    check_only: bool,
    prune: bool,
    yes: bool,
    report: Path | None,
    price_input: float,
    price_cached: float,
    price_output: float,
) -> None:
    """Translate English pages that have no Chinese page or a stale one (PATHS/globs limit the run).

    The key comes from DEEPSEEK_API_KEY. Pages whose Chinese translation is current cost no request.
    """
    from gpu_glossary.translate.command import Selection, run_translate

    settings = translator_defaults.Settings(
        base_url=base_url or translator_defaults.DEFAULT_BASE_URL,
        model=model or translator_defaults.DEFAULT_MODEL,
        concurrency=concurrency,
        timeout=timeout,
        run_timeout=run_timeout,
        retries=retries,
        temperature=temperature,
        max_chars=max_chars,
        prices={"input": price_input, "cached": price_cached, "output": price_output},
    )
    selection = Selection(
        patterns=list(paths),
        force=force,
        comments_only=comments_only,
        dry_run=dry_run,
        check=check_only,
        prune=prune,
        yes=yes,
        report=report,
    )
    sys.exit(run_translate(_root(), settings, selection))


@main.command()
@click.option(
    "--check", "mode", flag_value="check", default=True, help="Report image problems; exit 1 on any (the default)."
)
@click.option(
    "--fix",
    "mode",
    flag_value="fix",
    help="Repair links: legacy themed-image://, wrong depths, Chinese variants, remote files we have.",
)
@click.option(
    "--localize",
    "mode",
    flag_value="localize",
    help="Download remote images into glossary/images/ and link them locally.",
)
@click.option(
    "--make-dark",
    "mode",
    flag_value="make-dark",
    help="Create missing name.dark.svg files from name.svg through the palette.",
)
@click.option("--timeout", default=10.0, show_default=True, help="With --localize: seconds per download.")
@click.option(
    "--max-bytes", default=5 * 1024 * 1024, show_default=True, help="With --localize: largest image accepted."
)
def images(mode: str, timeout: float, max_bytes: int) -> None:
    """Check and repair every image in every page of both languages."""
    from gpu_glossary.images import links as image_step
    from gpu_glossary.images.localize import Localizer

    root = _root()
    glossary = load_glossary(root)
    if mode == "make-dark":
        created = image_step.make_dark_variants(glossary)
        for path, unknown in created:
            click.echo(f"created {path.relative_to(root)}")
            if unknown:
                click.echo(
                    f"{path.relative_to(root)}: warning: colours outside the palette kept as they are: "
                    + ", ".join(sorted(unknown)),
                    err=True,
                )
        click.echo(f"{len(created)} dark variant(s) created", err=True)
        return
    if mode == "fix":
        changes = [
            change
            for pages in glossary.pages.values()
            for page in pages.values()
            for change in image_step.fix_page(glossary, page)
        ]
        for change in changes:
            click.echo(f"fixed {change}")
        click.echo(f"{len(changes)} image link(s) repaired", err=True)
        return
    if mode == "localize":
        changes, problems = Localizer(glossary, timeout=timeout, max_bytes=max_bytes).localize()
        for change in changes:
            click.echo(f"localized {change}")
        for problem in problems:
            click.echo(str(problem))
        click.echo(f"{len(changes)} image(s) copied in, {len(problems)} failed", err=True)
        sys.exit(1 if problems else 0)
    problems = sorted(image_step.check_images(glossary), key=lambda p: (p.path, p.line))
    for problem in problems:
        click.echo(str(problem))
    click.echo(f"{len(problems)} image problem(s)", err=True)
    sys.exit(1 if problems else 0)


@main.group()
def examples() -> None:
    """Runnable examples: list them, run them on GPUs, write their recorded output into the pages.

    A runnable example is a ```cuda block with main(), a ```python block importing torch,
    triton or cupy, or a block marked `<!-- example: … -->`; CONTRIBUTING.md has the markers.
    """


def _english_examples(root: Path) -> tuple[Glossary, list[Example]]:
    from gpu_glossary.examples.blocks import all_examples

    glossary = load_glossary(root)
    found, problems = all_examples(glossary.pages[SOURCE_LANG].values())
    for problem in problems:
        click.echo(str(problem), err=True)
    return glossary, found


def _load_runs_or_fail(root: Path) -> Runs:
    """glossary/runs.yml, or the command stops with its located problems."""
    from gpu_glossary.examples.runs import load_runs

    runs = load_runs(root)
    if runs.problems:
        raise click.ClickException("\n".join(str(p) for p in runs.problems))
    return runs


def _select_or_fail(found: list[Example], selectors: tuple[str, ...]) -> list[Example]:
    from gpu_glossary.examples.runner import select

    chosen, unmatched = select(found, selectors)
    if unmatched:
        raise click.ClickException(
            f"no example matches {', '.join(unmatched)}: `gpu-glossary examples list` shows them"
        )
    return chosen


def _describe_run(record: Record, current: bool) -> str:
    from gpu_glossary.examples.runs import DRIFT_LIMIT, format_spread

    if not current:
        return f"{record.device} (earlier code)"
    spread = ""
    if record.spread is not None:
        spread = f", spread {format_spread(record.spread)}" + (" > 10%" if record.spread > DRIFT_LIMIT else "")
    return f"{record.device} ({record.date}{spread})"


@examples.command("list")
@click.argument("selectors", nargs=-1)
def examples_list(selectors: tuple[str, ...]) -> None:
    """Every runnable example: page:line, id, GPUs it needs, how it runs, and the devices it has runs for."""
    from gpu_glossary.examples.runs import load_runs

    root = _root()
    _, found = _english_examples(root)
    chosen = _select_or_fail(found, selectors)
    runs = load_runs(root)
    for problem in runs.problems:
        click.echo(str(problem), err=True)
    counts = {"current": 0, "changed": 0, "never run": 0}
    for example in chosen:
        current, older = runs.current(example), runs.older(example)
        state = "current" if current else "changed" if older else "never run"
        counts[state] += 1
        gpus = "1 GPU" if example.gpus == 1 else f"{example.gpus}+ GPUs"
        click.echo(f"{example.location}  {example.id}  [{example.kind}, {gpus}, {state}]\n    $ {example.describe()}")
        if current or older:
            described = [_describe_run(r, True) for r in current] + [_describe_run(r, False) for r in older]
            click.echo("    runs: " + "; ".join(described))
    click.echo(f"{len(chosen)} example(s): " + ", ".join(f"{n} {state}" for state, n in counts.items()), err=True)


@examples.command("drift")
@click.option("--over-limit", is_flag=True, help="Only the runs whose figures moved more than 10%.")
def examples_drift(over_limit: bool) -> None:
    """How far each example's figures moved between runs of its code, per device, as recorded.

    Where they moved more than 10%, the page must say so next to the figure. A run without a
    spread ran once: `examples run --compare --repeat 2` on a GPU measures it. Needs no GPU.
    """
    from gpu_glossary.examples.runs import DRIFT_LIMIT, format_spread

    root = _root()
    _, found = _english_examples(root)
    runs = _load_runs_or_fail(root)
    measured = over = unmeasured = 0
    for example in found:
        for record in runs.current(example):
            if record.spread is None:
                unmeasured += 1
                continue
            measured += 1
            too_much = record.spread > DRIFT_LIMIT
            over += too_much
            if too_much or not over_limit:
                note = "  (over 10%: say so next to the figure)" if too_much else ""
                click.echo(f"{example.location}  {example.id}  {record.device}: {format_spread(record.spread)}{note}")
    click.echo(
        f"{measured} run(s) with a spread, {over} over 10%; {unmeasured} ran once (no spread yet)",
        err=True,
    )


def _drift_report(outcomes: list) -> None:
    """After a run: per example that ran more than once here, how far its figures moved."""
    from gpu_glossary.examples.drift import Verdict
    from gpu_glossary.examples.runs import DRIFT_LIMIT

    measured = [o for o in outcomes if o.ok and o.drift is not None]
    if not measured:
        return
    click.echo("Drift between runs of the same code on the same device (ignoring dates, PIDs, temporary paths):")
    for outcome in measured:
        drift = outcome.drift
        note = ""
        if drift.verdict == Verdict.MOVED and drift.change > DRIFT_LIMIT:
            note = "  <- over 10%: the page must say so next to the figure"
        elif drift.verdict == Verdict.SHAPE:
            note = "  <- no spread recorded"
        click.echo(f"  {outcome.example.id} on {outcome.device}: {drift}{note}")


@examples.command("run")
@click.argument("selectors", nargs=-1)
@click.option(
    "--gpus",
    "gpu_count",
    type=click.IntRange(1, 64),
    default=None,
    help="Use the first K GPUs [default: all]: an example with gpus=N sees all K (N <= K) or is skipped.",
)
@click.option(
    "--compare",
    is_flag=True,
    help="Run again the examples whose code already has a run on this device: print how far their figures "
    "moved and record the spread; their recorded output stays.",
)
@click.option(
    "--repeat",
    type=click.IntRange(1, 10),
    default=1,
    show_default=True,
    help="Run the others N times and record the first output with the spread of all N.",
)
@click.option("--jobs", type=click.IntRange(1, 256), default=None, help="Compilers at once [default: one per CPU].")
@click.option("--python", "python", default=None, help="Python for ```python examples [default: this one].")
@click.option("--changed", is_flag=True, help="Only examples whose code has no run on this device yet.")
@click.option(
    "--apply/--no-apply",
    "apply_outputs",
    default=True,
    show_default=True,
    help="Write the new outputs into the pages (both languages).",
)
def examples_run(
    selectors: tuple[str, ...],
    gpu_count: int | None,
    compare: bool,
    repeat: int,
    jobs: int | None,
    python: str | None,
    changed: bool,
    apply_outputs: bool,
) -> None:
    """Compile and run examples on this machine's GPUs and record what they print in glossary/runs.yml.

    SELECTORS: example ids (perf/memory-coalescing.md#coalescing), pages (perf/tiling.md) or
    patterns ('perf/*'); none means every example. Examples run one at a time, after all
    are compiled; a failure is reported with its page:line and output, and the rest still run.
    Runs are recorded per device: 'NVIDIA H100 80GB HBM3', or '4× NVIDIA H100 80GB HBM3' for a
    multi-GPU example given 4 GPUs.
    """
    from tqdm import tqdm

    from gpu_glossary.examples.machine import describe_machine
    from gpu_glossary.examples.runner import ExampleRunner, SetupError, failure_report, gpus_for, plan, preflight

    root = _root()
    glossary, found = _english_examples(root)
    chosen = _select_or_fail(found, selectors)
    runs = _load_runs_or_fail(root)
    machine = describe_machine()
    if gpu_count is not None:
        if gpu_count > len(machine.gpus):
            raise click.ClickException(f"--gpus {gpu_count}: this machine has {len(machine.gpus)} GPU(s)")
        machine = machine.limited_to(gpu_count)
    if changed:
        chosen = [
            e for e in chosen if getattr(runs.get(e.id, machine.label(gpus_for(e, machine))), "hash", "") != e.hash
        ]
    chosen, skipped = plan(chosen, machine)
    for example, reason in skipped:
        click.echo(f"skipped {example.id}: {reason}", err=True)
    try:
        preflight(chosen, machine, len(skipped))
    except SetupError as exc:
        raise click.ClickException(str(exc)) from None
    if not chosen:
        click.echo("Nothing to run: every selected example has a run of its code on this device.", err=True)
        return
    link = machine.link(len(machine.gpus))
    click.echo(
        f"Running {len(chosen)} example(s) on {machine.device}{f' ({link})' if link else ''} "
        f"(driver {machine.driver or 'n/a'}, CUDA {machine.cuda or 'n/a'})",
        err=True,
    )
    bar = tqdm(total=len(chosen), unit="example", file=sys.stderr, dynamic_ncols=True)

    def progress(outcome: RunOutcome) -> None:
        bar.set_postfix_str(f"{outcome.example.id}: {outcome.status}", refresh=False)
        bar.update(1)
        if not outcome.ok:
            bar.write(failure_report(outcome), file=sys.stderr)

    runner = ExampleRunner(runs, machine, jobs=jobs, python=python, progress=progress, compare=compare, repeat=repeat)
    try:
        outcomes = runner.run(chosen, found)
    finally:
        bar.close()
    _drift_report(outcomes)
    failed = [o for o in outcomes if not o.ok]
    seconds = sum(o.seconds for o in outcomes)
    click.echo(
        f"{len(outcomes) - len(failed)} ran, {len(failed)} failed, {len(skipped)} skipped "
        f"({seconds:.0f} s of run time); records in {runs.path.relative_to(root)}",
        err=True,
    )
    for outcome in failed:
        click.echo(f"  {outcome.example.location}: {outcome.example.id}: {outcome.status}", err=True)
    if apply_outputs:
        from gpu_glossary.examples.apply import write_outputs

        for path in write_outputs(load_glossary(root), runs):
            click.echo(f"output written: {path}", err=True)
    sys.exit(1 if failed else 0)


@examples.command("apply")
def examples_apply() -> None:
    """Write each example's recorded output under it, in both languages (after copying runs.yml from a GPU machine).

    One device's run is one ```text block; several devices' runs are one tab per device.
    """
    from gpu_glossary.examples.apply import write_outputs

    root = _root()
    runs = _load_runs_or_fail(root)
    changed = write_outputs(load_glossary(root), runs)
    for path in changed:
        click.echo(f"output written: {path}")
    click.echo(f"{len(changed)} page(s) changed", err=True)


@examples.command("prune")
def examples_prune() -> None:
    """Remove recorded runs of examples that no page has, and runs of earlier code on devices
    where the example has not run since (while other devices have run its current code)."""
    from gpu_glossary.examples.runs import save_runs

    root = _root()
    _, found = _english_examples(root)
    runs = _load_runs_or_fail(root)
    by_id = {e.id: e for e in found}
    removed = []
    for example_id in sorted(runs.records):
        example = by_id.get(example_id)
        if example is None:
            removed += [(example_id, device) for device in runs.records.pop(example_id)]
        elif runs.current(example):
            for record in runs.older(example):
                del runs.records[example_id][record.device]
                removed.append((example_id, record.device))
    for example_id, device in removed:
        click.echo(f"removed {example_id} on {device}")
    if removed:
        save_runs(runs)
    click.echo(f"{len(removed)} record(s) removed", err=True)


@main.command()
def plots() -> None:
    """Redraw the charts made from recorded runs (measured roofline, wave quantization) in glossary/images/."""
    from gpu_glossary.examples.plots import PlotError, write_charts

    root = _root()
    runs = _load_runs_or_fail(root)
    try:
        written = write_charts(root / "glossary" / "images", runs)
    except PlotError as exc:
        raise click.ClickException(str(exc)) from None
    for path in written:
        click.echo(f"drawn {path.relative_to(root)}")
    click.echo(f"{len(written)} chart file(s) changed", err=True)


@main.command("translation-summary")
@click.argument("report", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def translation_summary(report: Path) -> None:
    """Print a translate --report file as Markdown (the translation pull request's body)."""
    import json

    from gpu_glossary.translate.command import summary_markdown

    try:
        data = json.loads(report.read_text(encoding="utf-8"))
        click.echo(summary_markdown(data), nl=False)
    except (ValueError, KeyError, TypeError) as error:
        raise click.ClickException(f"{report}: not a translate report ({error})") from None


if __name__ == "__main__":
    main()
