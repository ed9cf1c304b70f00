"""A page as sections and blocks: the units a translation is updated by.

A page body is cut before every heading outside code (sections), and each section before
every line that follows a blank line outside code (blocks: a paragraph, list item, table,
code block or heading); joining the pieces gives the body back. A Chinese page records a
short hash of each block of the English page it was translated from, grouped by section
(`section_hashes` in its front matter: sections separated by spaces, blocks by dots).

When the English page changes, unchanged sections are kept byte for byte. In a changed
section, only the blocks whose hash changed are sent, each with its old Chinese as
reference, and the other blocks are kept, where the old Chinese section has the same
blocks (as many, and each unchanged one of the same kind, with the same code and as many
links); otherwise the whole section is sent with its old Chinese. A stale page without
section hashes (translated before they existed) is sent whole, each section with the old
Chinese of the same heading as reference.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import accumulate

from gpu_glossary.page import Page, front_matter_block

SECTION_HASHES_KEY = "section_hashes"
TRANSLATED_KEYS = ("title", "summary", "aliases")
_MARKER = re.compile(r"#{1,6}(?= )|`{3,}|~{3,}|\||[-*+](?= )|\d+[.)](?= )|!!!|\?\?\?|>|<!--")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_HEADING_ID = re.compile(r"\{[^}]*#([\w:.-]+)[^}]*\}\s*$")


def translatable_meta(page: Page) -> dict:
    """The front matter values a translation changes (the rest is copied from English)."""
    return {key: page.meta[key] for key in TRANSLATED_KEYS if key in page.meta}


def _cuts(page: Page) -> tuple[set[int], list[int]]:
    """Body line indices where sections start, and where blocks start (a superset)."""
    sections = {0, *(heading.line - page.body_line for heading in page.headings())}
    blocks = set(sections)
    previous_blank = False
    for index, (_, line, in_code) in enumerate(page.body_lines()):
        if line.strip() and previous_blank:
            blocks.add(index)
        previous_blank = not line.strip() and not in_code
    return sections, sorted(blocks)


def split_blocks(page: Page) -> list[list[str]]:
    """The body's blocks, grouped by section; joining them all gives the body back."""
    lines = page.body.split("\n")
    sections, starts = _cuts(page)
    grouped: list[list[str]] = []
    for a, b in zip(starts, starts[1:] + [len(lines)], strict=True):
        block = "\n".join(lines[a:b]) + ("\n" if b < len(lines) else "")
        if a in sections:
            grouped.append([])
        grouped[-1].append(block)
    return grouped


def split_sections(page: Page) -> list[str]:
    """The body cut before each heading outside code; joining the pieces gives the body back."""
    return ["".join(blocks) for blocks in split_blocks(page)]


def section_hashes(page: Page) -> list[list[str]]:
    """A short hash of each block of an English page, by section; the first also covers the
    title, summary and aliases. Blank lines around a block do not count."""
    meta = front_matter_block(translatable_meta(page))
    return [
        [_short_hash((meta if s == 0 and b == 0 else "") + block.strip()) for b, block in enumerate(blocks)]
        for s, blocks in enumerate(split_blocks(page))
    ]


def format_hashes(hashes: list[list[str]]) -> str:
    return " ".join(".".join(blocks) for blocks in hashes)


def recorded_hashes(page: Page) -> list[list[str]]:
    """The block hashes by section a Chinese page records, or [] if it records none."""
    value = page.meta.get(SECTION_HASHES_KEY)
    return [group.split(".") for group in str(value).split()] if value else []


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:6]


def _heading_ids(page: Page) -> list[str | None]:
    """The explicit heading id opening each section (None for the intro or a heading without one)."""
    by_line = {heading.line - page.body_line: heading for heading in page.headings()}
    starts = sorted(_cuts(page)[0])
    return [by_line[start].id if start in by_line and by_line[start].explicit_id else None for start in starts]


def same_sections(translation: Page, english: Page) -> bool:
    """Whether a translation's sections line up one to one with the English page's."""
    return _heading_ids(translation) == _heading_ids(english)


def _shape(block: str) -> tuple:
    """What a block shares with its translation: kind, indent, heading id, code, number of links."""
    first = block.lstrip("\n").split("\n", 1)[0]
    marker = _MARKER.match(first.lstrip())
    heading_id = _HEADING_ID.search(first)
    code = sorted(m.group(0) for m in _INLINE_CODE.finditer(block))
    return (
        first[:1] in " \t",
        marker.group(0) if marker else "",
        heading_id.group(1) if heading_id else "",
        code,
        block.count("]("),
        block.count("```"),
    )


@dataclass
class Part:
    """A piece of the new page (a section or a block): kept as its old Chinese, or English to translate."""

    english: str
    kept: str | None = None  # the old Chinese, when the English is unchanged
    reference: str | None = None  # the old Chinese of changed English, to update from

    @property
    def to_translate(self) -> bool:
        return self.kept is None


