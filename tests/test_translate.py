"""The translate script end to end: the real CLI and `openai` client against a local server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpu_glossary.check import run_check
from gpu_glossary.cli import with_source_hash
from gpu_glossary.fake_openai import FakeOpenAI
from gpu_glossary.glossary import load_glossary
from gpu_glossary.render import Renderer
from gpu_glossary.translation_checks import parse_translation, structure_problems

from conftest import ROOT, copy_project

KEY = "sk-test-SECRET-9f8e7d"
SCRIPT = ROOT / "scripts" / "translate.py"
WARP = "device-software/warp.md"
KERNEL = "device-software/kernel.md"
OCCUPANCY = "perf/occupancy.md"


@pytest.fixture
def server():
    fake = FakeOpenAI().start()
    yield fake
    fake.stop()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the glossary where every translation is current, to be made stale or missing."""
    root = copy_project(tmp_path / "project")
    glossary = load_glossary(root)
    for rel, page in glossary.pages["en"].items():
        if rel not in glossary.pages["zh"]:  # keep the tests independent of pages still being written
            page.path.unlink()
    for rel, page in glossary.pages["zh"].items():
        if rel in glossary.pages["en"]:
            page.path.write_text(with_source_hash(page.text, glossary.source_hash_of(rel)), encoding="utf-8")
    return root


def translate(project: Path, server: FakeOpenAI | None, *args: str, key: str | None = KEY, timeout: float = 120):
    env = {k: v for k, v in os.environ.items() if k != "DEEPSEEK_API_KEY"}
    if key is not None:
        env["DEEPSEEK_API_KEY"] = key
    base = ["--base-url", server.url] if server else []
    result = subprocess.run([sys.executable, str(SCRIPT), *base, *args], cwd=project, env=env,
                            capture_output=True, text=True, timeout=timeout)
    assert KEY not in result.stdout + result.stderr, "the API key leaked into the output"
    return result


def zh(project: Path, rel: str) -> Path:
    return project / "glossary" / "zh" / rel


def make_stale(project: Path, rel: str) -> None:
    path = project / "glossary" / "en" / rel
    path.write_text(path.read_text(encoding="utf-8") + "\nOne more sentence about this term.\n", encoding="utf-8")


def assert_valid_translation(project: Path, rel: str) -> dict:
    glossary = load_glossary(project)
    page = parse_translation(zh(project, rel).read_text(encoding="utf-8"), rel)
    assert structure_problems(glossary.page("en", rel), page, Renderer.for_language(project, "zh")) == []
    assert glossary.translation_status("zh", rel) == "current"
    return page.meta


def no_leftovers(project: Path) -> None:
    assert not list((project / "glossary").rglob(".*.tmp")), "a temporary file was left behind"


# -- selection, dry run, check, prune ---------------------------------------------------
def test_missing_and_stale_pages_are_translated_and_nothing_else(project, server):
    zh(project, OCCUPANCY).unlink()
    make_stale(project, WARP)
    old_kernel = zh(project, KERNEL).read_bytes()
    result = translate(project, server, "--report", "report.json")
    assert result.returncode == 0, result.stderr
    assert len(server.chat_requests()) == 2
    for rel in (OCCUPANCY, WARP):
        meta = assert_valid_translation(project, rel)
        assert meta["translation_model"] == "deepseek-flash"
    assert load_glossary(project).page("zh", OCCUPANCY).meta.get("aliases")  # translated, key kept
    occupancy = zh(project, OCCUPANCY).read_text(encoding="utf-8")
    assert "../images/latency-hiding.zh.svg#only-light" in occupancy  # the image step ran on the written page
    assert "../images/latency-hiding.svg#" not in occupancy
    assert zh(project, KERNEL).read_bytes() == old_kernel
    assert not [p for p in run_check(project) if p.severity == "error" and p.path.startswith("glossary/zh/")
                and p.path.endswith((OCCUPANCY, WARP))]
    report = json.loads((project / "report.json").read_text(encoding="utf-8"))
    assert report["totals"]["translated"] == 2 and report["totals"]["failed"] == 0
    assert report["totals"]["unchanged"] == len(load_glossary(project).pages["en"]) - 2
    assert report["totals"]["tokens_cached"] > 0  # the second request reused the cached prefix
    assert "translated" in result.stderr and "tokens in" in result.stderr


def test_requests_disable_thinking_share_one_prefix_and_update_stale_pages(project, server):
    make_stale(project, WARP)
    zh(project, OCCUPANCY).unlink()
    assert translate(project, server).returncode == 0
    bodies = [r["body"] for r in server.chat_requests()]
    assert all(b["thinking"] == {"type": "disabled"} and b["model"] == "deepseek-flash" for b in bodies)
    assert len({b["messages"][0]["content"] for b in bodies}) == 1
    assert "线程束" in bodies[0]["messages"][0]["content"]  # the terminology is in the prompt
    stale = next(b for b in bodies if "=== Existing Chinese translation ===" in b["messages"][1]["content"])
    assert "title: 线程束" in stale["messages"][1]["content"]  # the previous translation is sent
    assert all(r["authorization"] == f"Bearer {KEY}" for r in server.chat_requests())


