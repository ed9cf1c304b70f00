"""`gpu-glossary new`: a page from the template, listed in the nav, that passes the checker."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import NEW_TERM

from gpu_glossary.check import run_check
from gpu_glossary.new_term import NewTermError, insert_into_nav

CLI = [sys.executable, "-m", "gpu_glossary.cli"]


def test_a_new_term_passes_the_checker_and_keeps_mkdocs_yml_as_it_was(project):
    config = project / "mkdocs.yml"
    before = config.read_text(encoding="utf-8")
    result = subprocess.run(
        [*CLI, "new", "host-software/nvjitlink", "--title", "nvJitLink: the JIT linker"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "Created glossary/en/host-software/nvjitlink.md" in result.stdout and "Next:" in result.stdout
    after = config.read_text(encoding="utf-8")
    added = [line for line in after.split("\n") if line not in before.split("\n")]
    assert added == ["      - host-software/nvjitlink.md"]
    assert after.replace("      - host-software/nvjitlink.md\n", "", 1) == before  # comments and layout intact
    last_host = max(i for i, line in enumerate(before.split("\n")) if "- host-software/" in line)
    assert after.split("\n")[last_host + 1] == "      - host-software/nvjitlink.md"
    errors = [str(p) for p in run_check(project) if p.severity == "error"]
    assert errors == []
    text = (project / "glossary/en/host-software/nvjitlink.md").read_text(encoding="utf-8")
    assert text.startswith("---\ntitle: 'nvJitLink: the JIT linker'\n")
    for heading in ("{#how-it-works}", "{#why-it-matters}", "{#sources}"):
        assert heading in text


@pytest.mark.parametrize(
    "spec, title, message",
    [
        ("perf/tiling", "Another", "slug 'tiling' already exists: glossary/en/perf/tiling.md"),
        ("misc/thing", "Thing", "'misc/thing' is not <section>/<slug>"),
        ("perf/Bad_Slug", "Thing", "slug 'Bad_Slug' must be lower-case words"),
        ("perf/warp-2", "Warp", "title 'Warp' already exists"),
    ],
)
def test_refuses_with_a_clear_message_and_writes_nothing(project, spec, title, message):
    before = (project / "mkdocs.yml").read_text(encoding="utf-8")
    result = subprocess.run([*CLI, "new", spec, "--title", title], cwd=project, capture_output=True, text=True)
    assert result.returncode == 1 and message in result.stderr and "Traceback" not in result.stderr
    assert (project / "mkdocs.yml").read_text(encoding="utf-8") == before


def test_after_names_the_position_and_an_unknown_one_is_refused():
    config = "nav:\n  - Perf:\n      - perf/index.md\n      - perf/a.md  # first\n      - perf/b.md\n"
    expected = (
        "nav:\n  - Perf:\n      - perf/index.md\n      - perf/a.md  # first\n      - perf/new.md\n      - perf/b.md\n"
    )
    assert insert_into_nav(config, "perf", "perf/new.md", after="a") == expected
    with pytest.raises(NewTermError, match="'perf/zz.md' is not in the nav"):
        insert_into_nav(config, "perf", "perf/new.md", after="zz")


def test_the_new_term_appears_in_the_built_navigation(fixture_site):
    html = (fixture_site.dir / "perf/alpha/index.html").read_text(encoding="utf-8")
    assert f'href="../{NEW_TERM.split("/")[1]}/"' in html
    assert "Example new term" in html
    assert (fixture_site.dir / NEW_TERM / "index.html").is_file()
