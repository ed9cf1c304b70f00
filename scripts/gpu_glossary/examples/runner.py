"""Compile and run the glossary's examples on this machine and record what they print.

Meant for a machine with an NVIDIA GPU (a maintainer's, or a lent one): CUDA programs are
compiled in parallel first, then every example runs on its own, one after the other, so
that timings are not disturbed by each other or by the compiler. Each example gets its
page's folder (its programs are built there, so a console block can run `./name` or read
`name.cu`), a timeout, and a verdict; one failure never stops the others. Results are
merged into `glossary/runs.yml` after each success, so an interrupted run keeps its work.
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from gpu_glossary.examples.model import Example, Record, Runs, normalize_output, save_runs

NO_GPU = "CPU only (no GPU)"


class SetupError(RuntimeError):
    """This machine cannot run the selected examples (no nvcc, no GPU): a message, not a traceback."""


@dataclass(frozen=True)
class Machine:
    """What the runs are recorded on."""

    device: str
    compute_capability: str
    driver: str
    cuda: str
    nvcc: str | None

    @property
    def has_gpu(self) -> bool:
        return self.device != NO_GPU


@dataclass
class Outcome:
    example: Example
    status: str  # "ok", "build failed", "failed", "timed out"
    seconds: float
    stdout: str
    stderr: str
    exit_code: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def find_nvcc() -> str | None:
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def _output_of(command: list[str]) -> str | None:
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None


def describe_machine() -> Machine:
    """The first GPU's name, compute capability and driver (from nvidia-smi), and nvcc's CUDA release."""
    nvcc = find_nvcc()
    version = _output_of([nvcc, "--version"]) if nvcc else None
    release = re.search(r"release (\d+\.\d+)", version or "")
    smi = shutil.which("nvidia-smi")
    query = _output_of([smi, "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"]) if smi else None
    first = (query or "").strip().split("\n")[0]
    fields = [part.strip() for part in first.split(",")] if first else []
    if len(fields) != 3:
        return Machine(NO_GPU, "", "", release.group(1) if release else "", nvcc)
    return Machine(fields[0], fields[1], fields[2], release.group(1) if release else "", nvcc)


def preflight(examples: list[Example], machine: Machine) -> None:
    """Refuse, with the reason, a run this machine cannot make."""
    needs_nvcc = [e for e in examples if e.kind in ("cuda", "shell")]
    if needs_nvcc and machine.nvcc is None:
        raise SetupError(
            f"nvcc not found (not on PATH, not in /usr/local/cuda/bin): {len(needs_nvcc)} selected example(s) "
            f"need the CUDA toolkit, e.g. {needs_nvcc[0].id}. Install it, or name examples that need no compiler."
        )
    needs_gpu = [e for e in examples if e.needs_gpu]
    if needs_gpu and not machine.has_gpu:
        raise SetupError(
            f"no NVIDIA GPU found (nvidia-smi is missing or lists no GPU): {len(needs_gpu)} selected example(s) "
            f"need one, e.g. {needs_gpu[0].id}. Run this on a CUDA machine, or name examples that need no GPU."
        )


def _run(command: list[str], cwd: Path, timeout: float, env: dict) -> tuple[str, int | None, str, str, float]:
    """Run in a new process group, so a timeout also ends the children (ncu, a shell pipeline)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
        status = "ok"
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        status = "timed out"
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    decode = lambda data: data.decode("utf-8", errors="replace")  # noqa: E731
    return status, process.returncode, decode(stdout), decode(stderr), time.perf_counter() - started