def test_unchanged_pages_cost_zero_requests(project, server):
    result = translate(project, server)
    assert result.returncode == 0
    assert server.requests == []
    assert "Nothing to translate" in result.stderr


def test_paths_and_globs_limit_the_run_and_force_retranslates(project, server):
    zh(project, OCCUPANCY).unlink()
    assert translate(project, server, "glossary/en/device-software/*.md", "--force").returncode == 0
    documents = [r["body"]["messages"][1]["content"] for r in server.chat_requests()]
    assert documents and all("title: " in d for d in documents)
    assert not zh(project, OCCUPANCY).exists()
    assert len(documents) == len([r for r in load_glossary(project).pages["en"] if r.startswith("device-software/")])
    unknown = translate(project, server, "glossary/en/nope/*.md")
    assert unknown.returncode != 0 and "no English page matches glossary/en/nope/*.md" in unknown.stderr


def test_dry_run_needs_no_key_and_no_network(project, server):
    zh(project, OCCUPANCY).unlink()
    make_stale(project, WARP)
    result = translate(project, server, "--dry-run", key=None)
    assert result.returncode == 0
    assert server.requests == []
    assert "glossary/zh/perf/occupancy.md" in result.stdout and "missing" in result.stdout
    assert "glossary/zh/device-software/warp.md" in result.stdout and "stale" in result.stdout
    assert "2 to translate" in result.stdout and "input tokens" in result.stdout and "$" in result.stdout


def test_check_mode_exit_codes(project, server):
    assert translate(project, None, "--check", key=None).returncode == 0
    make_stale(project, WARP)
    result = translate(project, None, "--check", key=None)
    assert result.returncode == 1 and "glossary/zh/device-software/warp.md: stale" in result.stdout


def test_prune_lists_then_deletes_orphans(project):
    orphan = zh(project, "perf/gone.md")
    orphan.write_text("---\ntitle: 旧\nsummary: 旧页面。\n---\n\n旧。\n", encoding="utf-8")
    listed = translate(project, None, "--prune", key=None)
    assert listed.returncode == 0 and "glossary/zh/perf/gone.md" in listed.stdout and orphan.exists()
    deleted = translate(project, None, "--prune", "--yes", key=None)
    assert deleted.returncode == 0 and not orphan.exists()


def test_missing_key_is_a_clear_error_and_writes_nothing(project, server):
    zh(project, OCCUPANCY).unlink()
    result = translate(project, server, key=None)
    assert result.returncode == 1
    assert "DEEPSEEK_API_KEY is not set" in result.stderr
    assert server.requests == [] and not zh(project, OCCUPANCY).exists()


def test_unknown_model_lists_the_models(project, server):
    zh(project, OCCUPANCY).unlink()
    result = translate(project, server, "--model", "deepseek-chat")
    assert result.returncode == 1
    assert "model 'deepseek-chat' does not exist" in result.stderr and "deepseek-flash, deepseek-pro" in result.stderr
    assert server.chat_requests() == []


# -- misbehaving servers ----------------------------------------------------------------
@pytest.mark.parametrize("behaviour", ["429", "500", "503", "drop", "hang"])
def test_transient_errors_are_retried(project, server, behaviour):
    server.hang_seconds = 3
    server.plan = {"title: Occupancy": [behaviour, "ok"]}
    zh(project, OCCUPANCY).unlink()
    started = time.monotonic()
    result = translate(project, server, "--timeout", "1.5", "--retries", "2")
    assert result.returncode == 0, result.stderr
    assert_valid_translation(project, OCCUPANCY)
    assert len(server.chat_requests()) == 2
    if behaviour == "429":
        assert time.monotonic() - started >= 1.0  # Retry-After: 1 was honoured


