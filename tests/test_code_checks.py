"""The code checks that `make test` and `make quick` run before the tests (`make lint`): ruff's
rules, ruff's formatting and mypy, with the project's settings from pyproject.toml.

Each tool is run here on a small planted file in a folder that holds a copy of pyproject.toml,
so these tests show that a planted defect fails the check and is named by path:line; the
tree-wide run itself is the Makefile's (once per `make test`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import ROOT

# What mypy must catch, each on a line marked with the error it expects.
MYPY_PLANTED = """\
from __future__ import annotations


class Renderer:
    def html(self, text: str) -> str:
        return text


class CheckRenderer:
    def html(self, text: str) -> str:
        return text


def render(renderer: Renderer, text: str) -> str:
    return renderer.html(text)


def title(text: str) -> str:
    return text.title()


def page(pages: dict[str, str], rel: str) -> str:
    return pages.get(rel)  # planted: return-value


def main(pages: dict[str, str]) -> None:
    print(title(pages.get("warp.md")))  # planted: arg-type
    print(render(CheckRenderer(), "x"))  # planted: arg-type


def untyped(pages):  # planted: no-untyped-def
    return pages
"""


def _run(folder: Path, *command: str) -> subprocess.CompletedProcess[str]:
    shutil.copy(ROOT / "pyproject.toml", folder / "pyproject.toml")
    return subprocess.run([sys.executable, "-m", *command], cwd=folder, capture_output=True, text=True, timeout=120)


def test_ruff_check_names_an_unused_import_by_path_and_line(tmp_path: Path) -> None:
    (tmp_path / "planted.py").write_text('"""A module."""\n\nimport os\n\n\ndef f(x: int) -> int:\n    return x\n')
    result = _run(tmp_path, "ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "planted.py:3:8: F401 [*] `os` imported but unused" in result.stdout, result.stdout


def test_ruff_format_check_names_a_misformatted_line(tmp_path: Path) -> None:
    (tmp_path / "planted.py").write_text("def f(x: int) -> int:\n    return  x\n")
    result = _run(tmp_path, "ruff", "format", "--check", "--no-cache", ".")
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.search(r"planted\.py:2:\d+", result.stdout), result.stdout
    assert (tmp_path / "planted.py").read_text() == "def f(x: int) -> int:\n    return  x\n"  # checked, not changed


def test_mypy_names_each_planted_type_error_by_path_and_line(tmp_path: Path) -> None:
    (tmp_path / "planted.py").write_text(MYPY_PLANTED)
    expected = {
        (number, match.group(1))
        for number, line in enumerate(MYPY_PLANTED.splitlines(), start=1)
        if (match := re.search(r"# planted: (\S+)", line))
    }
    result = _run(tmp_path, "mypy", "planted.py")
    assert result.returncode == 1, result.stdout + result.stderr
    found = {
        (int(match.group(1)), match.group(2))
        for match in re.finditer(r"^planted\.py:(\d+): error: .*\[([a-z-]+)\]$", result.stdout, re.M)
    }
    assert found == expected, result.stdout


def test_the_tree_passes_the_same_checks_through_make_lint_before_the_tests() -> None:
    """`make test` and `make quick` run ruff check, ruff format --check and mypy, then pytest."""
    for target in ("test", "quick"):
        planned = subprocess.run(["make", "-n", "-C", str(ROOT), target], capture_output=True, text=True, check=True)
        lines = planned.stdout.splitlines()
        steps = ("ruff check .", "ruff format --check .", "/mypy", "-m pytest")
        where = [next((i for i, line in enumerate(lines) if step in line), -1) for step in steps]
        assert -1 not in where and where == sorted(where), (target, planned.stdout)