def plan_sections(english: Page, previous: Page | None, whole: bool = False) -> list[Part]:
    """What to keep and what to send for a page: `previous` is the old translation to update, if
    any; `whole` sends every section with its old Chinese, whatever the hashes say."""
    new = split_blocks(english)
    if previous is None or previous.problems:
        return [Part("".join(blocks)) for blocks in new]
    old = split_blocks(previous)
    recorded = recorded_hashes(previous)
    if recorded and len(recorded) == len(old) and not whole:
        return _plan_by_hashes(english, new, previous, old, recorded)
    return _plan_by_headings(english, new, previous, old)


def _plan_by_hashes(
    english: Page, new: list[list[str]], previous: Page, old: list[list[str]], recorded: list[list[str]]
) -> list[Part]:
    """Keep the unchanged sections; update each changed one from the old section it replaced."""
    hashes = section_hashes(english)
    new_ids, old_ids = _heading_ids(english), _heading_ids(previous)
    parts: list[Part] = []
    matcher = SequenceMatcher(None, [tuple(g) for g in recorded], [tuple(g) for g in hashes], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                same = old_ids[i] == new_ids[j]  # a Chinese page restructured by hand is not trusted
                parts.append(
                    Part(
                        "".join(new[j]),
                        kept="".join(old[i]) if same else None,
                        reference=None if same else "".join(old[i]),
                    )
                )
        elif tag == "replace" and i2 - i1 == j2 - j1:
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                parts += _update_section(old[i], recorded[i], new[j], hashes[j])
        elif tag in ("replace", "insert"):
            reference = "".join("".join(blocks) for blocks in old[i1:i2]) or None
            parts += [Part("".join(new[j]), reference=reference) for j in range(j1, j2)]
    return parts


def _update_section(old: list[str], recorded: list[str], new: list[str], hashes: list[str]) -> list[Part]:
    """The changed blocks of one section to send and the others to keep, if the old Chinese
    blocks line up with the English ones; else the whole section, with its old Chinese."""
    whole = [Part("".join(new), reference="".join(old))]
    if len(old) != len(recorded):
        return whole
    opcodes = SequenceMatcher(None, recorded, hashes, autojunk=False).get_opcodes()
    kept = [
        (i, j)
        for tag, i1, i2, j1, j2 in opcodes
        if tag == "equal"
        for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
    ]
    if not kept or any(_shape(old[i]) != _shape(new[j]) for i, j in kept):
        return whole
    parts: list[Part] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            parts += [Part(new[j], kept=old[i]) for i, j in zip(range(i1, i2), range(j1, j2), strict=True)]
        elif tag == "replace" and i2 - i1 == j2 - j1:
            parts += [Part(new[j], reference=old[i]) for i, j in zip(range(i1, i2), range(j1, j2), strict=True)]
        elif tag in ("replace", "insert"):
            parts += [Part(new[j], reference="".join(old[i1:i2]) or None) for j in range(j1, j2)]
    return parts


def _plan_by_headings(english: Page, new: list[list[str]], previous: Page, old: list[list[str]]) -> list[Part]:
    """Send every section, each with the old Chinese section of the same heading id as reference."""
    new_ids, old_ids = _heading_ids(english), _heading_ids(previous)
    old_sections = ["".join(blocks) for blocks in old]
    by_id = {heading_id: text for heading_id, text in zip(old_ids, old_sections, strict=True) if heading_id}
    parts = []
    for index, (blocks, heading_id) in enumerate(zip(new, new_ids, strict=True)):
        if heading_id:
            reference = by_id.get(heading_id)
        elif (index == 0 or len(old) == len(new)) and index < len(old) and not old_ids[index]:
            reference = old_sections[index]
        else:
            reference = None
        parts.append(Part("".join(blocks), reference=reference))
    return parts


def balanced_groups(weights: list[int], cap: int) -> list[list[int]]:
    """Consecutive groups of indices: the fewest whose weights sum to at most `cap` (an item
    heavier than `cap` stands alone), made as even as possible, so no group is much longer
    than another: the smallest largest group that needs no more groups."""
    if not weights:
        return []

    def greedy(limit: int) -> list[list[int]]:
        groups: list[list[int]] = []
        total = 0
        for index, weight in enumerate(weights):
            if groups and total + weight <= limit:
                groups[-1].append(index)
                total += weight
            else:
                groups.append([index])
                total = weight
        return groups

    count = len(greedy(cap))
    prefix = list(accumulate(weights, initial=0))
    limits = sorted({prefix[b] - prefix[a] for a in range(len(weights)) for b in range(a + 1, len(weights) + 1)})
    low, high = 0, len(limits) - 1  # the group count only falls as the limit grows: bisect
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if len(greedy(limits[middle])) <= count else (middle + 1, high)
    return greedy(limits[low])
