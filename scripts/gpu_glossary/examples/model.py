"""Runnable examples: which code blocks are complete programs, what their recorded runs say,
and whether each page shows the output its program really printed.

A block is runnable when it is a complete program: a ```cuda block with `main`, a
```python block that imports torch, triton or cupy, or any block marked with an
`<!-- example … -->` comment on the line above its fence. Its output block is the
```text fence right under it (only blank lines between). Runs happen on a GPU
(`examples.runner`) and land in one file, `glossary/runs.yml`; everything here works
without a GPU, so CI can check that code and shown output have not drifted apart.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.code_comments import blank_comments
from gpu_glossary.fast_yaml import compose_and_load
from gpu_glossary.page import SOURCE_HASH_KEY, Fence, Page, Problem, parse_page, source_hash, with_front_matter
from gpu_glossary.translate.sections import SECTION_HASHES_KEY, format_hashes, section_hashes

RUNS_FILE = "glossary/runs.yml"
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


@dataclass(frozen=True)
class Example:
    """One runnable block of one page."""

    page: Page
    fence: Fence
    kind: str  # "cuda", "python" or "shell"
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
        return {"cuda": f"{self.name}.cu", "python": f"{self.name}.py"}.get(self.kind, "")

    @property
    def needs_gpu(self) -> bool:
        return self.kind != "python" or bool(_GPU_PYTHON.search(self.fence.code))

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
        if self.kind != "cuda":
            return []
        libraries = [f for f in self.nvcc_flags() if _is_library(f)]  # after the source, where the linker needs them
        return ["nvcc", *self.compile_flags(), self.source_name, "-o", self.name, *libraries]

    def run_command(self, python: str = "python3") -> list[str]:
        if self.kind == "cuda":
            return [f"./{self.name}", *self.args]
        if self.kind == "python":
            return [python, self.source_name, *self.args]
        return ["bash", "-c", "\n".join(self.commands)]

    def describe(self) -> str:
        """The build and run commands as a reader would type them."""
        run = shlex.join(self.run_command())
        if self.kind == "cuda":
            return f"{shlex.join(self.build_command())} && {run}"
        if self.kind == "shell":
            return " ; ".join(self.commands)
        return run


@dataclass
class Record:
    """A recorded run of one example, as `glossary/runs.yml` stores it."""

    hash: str
    command: str
    device: str
    compute_capability: str
    driver: str
    cuda: str
    date: str
    stdout: str
    seconds: float = 0.0

    FIELDS = ("hash", "command", "device", "compute_capability", "driver", "cuda", "date", "seconds", "stdout")

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.FIELDS}

    def provenance(self) -> str:
        return f"{self.device} · driver {self.driver or 'n/a'} · CUDA {self.cuda or 'n/a'} · {self.date}"


@dataclass
class Runs:
    """Every recorded run, by example id (`perf/memory-coalescing.md#coalescing`)."""

    path: Path
    records: dict[str, Record] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def current(self, example: Example) -> Record | None:
        """The recorded run of exactly this code, or None when it has changed or never ran."""
        record = self.records.get(example.id)
        return record if record is not None and record.hash == example.hash else None


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


def _kind(fence: Fence, settings: dict | None) -> str | None:
    """What a block runs as, or None when it is not a runnable example."""
    if settings is not None and settings.get("skip"):
        return None
    if settings is not None and settings.get("shell"):
        return "shell"
    if (
        fence.lang == "cuda"
        and fence.marker != "nvcc: skip"
        and (settings is not None or _CUDA_MAIN.search(fence.code))
    ):
        return "cuda"
    if fence.lang == "python" and (settings is not None or _GPU_PYTHON.search(fence.code)):
        return "python"
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
    pending: list[tuple[Fence, str, dict]] = []
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
        if kind == "shell":
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
        depends = [p.hash for p in programs] if kind == "shell" else []
        # What the comments say is not part of the program: a translated comment keeps its record.
        code = blank_comments(fence.code, fence.lang)
        digest = _digest(
            kind, code, shlex.join(example.flags), shlex.join(example.args), str(example.exit_code), *depends
        )
        example = Example(**{**example.__dict__, "hash": digest})
        examples.append(example)
        if kind != "shell":
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


def output_fence(page: Page, example: Example) -> Fence | None:
    """The ```text block right under an example (only blank lines between), if any."""
    fences = page.fences()
    index = fences.index(example.fence)
    if index + 1 >= len(fences):
        return None
    after = fences[index + 1]
    if after.lang != OUTPUT_LANG:
        return None
    lines = page.text.replace("\r\n", "\n").split("\n")
    between = lines[example.fence.end_line : after.line - 1]
    return after if all(not line.strip() for line in between) else None


# -- the recorded-runs file ---------------------------------------------------------


class _RunsDumper(yaml.SafeDumper):
    """Multi-line text as `|` blocks, so a diff of runs.yml reads like the programs' output."""


def _represent_text(dumper, value: str):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_RunsDumper.add_representer(str, _represent_text)
RUNS_HEADER = (
    "# Recorded runs of the glossary's runnable examples, by page#name.\n"
    "# Written by `gpu-glossary examples run` on a GPU machine; `gpu-glossary check` compares\n"
    "# each page's output block with the run recorded for its code's hash. Do not edit by hand.\n"
)


def load_runs(root: Path) -> Runs:
    """Read `glossary/runs.yml`; a missing file is an empty record, a broken one a located problem."""
    path = root / RUNS_FILE
    runs = Runs(path=path)
    if not path.is_file():
        return runs
    display = RUNS_FILE
    try:
        text = path.read_text(encoding="utf-8")
        node, data = compose_and_load(text)
        data = data or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        runs.problems.append(
            Problem(display, 1 + mark.line if mark else 1, "error", f"recorded runs do not parse: {exc}")
        )
        return runs
    if not isinstance(data, dict):
        runs.problems.append(Problem(display, 1, "error", "recorded runs must be a mapping of example id to run"))
        return runs
    if node is not None and isinstance(node, yaml.MappingNode):
        runs.lines = {key.value: key.start_mark.line + 1 for key, _ in node.value}
    for example_id, entry in data.items():
        line = runs.lines.get(example_id, 1)
        required = [name for name in Record.FIELDS if name != "seconds"]
        missing = [name for name in required if name not in entry] if isinstance(entry, dict) else required
        if missing:
            runs.problems.append(
                Problem(display, line, "error", f"recorded run '{example_id}' lacks {', '.join(missing)}")
            )
            continue
        values = {name: str(entry[name]) for name in required}
        runs.records[str(example_id)] = Record(**values, seconds=float(entry.get("seconds") or 0))
    return runs


def save_runs(runs: Runs) -> None:
    """Write every record, sorted by id, atomically (an interrupted write keeps the old file)."""
    data = {example_id: runs.records[example_id].as_dict() for example_id in sorted(runs.records)}
    text = RUNS_HEADER + yaml.dump(data, Dumper=_RunsDumper, allow_unicode=True, sort_keys=False, width=1000)
    runs.path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(runs.path, text)


# -- checking pages against the records -----------------------------------------


def check_examples(pages: list[Page], runs: Runs) -> list[Problem]:
    """Each page's runnable blocks against the recorded runs; the checker calls this."""
    problems = list(runs.problems)
    seen: set[str] = set()
    for page in pages:
        examples, marker_problems = page_examples(page)
        problems.extend(marker_problems)
        for example in examples:
            seen.add(example.id)
            record = runs.current(example)
            shown = output_fence(page, example)
            if record is None:
                problems.append(
                    page.problem(
                        example.fence.line,
                        f"example changed since it last ran on a GPU ({example.id}): "
                        f"run `gpu-glossary examples run '{example.id}'` on a CUDA machine",
                        "warning",
                    )
                )
                continue
            if shown is None:
                problems.append(
                    page.problem(
                        example.fence.end_line,
                        f"no output block under example {example.id}: "
                        "`gpu-glossary examples apply` writes the recorded output there",
                    )
                )
            elif normalize_output(shown.code) != record.stdout:
                problems.append(
                    page.problem(
                        shown.line,
                        f"output differs from the recorded run of {example.id} "
                        f"({record.provenance()}): {_first_difference(shown.code, record.stdout)}; "
                        "`gpu-glossary examples apply` restores it",
                    )
                )
    for example_id in sorted(set(runs.records) - seen):
        problems.append(
            Problem(
                RUNS_FILE,
                runs.lines.get(example_id, 1),
                "warning",
                f"recorded run '{example_id}' belongs to no example on any page: `gpu-glossary examples prune` removes it",
            )
        )
    return problems


def _first_difference(shown: str, recorded: str) -> str:
    shown_lines, recorded_lines = normalize_output(shown).split("\n"), recorded.split("\n")
    for number, (a, b) in enumerate(zip(shown_lines, recorded_lines, strict=False), start=1):
        if a != b:
            return f"output line {number} is {a!r}, the run printed {b!r}"
    return f"the page shows {len(shown_lines)} line(s), the run printed {len(recorded_lines)}"


# -- writing recorded output into pages ---------------------------------------------


def with_outputs(page: Page, runs: Runs) -> str:
    """The page's text with each current example's output block holding its recorded output."""
    lines = page.text.replace("\r\n", "\n").split("\n")
    examples, _ = page_examples(page)
    edits = []  # (first line index, last line index exclusive, new lines)
    for example in examples:
        record = runs.current(example)
        if record is None:
            continue
        indent = example.fence.indent
        fence = "```"
        while fence in record.stdout:
            fence += "`"
        block = [
            indent + fence + OUTPUT_LANG,
            *[(indent + line).rstrip() for line in record.stdout.split("\n")],
            indent + fence,
        ]
        shown = output_fence(page, example)
        if shown is not None:
            edits.append((shown.line - 1, shown.end_line, block))
        else:
            edits.append((example.fence.end_line, example.fence.end_line, ["", *block]))
    for first, last, block in sorted(edits, reverse=True):
        lines[first:last] = block
    return "\n".join(lines)


