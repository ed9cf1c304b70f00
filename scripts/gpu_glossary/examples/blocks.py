"""Runnable examples on a page: which code blocks are complete programs, their markers,
and the output block under each.

A block is runnable when it is a complete program: a ```cuda block with `main`, a
```python block that imports torch, triton or cupy, or any block marked with an
`<!-- example … -->` comment on the line above its fence. Its output block is the
```text fence right under it (only blank lines between). Runs happen on a GPU
(`examples.runner`) and land in one file, `glossary/runs.yml` (`examples.runs`);
everything here works without a GPU.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass, replace
from enum import StrEnum

from gpu_glossary.code_comments import without_comments
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
_KEYS = {"name", "flags", "args", "timeout", "exit"}
_WORDS = {"shell", "skip"}
OUTPUT_LANG = "text"


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
        return self.kind != Kind.PYTHON or bool(_GPU_PYTHON.search(self.fence.code))

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

    def run_command(self, python: str = "python3") -> list[str]:
        if self.kind == Kind.CUDA:
            return [f"./{self.name}", *self.args]
        if self.kind == Kind.PYTHON:
            return [python, self.source_name, *self.args]
        return ["bash", "-c", "\n".join(self.commands)]

    def describe(self) -> str:
        """The build and run commands as a reader would type them."""
        run = shlex.join(self.run_command())
        if self.kind == Kind.CUDA:
            return f"{shlex.join(self.build_command())} && {run}"
        if self.kind == Kind.SHELL:
            return " ; ".join(self.commands)
        return run


def _is_library(flag: str) -> bool:
    return flag.startswith("-l") and flag not in _NVCC_OPTIONS_STARTING_WITH_L


_TERMINAL_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def normalize_output(text: str) -> str:
    """Output as a page shows it: Unix line ends, no terminal colour or underline codes,
    no trailing spaces, no trailing blank lines."""
    text = _TERMINAL_ESCAPE.sub("", text)
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
    for key, convert in (("timeout", float), ("exit", int)):
        if key in settings:
            try:
                settings[key] = convert(settings[key])
            except ValueError:
                errors.append(f"example {key}={settings[key]!r} is not a number")
                del settings[key]
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
        )
        # A console session runs the page's programs, so their code is part of what it ran.
        depends = [p.hash for p in programs] if kind == Kind.SHELL else []
        # Comments do not count: a translated page's comments differ, and so may a comment-only edit.
        code = without_comments(fence.code + "\n", fence.lang)  # a comment on the last line needs its newline
        digest = _digest(
            kind, code, shlex.join(example.flags), shlex.join(example.args), str(example.exit_code), *depends
        )
        example = replace(example, hash=digest)
        examples.append(example)
        if kind != Kind.SHELL:
            programs.append(example)
    return examples, problems


def all_examples(pages) -> tuple[list[Example], list[Problem]]:
    """The runnable blocks of many pages (the English ones are the source of truth)."""
    examples: list[Example] = []
    problems: list[Problem] = []
    for page in pages:
        found, wrong = page_examples(page)
        examples.extend(found)
        problems.extend(wrong)
    return examples, problems


def output_fence(page: Page, example: Example, fences: list[Fence]) -> Fence | None:
    """The ```text block right under an example (only blank lines between), if any;
    `fences` is `page.fences()`, read once per page by the caller."""
    index = fences.index(example.fence)
    if index + 1 >= len(fences):
        return None
    after = fences[index + 1]
    if after.lang != OUTPUT_LANG:
        return None
    lines = page.text.replace("\r\n", "\n").split("\n")
    between = lines[example.fence.end_line : after.line - 1]
    return after if all(not line.strip() for line in between) else None