class ExampleRunner:
    """Builds and runs a list of examples in a scratch folder, recording each success in `runs`."""

    def __init__(
        self,
        runs: Runs,
        machine: Machine,
        jobs: int | None = None,
        python: str | None = None,
        workdir: Path | None = None,
        progress=None,
    ):
        self.runs = runs
        self.machine = machine
        self.jobs = jobs or os.cpu_count() or 2
        self.python = python or sys.executable
        self.workdir = workdir
        self.progress = progress  # a callable(outcome) per finished example, or None
        self.env = dict(os.environ, PYTHONUNBUFFERED="1")
        if machine.nvcc:
            self.env["PATH"] = f"{Path(machine.nvcc).parent}{os.pathsep}{self.env.get('PATH', '')}"

    def run(self, selected: list[Example], all_examples: list[Example]) -> list[Outcome]:
        preflight(selected, self.machine)
        with tempfile.TemporaryDirectory(prefix="gpu-glossary-examples-", dir=self.workdir) as scratch:
            scratch_dir = Path(scratch)
            programs = self._programs_needed(selected, all_examples)
            build_failures = self._build(programs, scratch_dir)
            outcomes = []
            for example in selected:
                outcome = build_failures.get(example.id) or self._run_one(example, scratch_dir, build_failures)
                outcomes.append(outcome)
                if outcome.ok:
                    self.runs.records[example.id] = self._record(outcome)
                    save_runs(self.runs)
                if self.progress:
                    self.progress(outcome)
        return outcomes

    def _folder(self, scratch: Path, example: Example) -> Path:
        folder = scratch / example.page.rel.removesuffix(".md").replace("/", "__")
        folder.mkdir(exist_ok=True)
        return folder

    @staticmethod
    def _programs_needed(selected: list[Example], all_examples: list[Example]) -> list[Example]:
        """The selected programs, and every program on the page of a selected console block."""
        shell_pages = {e.page.rel for e in selected if e.kind == "shell"}
        wanted = {e.id for e in selected if e.kind != "shell"}
        return [e for e in all_examples if e.kind != "shell" and (e.id in wanted or e.page.rel in shell_pages)]

    def _build(self, programs: list[Example], scratch: Path) -> dict[str, Outcome]:
        """Write every source and compile the CUDA ones in parallel; returns the failures by id."""
        for example in programs:
            (self._folder(scratch, example) / example.source_name).write_text(
                example.fence.code + "\n", encoding="utf-8"
            )
        cuda = [e for e in programs if e.kind == "cuda"]

        stubs = Path(self.machine.nvcc or "nvcc").resolve().parent.parent / "lib64" / "stubs"

        def build(example: Example) -> Outcome | None:
            command = example.build_command()
            command[0] = self.machine.nvcc or command[0]
            if stubs.is_dir() and any(flag.startswith("-l") for flag in command):
                command.append(
                    f"-L{stubs}"
                )  # link-time stand-ins for libcuda/libnvidia-ml; the driver's load at run time
            status, code, out, err, seconds = _run(command, self._folder(scratch, example), 600, self.env)
            if status == "ok" and code == 0:
                return None
            return Outcome(example, "build failed", seconds, out, err or f"nvcc {status}", code)

        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            return {o.example.id: o for o in pool.map(build, cuda) if o is not None}

    def _run_one(self, example: Example, scratch: Path, build_failures: dict[str, Outcome]) -> Outcome:
        folder = self._folder(scratch, example)
        if example.kind == "shell":
            broken = [o.example.name for o in build_failures.values() if o.example.page.rel == example.page.rel]
            if broken:
                return Outcome(
                    example, "build failed", 0.0, "", f"this page's program(s) {', '.join(broken)} did not build"
                )
            status, code, out, err, seconds = self._shell(example, folder)
        else:
            status, code, out, err, seconds = _run(example.run_command(self.python), folder, example.timeout, self.env)
        if status == "ok" and code != example.exit_code:
            status = "failed"
        return Outcome(example, status, seconds, out, err, code)

    def _shell(self, example: Example, folder: Path):
        """Each command of a console block in turn; with several, each output follows its `$ command` line."""
        outputs, errors, total, code = [], [], 0.0, 0
        for command in example.commands:
            remaining = max(example.timeout - total, 1.0)
            status, code, out, err, seconds = _run(
                ["bash", "-o", "pipefail", "-c", command], folder, remaining, self.env
            )
            total += seconds
            outputs.append((f"$ {command}\n" if len(example.commands) > 1 else "") + normalize_output(out))
            errors.append(err)
            if status != "ok" or code != example.exit_code:
                return status, code, "\n".join(outputs), "".join(errors), total
        return "ok", code, "\n".join(outputs), "".join(errors), total

    def _record(self, outcome: Outcome) -> Record:
        machine = self.machine
        return Record(
            hash=outcome.example.hash,
            command=outcome.example.describe(),
            device=machine.device,
            compute_capability=machine.compute_capability,
            driver=machine.driver,
            cuda=machine.cuda,
            date=datetime.datetime.now(datetime.UTC).date().isoformat(),
            seconds=round(outcome.seconds, 2),
            stdout=normalize_output(outcome.stdout),
        )


def failure_report(outcome: Outcome, lines: int = 20) -> str:
    """A failed example as `page:line: error: …` and the end of what it printed."""
    example = outcome.example
    detail = (
        f"exit code {outcome.exit_code}, expected {example.exit_code}" if outcome.status == "failed" else outcome.status
    )
    tail = normalize_output(outcome.stdout + ("\n" + outcome.stderr if outcome.stderr else "")).split("\n")[-lines:]
    body = "\n".join("    " + line for line in tail if line is not None)
    return (
        f"{example.location}: error: example {example.id} {outcome.status} ({detail}) after {outcome.seconds:.1f} s\n"
        f"    $ {example.describe()}\n{body}"
    )


def select(examples: list[Example], selectors: tuple[str, ...]) -> tuple[list[Example], list[str]]:
    """Examples matching any selector: an id (`perf/x.md#name`), a page (`perf/x.md`, a path under glossary/en),
    or a shell-style pattern over ids; returns the matches and the selectors that matched nothing."""
    from fnmatch import fnmatchcase

    if not selectors:
        return list(examples), []
    chosen: dict[str, Example] = {}
    unmatched = []
    for selector in selectors:
        key = re.sub(r"^(?:\./)?glossary/(?:en|zh)/", "", selector)
        hits = [e for e in examples if key in (e.id, e.page.rel) or fnmatchcase(e.id, key)]
        if not hits:
            unmatched.append(selector)
        chosen.update((e.id, e) for e in hits)
    return [e for e in examples if e.id in chosen], unmatched
