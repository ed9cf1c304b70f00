"""The translate script end to end: the real CLI and `openai` client against a local server."""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_openai import FakeOpenAI, page_document
from helpers import ROOT, copy_project, on_a_thread_of_its_own

from gpu_glossary.check import run_check
from gpu_glossary.cli import main as cli_main
from gpu_glossary.code_comments import comments, first_code_difference
from gpu_glossary.glossary import load_glossary
from gpu_glossary.page import front_matter_block, with_source_hash
from gpu_glossary.render import Renderer
from gpu_glossary.translate.checks import parse_translation, structure_problems
from gpu_glossary.translate.prompt import OLD_MARKER
from gpu_glossary.translate.sections import (
    SECTION_HASHES_KEY,
    recorded_hashes,
    section_hashes,
    split_blocks,
    split_sections,
)

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


@pytest.fixture(scope="module")
def current_project(tmp_path_factory) -> Path:
    """A copy of the glossary where every translation is current; made once, copied per test."""
    root = copy_project(tmp_path_factory.mktemp("current") / "project")
    glossary = load_glossary(root)
    for rel, page in glossary.pages["en"].items():
        if rel not in glossary.pages["zh"]:  # keep the tests independent of pages still being written
            page.path.unlink()
    for rel, page in glossary.pages["zh"].items():
        if rel in glossary.pages["en"]:
            page.path.write_text(with_source_hash(page.text, glossary.source_hash_of(rel)), encoding="utf-8")
    return root


@pytest.fixture
def project(current_project: Path, tmp_path: Path) -> Path:
    """This test's own copy of `current_project`, to be made stale or missing."""
    return Path(shutil.copytree(current_project, tmp_path / "project"))


