"""Runnable examples on a page: which code blocks are complete programs, their markers,
and the output blocks under each.

A block is runnable when it is a complete program: a ```cuda block with `main`, a
```python block that imports torch, triton or cupy, or any block marked with an
`<!-- example … -->` comment on the line above its fence. Its output is the ```text
fence right under it (only blank lines between), or, once it has run on several
devices, one ```text fence per device in content tabs (`=== "NVIDIA H200"`). Runs
happen on a GPU (`examples.runner`) and land in one file, `glossary/runs.yml`
(`examples.runs`); everything here works without a GPU.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum

from gpu_glossary.code_comments import blank_comments
from gpu_glossary.examples.safety import unsafe_call
from gpu_glossary.page import Fence, Page, Problem

MARKER = "example"
DEFAULT_TIMEOUT = 120.0
DEFAULT_NVCC_FLAGS = ("-std=c++17", "-O3")
DEFAULT_ARCH = "-arch=sm_90"
_ARCH_FLAGS = ("-arch", "--gpu-architecture", "-gencode", "--generate-code")
_NVCC_OPTIONS_STARTING_WITH_L = {"-lineinfo", "-lib", "-link", "-ldir"}
_GPU_PYTHON = re.compile(r"^\s*(?:import|from)\s+(?:torch|triton|cupy)\b", re.M)
_CUDA_MAIN = re.compile(r"\bint\s+main\s*\(")
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_KEYS = {"name", "flags", "args", "timeout", "exit", "gpus", "launch", "ignore"}
_WORDS = {"shell", "skip"}
LAUNCHES = ("torchrun", "single")
OUTPUT_LANG = "text"
TAB_INDENT = "    "


class Kind(StrEnum):
    """What a runnable block is: a CUDA program, a Python program, or a console session."""

    CUDA = "cuda"
    PYTHON = "python"
    SHELL = "shell"


@dataclass(frozen=True)
class Example:
    """One runnable block of one page."""

    page: Page
    fence: Fence
    kind: Kind
    name: str
    flags: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    exit_code: int = 0
    hash: str = ""
    commands: tuple[str, ...] = ()  # shell blocks: the commands after "$ "
    gpus: int = 1  # the fewest GPUs it needs; with 2 or more it is given all of a run's GPUs
    launch: str = "torchrun"  # a multi-GPU ```python program: one process per GPU, or "single"
    ignore: str = ""  # a regular expression for printed values that are not measurements

    @property
    def id(self) -> str:
        return f"{self.page.rel}#{self.name}"

    @property
    def location(self) -> str:
        return f"{self.page.display_path}:{self.fence.line}"

    @property
    def source_name(self) -> str:
        return {Kind.CUDA: f"{self.name}.cu", Kind.PYTHON: f"{self.name}.py"}.get(self.kind, "")

    @property
    def needs_gpu(self) -> bool:
        return self.kind != Kind.PYTHON or bool(_GPU_PYTHON.search(self.fence.code)) or self.gpus > 1

    def gpus_given(self, available: int) -> int:
        """How many of a run's GPUs it sees: one, or all of them for a multi-GPU example."""
        return available if self.gpus > 1 else 1

    def nvcc_flags(self) -> list[str]:
        flags = list(DEFAULT_NVCC_FLAGS) + list(self.flags)
        if not any(flag.split("=")[0] in _ARCH_FLAGS for flag in self.flags):
            flags.insert(len(DEFAULT_NVCC_FLAGS), DEFAULT_ARCH)
        return flags

    def compile_flags(self) -> list[str]:
        """nvcc's flags without the libraries to link (-lcuda …)."""
        return [f for f in self.nvcc_flags() if not _is_library(f)]

    def build_command(self) -> list[str]:
        """The compile step (CUDA only), run in the example's work folder."""
        if self.kind != Kind.CUDA:
            return []
        libraries = [f for f in self.nvcc_flags() if _is_library(f)]  # after the source, where the linker needs them
        return ["nvcc", *self.compile_flags(), self.source_name, "-o", self.name, *libraries]

    def run_command(
        self, python: str = "python3", gpus: int = 1, torchrun: tuple[str, ...] = ("torchrun",)
    ) -> list[str]:
        """How it runs when given `gpus` GPUs: a multi-GPU ```python program under torchrun,
        one process per GPU, as readers would start it."""
        if self.kind == Kind.CUDA:
            return [f"./{self.name}", *self.args]
        if self.kind == Kind.PYTHON:
            if self.gpus > 1 and self.launch == "torchrun":
                return [*torchrun, "--standalone", f"--nproc_per_node={gpus}", self.source_name, *self.args]
            return [python, self.source_name, *self.args]
        return ["bash", "-c", "\n".join(self.commands)]

    def describe(self, gpus: int | None = None) -> str:
        """The build and run commands as a reader would type them (for `gpus` GPUs: default, the fewest)."""
        run = shlex.join(self.run_command(gpus=gpus or self.gpus))
        if self.kind == Kind.CUDA:
            return f"{shlex.join(self.build_command())} && {run}"
        if self.kind == Kind.SHELL:
            return " ; ".join(self.commands)
        return run


