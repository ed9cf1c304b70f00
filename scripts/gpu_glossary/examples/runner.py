"""Compile and run the glossary's examples on this machine and record what they print.

Meant for a machine with NVIDIA GPUs (a maintainer's, or a lent one): CUDA programs are
compiled in parallel first, then every example runs on its own, one after the other, so
that timings are not disturbed by each other or by the compiler. Each example gets its
page's folder (its programs are built there, so a console block can run `./name` or read
`name.cu`), a timeout, and a verdict; one failure never stops the others. Results are
merged into `glossary/runs.yml` after each success, so an interrupted run keeps its work.

A single-GPU example sees the first GPU; a multi-GPU one (`gpus=N`) sees all of the run's
GPUs (`--gpus K`, default all) and a ```python one is started by torchrun, one process per
GPU. NVLink multicast stays off in every example's environment: the machines are shared.
"""

from __future__ import annotations

import datetime
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import NamedTuple

from gpu_glossary.examples.blocks import Example, Kind, normalize_output
from gpu_glossary.examples.drift import Drift, Verdict, spread
from gpu_glossary.examples.machine import Machine, find_nccl
from gpu_glossary.examples.runs import Record, Runs, save_runs
from gpu_glossary.examples.safety import MULTICAST_OFF

# Set for every example and build, over whatever the caller set: multicast over NVLink can put
# a shared host's GPUs out of service, and no example needs it.
SAFETY_ENV = MULTICAST_OFF


class SetupError(RuntimeError):
    """This machine cannot run the selected examples (no nvcc, no GPU): a message, not a traceback."""


class Status(StrEnum):
    OK = "ok"
    BUILD_FAILED = "build failed"
    FAILED = "failed"  # ended with another exit code than the marker's
    TIMED_OUT = "timed out"


@dataclass
class RunOutcome:
    """What became of one example in this run."""

    example: Example
    status: Status
    seconds: float
    stdout: str
    stderr: str
    exit_code: int | None = None
    device: str = ""  # what it ran on, its key in runs.yml
    gpus: int | None = None  # how many GPUs it was given (None: the fewest it needs)
    drift: Drift | None = None  # between this run and the others of the same code on the same device
    kept_earlier: bool = False  # --compare: the recorded output stays, only its spread is updated

    @property
    def ok(self) -> bool:
        return self.status == Status.OK


class Finished(NamedTuple):
    """One process that ran to its end or to its timeout."""

    timed_out: bool
    exit_code: int | None
    stdout: str
    stderr: str
    seconds: float


def gpus_for(example: Example, machine: Machine) -> int:
    """How many of the run's GPUs the example sees (1 on a machine without a GPU)."""
    return example.gpus_given(len(machine.gpus)) if machine.has_gpu else 1


def plan(examples: list[Example], machine: Machine) -> tuple[list[Example], list[tuple[Example, str]]]:
    """The examples this run can make, and the others with the one-line reason why not."""
    runnable, skipped = [], []
    for example in examples:
        if example.gpus > 1 and example.gpus > len(machine.gpus):
            have = f"this run has {len(machine.gpus)}" if machine.has_gpu else "this machine has none"
            skipped.append((example, f"needs {example.gpus} GPUs, {have}"))
        elif _sees_more_gpus_than_given(example, machine):
            given = gpus_for(example, machine)
            skipped.append(
                (
                    example,
                    f"nvidia-smi would show all {machine.gpus_installed} GPUs of this machine, not the {given} "
                    f"it is given: record it on a machine with {given}",
                )
            )
        else:
            runnable.append(example)
    return runnable, skipped


def _sees_more_gpus_than_given(example: Example, machine: Machine) -> bool:
    """A console block calling nvidia-smi reports every GPU of the machine (it ignores CUDA_VISIBLE_DEVICES),
    so where the run gives it fewer, its output would not be what a reader with that many GPUs sees."""
    calls_nvidia_smi = example.kind == Kind.SHELL and any("nvidia-smi" in command for command in example.commands)
    return calls_nvidia_smi and machine.has_gpu and gpus_for(example, machine) < machine.gpus_installed


def preflight(examples: list[Example], machine: Machine, skipped: int = 0) -> None:
    """Refuse, with the reason, a run this machine cannot make."""
    if not examples and skipped:
        raise SetupError(
            f"nothing to run: the {skipped} selected example(s) need more GPUs than "
            f"{'this run has' if machine.has_gpu else 'this machine has'} ({len(machine.gpus)}); "
            "run them on a machine with more GPUs (or a larger --gpus)"
        )
    needs_nvcc = [e for e in examples if e.kind in (Kind.CUDA, Kind.SHELL)]
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


def _run(command: list[str], cwd: Path, timeout: float, env: dict) -> Finished:
    """Run in a new process group, so a timeout also ends the children (ncu, torchrun's workers)."""
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
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        timed_out = True
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    return Finished(
        timed_out,
        process.returncode,
        stdout.decode("utf-8", errors="replace"),
        stderr.decode("utf-8", errors="replace"),
        time.perf_counter() - started,
    )