def translate(
    project: Path,
    server: FakeOpenAI | None,
    *args: str,
    key: str | None = KEY,
    timeout: float = 120,
    script: bool = False,
) -> subprocess.CompletedProcess:
    """Run the translate command in `project`: in this process by default (the openai package
    takes about 2 s to import, once), or with `script=True` as `python scripts/translate.py`
    in a process of its own. Either way the real command talks to `server` through `openai`."""
    base = ["--base-url", server.url] if server else []
    if script:
        env = {k: v for k, v in os.environ.items() if k != "DEEPSEEK_API_KEY"}
        if key is not None:
            env["DEEPSEEK_API_KEY"] = key
        result = subprocess.run(
            [sys.executable, str(SCRIPT), *base, *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    else:
        result = run_in_process(project, ["translate", *base, *args], {"DEEPSEEK_API_KEY": key}, timeout)
    assert KEY not in result.stdout + result.stderr, "the API key leaked into the output"
    return result


def run_in_process(
    cwd: Path, args: list[str], env: dict[str, str | None], timeout: float
) -> subprocess.CompletedProcess:
    """`gpu-glossary ARGS` through click's test runner, from `cwd` (the command runs asyncio)."""

    def invoke():
        with contextlib.chdir(cwd):
            return CliRunner().invoke(cli_main, args, env=env, prog_name="translate.py", catch_exceptions=False)

    result = on_a_thread_of_its_own(invoke, timeout)
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


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


def requests_for(server: FakeOpenAI, needle: str) -> list[dict]:
    """The chat requests whose English text contains `needle` (one chunk of one page)."""
    return [r for r in server.chat_requests() if needle in page_document(r["body"]["messages"][1]["content"])]


def no_leftovers(project: Path) -> None:
    assert not list((project / "glossary").rglob(".*.tmp")), "a temporary file was left behind"


# -- selection, dry run, check, prune ---------------------------------------------------
def test_missing_and_stale_pages_are_translated_and_nothing_else(project, server):
    zh(project, OCCUPANCY).unlink()
    make_stale(project, WARP)
    old_kernel = zh(project, KERNEL).read_bytes()
    result = translate(project, server, "--report", "report.json", script=True)
    assert result.returncode == 0, result.stderr
    report = json.loads((project / "report.json").read_text(encoding="utf-8"))
    assert sorted(p["path"] for p in report["pages"]) == [f"glossary/zh/{WARP}", f"glossary/zh/{OCCUPANCY}"]
    assert sum(p["requests"] for p in report["pages"]) == len(server.chat_requests())
    for rel in (OCCUPANCY, WARP):
        meta = assert_valid_translation(project, rel)
        assert meta["translation_model"] == "deepseek-flash"
    assert load_glossary(project).page("zh", OCCUPANCY).meta.get("aliases")  # translated, key kept
    occupancy = zh(project, OCCUPANCY).read_text(encoding="utf-8")
    assert "../images/latency-hiding.zh.svg#only-light" in occupancy  # the image step ran on the written page
    assert "../images/latency-hiding.svg#" not in occupancy
    assert zh(project, KERNEL).read_bytes() == old_kernel
    assert not [
        p
        for p in run_check(project)
        if p.severity == "error" and p.path.startswith("glossary/zh/") and p.path.endswith((OCCUPANCY, WARP))
    ]
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
    updates = [
        b["messages"][1]["content"]
        for b in bodies
        if "=== Existing Chinese translation ===" in b["messages"][1]["content"]
    ]
    assert any("title: 线程束" in update for update in updates)  # the previous translation is sent
    assert all(r["authorization"] == f"Bearer {KEY}" for r in server.chat_requests())


def test_unchanged_pages_cost_zero_requests(project, server):
    result = translate(project, server)
    assert result.returncode == 0
    assert server.requests == []
    assert "Nothing to translate" in result.stderr


def test_paths_and_globs_limit_the_run_and_force_retranslates(project, server):
    zh(project, OCCUPANCY).unlink()
    assert (
        translate(project, server, "glossary/en/device-software/*.md", "--force", "--report", "report.json").returncode
        == 0
    )
    documents = [r["body"]["messages"][1]["content"] for r in server.chat_requests()]
    assert documents and not any("=== Existing Chinese translation ===" in d for d in documents)  # forced: afresh
    assert not zh(project, OCCUPANCY).exists()
    report = json.loads((project / "report.json").read_text(encoding="utf-8"))
    selected = sorted(
        f"glossary/zh/{r}" for r in load_glossary(project).pages["en"] if r.startswith("device-software/")
    )
    assert sorted(p["path"] for p in report["pages"] if p["status"] == "translated") == selected
    assert len([d for d in documents if "\ntitle: " in d]) == len(selected)  # one front matter per page
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
@pytest.mark.parametrize(
    "behaviour", ["429", "500", "503", "drop", "reset", "html_200", "html_200_as_json", "no_choices"]
)
def test_transient_errors_are_retried(project, server, behaviour):
    server.hang_seconds = 3
    server.plan = {"title: Occupancy": [behaviour, "ok"]}
    zh(project, OCCUPANCY).unlink()
    started = time.monotonic()
    result = translate(project, server, "--timeout", "1.5", "--retries", "2")
    assert result.returncode == 0, result.stderr
    assert_valid_translation(project, OCCUPANCY)
    assert len(requests_for(server, "title: Occupancy")) == 2
    if behaviour == "429":
        assert time.monotonic() - started >= 1.0  # Retry-After: 1 was honoured


@pytest.mark.parametrize(
    "behaviour, reason",
    [
        ("429", "rate limited (429), gave up after 2 attempts"),
        ("503", "server error (503), gave up after 2 attempts"),
        ("hang", "no complete reply within 1 s (--timeout), so not retried (1 attempt)"),
        ("trickle", "no complete reply within 1 s (--timeout)"),
        ("blank_lines", "no complete reply within 1 s (--timeout)"),
        ("html_200", "the server answered 200 with a body that is not JSON ('<html>"),
        ("html_200_as_json", "the server answered 200 with a body that is not JSON ('<html>"),
        ("no_choices", "the reply has no choices (an empty 'choices' list)"),
        ("reset", "connection failed (2 attempts)"),
        ("japanese", "the reply is not Chinese: it has Japanese kana"),
        ("traditional", "the reply uses Traditional characters (這個線區塊)"),
        ("swap_links", "keep each link in the paragraph it belongs to"),
        ("numbers", "numbers differ from the English: the reply adds"),
        ("surrogate", "the reply holds control or invalid characters (U+D800)"),
        ("nul", "the reply holds control or invalid characters (U+0000)"),
        ("chatty", "the reply adds English words that are not in the English text (Sure, asked, here, translation)"),
        ("bare_url", "the reply adds a URL (https://evil.example/more)"),
        ("literal_attribute", "the reply adds an attribute list"),
        ("html_title", "front matter 'title' must be plain text"),
        ("duplicate_title", "the title '核函数' is the title of glossary/zh/device-software/kernel.md"),
        ("avoided_variant", "'经线' is a variant the terminology file avoids"),
        ("brackets", "paragraph holds 20,002 '['; the limit is 200"),
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
    ],
)
def test_persistent_failures_leave_the_old_page_untouched(project, server, behaviour, reason):
    server.hang_seconds = 3
    server.plan = {"title: Warp": [behaviour] * 10}
    make_stale(project, WARP)
    zh(project, OCCUPANCY).unlink()
    old = zh(project, WARP).read_bytes()
    result = translate(
        project, server, "--timeout", "1", "--retries", "1", "--concurrency", "1", "--report", "report.json"
    )
    assert result.returncode == 1
    assert zh(project, WARP).read_bytes() == old
    assert "glossary/zh/device-software/warp.md: failed: " in result.stdout and reason in result.stdout, result.stdout
    assert_valid_translation(project, OCCUPANCY)  # the other page is still translated
    report = json.loads((project / "report.json").read_text(encoding="utf-8"))
    failed = [p for p in report["pages"] if p["status"] == "failed"]
    assert [p["path"] for p in failed] == ["glossary/zh/device-software/warp.md"] and reason in failed[0]["error"]
    if behaviour in ("400", "422"):
        assert len(requests_for(server, "title: Warp")) == 1  # never retried
    no_leftovers(project)


@pytest.mark.parametrize("behaviour", ["fenced", "preamble"])
def test_wrapped_replies_are_unwrapped(project, server, behaviour):
    server.plan = {"title: Occupancy": [behaviour]}
    zh(project, OCCUPANCY).unlink()
    assert translate(project, server).returncode == 0
    assert_valid_translation(project, OCCUPANCY)
    assert len(requests_for(server, "title: Occupancy")) == 1


@pytest.mark.parametrize(
    "behaviour, reason",
    [
        ("drop_code", "placeholders missing"),
        ("japanese", "Japanese kana"),
        ("numbers", "numbers differ from the English"),
        ("echo", "too little Chinese"),
    ],
)
def test_a_rejected_reply_is_retried_with_the_reason(project, server, behaviour, reason):
    server.plan = {"title: Occupancy": [behaviour, "ok"]}
    zh(project, OCCUPANCY).unlink()
    assert translate(project, server).returncode == 0
    second = requests_for(server, "title: Occupancy")[1]["body"]["messages"]
    assert second[-1]["content"].startswith("Your previous reply was rejected: ") and reason in second[-1]["content"]
    assert_valid_translation(project, OCCUPANCY)


@pytest.mark.parametrize("behaviour", ["hang", "trickle", "blank_lines"])
def test_a_server_that_never_finishes_fails_the_page_in_one_deadline(project, server, behaviour):
    server.hang_seconds, server.trickle_seconds = 8, 0.2  # bytes keep coming: each read is quick, the request is not
    server.plan = {"title: Warp": [behaviour] * 10}
    make_stale(project, WARP)
    old = zh(project, WARP).read_bytes()
    started = time.monotonic()
    result = translate(project, server, "--timeout", "1", "--retries", "3")
    assert time.monotonic() - started < 6  # one deadline, not four, nor the server's 8 s
    assert result.returncode == 1 and "no complete reply within 1 s" in result.stdout
    assert len(requests_for(server, "title: Warp")) == 1
    assert zh(project, WARP).read_bytes() == old


def test_the_run_ends_at_its_run_timeout_and_says_so(project, server):
    server.latency = 6
    make_stale(project, WARP)
    old = zh(project, WARP).read_bytes()
    started = time.monotonic()
    result = translate(project, server, "--run-timeout", "1.5")
    assert time.monotonic() - started < 5
    assert result.returncode == 1 and "not finished within the run's 1.5 s (--run-timeout)" in result.stdout
    assert zh(project, WARP).read_bytes() == old


def test_a_proxy_that_resets_connections_beyond_its_capacity_gets_every_page_translated(project, server):
    server.max_concurrent, server.over_capacity, server.latency = 2, "reset", 0.3
    rels = sorted(load_glossary(project).pages["en"])[:10]
    for rel in rels:
        zh(project, rel).unlink()
    result = translate(
        project, server, "--max-chars", "800", "--concurrency", "16", "--retries", "1", "--report", "report.json"
    )
    assert result.returncode == 0, result.stdout
    report = report_of(project)
    assert report["totals"]["translated"] == len(rels) and report["concurrency"]["backoffs"] >= 2
    assert any(r["behaviour"] == "over capacity" for r in server.chat_requests())
    for rel in rels:
        assert_valid_translation(project, rel)


def test_a_changed_block_returned_in_english_is_refused(project, server):
    zh(project, OCCUPANCY).unlink()
    assert translate(project, server).returncode == 0
    edit_one_sentence(project, OCCUPANCY, "An added sentence about occupancy.")
    old = zh(project, OCCUPANCY).read_bytes()
    server.plan = {"An added sentence about occupancy.": ["echo"] * 10}
    result = translate(project, server, "--retries", "1")
    assert result.returncode == 1 and "too little Chinese" in result.stdout
    assert zh(project, OCCUPANCY).read_bytes() == old
    assert load_glossary(project).translation_status("zh", OCCUPANCY) == "stale"  # a later run repairs it


def test_a_bug_in_the_checks_surfaces_and_is_not_retried_as_a_rejection(project, server, monkeypatch):
    from gpu_glossary.translate import gate

    def broken(*_):
        raise ValueError("a bug in the checks")

    monkeypatch.setattr(gate, "number_problems", broken)
    zh(project, OCCUPANCY).unlink()
    with pytest.raises(ValueError, match="a bug in the checks"):
        translate(project, server, "--concurrency", "1")
    assert len(server.chat_requests()) == 1
    assert not zh(project, OCCUPANCY).exists()


def test_a_reply_adding_a_handler_to_an_existing_paragraph_is_retried(project, server):
    server.plan = {"title: Occupancy": ["attribute", "ok"]}
    zh(project, OCCUPANCY).unlink()
    assert translate(project, server).returncode == 0
    second = requests_for(server, "title: Occupancy")[1]["body"]["messages"]
    assert 'adds <p onclick="alert(7)">' in second[-1]["content"]
    assert "onclick" not in zh(project, OCCUPANCY).read_text(encoding="utf-8")
    assert_valid_translation(project, OCCUPANCY)


@pytest.mark.parametrize(
    "behaviour, message",
    [
        ("401", "the API rejected the key (401): check DEEPSEEK_API_KEY"),
        ("402", "insufficient balance (402)"),
    ],
)
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
    glossary = load_glossary(project)
    rels = sorted(glossary.pages["en"])[:8]
    old = {}
    for rel in rels:
        make_stale(project, rel)
        old[rel] = zh(project, rel).read_bytes()
    hanging = rels[::2]  # the first request of these pages hangs until Ctrl-C
    server.hang_seconds = 120
    server.plan = {
        front_matter_block({"title": glossary.page("en", rel).title}).split("\n")[1]: ["hang"] for rel in hanging
    }
    env = dict(os.environ, DEEPSEEK_API_KEY=KEY)
    # A test run started in the background of a shell hands its children SIGINT ignored: give Ctrl-C back.
    with_ctrl_c = (
        "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", with_ctrl_c, str(SCRIPT), "--base-url", server.url, "--concurrency", "8"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    done = [rel for rel in rels if rel not in hanging]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
        len([r for r in server.chat_requests() if r.get("behaviour") == "hang"]) == len(hanging)
        and all(zh(project, rel).read_bytes() != old[rel] for rel in done)
    ):
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert KEY not in out + err
    assert process.returncode == 130 and "Interrupted" in err
    for rel in done:
        assert_valid_translation(project, rel)
    for rel in hanging:
        assert zh(project, rel).read_bytes() == old[rel]  # whole or not at all
    no_leftovers(project)
    assert translate(project, server, "--report", "report.json").returncode == 0
    report = json.loads((project / "report.json").read_text(encoding="utf-8"))
    assert sorted(p["path"] for p in report["pages"]) == [f"glossary/zh/{rel}" for rel in hanging]
    assert report["totals"]["failed"] == 0
    assert {load_glossary(project).translation_status("zh", rel) for rel in rels} == {"current"}


# -- code comments --------------------------------------------------------------------------
def with_english_comments(project: Path, rel: str) -> bytes:
    """The Chinese page with its code blocks as the English page has them (comments in English);
    returns its bytes. The page stays current: its English page did not change."""
    glossary = load_glossary(project)
    english, chinese = glossary.page("en", rel), glossary.page("zh", rel)
    lines = chinese.text.split("\n")
    for theirs, ours in reversed(list(zip(english.fences(), chinese.fences(), strict=True))):
        lines[ours.line : ours.end_line - 1] = [
            ours.indent + line if line else line for line in theirs.code.split("\n")
        ]
    zh(project, rel).write_text("\n".join(lines), encoding="utf-8")
    return zh(project, rel).read_bytes()


def prose_and_front_matter(page) -> list[str]:
    return page.text[: len(page.text) - len(page.body)].split("\n") + [
        line for _, line, in_code in page.body_lines() if not in_code
    ]


def test_new_translations_translate_code_comments_and_keep_the_code(project, server):
    zh(project, OCCUPANCY).unlink()
    assert translate(project, server).returncode == 0
    glossary = load_glossary(project)
    pairs = list(zip(glossary.page("en", OCCUPANCY).fences(), glossary.page("zh", OCCUPANCY).fences(), strict=True))
    translated = [c.text for _, ours in pairs for c in comments(ours.code, ours.lang)]
    assert translated and all(re.search(r"[\u4e00-\u9fff]", text) for text in translated if len(text) > 12)
    assert all(first_code_difference(theirs.code, ours.code, theirs.lang) is None for theirs, ours in pairs)


def test_comments_of_current_pages_are_translated_without_touching_their_prose(project, server):
    with_english_comments(project, KERNEL)
    before = load_glossary(project).page("zh", KERNEL)
    english_comments = [c.text for f in before.fences() for c in comments(f.code, f.lang)]
    result = translate(project, server, "--comments", f"glossary/zh/{KERNEL}", "--report", "report.json")
    assert result.returncode == 0, result.stdout
    sent = [page_document(r["body"]["messages"][1]["content"]) for r in server.chat_requests()]
    words = [re.sub(r"⟦P\d+⟧", "", line) for document in sent for line in document.split("\n")]
    assert sent and all(text in "".join(english_comments) for text in words)  # comments' words and nothing else
    after = load_glossary(project).page("zh", KERNEL)
    assert prose_and_front_matter(after) == prose_and_front_matter(before)  # byte for byte, hashes included
    assert load_glossary(project).translation_status("zh", KERNEL) == "current"
    now = [c.text for f in after.fences() for c in comments(f.code, f.lang)]
    assert now != english_comments and all(re.search(r"[\u4e00-\u9fff]", t) for t in now if len(t) > 12)
    english = load_glossary(project).page("en", KERNEL)
    assert all(
        first_code_difference(a.code, b.code, a.lang) is None
        for a, b in zip(english.fences(), after.fences(), strict=True)
    )
    assert not [p for p in run_check(project) if p.severity == "error" and p.path.endswith(KERNEL)]
    assert report_of(project)["pages"][0]["reason"] == "comments"
    first = len(server.chat_requests())
    assert translate(project, server, "--comments", f"glossary/zh/{KERNEL}").returncode == 0
    assert len(server.chat_requests()) == first  # nothing left in English: nothing sent


@pytest.mark.parametrize(
    "behaviour, reason",
    [
        ("split_comment", "code block 1 differs from the English"),
        ("english_comments", "a code comment is still English"),
    ],
)
def test_comments_that_break_the_code_or_stay_english_are_refused(project, server, behaviour, reason):
    old = with_english_comments(project, KERNEL)
    server.default = behaviour
    result = translate(project, server, "--comments", f"glossary/zh/{KERNEL}", "--retries", "1")
    assert result.returncode == 1 and reason in result.stdout, result.stdout
    assert zh(project, KERNEL).read_bytes() == old


# -- chunks, the pool and section-level updates ------------------------------------------
def english_page(project: Path, rel: str):
    return load_glossary(project).page("en", rel)


def report_of(project: Path) -> dict:
    return json.loads((project / "report.json").read_text(encoding="utf-8"))


def test_chunks_of_all_pages_share_one_pool_longest_first(project, server):
    for rel in (OCCUPANCY, WARP, KERNEL):
        zh(project, rel).unlink()
    assert translate(project, server, "--max-chars", "800", "--concurrency", "1").returncode == 0
    sizes = [len(page_document(r["body"]["messages"][1]["content"])) for r in server.chat_requests()]
    assert len(sizes) > 6 and sizes == sorted(sizes, reverse=True)
    for rel in (OCCUPANCY, WARP, KERNEL):
        assert_valid_translation(project, rel)


@pytest.mark.parametrize("behaviour", ["500", "empty"])
def test_a_failed_chunk_leaves_the_old_page_untouched(project, server, behaviour):
    make_stale(project, OCCUPANCY)
    headings = english_page(project, OCCUPANCY).headings()
    server.plan = {headings[len(headings) // 2].text.split("{")[0].strip(): [behaviour] * 5}
    old = zh(project, OCCUPANCY).read_bytes()
    result = translate(project, server, "--max-chars", "800", "--retries", "0", "--report", "report.json")
    assert result.returncode == 1
    assert "glossary/zh/perf/occupancy.md: failed: " in result.stdout
    assert zh(project, OCCUPANCY).read_bytes() == old
    assert [r for r in server.chat_requests() if r["behaviour"] == "ok"]  # other chunks came back, and were not written
    assert report_of(project)["totals"]["failed"] == 1
    no_leftovers(project)


def test_the_level_backs_off_and_settles_under_a_server_that_caps_concurrency(project, server):
    # 0.3 s a request: long beside the scheduling delays of a loaded machine (the client counts
    # a request in flight until its event loop reads the reply; a starved client then looks busier
    # than the server, and at 0.1 s a full `make test` once let the level climb to 7).
    server.max_concurrent, server.retry_after_ms, server.latency = 3, 100, 0.3
    rels = sorted(load_glossary(project).pages["en"])[:10]
    for rel in rels:
        zh(project, rel).unlink()
    # Client and server in processes of their own, as in real use: their timing is what is tested.
    result = translate(
        project, server, "--max-chars", "800", "--concurrency", "16", "--report", "report.json", script=True
    )
    assert result.returncode == 0, result.stdout
    report = report_of(project)
    assert report["totals"]["translated"] == len(rels) and report["totals"]["failed"] == 0
    for rel in rels:
        assert_valid_translation(project, rel)
    requests = server.chat_requests()
    refused = [r["behaviour"] == "over capacity" for r in requests]
    assert server.peak_active == 3 and any(refused)  # it used all the server allows
    assert report["concurrency"]["backoffs"] >= 2
    assert 2 <= report["concurrency"]["final"] <= 5  # settled near the cap, down from a ceiling of 16
    later = refused[len(refused) // 2 :]
    assert sum(later) <= len(later) / 4  # after the first back-offs, refusals are rare: no hammering


def edit_one_sentence(project: Path, rel: str, sentence: str) -> tuple[int, int]:
    """Append a sentence to the first paragraph from the middle section on; returns (section, block)."""
    page = english_page(project, rel)
    blocks = split_blocks(page)
    section, index = next(
        (s, i)
        for s in range(len(blocks) // 2, len(blocks))
        for i, block in enumerate(blocks[s])
        if i and block[:1].isalpha()
    )
    block = blocks[section][index]
    blocks[section][index] = block.rstrip("\n") + " " + sentence + "\n" * (len(block) - len(block.rstrip("\n")))
    page.path.write_text(
        page.text[: len(page.text) - len(page.body)] + "".join("".join(b) for b in blocks), encoding="utf-8"
    )
    return section, index


def changed_lines(old: str, new: str) -> set[int]:
    """Indices of the old file's lines that the new file replaces, deletes or inserts at."""
    changed: set[int] = set()
    matcher = difflib.SequenceMatcher(None, old.split("\n"), new.split("\n"), autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag != "equal":
            changed.update(range(i1, max(i2, i1 + 1)))
    return changed


def test_a_one_sentence_edit_resends_only_its_paragraph_and_changes_only_its_lines(project, server):
    zh(project, OCCUPANCY).unlink()
    assert translate(project, server).returncode == 0
    before = load_glossary(project).page("zh", OCCUPANCY)
    assert recorded_hashes(before) == section_hashes(english_page(project, OCCUPANCY))
    old_blocks = split_blocks(before)
    section, block = edit_one_sentence(project, OCCUPANCY, "An added sentence about occupancy.")
    first = len(server.chat_requests())

    assert translate(project, server, "--report", "report.json").returncode == 0
    sent = [r["body"]["messages"][1]["content"] for r in server.chat_requests()[first:]]
    assert len(sent) == 1 and "An added sentence about occupancy." in sent[0] and OLD_MARKER in sent[0]
    for s, blocks in enumerate(old_blocks):  # the old Chinese of that paragraph goes with it, nothing else
        for b, text in enumerate(blocks):
            words = re.search(r"[\u4e00-\u9fff][\u4e00-\u9fff ]{10,}", text)
            if words:
                assert (words.group(0) in sent[0]) == ((s, b) == (section, block)), (s, b)
    page = report_of(project)["pages"][0]
    assert (page["parts_sent"], page["parts_sent"] + page["parts_kept"]) == (
        1,
        len(old_blocks) - 1 + len(old_blocks[section]),
    )

    after = load_glossary(project).page("zh", OCCUPANCY)
    assert_valid_translation(project, OCCUPANCY)
    new_blocks = split_blocks(after)

    def unchanged(blocks):
        return [t for s, group in enumerate(blocks) for b, t in enumerate(group) if (s, b) != (section, block)]

    assert unchanged(new_blocks) == unchanged(old_blocks)  # byte for byte
    assert new_blocks[section][block] != old_blocks[section][block]
    start = (
        before.body_line
        - 1
        + sum(t.count("\n") for group in old_blocks[:section] for t in group)
        + sum(t.count("\n") for t in old_blocks[section][:block])
    )
    block_lines = set(range(start, start + old_blocks[section][block].count("\n") + 1))
    hash_lines = {
        i for i, line in enumerate(before.text.split("\n")) if line.startswith(("source_hash:", "section_hashes:"))
    }
    assert changed_lines(before.text, after.text) <= block_lines | hash_lines
    assert changed_lines(before.text, after.text) & block_lines

    assert translate(project, server).returncode == 0
    assert len(server.chat_requests()) == first + 1  # no change: nothing sent


def test_a_change_that_needs_no_translation_sends_nothing(project, server):
    zh(project, WARP).unlink()
    assert translate(project, server).returncode == 0
    before = zh(project, WARP).read_text(encoding="utf-8")
    page = english_page(project, WARP)
    page.path.write_text(page.text.replace("\n## ", "\n\n## ", 1), encoding="utf-8")  # one more blank line
    first = len(server.chat_requests())
    assert translate(project, server).returncode == 0
    assert len(server.chat_requests()) == first
    after = zh(project, WARP).read_text(encoding="utf-8")
    assert load_glossary(project).translation_status("zh", WARP) == "current"
    assert [row for row in after.split("\n") if not row.startswith("source_hash:")] == [
        row for row in before.split("\n") if not row.startswith("source_hash:")
    ]


def test_a_stale_page_without_section_hashes_is_updated_whole(project, server):
    assert SECTION_HASHES_KEY not in load_glossary(project).page("zh", WARP).meta  # as the repository's pages are
    make_stale(project, WARP)
    assert translate(project, server, "--report", "report.json").returncode == 0
    sections = split_sections(english_page(project, WARP))
    page = report_of(project)["pages"][0]
    assert (page["parts_sent"], page["parts_kept"]) == (len(sections), 0)
    assert all(OLD_MARKER in r["body"]["messages"][1]["content"] for r in server.chat_requests())
    assert recorded_hashes(load_glossary(project).page("zh", WARP)) == section_hashes(english_page(project, WARP))
    assert_valid_translation(project, WARP)


def test_kept_chinese_that_fails_the_page_checks_is_sent_again_whole(project, server):
    zh(project, OCCUPANCY).unlink()
    assert translate(project, server).returncode == 0
    chinese = load_glossary(project).page("zh", OCCUPANCY)
    fence = chinese.fences()[0]  # a hand edit breaks a code block the next update would keep
    lines = chinese.text.split("\n")
    lines.insert(fence.line, "改;")  # a line of code, not a comment: only comments may differ from the English
    zh(project, OCCUPANCY).write_text("\n".join(lines), encoding="utf-8")
    edit_one_sentence(project, OCCUPANCY, "An added sentence about occupancy.")
    first = len(server.chat_requests())
    assert translate(project, server, "--report", "report.json").returncode == 0
    sent = server.chat_requests()[first:]
    sections = split_sections(english_page(project, OCCUPANCY))
    assert (
        len(sent) > 1 and len(requests_for(server, "An added sentence about occupancy.")) == 2
    )  # paragraph, then whole
    page = report_of(project)["pages"][0]
    assert (page["parts_sent"], page["parts_kept"], page["status"]) == (len(sections), 0, "translated")
    assert "改;" not in zh(project, OCCUPANCY).read_text(encoding="utf-8")
    assert_valid_translation(project, OCCUPANCY)
