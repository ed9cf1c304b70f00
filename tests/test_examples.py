"""Runnable examples: discovery, markers, the recorded-runs file, the output check, and real runs.

The runs here are real: `gpu-glossary examples run` compiles nothing and needs no GPU for a
```python block that only prints, so it runs on any machine, CI included.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import ROOT

from gpu_glossary.check import run_check
from gpu_glossary.examples.apply import with_outputs
from gpu_glossary.examples.blocks import normalize_output, page_examples
from gpu_glossary.examples.check import check_examples
from gpu_glossary.examples.machine import NO_GPU, Gpu, Machine
from gpu_glossary.examples.runner import SetupError, preflight
from gpu_glossary.examples.runs import RUNS_FILE, Record, Runs, load_runs, save_runs
from gpu_glossary.glossary import load_glossary
from gpu_glossary.page import parse_page
from gpu_glossary.translate.sections import recorded_hashes, section_hashes

CLI = [sys.executable, "-m", "gpu_glossary.cli"]
H100 = "NVIDIA H100 80GB HBM3"


def make_page(body: str, rel: str = "perf/demo.md", lang: str = "en"):
    text = f"---\ntitle: Demo\nsummary: A demo.\n---\n\n{body}\n"
    return parse_page(text, Path(rel), f"glossary/{lang}/{rel}", rel, lang)


def fence(lang: str, code: str, marker: str = "") -> str:
    return (f"<!-- {marker} -->\n" if marker else "") + f"```{lang}\n{code}\n```\n"


CUDA_MAIN = '#include <cstdio>\nint main() { printf("hi\\n"); return 0; }'
CUDA_FRAGMENT = "__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }"


# -- discovery and markers ----------------------------------------------------------


def test_complete_programs_are_runnable_and_fragments_are_not():
    page = make_page(
        "\n".join(
            [
                fence("cuda", CUDA_MAIN),
                fence("cuda", CUDA_FRAGMENT),
                fence("cuda", CUDA_MAIN, "nvcc: skip"),
                fence("python", "import torch\nprint(torch.ones(2))"),
                fence("python", "print('no GPU library')"),
                fence("python", "import torch\nprint(1)", "example: skip"),
                fence("console", "$ nvidia-smi"),
            ]
        )
    )
    examples, problems = page_examples(page)
    assert problems == []
    assert [(e.kind, e.name) for e in examples] == [("cuda", "example-1"), ("python", "example-2")]
    assert examples[0].id == "perf/demo.md#example-1"
    assert examples[0].fence.line == 6


def test_markers_set_name_flags_args_timeout_and_exit_code():
    page = make_page(
        fence("cuda", CUDA_MAIN, 'example: name=drv flags="-lcuda -lineinfo" args="8 --fast" timeout=5 exit=1')
        + "\n"
        + fence("python", "print('plain python')", "example")
    )
    (cuda, python), problems = page_examples(page)
    assert problems == []
    assert (cuda.name, cuda.flags, cuda.args, cuda.timeout, cuda.exit_code) == (
        "drv",
        ("-lcuda", "-lineinfo"),
        ("8", "--fast"),
        5.0,
        1,
    )
    assert cuda.build_command() == [
        "nvcc",
        "-std=c++17",
        "-O3",
        "-arch=sm_90",
        "-lineinfo",
        "drv.cu",
        "-o",
        "drv",
        "-lcuda",
    ]
    assert cuda.run_command() == ["./drv", "8", "--fast"]
    assert python.kind == "python" and not python.needs_gpu


def test_an_architecture_flag_replaces_the_default_target():
    page = make_page(fence("cuda", CUDA_MAIN, 'example: flags="-gencode arch=compute_80,code=sm_80"'))
    (example,), _ = page_examples(page)
    assert "-arch=sm_90" not in example.build_command()
    assert "-gencode" in example.build_command()


def test_console_blocks_marked_shell_run_their_commands():
    page = make_page(fence("console", "$ nvidia-smi -L\n$ ls \\\n  -l", "example: shell"))
    (example,), problems = page_examples(page)
    assert problems == []
    assert example.kind == "shell" and example.commands == ("nvidia-smi -L", "ls \\\n  -l")


@pytest.mark.parametrize(
    "marker, message",
    [
        ("example: nmae=x", "unknown setting 'nmae=x'"),
        ("example: timeout=soon", "example timeout='soon' is not a number"),
        ('example: flags="-lcuda', "example marker does not parse"),
        ("example: name=a/b", "example name 'a/b' may hold only"),
    ],
)
def test_a_bad_marker_is_an_error_naming_its_line(marker, message):
    page = make_page("Intro.\n\n" + fence("cuda", CUDA_MAIN, marker))
    _, problems = page_examples(page)
    assert [(p.line, p.severity) for p in problems] == [(8, "error")]
    assert message in problems[0].message


def test_output_lines_in_a_runnable_console_block_and_duplicate_names_are_errors():
    page = make_page(
        fence("console", "$ ls\nfile.txt", "example: shell")
        + "\n"
        + fence("cuda", CUDA_MAIN, "example: name=a")
        + "\n"
        + fence("cuda", CUDA_MAIN, "example: name=a")
    )
    _, problems = page_examples(page)
    messages = [(p.line, p.message.split(":")[0]) for p in problems]
    assert (9, "a runnable console block holds only '$ command' lines") in messages
    assert any("two examples named 'a'" in p.message for p in problems)


def test_the_hash_follows_the_code_and_a_console_block_follows_its_page_programs():
    def hashes(program: str):
        page = make_page(fence("cuda", program, "example: name=p") + "\n" + fence("console", "$ ./p", "example: shell"))
        return [e.hash for e in page_examples(page)[0]]

    first, changed = hashes(CUDA_MAIN), hashes(CUDA_MAIN.replace("hi", "ho"))
    assert first[0] != changed[0]
    assert first[1] != changed[1], "the console block runs ./p, so it is stale when p's code changes"
    assert hashes(CUDA_MAIN) == first


def test_the_hash_ignores_what_comments_say_but_not_where_lines_are():
    def hashed(program: str) -> str:
        return page_examples(make_page(fence("cuda", program)))[0][0].hash

    commented = '#include <cstdio>\n// say hello\nint main() { printf("hi\\n"); return 0; }  // exit 0'
    translated = '#include <cstdio>\n// 打个招呼\nint main() { printf("hi\\n"); return 0; }  // 退出码 0'
    assert hashed(translated) == hashed(commented), "a translated comment keeps the recorded run"
    assert hashed(commented.replace("// say hello\n", "")) != hashed(commented), "line numbers the program sees moved"
    assert hashed(translated.replace('"hi', '"ho')) != hashed(commented), "a string is code, even beside a comment"


def test_the_hash_ignores_comments_so_a_translated_page_and_a_comment_edit_keep_their_run():
    english = '// Print one line.\n#include <cstdio>\nint main() { printf("hi // not a comment\\n"); }  // done'
    chinese = '// 打印一行。\n#include <cstdio>\nint main() { printf("hi // not a comment\\n"); }  // 结束'
    (en,), _ = page_examples(make_page(fence("cuda", english)))
    (zh,), _ = page_examples(make_page(fence("cuda", chinese), lang="zh"))
    (edited,), _ = page_examples(make_page(fence("cuda", english.replace("hi //", "ho //"))))
    assert en.id == zh.id and en.hash == zh.hash
    assert edited.hash != en.hash, "a string that looks like a comment is code"
    python = "import torch\n# the sum\nprint(torch.ones(2).sum())"
    (a,), _ = page_examples(make_page(fence("python", python)))
    (b,), _ = page_examples(make_page(fence("python", python.replace("# the sum", "# 求和"))))
    assert a.hash == b.hash


# -- the recorded-runs file -----------------------------------------------------------


def record(stdout: str, hash: str = "h") -> Record:
    return Record(
        hash=hash,
        command="./p",
        device=H100,
        compute_capability="9.0",
        driver="580.159.04",
        cuda="13.0",
        date="2026-11-23",
        stdout=stdout,
        seconds=1.5,
    )


def test_runs_file_round_trips_readably(tmp_path):
    runs = Runs(path=tmp_path / RUNS_FILE)
    runs.put("perf/a.md#x", record("line one\n  indented\nlast"))
    runs.put("perf/a.md#y", record("one line"))
    save_runs(runs)
    text = runs.path.read_text(encoding="utf-8")
    assert "stdout: |-\n      line one\n        indented\n      last" in text  # a block scalar, diffable
    again = load_runs(tmp_path)
    assert again.problems == []
    assert again.records == runs.records
    assert again.lines["perf/a.md#y"] > again.lines["perf/a.md#x"]


def test_a_broken_runs_file_is_a_located_error(tmp_path):
    (tmp_path / "glossary").mkdir()
    (tmp_path / RUNS_FILE).write_text("perf/a.md#x:\n  hash: h\n  stdout: a: b\n", encoding="utf-8")
    problems = load_runs(tmp_path).problems
    assert problems and problems[0].path == RUNS_FILE and problems[0].line == 3
    (tmp_path / RUNS_FILE).write_text("perf/a.md#x:\n  hash: h\n", encoding="utf-8")
    assert "must map each device" in load_runs(tmp_path).problems[0].message
    (tmp_path / RUNS_FILE).write_text(f"perf/a.md#x:\n  {H100}:\n    hash: h\n", encoding="utf-8")
    (problem,) = load_runs(tmp_path).problems
    assert problem.line == 2 and f"recorded run of 'perf/a.md#x' on {H100} lacks command" in problem.message


def test_saving_is_atomic_and_keeps_the_old_file_on_failure(tmp_path, monkeypatch):
    runs = Runs(path=tmp_path / RUNS_FILE)
    runs.put("perf/a.md#x", record("kept"))
    save_runs(runs)
    before = runs.path.read_text(encoding="utf-8")
    runs.put("perf/a.md#y", record("new"))

    def explode(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("os.fsync", explode)
    with pytest.raises(OSError):
        save_runs(runs)
    assert runs.path.read_text(encoding="utf-8") == before
    assert [p.name for p in runs.path.parent.iterdir()] == ["runs.yml"]


def test_normalized_output_drops_trailing_spaces_and_blank_lines():
    assert normalize_output("a  \r\nb\t\n\n\n") == "a\nb"
    assert normalize_output("\x1b[4mGPU0\tCPU Affinity\x1b[0m") == "GPU0\tCPU Affinity"
    assert normalize_output("log:\n\x00\x00inc.cu(1): error") == "log:\ninc.cu(1): error", "a NUL the program wrote"


# -- the output check, in a copy of the real glossary --------------------------------

DEMO_PAGE = "glossary/{lang}/perf/demo-example.md"


def add_demo(project: Path, body: str, langs=("en",)) -> None:
    config = project / "mkdocs.yml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("  - terms.md\n", "  - perf/demo-example.md\n  - terms.md\n"),
        encoding="utf-8",
    )
    for lang in langs:
        path = project / DEMO_PAGE.format(lang=lang)
        path.write_text(f"---\ntitle: Demo example {lang}\nsummary: A demo.\n---\n\n{body}\n", encoding="utf-8")


PRINTER = fence("python", "print('hello')\nprint('world')", "example: name=hello")


def demo_example(project: Path):
    page = load_glossary(project).page("en", "perf/demo-example.md")
    return page_examples(page)[0][0]


def record_for(project: Path, stdout: str) -> None:
    runs = load_runs(project)
    runs.put(demo_example(project).id, record(stdout, demo_example(project).hash))
    save_runs(runs)


def demo_problems(project: Path) -> list[str]:
    """The checker's findings on the demo page in both languages: its rules for those two pages (as the
    live preview runs them after an edit) and the rules about the whole glossary."""
    demo = {(lang, "perf/demo-example.md") for lang in ("en", "zh")}
    return [
        str(p)
        for p in run_check(project, pages=demo)
        if ("demo-example" in p.path or "demo-example" in p.message) and "translation" not in p.message
    ]


def test_an_example_with_no_recorded_run_is_a_warning(project):
    add_demo(project, PRINTER)
    found = demo_problems(project)
    assert len(found) == 1
    assert found[0].startswith(
        "glossary/en/perf/demo-example.md:7: warning: example changed since it last ran on a GPU"
    )


def test_shown_output_must_equal_the_recorded_run(project):
    add_demo(project, PRINTER + "\n```text\nhello\nworld\n```\n")
    record_for(project, "hello\nworld")
    assert demo_problems(project) == []
    add_demo(project, PRINTER + "\n```text\nhello\nthere\n```\n")
    record_for(project, "hello\nworld")
    (found,) = demo_problems(project)
    assert found.startswith("glossary/en/perf/demo-example.md:12: error: output differs from the recorded run")
    assert "output line 2 is 'there', the run printed 'world'" in found


def test_a_recorded_example_without_output_block_is_an_error(project):
    add_demo(
        project,
        PRINTER + "\nProse, then a text block that is not right under the example.\n\n```text\nhello\nworld\n```\n",
    )
    record_for(project, "hello\nworld")
    (found,) = demo_problems(project)
    assert found.startswith(
        "glossary/en/perf/demo-example.md:10: error: no output block under example perf/demo-example.md#hello"
    )


def test_a_chinese_page_is_held_to_the_same_record(project):
    add_demo(project, PRINTER + "\n```text\nhello\nworld\n```\n", langs=("en", "zh"))
    record_for(project, "hello\nworld")
    assert not [p for p in demo_problems(project) if "error" in p]
    zh = project / DEMO_PAGE.format(lang="zh")
    zh.write_text(zh.read_text(encoding="utf-8").replace("```text\nhello", "```text\n你好"), encoding="utf-8")
    assert any(
        p.startswith("glossary/zh/perf/demo-example.md:12: error: output differs") for p in demo_problems(project)
    )


def test_a_chinese_page_with_translated_comments_keeps_the_record(project):
    program = "# greet twice\nprint('hello')  # first\nprint('world')"
    add_demo(project, fence("python", program, "example: name=hello") + "\n```text\nhello\nworld\n```\n", ("en", "zh"))
    record_for(project, "hello\nworld")
    zh = project / DEMO_PAGE.format(lang="zh")
    zh.write_text(zh.read_text(encoding="utf-8").replace("# greet twice", "# 打两次招呼"), encoding="utf-8")
    assert [p for p in demo_problems(project) if "zh" in p] == []
    zh.write_text(zh.read_text(encoding="utf-8").replace("print('world')", "print('world!')"), encoding="utf-8")
    assert any(
        p.startswith("glossary/zh/perf/demo-example.md:7: warning: example changed") for p in demo_problems(project)
    )


def test_a_record_no_page_uses_is_reported(project):
    runs = load_runs(project)
    runs.put("perf/gone.md#old", record("x"))
    save_runs(runs)
    glossary = load_glossary(project)
    every_page = [page for lang in ("en", "zh") for page in glossary.pages[lang].values()]
    found = [str(p) for p in check_examples(every_page, load_runs(project)) if "perf/gone.md#old" in p.message]
    assert len(found) == 1 and found[0].startswith(f"{RUNS_FILE}:") and "warning" in found[0]


@pytest.mark.slow
def test_apply_writes_outputs_in_both_languages_and_keeps_a_translation_current(project):
    add_demo(project, PRINTER + "\nAfter.\n", langs=("en", "zh"))
    glossary = load_glossary(project)
    subprocess.run([*CLI, "stamp", DEMO_PAGE.format(lang="zh")], cwd=project, check=True, capture_output=True)
    record_for(project, "hello\nworld")
    result = subprocess.run([*CLI, "examples", "apply"], cwd=project, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    for lang in ("en", "zh"):
        text = (project / DEMO_PAGE.format(lang=lang)).read_text(encoding="utf-8")
        assert "print('world')\n```\n\n```text\nhello\nworld\n```\n\nAfter." in text
    glossary = load_glossary(project)
    assert glossary.translation_status("zh", "perf/demo-example.md") == "current"
    zh_page, en_page = glossary.page("zh", "perf/demo-example.md"), glossary.page("en", "perf/demo-example.md")
    assert recorded_hashes(zh_page) == section_hashes(en_page)  # the next translation update sees no change here
    assert demo_problems(project) == []
    again = subprocess.run([*CLI, "examples", "apply"], cwd=project, capture_output=True, text=True)
    assert "0 page(s) changed" in again.stderr


def test_with_outputs_replaces_an_old_output_block():
    page = make_page(PRINTER + "\n```text\nstale\n```\n")
    runs = Runs(path=Path("unused"))
    example = page_examples(page)[0][0]
    runs.put(example.id, record("fresh", example.hash))
    assert "```text\nfresh\n```" in with_outputs(page, runs)
    assert "stale" not in with_outputs(page, runs)


# -- real runs ------------------------------------------------------------------------


@pytest.mark.slow
def test_examples_run_records_output_for_real_without_a_gpu(project):
    add_demo(
        project,
        PRINTER
        + "\n"
        + fence(
            "python",
            # the program's verdict on stdout, then a launcher's long report on stderr (as torchrun writes)
            "import sys\nprint('partial')\nprint('\\n'.join(f'launcher {i}' for i in range(40)), file=sys.stderr)\n"
            "sys.exit(3)",
            "example: name=broken",
        )
        + "\n"
        + fence("python", "import time\ntime.sleep(30)", "example: name=slow timeout=1"),
    )
    runs = load_runs(project)
    runs.put("device-software/warp.md#kept", record("an older run of another page"))
    save_runs(runs)
    before = set(runs.records)
    page = load_glossary(project).page("en", "perf/demo-example.md")
    lines = {e.name: e.fence.line for e in page_examples(page)[0]}
    result = subprocess.run(
        [*CLI, "examples", "run", "perf/demo-example.md"], cwd=project, capture_output=True, text=True
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert (
        f"glossary/en/perf/demo-example.md:{lines['broken']}: error: example perf/demo-example.md#broken failed (exit code 3, expected 0)"  # noqa: E501 -- one message, whole as printed
        in result.stderr
    )
    assert "partial" in result.stderr, "the program's own last lines stay in view"
    assert "stderr (last 20 of 40 lines):" in result.stderr and "launcher 39" in result.stderr
    assert (
        f"glossary/en/perf/demo-example.md:{lines['slow']}: error: example perf/demo-example.md#slow timed out"
        in result.stderr
    )
    assert "1 ran, 2 failed" in result.stderr
    records = yaml.safe_load((project / RUNS_FILE).read_text(encoding="utf-8"))
    assert set(records) == before | {"perf/demo-example.md#hello"}, "one new run merged, no other record lost"
    assert records["device-software/warp.md#kept"][H100]["stdout"] == "an older run of another page"
    hello = records["perf/demo-example.md#hello"][NO_GPU]
    assert hello["stdout"] == "hello\nworld" and hello["hash"] == demo_example(project).hash and hello["gpus"] == 1
    page = (project / DEMO_PAGE.format(lang="en")).read_text(encoding="utf-8")
    assert "```text\nhello\nworld\n```" in page
    listed = subprocess.run([*CLI, "examples", "list"], cwd=project, capture_output=True, text=True)
    assert "perf/demo-example.md#hello  [python, 1 GPU, current]" in listed.stdout
    assert "perf/demo-example.md#broken  [python, 1 GPU, never run]" in listed.stdout


def test_a_cuda_example_on_a_machine_without_a_gpu_gets_a_clear_message(project):
    if Path("/dev/nvidia0").exists():
        pytest.skip("this machine has a GPU")
    result = subprocess.run(
        [*CLI, "examples", "run", "perf/memory-coalescing.md"], cwd=project, capture_output=True, text=True
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "no NVIDIA GPU found" in result.stderr and "perf/memory-coalescing.md#coalescing" in result.stderr


def test_a_missing_nvcc_gets_a_clear_message():
    page = make_page(fence("cuda", CUDA_MAIN))
    examples, _ = page_examples(page)
    with pytest.raises(
        SetupError,
        match=r"nvcc not found .* 1 selected example\(s\) need the CUDA toolkit, e.g. perf/demo.md#example-1",
    ):
        preflight(examples, Machine((Gpu(0, H100, "9.0"),), "580.159.04", "", None))


def test_unknown_selector_is_refused(project):
    result = subprocess.run(
        [*CLI, "examples", "run", "perf/no-such-page.md"], cwd=project, capture_output=True, text=True
    )
    assert result.returncode == 1 and "no example matches perf/no-such-page.md" in result.stderr


# -- the real glossary ----------------------------------------------------------------


def test_every_example_in_the_glossary_has_a_current_recorded_run():
    glossary = load_glossary(ROOT)
    runs = load_runs(ROOT)
    missing = [
        e.location
        for lang in glossary.pages
        for page in glossary.pages[lang].values()
        for e in page_examples(page)[0]
        if not runs.current(e)
    ]
    assert not missing, f"examples with no recorded run of their current code: {missing}"
    assert all(r.device.startswith(("NVIDIA", "2× NVIDIA", "4× NVIDIA")) for _, r in runs.all())
