"""How much an example's output moved between two runs of the same code on the same device.

Two outputs are compared number by number once the values that are not measurements are set
aside (dates, times, process ids, temporary paths, addresses, and whatever the example's
`ignore=` marker names): the same text is *identical*; the same text around different
numbers has moved by the largest relative change of any one number; different text, or a
different count of numbers, has *changed shape*.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

_NOT_MEASUREMENTS = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"  # dates
    r"|\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b"  # times of day
    r"|\b(?:pid|PID)[ \t]*[=:#]?[ \t]*\d+"  # process ids
    r"|(?:/tmp|/var/tmp|/dev/shm|/var/folders)/\S*"  # temporary paths
    r"|\b0x[0-9a-fA-F]{6,}\b"  # addresses
    r"|\b(?:GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b"  # GPU UUIDs
)
# A number on its own, not the digits of a name (sm_90, H100, NV18): thousands separators allowed.
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")


class Verdict(StrEnum):
    IDENTICAL = "identical"
    MOVED = "numbers moved"
    SHAPE = "changed shape"


@dataclass(frozen=True)
class Drift:
    verdict: Verdict
    change: float = 0.0  # the largest relative change of any number (MOVED)
    where: str = ""  # the line of that change, or of the first difference in shape

    def __str__(self) -> str:
        if self.verdict == Verdict.MOVED:
            return f"largest change {self.change * 100:.1f}% ({self.where})"
        if self.verdict == Verdict.SHAPE:
            return f"changed shape ({self.where})"
        return "identical"


def _masked(text: str, ignore: str) -> str:
    text = _NOT_MEASUREMENTS.sub("<ignored>", text)
    return re.sub(ignore, "<ignored>", text) if ignore else text


def _shape(line: str) -> str:
    return " ".join(_NUMBER.sub("#", line).split())


def _value(number: str) -> float:
    return float(number.replace(",", ""))


def relative_change(a: float, b: float) -> float:
    """|a − b| over the smaller magnitude, so 100 → 120 and 120 → 100 are both 20%; from 0, 100%."""
    if a == b:
        return 0.0
    smaller = min(abs(a), abs(b))
    return abs(a - b) / (smaller if smaller else max(abs(a), abs(b)))


def compare(before: str, after: str, ignore: str = "") -> Drift:
    """The drift from one output to another (`ignore`: a regular expression for more values to set aside)."""
    old_lines, new_lines = _masked(before, ignore).split("\n"), _masked(after, ignore).split("\n")
    if old_lines == new_lines:
        return Drift(Verdict.IDENTICAL)
    if len(old_lines) != len(new_lines):
        return Drift(Verdict.SHAPE, where=f"{len(old_lines)} line(s), then {len(new_lines)}")
    worst = Drift(Verdict.IDENTICAL)
    for number, (old, new) in enumerate(zip(old_lines, new_lines, strict=True), start=1):
        old_numbers, new_numbers = _NUMBER.findall(old), _NUMBER.findall(new)
        if _shape(old) != _shape(new) or len(old_numbers) != len(new_numbers):
            return Drift(Verdict.SHAPE, where=f"line {number}: {old.strip()!r} → {new.strip()!r}")
        for a, b in zip(old_numbers, new_numbers, strict=True):
            change = relative_change(_value(a), _value(b))
            if change > worst.change:
                worst = Drift(Verdict.MOVED, change, f"line {number}: {a} → {b}")
    return worst


def spread(outputs: list[str], ignore: str = "") -> Drift:
    """The largest drift between any two of several outputs of the same code."""
    drifts = [compare(a, b, ignore) for i, a in enumerate(outputs) for b in outputs[i + 1 :]]
    shape = next((d for d in drifts if d.verdict == Verdict.SHAPE), None)
    return shape or max(drifts, key=lambda d: d.change, default=Drift(Verdict.IDENTICAL))
