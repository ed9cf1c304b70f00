"""The recorded runs of the runnable examples: one file, `glossary/runs.yml`, read and written here."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import yaml

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.examples.blocks import Example
from gpu_glossary.fast_yaml import compose_and_load
from gpu_glossary.page import Problem

RUNS_FILE = "glossary/runs.yml"


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

    def as_dict(self) -> dict:
        """The record as runs.yml holds it: the output last, where a long block reads best."""
        values = asdict(self)
        return {**{k: v for k, v in values.items() if k != "stdout"}, "stdout": values["stdout"]}

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
        required = [f.name for f in fields(Record) if f.name != "seconds"]
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