def _is_library(flag: str) -> bool:
    return flag.startswith("-l") and flag not in _NVCC_OPTIONS_STARTING_WITH_L


_TERMINAL_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


# Control characters a page cannot show (a C string's NUL written with its buffer): tabs and line ends stay.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def normalize_output(text: str) -> str:
    """Output as a page shows it: Unix line ends, no terminal colour or underline codes, no
    other control characters, no trailing spaces, no trailing blank lines."""
    text = _CONTROL.sub("", _TERMINAL_ESCAPE.sub("", text))
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return "\n".join(lines).strip("\n")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:16]


def parse_marker(marker: str) -> tuple[dict, list[str]] | None:
    """`example: name=x flags="-lcuda" timeout=120` → ({settings}, [errors]); None if no marker."""
    if marker != MARKER and not marker.startswith(MARKER + ":"):
        return None
    settings: dict = {}
    errors: list[str] = []
    try:
        tokens = shlex.split(marker[len(MARKER) + 1 :])
    except ValueError as exc:
        return settings, [f'example marker does not parse ({exc}): quote values with spaces, e.g. flags="-lcuda -g"']
    for token in tokens:
        key, equals, value = token.partition("=")
        if not equals and key in _WORDS:
            settings[key] = True
        elif equals and key in _KEYS:
            settings[key] = value
        else:
            known = ", ".join(sorted(_WORDS) + [f"{k}=…" for k in sorted(_KEYS)])
            errors.append(f"unknown setting '{token}' in example marker (known: {known})")
    if "name" in settings and not _NAME.match(settings["name"]):
        errors.append(f"example name '{settings['name']}' may hold only letters, digits, '_', '-' and '.'")
    for key, convert in (("timeout", float), ("exit", int), ("gpus", int)):
        if key in settings:
            try:
                settings[key] = convert(settings[key])
            except ValueError:
                errors.append(f"example {key}={settings[key]!r} is not a number")
                del settings[key]
    if settings.get("gpus", 1) < 1:
        errors.append(f"example gpus={settings.pop('gpus')} must be 1 or more")
    if "launch" in settings and settings["launch"] not in LAUNCHES:
        errors.append(f"example launch={settings.pop('launch')!r} is not one of {', '.join(LAUNCHES)}")
    if "ignore" in settings:
        try:
            re.compile(settings["ignore"])
        except re.error as exc:
            errors.append(f"example ignore={settings.pop('ignore')!r} is not a regular expression ({exc})")
    return settings, errors


def _kind(fence: Fence, settings: dict | None) -> Kind | None:
    """What a block runs as, or None when it is not a runnable example."""
    if settings is not None and settings.get("skip"):
        return None
    if settings is not None and settings.get("shell"):
        return Kind.SHELL
    if (
        fence.lang == "cuda"
        and fence.marker != "nvcc: skip"
        and (settings is not None or _CUDA_MAIN.search(fence.code))
    ):
        return Kind.CUDA
    if fence.lang == "python" and (settings is not None or _GPU_PYTHON.search(fence.code)):
        return Kind.PYTHON
    return None


def _shell_commands(page: Page, fence: Fence) -> tuple[list[str], list[Problem]]:
    """The `$ command` lines of a console block (a trailing backslash continues a command)."""
    commands: list[str] = []
    problems: list[Problem] = []
    continuing = False
    for offset, line in enumerate(fence.code.split("\n"), start=1):
        if continuing:
            commands[-1] += "\n" + line
        elif line.startswith("$ "):
            commands.append(line[2:])
        elif line.strip():
            problems.append(
                page.problem(
                    fence.line + offset,
                    "a runnable console block holds only '$ command' lines: "
                    "its output goes in the ```text block under it, written by `gpu-glossary examples apply`",
                )
            )
        continuing = line.endswith("\\")
    if not commands and not problems:
        problems.append(page.problem(fence.line, "a runnable console block has no '$ command' line"))
    return commands, problems


