"""Pages against the recorded runs: each runnable block's output must be what its program printed,
one block for one device, one tab per device for several."""

from __future__ import annotations

from gpu_glossary.examples.blocks import Example, Output, find_output, normalize_output, page_examples, page_lines
from gpu_glossary.examples.runs import RUNS_FILE, Record, Runs
from gpu_glossary.glossary import SOURCE_LANG
from gpu_glossary.page import Fence, Page, Problem

APPLY = "`gpu-glossary examples apply` writes the recorded output"


def check_examples(pages: list[Page], runs: Runs) -> list[Problem]:
    """Each page's runnable blocks against the recorded runs; the checker calls this."""
    problems = list(runs.problems)
    seen: set[str] = set()
    for page in pages:
        examples, marker_problems = page_examples(page)
        problems.extend(marker_problems)
        lines, fences = page_lines(page), page.fences()
        for example in examples:
            seen.add(example.id)
            records = runs.current(example)
            if not records:
                problems.append(
                    page.problem(
                        example.fence.line,
                        f"example changed since it last ran on a GPU ({example.id}): "
                        f"run `gpu-glossary examples run '{example.id}'` on a CUDA machine",
                        "warning",
                    )
                )
                continue
            problems.extend(_check_output(page, example, records, find_output(lines, example, fences)))
            if page.lang == SOURCE_LANG:  # once, not once per language
                problems.extend(_older_runs(page, example, runs))
    for example_id in sorted(set(runs.records) - seen):
        problems.append(
            Problem(
                RUNS_FILE,
                runs.lines.get(example_id, 1),
                "warning",
                f"recorded runs of '{example_id}' belong to no example on any page: "
                "`gpu-glossary examples prune` removes them",
            )
        )
    return problems


def _check_output(page: Page, example: Example, records: list[Record], shown: Output | None) -> list[Problem]:
    if shown is None:
        return [page.problem(example.fence.end_line, f"no output block under example {example.id}: {APPLY} there")]
    devices = [r.device for r in records]
    if len(records) == 1 and not shown.tabbed:
        return _compare(page, example, records[0], shown.blocks[0].fence)
    if len(records) == 1 or not shown.tabbed:
        what = f"{len(shown.blocks)} output tabs" if shown.tabbed else "one output block"
        return [
            page.problem(
                shown.first_line,
                f"example {example.id} shows {what}, but has recorded runs on {_names(devices)}: "
                f"{APPLY} ({'one tab per device' if len(records) > 1 else 'one block'})",
            )
        ]
    problems = []
    by_device = {r.device: r for r in records}
    labels = [block.label for block in shown.blocks]
    for block in shown.blocks:
        record = by_device.get(block.label or "")
        if record is None:
            problems.append(
                page.problem(
                    block.label_line,
                    f"output tab '{block.label}' under example {example.id} has no recorded run of this code "
                    f"on {block.label} (runs: {_names(devices)}): {APPLY}",
                )
            )
        else:
            problems.extend(_compare(page, example, record, block.fence))
    missing = [device for device in devices if device not in labels]
    if missing:
        problems.append(
            page.problem(
                shown.first_line,
                f"no output tab for {_names(missing)} under example {example.id}: {APPLY} in a tab for each device",
            )
        )
    elif not problems and labels != devices:
        problems.append(
            page.problem(shown.first_line, f"output tabs under example {example.id} are out of order: {APPLY}")
        )
    return problems


def _compare(page: Page, example: Example, record: Record, fence: Fence) -> list[Problem]:
    if normalize_output(fence.code) == record.stdout:
        return []
    return [
        page.problem(
            fence.line,
            f"output differs from the recorded run of {example.id} on {record.device} "
            f"({record.driver and f'driver {record.driver}, '}{record.date}): "
            f"{_first_difference(fence.code, record.stdout)}; `gpu-glossary examples apply` restores it",
        )
    ]


def _older_runs(page: Page, example: Example, runs: Runs) -> list[Problem]:
    """Devices whose run is of earlier code, while others have run the current code."""
    return [
        page.problem(
            example.fence.line,
            f"the run of {example.id} on {record.device} is of earlier code (its page shows the other devices' "
            f"runs): run it again there, or `gpu-glossary examples prune` removes it",
            "warning",
        )
        for record in runs.older(example)
    ]


def _names(devices: list[str]) -> str:
    return ", ".join(devices)


def _first_difference(shown: str, recorded: str) -> str:
    shown_lines, recorded_lines = normalize_output(shown).split("\n"), recorded.split("\n")
    for number, (a, b) in enumerate(zip(shown_lines, recorded_lines, strict=False), start=1):
        if a != b:
            return f"output line {number} is {a!r}, the run printed {b!r}"
    return f"the page shows {len(shown_lines)} line(s), the run printed {len(recorded_lines)}"
