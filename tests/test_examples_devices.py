"""Examples on several devices: multi-GPU examples and their launch, runs recorded per device and
shown as tabs, the drift between runs, NCCL from PyTorch's wheel, and the GPU machine's packages.

No GPU is needed: `nvidia-smi` and `torchrun` are small stand-in programs put first on PATH (real
processes the runner starts, as it starts the real ones), reporting 4 H100s linked by NVLink.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from helpers import ROOT
from test_examples import CLI, DEMO_PAGE, H100, add_demo, demo_problems, fence, make_page, record

from gpu_glossary.examples.apply import with_outputs
from gpu_glossary.examples.blocks import page_examples
from gpu_glossary.examples.check import check_examples
from gpu_glossary.examples.drift import Verdict, compare, spread
from gpu_glossary.examples.machine import Gpu, Machine, parse_topology
from gpu_glossary.examples.runs import RUNS_FILE, Runs, load_runs, save_runs
from gpu_glossary.glossary import load_glossary

FOUR = f"4× {H100}"
TWO = f"2× {H100}"

TOPOLOGY = (
    "\x1b[4m\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
    "GPU0\t X \tNV18\tNV18\tNV18\tSYS\t0-63\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tNV18\tNV18\tSYS\t0-63\t0\t\tN/A\n"
    "GPU2\tNV18\tNV18\t X \tNV18\tSYS\t0-63\t0\t\tN/A\n"
    "GPU3\tNV18\tNV18\tNV18\t X \tSYS\t0-63\t0\t\tN/A\n"
    "NIC0\tSYS\tSYS\tSYS\tSYS\t X \t\t\t\t\n\nLegend:\n\n"
    "  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n"
)


@pytest.fixture
def fake_gpus(tmp_path: Path) -> dict:
    """An environment whose PATH starts with a stand-in nvidia-smi (FAKE_GPUS H100s, default 4)
    and torchrun (one process per GPU, its arguments logged)."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    smi = f"""\
        #!{sys.executable}
        import os, sys
        gpus = int(os.environ.get("FAKE_GPUS", "4"))
        if sys.argv[1:] == ["topo", "-m"]:
            sys.stdout.write({TOPOLOGY!r})
        elif any(arg.startswith("--query-gpu=index,name,compute_cap,driver_version") for arg in sys.argv):
            for index in range(gpus):
                print(f"{{index}}, {H100}, 9.0, 580.159.04")
        else:
            sys.exit("the stand-in nvidia-smi only reads: " + " ".join(sys.argv[1:]))
        """
    torchrun = f"""\
        #!{sys.executable}
        import os, subprocess, sys
        with open(os.environ["FAKE_TORCHRUN_LOG"], "a") as log:
            log.write(" ".join(sys.argv[1:]) + "\\n")
        count = int(next(a.split("=")[1] for a in sys.argv if a.startswith("--nproc_per_node=")))
        program = [a for a in sys.argv[1:] if not a.startswith("--")]
        ranks = [
            subprocess.Popen([sys.executable, *program], env=dict(os.environ, RANK=str(r), WORLD_SIZE=str(count)))
            for r in range(count)
        ]
        sys.exit(max(rank.wait() for rank in ranks))
        """
    for name, text in (("nvidia-smi", smi), ("torchrun", torchrun)):
        (bin_dir / name).write_text(textwrap.dedent(text), encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_TORCHRUN_LOG": str(tmp_path / "torchrun.log"),
        "NCCL_NVLS_ENABLE": "1",  # the caller's: every example must see 0 all the same
        "TORCH_SYMM_MEM_DISABLE_MULTICAST": "0",
    }


MULTI = """\
import os
# {comment}
if os.environ.get("RANK", "0") == "0":
    print("world", os.environ.get("WORLD_SIZE"), "visible", os.environ["CUDA_VISIBLE_DEVICES"])
    print("multicast off:", os.environ["NCCL_NVLS_ENABLE"], os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"],
          os.environ["NVSHMEM_DISABLE_NVLS"])"""
SINGLE = 'import os\nprint("visible", os.environ["CUDA_VISIBLE_DEVICES"], "order", os.environ["CUDA_DEVICE_ORDER"])'


def add_multi_gpu_demo(project: Path) -> None:
    """A page with a 2-GPU Python example and a 1-GPU one; the Chinese page translates the comment."""

    def body(comment: str) -> str:
        return (
            fence("python", MULTI.format(comment=comment), "example: name=multi gpus=2")
            + "\nAnd on one GPU:\n\n"
            + fence("python", SINGLE, "example: name=single")
        )

    add_demo(project, body("Every rank runs this; rank 0 prints."), langs=("en",))
    zh = project / DEMO_PAGE.format(lang="zh")
    zh.write_text(
        f"---\ntitle: 演示\nsummary: 演示。\n---\n\n{body('每个进程都运行；0 号进程打印。')}\n", encoding="utf-8"
    )


def cli(project: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=project, capture_output=True, text=True, env=env)


def recorded(project: Path) -> dict:
    return yaml.safe_load((project / RUNS_FILE).read_text(encoding="utf-8"))


def test_a_multi_gpu_example_runs_under_torchrun_on_the_gpus_it_is_given_and_gets_a_tab_per_device(project, fake_gpus):
    add_multi_gpu_demo(project)
    two = cli(project, fake_gpus, "examples", "run", "--gpus", "2", "perf/demo-example.md")
    assert two.returncode == 0, two.stderr
    assert f"Running 2 example(s) on {TWO} (NV18)" in two.stderr
    runs = recorded(project)
    multi, single = runs["perf/demo-example.md#multi"], runs["perf/demo-example.md#single"]
    assert set(multi) == {TWO} and set(single) == {H100}, "a 1-GPU example is recorded as one GPU's run"
    assert multi[TWO]["stdout"] == "world 2 visible 0,1\nmulticast off: 0 1 1"
    assert multi[TWO]["command"] == "torchrun --standalone --nproc_per_node=2 multi.py"
    assert (multi[TWO]["gpus"], multi[TWO]["gpu_names"], multi[TWO]["link"]) == (2, [H100, H100], "NV18")
    assert single[H100]["stdout"] == "visible 0 order PCI_BUS_ID"
    four = cli(project, fake_gpus, "examples", "run", "--gpus", "4", "perf/demo-example.md#multi")
    assert four.returncode == 0, four.stderr
    assert (
        recorded(project)["perf/demo-example.md#multi"][FOUR]["stdout"]
        == "world 4 visible 0,1,2,3\nmulticast off: 0 1 1"
    )
    log = Path(fake_gpus["FAKE_TORCHRUN_LOG"]).read_text(encoding="utf-8").split("\n")
    assert log[:2] == ["--standalone --nproc_per_node=2 multi.py", "--standalone --nproc_per_node=4 multi.py"]
    for lang in ("en", "zh"):
        text = (project / DEMO_PAGE.format(lang=lang)).read_text(encoding="utf-8")
        assert (
            f'```\n\n=== "{TWO}"\n\n    ```text\n    world 2 visible 0,1\n    multicast off: 0 1 1\n    ```\n\n'
            f'=== "{FOUR}"\n\n    ```text\n    world 4 visible 0,1,2,3\n'
        ) in text, lang
        assert "```text\nvisible 0 order PCI_BUS_ID\n```" in text, "one device's run keeps the plain block"
    assert demo_problems(project) == [], "both languages show what the runs printed, tab by tab"
    listed = cli(project, fake_gpus, "examples", "list", "perf/demo-example.md")
    assert "perf/demo-example.md#multi  [python, 2+ GPUs, current]" in listed.stdout
    assert f"    runs: {TWO} (" in listed.stdout and f"; {FOUR} (" in listed.stdout
    zh = project / DEMO_PAGE.format(lang="zh")
    zh.write_text(zh.read_text(encoding="utf-8").replace("world 4 visible", "world 8 visible"), encoding="utf-8")
    (found,) = [p for p in demo_problems(project) if "error" in p]
    line = zh.read_text(encoding="utf-8").split("\n").index("    world 8 visible 0,1,2,3")
    assert found.startswith(
        f"glossary/zh/perf/demo-example.md:{line}: error: output differs from the recorded run of "
        f"perf/demo-example.md#multi on {FOUR}"
    ), found


def test_a_machine_with_too_few_gpus_skips_a_multi_gpu_example_and_refuses_one_named_alone(project, fake_gpus):
    add_multi_gpu_demo(project)
    one_gpu = dict(fake_gpus, FAKE_GPUS="1")
    page = cli(project, one_gpu, "examples", "run", "perf/demo-example.md")
    assert page.returncode == 0, page.stderr
    assert "skipped perf/demo-example.md#multi: needs 2 GPUs, this run has 1\n" in page.stderr
    assert "1 ran, 0 failed, 1 skipped" in page.stderr
    assert set(recorded(project)["perf/demo-example.md#single"]) == {H100}
    assert "perf/demo-example.md#multi" not in recorded(project)
    alone = cli(project, one_gpu, "examples", "run", "perf/demo-example.md#multi")
    assert alone.returncode == 1 and "Traceback" not in alone.stderr
    assert "nothing to run: the 1 selected example(s) need more GPUs than this run has (1)" in alone.stderr
    too_many = cli(project, fake_gpus, "examples", "run", "--gpus", "8", "perf/demo-example.md")
    assert too_many.returncode == 1 and "--gpus 8: this machine has 4 GPU(s)" in too_many.stderr


def test_a_console_block_calling_nvidia_smi_is_recorded_only_where_it_sees_just_the_gpus_it_is_given(
    project, fake_gpus
):
    """nvidia-smi ignores CUDA_VISIBLE_DEVICES: on 4 GPUs, a 1-GPU block would print four rows under a
    one-GPU label, and `--gpus 2` would show a 2-GPU tab with the topology of four."""
    query = "$ nvidia-smi --query-gpu=index,name,compute_cap,driver_version --format=csv,noheader"
    add_demo(
        project,
        fence("console", query, "example: shell name=one")
        + "\n"
        + fence("console", "$ nvidia-smi topo -m", "example: shell name=topo gpus=2"),
    )
    two = cli(project, fake_gpus, "examples", "run", "--gpus", "2", "perf/demo-example.md")
    assert two.returncode == 1 and "Traceback" not in two.stderr
    for name, given in (("one", 1), ("topo", 2)):
        assert (
            f"skipped perf/demo-example.md#{name}: nvidia-smi would show all 4 GPUs of this machine, "
            f"not the {given} it is given: record it on a machine with {given}\n"
        ) in two.stderr
    assert "nothing to run" in two.stderr
    four = cli(project, fake_gpus, "examples", "run", "perf/demo-example.md")
    assert four.returncode == 0, four.stderr
    assert "1 ran, 0 failed, 1 skipped" in four.stderr
    assert set(recorded(project)["perf/demo-example.md#topo"]) == {FOUR}, "all four GPUs, all four shown"
    one = cli(project, dict(fake_gpus, FAKE_GPUS="1"), "examples", "run", "perf/demo-example.md#one")
    assert one.returncode == 0, one.stderr
    assert recorded(project)["perf/demo-example.md#one"][H100]["stdout"] == f"0, {H100}, 9.0, 580.159.04"


VARYING = """\
import datetime, os, pathlib
runs = pathlib.Path("count")
n = int(runs.read_text()) + 1 if runs.exists() else 1
runs.write_text(str(n))
print(f"pid {os.getpid()} on {datetime.datetime.now().isoformat()}")
print(f"time {100 + 20 * (n % 2 == 0)} ms")"""


def test_repeat_records_a_spread_and_compare_keeps_the_output_and_reports_drift(project, fake_gpus):
    add_demo(
        project, fence("python", VARYING, "example: name=varying gpus=1") + "\n" + fence("python", SINGLE, "example")
    )
    first = cli(project, fake_gpus, "examples", "run", "--repeat", "2", "perf/demo-example.md")
    assert first.returncode == 0, first.stderr
    assert (
        "perf/demo-example.md#varying on NVIDIA H100 80GB HBM3: largest change 20.0% (line 2: 100 → 120)"
        in first.stdout
    )
    assert "over 10%: the page must say so next to the figure" in first.stdout
    assert f"perf/demo-example.md#example-2 on {H100}: identical" in first.stdout, "PIDs and dates are no drift"
    varying = recorded(project)["perf/demo-example.md#varying"][H100]
    assert varying["spread"] == "20%" and varying["stdout"].endswith("time 100 ms")
    assert recorded(project)["perf/demo-example.md#example-2"][H100]["spread"] == "0%"
    again = cli(project, fake_gpus, "examples", "run", "--compare", "--repeat", "2", "perf/demo-example.md#varying")
    assert again.returncode == 0, again.stderr
    assert "perf/demo-example.md#varying on NVIDIA H100 80GB HBM3: identical" in again.stdout, "one run, vs the record"
    kept = recorded(project)["perf/demo-example.md#varying"][H100]
    assert kept == varying, "--compare keeps the recorded output, date and the larger spread"
    drift = cli(project, fake_gpus, "examples", "drift", "--over-limit")
    demo = [line for line in drift.stdout.split("\n") if "demo-example" in line]  # the glossary's own runs too
    assert len(demo) == 1 and "perf/demo-example.md#varying  NVIDIA H100 80GB HBM3: 20%" in demo[0], drift.stdout
    assert "(over 10%: say so next to the figure)" in demo[0]


def test_a_cuda_example_linked_with_nccl_finds_it_in_the_python_packages(project, fake_gpus, tmp_path):
    """The GPU machines have NCCL only in PyTorch's nvidia-nccl wheel (nvidia/nccl/{include,lib},
    libnccl.so.2 and no libnccl.so): a stand-in library in such a folder must compile, link and load."""
    if shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists():
        pytest.skip("no nvcc")
    nccl = tmp_path / "site" / "nvidia" / "nccl"
    (nccl / "include").mkdir(parents=True)
    (nccl / "lib").mkdir()
    (nccl / "include" / "nccl.h").write_text('#pragma once\nextern "C" int ncclGetVersion(int* version);\n')
    (tmp_path / "nccl.c").write_text("int ncclGetVersion(int* version) { *version = 22805; return 0; }\n")
    subprocess.run(
        [
            "cc",
            "-shared",
            "-fPIC",
            "-Wl,-soname,libnccl.so.2",
            "-o",
            str(nccl / "lib" / "libnccl.so.2"),
            str(tmp_path / "nccl.c"),
        ],
        check=True,
    )
    program = (
        '#include <cstdio>\n#include <nccl.h>\nint main() { int v = 0; ncclGetVersion(&v); printf("NCCL %d\\n", v); }'
    )
    add_demo(project, fence("cuda", program, 'example: name=version flags="-lnccl"'))
    env = dict(fake_gpus, PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), str(ROOT / "scripts")]))
    result = cli(project, env, "examples", "run", "perf/demo-example.md")
    assert result.returncode == 0, result.stderr
    assert recorded(project)["perf/demo-example.md#version"][H100]["stdout"] == "NCCL 22805"


# -- without running anything ----------------------------------------------------------


def test_multi_gpu_markers_and_their_mistakes():
    page = make_page(
        fence("python", "import torch", "example: name=p2p gpus=2 launch=single ignore='seed \\d+'")
        + "\n"
        + fence("cuda", "int main() {}", "example: name=ring gpus=4 flags=-lnccl")
    )
    (p2p, ring), problems = page_examples(page)
    assert problems == []
    assert (p2p.gpus, p2p.launch, p2p.ignore, ring.gpus) == (2, "single", "seed \\d+", 4)
    assert p2p.run_command(gpus=4) == ["python3", "p2p.py"], "launch=single: one process sees every GPU"
    assert ring.run_command(gpus=4) == ["./ring"] and ring.describe(4).endswith("-lnccl && ./ring")
    assert ring.gpus_given(4) == 4 and page_examples(make_page(fence("cuda", "int main() {}")))[0][0].gpus_given(4) == 1
    for marker, message in (
        ("example: gpus=0", "example gpus=0 must be 1 or more"),
        ("example: gpus=two", "example gpus='two' is not a number"),
        ("example: launch=mpirun", "example launch='mpirun' is not one of torchrun, single"),
        ("example: ignore='(' ", "is not a regular expression"),
    ):
        _, (problem,) = page_examples(make_page(fence("python", "import torch", marker)))
        assert message in problem.message and problem.line == 6


@pytest.mark.parametrize(
    "code",
    [
        'import os\nos.environ["NCCL_NVLS_ENABLE"] = "1"\nimport torch',
        'import torch, os\ndel os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"]',
        "import torch, subprocess\nsubprocess.run(['nvidia-smi', '-i', '0', '-lgc', '1980'])",
    ],
)
def test_an_example_that_turns_multicast_on_or_changes_a_gpu_setting_is_an_error(code):
    _, (problem,) = page_examples(make_page(fence("python", code)))
    assert (
        problem.severity == "error"
        and "examples may not change a GPU's settings or NVLink multicast" in problem.message
    )
    safe = 'import torch, os, subprocess\nos.environ["NCCL_NVLS_ENABLE"] = "0"  # as the runner sets it\n'
    assert (
        page_examples(make_page(fence("python", safe + "subprocess.run(['nvidia-smi', 'dmon', '-c', '1'])")))[1] == []
    )


def test_the_drift_classifier_ignores_pids_dates_and_named_values_and_reports_a_20_percent_change():
    before = "pid 4121 at 2026-11-27T10:00:01\nscratch /tmp/tmpab12/x\nseed 7\n  51 ms\n404.0 GB/s"
    after = "pid 977 at 2026-11-28T09:12:44\nscratch /tmp/tmpzz99/x\nseed 9\n  51 ms\n484.8 GB/s"
    drift = compare(before, after, ignore=r"seed \d+")
    assert drift.verdict == Verdict.MOVED and round(drift.change, 3) == 0.2 and drift.where == "line 5: 404.0 → 484.8"
    assert compare(before, after.replace("484.8", "404.0"), ignore=r"seed \d+").verdict == Verdict.IDENTICAL
    assert compare(before, after).where == "line 3: 7 → 9", "without the marker, a seed is a number like any"
    assert compare("a 1\nb 2", "a 1\nc 2").verdict == Verdict.SHAPE
    assert compare("a 1", "a 1\nb").verdict == Verdict.SHAPE
    assert compare("  51 ms", "1,051 ms").verdict == Verdict.MOVED, "alignment and thousands separators are no shape"
    assert spread(["x 100", "x 120", "x 80"]).change == 0.5


def test_topology_names_the_links_between_the_gpus_a_run_uses():
    links = parse_topology(TOPOLOGY)
    assert links[(0, 3)] == "NV18" and (0, 0) not in links and len(links) == 12
    machine = Machine(tuple(Gpu(i, H100, "9.0") for i in range(4)), "580.159.04", "13.0", None, links)
    assert (machine.label(1), machine.label(4), machine.link(2), machine.visible_devices(2)) == (
        H100,
        FOUR,
        "NV18",
        "0,1",
    )
    mixed = Machine((Gpu(0, H100, "9.0"), Gpu(1, "NVIDIA H200", "9.0")), "", "", None, {(0, 1): "SYS", (1, 0): "SYS"})
    assert (mixed.label(2), mixed.link(2)) == (f"{H100} + NVIDIA H200", "SYS")


def test_runs_of_several_devices_are_tabs_and_each_tab_is_checked_against_its_device():
    code = "import torch\nprint(1)"
    page = make_page(fence("python", code, "example: name=t") + "\nAfter.")
    (example,) = page_examples(page)[0]
    runs = Runs(path=Path("unused"))
    h200 = record("on h200", example.hash)
    h200.device = "NVIDIA H200"
    runs.put(example.id, record("on h100", example.hash))
    assert "```\n\n```text\non h100\n```\n\nAfter." in with_outputs(page, runs)
    runs.put(example.id, h200)
    text = with_outputs(page, runs)
    tabs = (
        f'=== "{H100}"\n\n    ```text\n    on h100\n    ```\n\n=== "NVIDIA H200"\n\n    ```text\n    on h200\n    ```'
    )
    assert f"```\n\n{tabs}\n\nAfter." in text
    tabbed = make_page(text.split("---\n\n", 1)[1].removesuffix("\n"))
    assert check_examples([tabbed], runs) == []
    assert with_outputs(tabbed, runs) == tabbed.text.replace("\r\n", "\n"), "apply is idempotent"
    wrong = make_page(tabbed.body.replace("    on h200", "    on h100"))
    (problem,) = check_examples([wrong], runs)
    assert f"output differs from the recorded run of {example.id} on NVIDIA H200" in problem.message
    lines = wrong.text.split("\n")
    assert lines[problem.line - 1] == "    ```text" and lines[problem.line - 3] == '=== "NVIDIA H200"', problem.line
    plain = make_page(fence("python", code, "example: name=t") + "\n```text\non h100\n```\n")
    (problem,) = check_examples([plain], runs)
    assert f"shows one output block, but has recorded runs on {H100}, NVIDIA H200" in problem.message
    missing = make_page(tabbed.body.split('=== "NVIDIA H200"')[0])
    assert any("no output tab for NVIDIA H200" in p.message for p in check_examples([missing], runs))


def test_a_run_of_earlier_code_on_one_device_is_reported_while_another_device_shows_the_current_code(project):
    add_demo(project, fence("python", "import torch\nprint(1)", "example: name=t") + "\n```text\non h100\n```\n")
    example = page_examples(load_glossary(project).page("en", "perf/demo-example.md"))[0][0]
    runs = load_runs(project)
    runs.put(example.id, record("on h100", example.hash))
    older = record("on h200, older code", "0123456789abcdef")
    older.device = "NVIDIA H200"
    runs.put(example.id, older)
    save_runs(runs)
    (found,) = demo_problems(project)
    assert "warning: the run of perf/demo-example.md#t on NVIDIA H200 is of earlier code" in found
    pruned = subprocess.run([*CLI, "examples", "prune"], cwd=project, capture_output=True, text=True)
    assert "removed perf/demo-example.md#t on NVIDIA H200" in pruned.stdout
    assert set(load_runs(project).records[example.id]) == {H100}


@pytest.mark.slow
def test_the_examples_commands_need_only_the_gpu_machine_s_packages(project, tmp_path):
    """The GPU machines have Python with the image's packages (click, PyYAML, tqdm, Markdown,
    Pygments …) and python-frontmatter carried as a wheel: nothing the site or the translator
    needs (nh3, mkdocs, pymdown-extensions, openai, watchfiles) may be imported."""
    blocker = tmp_path / "image-only"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        textwrap.dedent(
            """\
            import sys
            MISSING = {"nh3", "mkdocs", "material", "pymdownx", "openai", "watchfiles", "httpx", "filelock"}
            class Missing:
                def find_spec(self, name, path=None, target=None):
                    if name.split(".")[0] in MISSING:
                        raise ImportError(f"{name} is not on the GPU machine")
            sys.meta_path.insert(0, Missing())
            """
        ),
        encoding="utf-8",
    )
    add_demo(project, fence("python", "print('hello')", "example: name=hello"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker), str(ROOT / "scripts")]))
    for args in (
        ["examples", "list"],
        ["examples", "run", "perf/demo-example.md"],
        ["examples", "drift"],
        ["examples", "apply"],
    ):
        result = subprocess.run([*CLI, *args], cwd=project, capture_output=True, text=True, env=env)
        assert result.returncode == 0 and "is not on the GPU machine" not in result.stderr, (args, result.stderr)
    refused = subprocess.run([*CLI, "check"], cwd=project, capture_output=True, text=True, env=env)
    # the blocker works: the checker needs packages the GPU machine lacks (pymdownx is its first import)
    assert refused.returncode == 1 and "is not on the GPU machine" in refused.stderr, refused.stderr