def write_outputs(glossary, runs: Runs) -> list[str]:
    """Write recorded outputs into every page of every language; a translation that was current
    stays current (the outputs are the same in both languages, so its hash is renewed)."""
    from gpu_glossary.glossary import LANGUAGES, SOURCE_LANG

    current = {
        (lang, rel)
        for lang in LANGUAGES
        if lang != SOURCE_LANG
        for rel in glossary.pages[lang]
        if glossary.translation_status(lang, rel) == "current"
    }
    changed: list[str] = []
    new_english: dict[str, Page] = {}
    for lang in (SOURCE_LANG, *[other for other in LANGUAGES if other != SOURCE_LANG]):
        for rel, page in glossary.pages[lang].items():
            if page.problems:
                continue
            text = with_outputs(page, runs)
            if lang == SOURCE_LANG:
                new_english[rel] = parse_page(text, page.path, page.display_path, rel, lang)
            elif (lang, rel) in current and rel in new_english:
                text = renew_hashes(text, page, new_english[rel])
            if text != page.text.replace("\r\n", "\n"):
                write_text_atomic(page.path, text)
                glossary.pages[lang][rel] = parse_page(text, page.path, page.display_path, rel, lang)
                changed.append(page.display_path)
    return changed


def renew_hashes(text: str, translation: Page, english: Page) -> str:
    """A current translation's text with the hashes of the English page it still matches
    (its section hashes too, where it records them: the outputs changed alike in both)."""
    values = {SOURCE_HASH_KEY: source_hash(english.text)}
    if SECTION_HASHES_KEY in translation.meta:
        values[SECTION_HASHES_KEY] = format_hashes(section_hashes(english))
    return with_front_matter(text, values)


def with_provenance(page: Page, runs: Runs, words: dict) -> str:
    """The page body with a line naming the GPU, driver, CUDA and date under each recorded output.

    For the site only: the line is generated from runs.yml at build time, never typed in a page.
    """
    from html import escape

    lines = page.body.split("\n")
    examples, _ = page_examples(page)
    for example in reversed(examples):
        record = runs.current(example)
        shown = output_fence(page, example)
        if record is None or shown is None or normalize_output(shown.code) != record.stdout:
            continue
        label = escape(words["output_on"].format(device=record.device))
        parts = [f"<strong>{label}</strong>"]
        if record.driver:
            parts.append(escape(words["driver"].format(version=record.driver)))
        if record.cuda:
            parts.append(escape(f"CUDA {record.cuda}"))
        parts.append(f'<time datetime="{escape(record.date)}">{escape(record.date)}</time>')
        html = f'{shown.indent}<p class="gg-run">{" · ".join(parts)}</p>'
        at = shown.end_line - page.body_line + 1
        lines[at:at] = ["", html]
    return "\n".join(lines)
