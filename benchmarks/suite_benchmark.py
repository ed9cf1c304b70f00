"""Where `make test`'s time goes: each test file run alone, with the CPU time of the whole machine.

The browser tests' Chromium processes are not children that pytest waits for, so their CPU time
is missing from `time` and from resource usage; this reads the machine's busy time from
/proc/stat instead (Linux only). Run it on an otherwise idle machine: anything else running is
counted too. Files that use the built glossary build it again when run alone; the full build
is timed on its own first, so its share can be told apart. A fixed pure-Python loop is timed
before and after, since this machine's speed varies by up to two times from hour to hour.

    python benchmarks/suite_benchmark.py [--full] [FILE ...]   (default: every tests/test_*.py)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ParamSpec, TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from gpu_glossary.site.build import build_site  # noqa: E402

PROC_STAT = Path("/proc/stat")
P = ParamSpec("P")
R = TypeVar("R")


def busy_cpu_seconds() -> float:
    """CPU-seconds the whole machine has spent busy since boot (user, nice, system, irq, softirq)."""
    fields = [int(value) for value in PROC_STAT.read_text().split("\n", 1)[0].split()[1:8]]
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def reference_loop_seconds() -> float:
    """The CPU time of 20 million additions in this Python: a yardstick for the machine's speed."""
    began = time.process_time()
    total = 0
    for number in range(20_000_000):
        total += number
    return time.process_time() - began


def measured(work: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> tuple[float, float, R]:
    """(wall seconds, machine CPU-seconds, result) of `work(*args, **kwargs)`; the arguments are
    passed, not captured, so a call made in a loop runs with that round's values."""
    cpu, wall = busy_cpu_seconds(), time.monotonic()
    result = work(*args, **kwargs)
    return time.monotonic() - wall, busy_cpu_seconds() - cpu, result


def run_pytest(arguments: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


def timed_files(
    files: list[str], *options: str
) -> Iterator[tuple[str, float, float, subprocess.CompletedProcess[str]]]:
    """(name, wall seconds, CPU-seconds, run) of each test file run alone, as it finishes."""
    for name in files:
        # -n0: in one process, as a contributor runs one file; no pytest-xdist workers to start.
        wall, cpu, run = measured(run_pytest, ["-n0", *options, f"tests/{name}"])
        yield name, wall, cpu, run


def summary_line(run: subprocess.CompletedProcess[str]) -> str:
    lines = run.stdout.strip().splitlines()
    return lines[-1].strip("= ") if lines else run.stderr.strip()[-200:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help="test files (default: every tests/test_*.py)")
    parser.add_argument("--full", action="store_true", help="also run the whole suite as `make test` does")
    args = parser.parse_args()
    if not PROC_STAT.is_file():
        parser.error("this benchmark reads the machine's CPU time from /proc/stat, which only Linux has")
    files = [Path(name).name for name in args.files] or sorted(p.name for p in (ROOT / "tests").glob("test_*.py"))
    missing = [name for name in files if not (ROOT / "tests" / name).is_file()]
    if missing:
        parser.error(f"no such test file: {', '.join('tests/' + name for name in missing)}")

    reference_before = reference_loop_seconds()
    print(f"reference loop: {reference_before:.2f} s", file=sys.stderr)
    with tempfile.TemporaryDirectory() as temporary:
        build_wall, build_cpu, _ = measured(build_site, ROOT, site_dir=Path(temporary) / "site")
    print(f"full build: {build_wall:.1f} s, {build_cpu:.1f} CPU-s", file=sys.stderr)

    rows, failed = [], []
    for number, (name, wall, cpu, run) in enumerate(timed_files(files), 1):
        rows.append((name, wall, cpu, summary_line(run)))
        if run.returncode != 0:
            failed.append(name)
        print(f"[{number}/{len(files)}] {name}: {wall:.1f} s, {cpu:.1f} CPU-s ({rows[-1][3]})", file=sys.stderr)
    full = measured(run_pytest, []) if args.full else None
    reference_after = reference_loop_seconds()

    print(f"{'test file (run alone)':<28}{'wall s':>8}{'CPU-s':>8}  result")
    for name, wall, cpu, result in sorted(rows, key=lambda row: -row[2]):
        print(f"{name:<28}{wall:>8.1f}{cpu:>8.1f}  {result}")
    print(f"{'sum of the files':<28}{sum(r[1] for r in rows):>8.1f}{sum(r[2] for r in rows):>8.1f}")
    print(f"{'full build (in some files)':<28}{build_wall:>8.1f}{build_cpu:>8.1f}")
    if full:
        wall, cpu, run = full
        print(f"{'whole suite (make test)':<28}{wall:>8.1f}{cpu:>8.1f}  {summary_line(run)}")
        if run.returncode != 0:
            failed.append("the whole suite")
    print(
        f"reference loop: {reference_before:.2f} s before, {reference_after:.2f} s after "
        f"(a slower loop means a slower machine at that moment)"
    )
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