def page_examples(page: Page) -> tuple[list[Example], list[Problem]]:
    """Every runnable block of a page, in page order, and the mistakes in their markers."""
    examples: list[Example] = []
    problems: list[Problem] = []
    pending: list[tuple[Fence, Kind, dict]] = []
    for fence in page.fences():
        parsed = parse_marker(fence.marker)
        settings = parsed[0] if parsed else None
        if parsed:
            problems.extend(page.problem(fence.line - 1, message) for message in parsed[1])
        kind = _kind(fence, settings)
        if kind is None:
            if settings and not settings.get("skip"):
                problems.append(
                    page.problem(
                        fence.line - 1,
                        f"an example marker on a ```{fence.lang} block: examples are "
                        "```cuda, ```python, or ```console with 'shell'",
                    )
                )
            continue
        pending.append((fence, kind, settings or {}))
    names: dict[str, int] = {}
    programs: list[Example] = []
    for ordinal, (fence, kind, settings) in enumerate(pending, start=1):
        name = settings.get("name") or f"example-{ordinal}"
        if name in names:
            problems.append(
                page.problem(
                    fence.line - 1, f"two examples named '{name}' on this page (the other at line {names[name]})"
                )
            )
            continue
        names[name] = fence.line
        commands: list[str] = []
        if kind == Kind.SHELL:
            commands, shell_problems = _shell_commands(page, fence)
            problems.extend(shell_problems)
        example = Example(
            page=page,
            fence=fence,
            kind=kind,
            name=name,
            flags=tuple(shlex.split(settings.get("flags", ""))),
            args=tuple(shlex.split(settings.get("args", ""))),
            timeout=float(settings.get("timeout", DEFAULT_TIMEOUT)),
            exit_code=int(settings.get("exit", 0)),
            commands=tuple(commands),
            gpus=settings.get("gpus", 1),
            launch=settings.get("launch", "torchrun"),
            ignore=settings.get("ignore", ""),
        )
        # Comments do not count: a translated page's comments differ, and so may a comment-only edit.
        # What comments say is not the program, but where its lines are is (compute-sanitizer prints line numbers).
        code = blank_comments(fence.code, fence.lang)
        unsafe = unsafe_call(code)
        if unsafe:
            problems.append(
                page.problem(
                    fence.line,
                    f"example {example.id} has `{unsafe}`: examples may not change a GPU's settings or NVLink "
                    "multicast (the GPU machines are shared; CONTRIBUTING.md, Runnable examples)",
                )
            )
        example = replace(example, hash=_hash(example, code, programs))
        examples.append(example)
        if kind != Kind.SHELL:
            programs.append(example)
    return examples, problems


def _hash(example: Example, code: str, programs: list[Example]) -> str:
    """What a recorded run depends on: the code without comments, the flags, arguments and
    expected exit code, the launch and, for a console session, the page's programs it runs."""
    depends = [p.hash for p in programs] if example.kind == Kind.SHELL else []
    launch = [f"gpus={example.gpus}", f"launch={example.launch}"] if example.gpus > 1 else []
    flags, args = shlex.join(example.flags), shlex.join(example.args)
    return _digest(example.kind, code, flags, args, str(example.exit_code), *launch, *depends)


def all_examples(pages: Iterable[Page]) -> tuple[list[Example], list[Problem]]:
    """The runnable blocks of many pages (the English ones are the source of truth)."""
    examples: list[Example] = []
    problems: list[Problem] = []
    for page in pages:
        found, wrong = page_examples(page)
        examples.extend(found)
        problems.extend(wrong)
    return examples, problems


@dataclass(frozen=True)
class OutputBlock:
    """One ```text block under an example: `label` is its tab's device, None for a plain block."""

    fence: Fence
    label: str | None = None
    label_line: int = 0  # the `=== "…"` line of a tab


@dataclass(frozen=True)
class Output:
    """What stands under an example: one plain block, or one tab per device; lines 1-based in the page."""

    blocks: tuple[OutputBlock, ...]
    first_line: int
    last_line: int

    @property
    def tabbed(self) -> bool:
        return self.blocks[0].label is not None


_TAB = re.compile(r'^(?P<indent>[ \t]*)===[+!]?[ \t]+"(?P<label>.*)"[ \t]*$')


def _blank(lines: list[str]) -> bool:
    return all(not line.strip() for line in lines)


def find_output(lines: list[str], example: Example, fences: list[Fence]) -> Output | None:
    """The output under an example, if any: a ```text block right under it (only blank lines
    between), or a run of content tabs (`=== "device"`) each holding one indented ```text block.
    `lines` is the page's text split into lines and `fences` its `page.fences()`, both read once
    per page by the caller."""
    after = fences[fences.index(example.fence) + 1 :]
    if after and after[0].lang == OUTPUT_LANG and _blank(lines[example.fence.end_line : after[0].line - 1]):
        return Output((OutputBlock(after[0]),), after[0].line, after[0].end_line)
    blocks: list[OutputBlock] = []
    cursor = example.fence.end_line  # index of the first line after the block above
    for fence in after:
        label_index = next((i for i in range(cursor, len(lines)) if lines[i].strip()), len(lines))
        tab = _TAB.match(lines[label_index]) if label_index < len(lines) else None
        if (
            tab is None
            or tab.group("indent") != example.fence.indent
            or fence.lang != OUTPUT_LANG
            or len(fence.indent) <= len(example.fence.indent)
            or not _blank(lines[label_index + 1 : fence.line - 1])
        ):
            break
        blocks.append(OutputBlock(fence, tab.group("label"), label_index + 1))
        cursor = fence.end_line
    if not blocks:
        return None
    return Output(tuple(blocks), blocks[0].label_line, blocks[-1].fence.end_line)


def page_lines(page: Page) -> list[str]:
    return page.text.replace("\r\n", "\n").split("\n")
