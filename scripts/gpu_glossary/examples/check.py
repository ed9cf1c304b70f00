"""Pages against the recorded runs: each runnable block's output block must be what its program printed."""

from __future__ import annotations

from gpu_glossary.examples.blocks import normalize_output, output_fence, page_examples
from gpu_glossary.examples.runs import RUNS_FILE, Runs
from gpu_glossary.page import Page, Problem


def check_examples(pages: list[Page], runs: Runs) -> list[Problem]:
    """Each page's runnable blocks against the recorded runs; the checker calls this."""
    problems = list(runs.problems)
    seen: set[str] = set()
    for page in pages:
        examples, marker_problems = page_examples(page)
        fences = page.fences()
        problems.extend(marker_problems)
        for example in examples:
            seen.add(example.id)
            record = runs.current(example)
            shown = output_fence(page, example, fences)
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
