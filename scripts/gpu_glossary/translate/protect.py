"""Protect what a translation must not touch, and put it back afterwards.

Before a page goes to the model, code blocks, inline code, math, URLs and link targets,
HTML tags and comments, heading ids, admonition markers and tab markers (with their titles:
the GPU an output ran on, which the examples check reads) become numbered placeholders
like `⟦P7⟧`. The model translates the prose around them; `restore` puts each piece back
and refuses a reply in which a placeholder is missing, repeated or invented.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from gpu_glossary.code_comments import comment_text_spans
from gpu_glossary.page import fence_lang
from gpu_glossary.translate.checks import ReplyRejected

PLACEHOLDER = re.compile(r"⟦P(\d+)⟧")

_FENCE_OPEN = re.compile(r"^([ \t]*)(`{3,}|~{3,})")
_FENCE_INFO = re.compile(r"^[ \t]*(`{3,}|~{3,})")
# Order matters: earlier patterns win where they overlap.
_INLINE_PATTERNS = [
    ("inline code", re.compile(r"(`+)(?:(?!\1).)+?\1")),
    ("math", re.compile(r"\$\$.+?\$\$|\\\(.+?\\\)|\$(?=\S)[^$\n]*?(?<=\S)\$(?!\d)")),
    ("HTML comment", re.compile(r"<!--.*?-->")),
    ("HTML tag", re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")),
    ("link target", re.compile(r"(?<=\]\()[^)\s]+(?:\s+\"[^\"]*\")?(?=\))")),
    ("heading id", re.compile(r"\{[ \t]*[#.][^}\n]*\}[ \t]*$")),
    ("URL", re.compile(r"<?https?://[^\s)>\]]+>?")),
]
_REFERENCE_DEFINITION = re.compile(r"^[ \t]{0,3}\[[^\]]+\]:[ \t]*\S.*$")
_ADMONITION = re.compile(r"^([ \t]*)((?:!!!|\?\?\?\+?)[ \t]+[\w-]+(?:[ \t]+[\w-]+)*)")
# pymdownx.tabbed: `=== "NVIDIA H100 80GB HBM3"` (a model writes its quotes as “…”, and no tab is left)
_TAB = re.compile(r'^([ \t]*)(===[+!]*[ \t]+"[^"\n]*")[ \t]*$')
_MATH_BLOCK = re.compile(r"^[ \t]*\$\$[ \t]*$")


@dataclass(frozen=True)
class Piece:
    kind: str
    text: str


class ProtectedText:
    """A text with placeholders and the pieces they stand for."""

    def __init__(self) -> None:
        self.pieces: list[Piece] = []

    def hold(self, kind: str, text: str) -> str:
        self.pieces.append(Piece(kind, text))
        return f"⟦P{len(self.pieces) - 1}⟧"

    @classmethod
    def joined(cls, parts: list[tuple[str, ProtectedText]]) -> tuple[str, ProtectedText]:
        """Texts protected one by one, joined into one text whose placeholders are numbered afresh."""
        merged = cls()

        def renumber(text: str, protected: ProtectedText) -> str:
            return PLACEHOLDER.sub(lambda m: merged.hold(*_fields(protected.pieces[int(m.group(1))])), text)

        return "".join(renumber(text, protected) for text, protected in parts), merged

    def protect(self, markdown: str) -> str:
        lines = markdown.split("\n")
        out: list[str] = []
        index = 0
        while index < len(lines):
            line = lines[index]
            fence = _FENCE_OPEN.match(line)
            if fence or _MATH_BLOCK.match(line):
                end = self._block_end(lines, index, fence)
                indent = fence.group(1) if fence else ""
                block = "\n".join(lines[index : end + 1])[len(indent) :]
                out.append(indent + (self._protect_code(block) if fence else self.hold("math", block)))
                index = end + 1
                continue
            if _REFERENCE_DEFINITION.match(line):
                out.append(self.hold("link definition", line))
            else:
                out.append(self._protect_line(line))
            index += 1
        return "\n".join(out)

    def _protect_code(self, block: str) -> str:
        """A code block as placeholders, but for the words of its comments, which are translated
        in place: each comment line stays on a line of its own, after the placeholder of the code
        before it, so the model sees where it belongs and the code comes back byte for byte."""
        opening, _, rest = block.partition("\n")
        spans = comment_text_spans(rest, fence_lang(_FENCE_INFO.sub("", opening)))
        if not spans:
            return self.hold("code block", block)
        start = len(opening) + 1
        pieces, position = [], 0

        def code(text: str) -> str:  # a line break between two placeholders stays visible
            before, newline, after = text.rpartition("\n")
            held = [self.hold("code", part) if part else "" for part in (before, after)]
            return held[0] + "\n" + held[1] if newline else held[1]

        for begin, end in spans:
            pieces += [code(block[position : start + begin]), block[start + begin : start + end]]
            position = start + end
        pieces.append(code(block[position:]))
        return "".join(pieces)

    def _block_end(self, lines: list[str], start: int, fence: re.Match[str] | None) -> int:
        for index in range(start + 1, len(lines)):
            stripped = lines[index].strip()
            if fence and stripped.startswith(fence.group(2)) and set(stripped) == {fence.group(2)[0]}:
                return index
            if not fence and _MATH_BLOCK.match(lines[index]):
                return index
        return len(lines) - 1

    def _protect_line(self, line: str) -> str:
        admonition = _ADMONITION.match(line)
        if admonition:
            line = admonition.group(1) + self.hold("admonition marker", admonition.group(2)) + line[admonition.end() :]
        tab = _TAB.match(line)
        if tab:
            line = tab.group(1) + self.hold("tab marker", line[len(tab.group(1)) :])
        for kind, pattern in _INLINE_PATTERNS:
            line = _sub_outside_placeholders(line, pattern, functools.partial(self.hold, kind))
        return line

    def protect_reference(self, markdown: str) -> str:
        """Protect another text (an earlier translation) reusing this text's placeholders.

        A piece identical to one of ours gets our number, in order; any other piece stays
        as it is, so the model sees the same placeholders in both texts.
        """
        other = ProtectedText()
        text = other.protect(markdown)
        unused: dict[str, list[int]] = {}
        for number, piece in enumerate(self.pieces):
            unused.setdefault(piece.text, []).append(number)

        def swap(match: re.Match) -> str:
            piece = other.pieces[int(match.group(1))]
            numbers = unused.get(piece.text)
            return f"⟦P{numbers.pop(0)}⟧" if numbers else piece.text

        return PLACEHOLDER.sub(swap, text)

    def fill(self, text: str, short_code: bool = False) -> str:
        """Put back the pieces of whichever placeholders `text` holds (part of a page), unchecked.

        With `short_code`, a code block comes back as its fence lines around one line of
        code: enough for what it renders to, its text being compared elsewhere."""

        def piece(match: re.Match) -> str:
            number = int(match.group(1))
            if number >= len(self.pieces):
                return match.group(0)
            found = self.pieces[number]
            lines = found.text.split("\n")
            if short_code and found.kind == "code block" and len(lines) > 2:
                closing = lines[-1]
                return "\n".join([lines[0], closing[: len(closing) - len(closing.lstrip())] + "code", closing])
            return found.text

        return PLACEHOLDER.sub(piece, text)

    def restore(self, text: str) -> str:
        """Put every piece back; raise ReplyRejected naming what the reply lost, repeated or invented."""
        found = [int(n) for n in PLACEHOLDER.findall(text)]
        problems = []
        for number, piece in enumerate(self.pieces):
            count = found.count(number)
            if count != 1:
                what = "is missing" if count == 0 else f"appears {count} times"
                preview = piece.text if len(piece.text) <= 40 else piece.text[:37] + "…"
                problems.append(f"protected {piece.kind} ⟦P{number}⟧ ({preview!r}) {what}")
        invented = sorted({n for n in found if n >= len(self.pieces)})
        if invented:
            problems.append("unknown placeholders " + ", ".join(f"⟦P{n}⟧" for n in invented))
        if problems:
            raise ReplyRejected(problems)
        return PLACEHOLDER.sub(lambda m: self.pieces[int(m.group(1))].text, text)


def _fields(piece: Piece) -> tuple[str, str]:
    return piece.kind, piece.text


def _sub_outside_placeholders(line: str, pattern: re.Pattern[str], hold: Callable[[str], str]) -> str:
    """Replace `pattern` matches in `line`, leaving existing placeholders alone."""
    parts = PLACEHOLDER.split(line)
    # split() with one group gives: text, number, text, number, ...
    out = []
    for position, part in enumerate(parts):
        if position % 2:
            out.append(f"⟦P{part}⟧")
        else:
            out.append(pattern.sub(lambda m: hold(m.group(0)), part))
    return "".join(out)
