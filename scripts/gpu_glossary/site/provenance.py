"""The line under each recorded output on the site: the GPU, driver, CUDA version and date of its run."""

from __future__ import annotations

from html import escape

from gpu_glossary.examples.blocks import normalize_output, output_fence, page_examples
from gpu_glossary.examples.runs import Runs
from gpu_glossary.page import Page


def with_provenance(page: Page, runs: Runs, words: dict) -> str:
    """The page body with a line naming the GPU, driver, CUDA and date under each recorded output.

    For the site only: the line is generated from runs.yml at build time, never typed in a page.
    """
    lines = page.body.split("\n")
    examples, _ = page_examples(page)
    fences = page.fences()
    for example in reversed(examples):
        record = runs.current(example)
        shown = output_fence(page, example, fences)
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
