"""The line under each recorded output on the site: the GPU(s), how they are linked, the driver,
CUDA version and date of its run, and how far its figures moved between runs where that is large.

The line is generated from runs.yml at build time, never typed in a page. It is a Markdown
paragraph with a class (attr_list), not raw HTML, so that it also renders inside a content tab,
where Markdown does not read indented raw HTML as HTML.
"""

from __future__ import annotations

import re
from html import escape

from gpu_glossary.examples.blocks import find_output, normalize_output, page_examples, page_lines
from gpu_glossary.examples.runs import DRIFT_LIMIT, Record, Runs, format_spread
from gpu_glossary.page import Page

WORDS = {
    "en": {
        "all_to_all": "NVLink {kinds} all-to-all",
        "nvlink": "NVLink {kinds}",
        "pcie": "PCIe ({kinds})",
        "mixed": "links {kinds}",
        "spread": "figures moved up to {spread} between runs",
    },
    "zh": {
        "all_to_all": "NVLink {kinds} 全互连",
        "nvlink": "NVLink {kinds}",
        "pcie": "PCIe（{kinds}）",
        "mixed": "互连 {kinds}",
        "spread": "各次运行间数值最多相差 {spread}",
    },
}
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]])")


def link_words(record: Record, lang: str) -> str:
    """'NVLink NV18 all-to-all' from the link kinds `nvidia-smi topo -m` showed between the GPUs."""
    words = WORDS.get(lang, WORDS["en"])
    kinds = [kind.strip() for kind in record.link.split(",") if kind.strip()]
    if not kinds:
        return ""
    joined = ", ".join(kinds)
    if all(kind.startswith("NV") for kind in kinds):
        key = "all_to_all" if len(kinds) == 1 and record.gpus > 2 else "nvlink"
    else:
        key = "pcie" if not any(kind.startswith("NV") for kind in kinds) else "mixed"
    return words[key].format(kinds=joined)


def provenance_line(record: Record, lang: str, strings: dict) -> str:
    """One run's line, as Markdown: `**Output on …** · … · <time>…</time>` with its class."""

    def text(value: str) -> str:
        return _MARKDOWN_SPECIAL.sub(r"\\\1", escape(value))

    words = WORDS.get(lang, WORDS["en"])
    parts = [f"<strong>{text(strings['output_on'].format(device=record.device))}</strong>"]
    if record.link:
        parts.append(text(link_words(record, lang)))
    if record.driver:
        parts.append(text(strings["driver"].format(version=record.driver)))
    if record.cuda:
        parts.append(text(f"CUDA {record.cuda}"))
    if record.spread is not None and record.spread > DRIFT_LIMIT:
        parts.append(text(words["spread"].format(spread=format_spread(record.spread))))
    parts.append(f'<time datetime="{escape(record.date)}">{escape(record.date)}</time>')
    return " · ".join(parts)


def with_provenance(page: Page, runs: Runs, strings: dict) -> str:
    """The page body with a provenance line under each output block (each tab's, too) that
    shows its recorded run."""
    lines = page.body.split("\n")
    text_lines = page_lines(page)
    fences = page.fences()
    inserts: list[tuple[int, list[str]]] = []
    for example in page_examples(page)[0]:
        records = {r.device: r for r in runs.current(example)}
        shown = find_output(text_lines, example, fences)
        if not records or shown is None:
            continue
        for block in shown.blocks:
            record = records.get(block.label) if block.label is not None else next(iter(records.values()))
            if len(records) > 1 and block.label is None:
                continue  # the check reports it: several runs, one block
            if record is None or normalize_output(block.fence.code) != record.stdout:
                continue
            indent = block.fence.indent
            line = provenance_line(record, page.lang, strings)
            inserts.append(
                (block.fence.end_line - page.body_line + 1, ["", indent + line, indent + "{: .gg-run }", ""])
            )
    for at, new in sorted(inserts, reverse=True):
        lines[at:at] = new
    return "\n".join(lines)