def _torchrun(python: str) -> tuple[str, ...]:
    """torchrun beside the examples' Python, else on PATH, else the module it runs."""
    import shutil

    beside = Path(python).parent / "torchrun"
    if beside.is_file():
        return (str(beside),)
    found = shutil.which("torchrun")
    return (found,) if found else (python, "-m", "torch.distributed.run")


def _uses_nccl(example: Example) -> bool:
    return "-lnccl" in example.flags or "nccl.h" in example.fence.code


class ExampleRunner:
    """Builds and runs a list of examples in a scratch folder, recording each success in `runs`.

    The caller plans and checks the machine first (`plan`, `preflight`): the runner assumes it
    can run them all. `compare`: an example whose code already has a run on this device runs
    once more and only the spread of its figures is recorded (the page keeps its output).
    `repeat`: any other example runs this many times and its first output is recorded with
    the spread of all of them.
    """

    def __init__(
        self,
        runs: Runs,
        machine: Machine,
        jobs: int | None = None,
        python: str | None = None,
        workdir: Path | None = None,
        progress: Callable[[RunOutcome], None] | None = None,
        compare: bool = False,
        repeat: int = 1,
    ):
        self.runs = runs
        self.machine = machine
        self.jobs = jobs or os.cpu_count() or 2
        self.python = python or sys.executable
        self.workdir = workdir
        self.progress = progress  # a callable(outcome) per finished example, or None
        self.compare = compare
        self.repeat = max(1, repeat)
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID", **SAFETY_ENV}
        if machine.nvcc:
            self.env["PATH"] = f"{Path(machine.nvcc).parent}{os.pathsep}{self.env.get('PATH', '')}"
        self.torchrun = _torchrun(self.python)

    def run(self, selected: list[Example], all_examples: list[Example]) -> list[RunOutcome]:
        with tempfile.TemporaryDirectory(prefix="gpu-glossary-examples-", dir=self.workdir) as scratch:
            scratch_dir = Path(scratch)
            programs = self._programs_needed(selected, all_examples)
            build_failures = self._build(programs, scratch_dir)
            outcomes = []
            for example in selected:
                outcome = build_failures.get(example.id) or self._measure(example, scratch_dir, build_failures)
                outcomes.append(outcome)
                if outcome.ok:
                    self.runs.put(example.id, self._record(outcome))
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
        shell_pages = {e.page.rel for e in selected if e.kind == Kind.SHELL}
        wanted = {e.id for e in selected if e.kind != Kind.SHELL}
        return [e for e in all_examples if e.kind != Kind.SHELL and (e.id in wanted or e.page.rel in shell_pages)]

    def _nccl_flags(self, scratch: Path) -> tuple[list[str], list[str]]:
        """nvcc flags (before the source, after it) that find NCCL in the Python packages, where the
        system has none: its headers, a libnccl.so to link against, and the library's folder at run time."""
        nccl = find_nccl(self.python)
        if nccl is None:
            return [], []
        lib = nccl / "lib"
        link_dir = lib
        if not (lib / "libnccl.so").exists():  # the wheel ships only libnccl.so.2, which -lnccl does not find
            link_dir = scratch / "nccl-lib"
            link_dir.mkdir(exist_ok=True)
            target = sorted(lib.glob("libnccl.so.*"))[0]
            (link_dir / "libnccl.so").symlink_to(target)
        return [f"-I{nccl / 'include'}"], [f"-L{link_dir}", "-Xlinker", "-rpath", "-Xlinker", str(lib)]

    def _build(self, programs: list[Example], scratch: Path) -> dict[str, RunOutcome]:
        """Write every source and compile the CUDA ones in parallel; returns the failures by id."""
        for example in programs:
            (self._folder(scratch, example) / example.source_name).write_text(
                example.fence.code + "\n", encoding="utf-8"
            )
        cuda = [e for e in programs if e.kind == Kind.CUDA]
        stubs = Path(self.machine.nvcc or "nvcc").resolve().parent.parent / "lib64" / "stubs"
        nccl_before, nccl_after = self._nccl_flags(scratch) if any(_uses_nccl(e) for e in cuda) else ([], [])

        def build(example: Example) -> RunOutcome | None:
            command = example.build_command()
            command[0] = self.machine.nvcc or command[0]
            if _uses_nccl(example):
                command[1:1] = nccl_before
                command += nccl_after
            if stubs.is_dir() and any(flag.startswith("-l") for flag in command):
                # link-time stand-ins for libcuda/libnvidia-ml; the driver's are loaded at run time
                command.append(f"-L{stubs}")
            done = _run(command, self._folder(scratch, example), 600, self.env)
            if not done.timed_out and done.exit_code == 0:
                return None
            stderr = done.stderr or ("nvcc timed out" if done.timed_out else "nvcc failed")
            return RunOutcome(example, Status.BUILD_FAILED, done.seconds, done.stdout, stderr, done.exit_code)

        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            return {o.example.id: o for o in pool.map(build, cuda) if o is not None}

    def _measure(self, example: Example, scratch: Path, build_failures: dict[str, RunOutcome]) -> RunOutcome:
        """Run an example once, or more where a spread is wanted, and compare the runs of its code here."""
        gpus = gpus_for(example, self.machine)
        device = self.machine.label(gpus)
        env = (
            dict(self.env, CUDA_VISIBLE_DEVICES=self.machine.visible_devices(gpus))
            if self.machine.has_gpu
            else self.env
        )
        earlier = self.runs.get(example.id, device)
        earlier = earlier if earlier is not None and earlier.hash == example.hash else None
        keep_earlier = self.compare and earlier is not None
        outputs: list[str] = []
        first: RunOutcome | None = None
        for _ in range(1 if keep_earlier else self.repeat):
            outcome = self._run_one(example, scratch, build_failures, env, gpus)
            outcome.device, outcome.gpus = device, gpus
            if not outcome.ok:
                return outcome
            first = first or outcome
            outputs.append(normalize_output(outcome.stdout))
        assert first is not None
        compared = ([earlier.stdout] if earlier is not None else []) + outputs
        first.drift = spread(compared, example.ignore) if len(compared) > 1 else None
        first.kept_earlier = keep_earlier
        return first

    def _run_one(
        self, example: Example, scratch: Path, build_failures: dict[str, RunOutcome], env: dict, gpus: int
    ) -> RunOutcome:
        folder = self._folder(scratch, example)
        if example.kind == Kind.SHELL:
            broken = [o.example.name for o in build_failures.values() if o.example.page.rel == example.page.rel]
            if broken:
                reason = f"this page's program(s) {', '.join(broken)} did not build"
                return RunOutcome(example, Status.BUILD_FAILED, 0.0, "", reason)
            done = self._shell(example, folder, env)
        else:
            command = example.run_command(self.python, gpus=gpus, torchrun=self.torchrun)
            done = _run(command, folder, example.timeout, env)
        if done.timed_out:
            status = Status.TIMED_OUT
        else:
            status = Status.OK if done.exit_code == example.exit_code else Status.FAILED
        return RunOutcome(example, status, done.seconds, done.stdout, done.stderr, done.exit_code)

    def _shell(self, example: Example, folder: Path, env: dict) -> Finished:
        """Each command of a console block in turn; with several, each output follows its `$ command` line."""
        outputs: list[str] = []
        errors: list[str] = []
        total = 0.0
        done = Finished(False, 0, "", "", 0.0)
        for command in example.commands:
            remaining = max(example.timeout - total, 1.0)
            done = _run(["bash", "-o", "pipefail", "-c", command], folder, remaining, env)
            total += done.seconds
            outputs.append((f"$ {command}\n" if len(example.commands) > 1 else "") + normalize_output(done.stdout))
            errors.append(done.stderr)
            if done.timed_out or done.exit_code != example.exit_code:
                break
        return Finished(done.timed_out, done.exit_code, "\n".join(outputs), "".join(errors), total)

    def _record(self, outcome: RunOutcome) -> Record:
        example, drift = outcome.example, outcome.drift
        measured = drift.change if drift is not None and drift.verdict != Verdict.SHAPE else None
        earlier = self.runs.get(example.id, outcome.device)
        if outcome.kept_earlier and earlier is not None:
            known = [s for s in (earlier.spread, measured) if s is not None]
            return replace(earlier, spread=max(known) if known else None)
        gpus = gpus_for(example, self.machine)
        machine = self.machine
        return Record(
            hash=example.hash,
            command=example.describe(gpus),
            device=outcome.device,
            compute_capability=machine.gpus[0].compute_capability if machine.gpus else "",
            driver=machine.driver,
            cuda=machine.cuda,
            date=datetime.datetime.now(datetime.UTC).date().isoformat(),
            seconds=round(outcome.seconds, 2),
            stdout=normalize_output(outcome.stdout),
            gpus=gpus,
            gpu_names=tuple(gpu.name for gpu in machine.gpus[:gpus]) if gpus > 1 else (),
            link=machine.link(gpus) if gpus > 1 else "",
            spread=measured,
        )


def failure_report(outcome: RunOutcome, lines: int = 20) -> str:
    """A failed example as `page:line: error: …`, the command as it ran, and the end of its standard output
    and of its standard error, each on its own: a launcher such as torchrun fills stderr with its own report,
    which must not push the program's last lines (where it says what went wrong) out of view."""
    example = outcome.example
    detail = (
        f"exit code {outcome.exit_code}, expected {example.exit_code}"
        if outcome.status == Status.FAILED
        else outcome.status
    )
    on = f" on {outcome.device}" if outcome.device else ""
    parts = [
        f"{example.location}: error: example {example.id} {outcome.status} ({detail}){on} "
        f"after {outcome.seconds:.1f} s",
        f"    $ {example.describe(outcome.gpus)}",
    ]
    for name, text in (("stdout", outcome.stdout), ("stderr", outcome.stderr)):
        shown = normalize_output(text).split("\n") if text.strip() else []
        if shown:
            cut = len(shown) - lines
            parts.append(f"    {name}" + (f" (last {lines} of {len(shown)} lines):" if cut > 0 else ":"))
            parts += ["      " + line for line in shown[-lines:]]
    return "\n".join(parts)


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