@pytest.mark.parametrize("behaviour, reason", [
    ("429", "rate limited (429) after 1 retries"),
    ("503", "server error (503) after 1 retries"),
    ("hang", "timed out after 1 s"),
    ("length", "cut off (finish_reason=length)"),
    ("drop_code", "placeholders missing"),
    ("alter_code", "placeholders missing"),
    ("change_url", "placeholders missing"),
    ("script", "rendered HTML differs from the English page's beyond its text: adds <script>"),
    ("attribute", 'rendered HTML differs from the English page\'s beyond its text: adds <p onclick="alert(7)">'),
    ("empty", "the reply was empty"),
    ("echo", "too little Chinese"),
    ("400", "the API rejected the request (400)"),
    ("422", "the API rejected the request (422)"),
])
def test_persistent_failures_leave_the_old_page_untouched(project, server, behaviour, reason):
    server.hang_seconds = 3
    server.plan = {"title: Warp": [behaviour] * 10}
    make_stale(project, WARP)
    zh(project, OCCUPANCY).unlink()
    old = zh(project, WARP).read_bytes()
    result = translate(project, server, "--timeout", "1", "--retries", "1", "--report", "report.json")
    assert result.returncode == 1
    assert zh(project, WARP).read_bytes() == old
    assert "glossary/zh/device-software/warp.md: failed: " in result.stdout and reason in result.stdout, result.stdout
    assert_valid_translation(project, OCCUPANCY)  # the other page is still translated
    report = json.loads((project / "report.json").read_text(encoding="utf-8"))
    failed = [p for p in report["pages"] if p["status"] == "failed"]
    assert [p["path"] for p in failed] == ["glossary/zh/device-software/warp.md"] and reason in failed[0]["error"]
    if behaviour in ("400", "422"):
        assert failed[0]["requests"] == 1  # never retried
    no_leftovers(project)


@pytest.mark.parametrize("behaviour", ["fenced", "preamble"])
def test_wrapped_replies_are_unwrapped(project, server, behaviour):
    server.plan = {"title: Occupancy": [behaviour]}
    zh(project, OCCUPANCY).unlink()
    assert translate(project, server).returncode == 0
    assert_valid_translation(project, OCCUPANCY)
    assert len(server.chat_requests()) == 1


def test_a_rejected_reply_is_retried_with_the_reason(project, server):
    server.plan = {"title: Occupancy": ["drop_code", "ok"]}
    zh(project, OCCUPANCY).unlink()
    assert translate(project, server).returncode == 0
    second = server.chat_requests()[1]["body"]["messages"]
    assert second[-1]["content"].startswith("Your previous reply was rejected: placeholders missing")
    assert_valid_translation(project, OCCUPANCY)


def test_a_reply_adding_a_handler_to_an_existing_paragraph_is_retried(project, server):
    server.plan = {"title: Occupancy": ["attribute", "ok"]}
    zh(project, OCCUPANCY).unlink()
    assert translate(project, server).returncode == 0
    second = server.chat_requests()[1]["body"]["messages"]
    assert 'adds <p onclick="alert(7)">' in second[-1]["content"]
    assert "onclick" not in zh(project, OCCUPANCY).read_text(encoding="utf-8")
    assert_valid_translation(project, OCCUPANCY)


@pytest.mark.parametrize("behaviour, message", [
    ("401", "the API rejected the key (401): check DEEPSEEK_API_KEY"),
    ("402", "insufficient balance (402)"),
])
def test_bad_key_and_no_balance_stop_the_run_plainly(project, server, behaviour, message):
    server.default = behaviour
    zh(project, OCCUPANCY).unlink()
    make_stale(project, WARP)
    make_stale(project, KERNEL)
    old = zh(project, WARP).read_bytes()
    result = translate(project, server, "--concurrency", "1", "--report", "report.json")
    assert result.returncode == 1
    assert message in result.stdout
    assert "not attempted" in result.stdout
    assert len(server.chat_requests()) == 1  # no retry, no further page
    assert zh(project, WARP).read_bytes() == old and not zh(project, OCCUPANCY).exists()
    assert KEY not in (project / "report.json").read_text(encoding="utf-8")


def test_key_never_reaches_pages_or_reports(project, server):
    zh(project, OCCUPANCY).unlink()
    assert translate(project, server, "--report", "report.json").returncode == 0
    for path in [project / "report.json", *(project / "glossary").rglob("*")]:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_long_pages_are_split_at_headings_and_joined(project, server):
    zh(project, OCCUPANCY).unlink()
    assert translate(project, server, "--max-chars", "800").returncode == 0
    assert len(server.chat_requests()) > 2
    assert_valid_translation(project, OCCUPANCY)


def test_an_interrupted_run_leaves_pages_whole_and_resumes(project, server):
    server.latency = 0.6
    glossary = load_glossary(project)
    rels = sorted(glossary.pages["en"])[:8]
    old = {}
    for rel in rels:
        make_stale(project, rel)
        old[rel] = zh(project, rel).read_bytes()
    env = dict(os.environ, DEEPSEEK_API_KEY=KEY)
    process = subprocess.Popen([sys.executable, str(SCRIPT), "--base-url", server.url, "--concurrency", "2"],
                               cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while len(server.chat_requests()) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert KEY not in out + err
    assert process.returncode != 0
    glossary = load_glossary(project)
    done = [rel for rel in rels if zh(project, rel).read_bytes() != old[rel]]
    for rel in done:
        assert_valid_translation(project, rel)
    assert len(done) < len(rels)
    no_leftovers(project)
    before = len(server.chat_requests())
    server.latency = 0
    assert translate(project, server).returncode == 0
    assert len(server.chat_requests()) - before == len(rels) - len(done)
