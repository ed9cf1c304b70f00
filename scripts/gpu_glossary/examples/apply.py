"""Writing recorded outputs into the pages of both languages (`gpu-glossary examples apply`)."""

from __future__ import annotations

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.examples.blocks import OUTPUT_LANG, TAB_INDENT, find_output, page_examples, page_lines
from gpu_glossary.examples.runs import Record, Runs
from gpu_glossary.glossary import LANGUAGES, SOURCE_LANG, Glossary
from gpu_glossary.page import SOURCE_HASH_KEY, Page, parse_page, source_hash, with_front_matter
from gpu_glossary.translate.sections import SECTION_HASHES_KEY, format_hashes, section_hashes


def _text_block(stdout: str, indent: str) -> list[str]:
    fence = "```"
    while fence in stdout:
        fence += "`"
    return [indent + fence + OUTPUT_LANG, *[(indent + line).rstrip() for line in stdout.split("\n")], indent + fence]


def output_lines(records: list[Record], indent: str) -> list[str]:
    """The output under an example: one ```text block for one device; for several, a content
    tab per device (`=== "NVIDIA H200"`), each holding its device's block."""
    if len(records) == 1:
        return _text_block(records[0].stdout, indent)
    lines: list[str] = []
    for record in records:
        if lines:
            lines.append("")
        lines += [f'{indent}=== "{record.device}"', "", *_text_block(record.stdout, indent + TAB_INDENT)]
    return lines


def with_outputs(page: Page, runs: Runs) -> str:
    """The page's text with each current example's output holding its recorded runs."""
    lines = page_lines(page)
    examples, _ = page_examples(page)
    fences = page.fences()
    edits = []  # (first line index, last line index exclusive, new lines)
    for example in examples:
        records = runs.current(example)
        if not records:
            continue
        block = output_lines(records, example.fence.indent)
        shown = find_output(lines, example, fences)
        if shown is not None:
            edits.append((shown.first_line - 1, shown.last_line, block))
        else:
            edits.append((example.fence.end_line, example.fence.end_line, ["", *block]))
    for first, last, block in sorted(edits, reverse=True):
        lines[first:last] = block
    return "\n".join(lines)


def write_outputs(glossary: Glossary, runs: Runs) -> list[str]:
    """Write recorded outputs into every page of every language; a translation that was current
    stays current (the outputs are the same in both languages, so its hash is renewed)."""
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
