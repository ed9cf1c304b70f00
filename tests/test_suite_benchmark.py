"""benchmarks/suite_benchmark.py times each test file run alone: each timed run is of its own file."""

from __future__ import annotations

import sys

from helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from suite_benchmark import measured, timed_files  # noqa: E402


def test_measured_calls_the_work_with_the_arguments_of_its_own_call():
    results = [measured(str.upper, word)[2] for word in ("warp", "lane", "grid")]
    assert results == ["WARP", "LANE", "GRID"]


def test_each_file_is_timed_running_that_file():
    """Only collected, not run: each run's output names its own file's tests and no other's."""
    files = ["test_atomic_and_serve.py", "test_zh_style.py"]
    rows = list(timed_files(files, "--collect-only"))
    assert [name for name, *_ in rows] == files
    for (name, wall, cpu, run), other in zip(rows, reversed(files), strict=True):
        assert run.returncode == 0, run.stdout + run.stderr
        assert f"tests/{name}::" in run.stdout and f"tests/{other}::" not in run.stdout, run.stdout
        assert wall > 0 and cpu >= 0
