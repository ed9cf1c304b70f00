"""The recorded runs of the runnable examples: one file, `glossary/runs.yml`, read and written here.

Runs are kept per example and, within it, per device: the same program run on an H100, an
H200, or on 2 and 4 H100s at once is one record each, and a page shows one output tab per
device whose record is of the page's code (its hash).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import yaml

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.examples.blocks import Example
from gpu_glossary.fast_yaml import compose_and_load
from gpu_glossary.page import Problem

RUNS_FILE = "glossary/runs.yml"
DRIFT_LIMIT = 0.10  # figures that move more than this between runs need a word on the page
_OPTIONAL = {"seconds", "gpus", "gpu_names", "link", "spread"}


@dataclass
class Record:
    """A recorded run of one example on one device, as `glossary/runs.yml` stores it."""

    hash: str
    command: str
    device: str  # its key in runs.yml: "NVIDIA H100 80GB HBM3", or "4× NVIDIA H100 80GB HBM3"
    compute_capability: str
    driver: str
    cuda: str
    date: str
    stdout: str
    seconds: float = 0.0
    gpus: int = 1
    gpu_names: tuple[str, ...] = ()  # every GPU's name, where it ran on several
    link: str = ""  # how those GPUs are linked: the kinds `nvidia-smi topo -m` shows between them ("NV18")
    spread: float | None = None  # the largest relative change of any figure between runs of this code here

    @property
    def order(self) -> tuple[int, str]:
        """Tabs go by GPU count, then by name."""
        return (self.gpus, self.device)

    def as_dict(self) -> dict:
        """The record as runs.yml holds it: no device (it is the key), empty fields left out,
        the output last, where a long block reads best."""
        values = {k: v for k, v in asdict(self).items() if k not in ("device", "stdout")}
        values["gpu_names"] = list(self.gpu_names)
        values["spread"] = format_spread(self.spread) if self.spread is not None else None
        kept = {k: v for k, v in values.items() if k not in _OPTIONAL or v not in (None, "", [])}
        return {**kept, "stdout": self.stdout}


def format_spread(spread: float) -> str:
    """0.314 → '31%'; below 1%, one decimal ('0.4%')."""
    percent = spread * 100
    return f"{percent:.0f}%" if percent >= 1 or percent == 0 else f"{percent:.1f}%"


def _parse_spread(value: object) -> float:
    text = str(value).strip()
    if not text.endswith("%"):
        raise ValueError(f"spread {text!r} is not a percentage like '12%'")
    return float(text[:-1]) / 100


@dataclass
class Runs:
    """Every recorded run, by example id (`perf/memory-coalescing.md#coalescing`), then device."""

    path: Path
    records: dict[str, dict[str, Record]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)  # line of each example id in runs.yml
    problems: list[Problem] = field(default_factory=list)

    def current(self, example: Example) -> list[Record]:
        """The runs of exactly this code, one per device, in tab order (empty when it changed or never ran)."""
        found = [r for r in self.records.get(example.id, {}).values() if r.hash == example.hash]
        return sorted(found, key=lambda r: r.order)

    def older(self, example: Example) -> list[Record]:
        """Runs of this example's earlier code, on devices where it has not run since."""
        return [r for r in self.records.get(example.id, {}).values() if r.hash != example.hash]

    def get(self, example_id: str, device: str) -> Record | None:
        return self.records.get(example_id, {}).get(device)

    def put(self, example_id: str, record: Record) -> None:
        self.records.setdefault(example_id, {})[record.device] = record

    def all(self) -> list[tuple[str, Record]]:
        return [(example_id, r) for example_id, by_device in self.records.items() for r in by_device.values()]


class _RunsDumper(yaml.SafeDumper):
    """Multi-line text as `|` blocks, so a diff of runs.yml reads like the programs' output."""


def _represent_text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_RunsDumper.add_representer(str, _represent_text)
RUNS_HEADER = (
    "# Recorded runs of the glossary's runnable examples, by page#name, then by device.\n"
    "# Written by `gpu-glossary examples run` on a GPU machine; `gpu-glossary check` compares\n"
    "# each page's output block (one tab per device) with the run recorded for its code's hash.\n"
    "# Do not edit by hand.\n"
)


def _record(device: str, entry: dict) -> Record:
    """A record from its runs.yml entry (KeyError, ValueError, TypeError on a broken one)."""
    required = [f.name for f in fields(Record) if f.name not in _OPTIONAL and f.name != "device"]
    values = {name: str(entry[name]) for name in required}
    return Record(
        device=device,
        **values,
        seconds=float(entry.get("seconds") or 0),
        gpus=int(entry.get("gpus") or 1),
        gpu_names=tuple(str(name) for name in entry.get("gpu_names") or ()),
        link=str(entry.get("link") or ""),
        spread=_parse_spread(entry["spread"]) if entry.get("spread") is not None else None,
    )


def load_runs(root: Path) -> Runs:
    """Read `glossary/runs.yml`; a missing file is an empty record, a broken one a located problem."""
    path = root / RUNS_FILE
    runs = Runs(path=path)
    if not path.is_file():
        return runs
    try:
        node, data = compose_and_load(path.read_text(encoding="utf-8"))
        data = data or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        runs.problems.append(
            Problem(RUNS_FILE, 1 + mark.line if mark else 1, "error", f"recorded runs do not parse: {exc}")
        )
        return runs
    if not isinstance(data, dict):
        runs.problems.append(Problem(RUNS_FILE, 1, "error", "recorded runs must be a mapping of example id to runs"))
        return runs
    device_lines: dict[tuple[str, str], int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            runs.lines[key.value] = key.start_mark.line + 1
            if isinstance(value, yaml.MappingNode):
                device_lines.update({(key.value, k.value): k.start_mark.line + 1 for k, _ in value.value})
    for example_id, by_device in data.items():
        example_id = str(example_id)
        line = runs.lines.get(example_id, 1)
        if not isinstance(by_device, dict) or "hash" in by_device:
            runs.problems.append(
                Problem(RUNS_FILE, line, "error", f"'{example_id}' must map each device's name to its run")
            )
            continue
        for device, entry in by_device.items():
            where = device_lines.get((example_id, str(device)), line)
            try:
                if not isinstance(entry, dict):
                    raise TypeError("not a mapping")
                runs.put(example_id, _record(str(device), entry))
            except KeyError as missing:
                message = f"recorded run of '{example_id}' on {device} lacks {missing.args[0]}"
                runs.problems.append(Problem(RUNS_FILE, where, "error", message))
            except (ValueError, TypeError) as exc:
                runs.problems.append(
                    Problem(RUNS_FILE, where, "error", f"recorded run of '{example_id}' on {device}: {exc}")
                )
    return runs


def save_runs(runs: Runs) -> None:
    """Write every record, sorted by id and device order, atomically (an interrupted write keeps the old file)."""
    data = {
        example_id: {r.device: r.as_dict() for r in sorted(runs.records[example_id].values(), key=lambda r: r.order)}
        for example_id in sorted(runs.records)
        if runs.records[example_id]
    }
    text = RUNS_HEADER + yaml.dump(data, Dumper=_RunsDumper, allow_unicode=True, sort_keys=False, width=1000)
    runs.path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(runs.path, text)
