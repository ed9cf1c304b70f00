"""Comments in a page's code blocks: find them, and compare two blocks with them removed.

A Chinese page translates the comments of its code and nothing else, so "the same code" means
the same tokens once comments are gone. Comments are found by Pygments' lexers (the ones that
highlight the site), not by patterns: a `//` inside a string or a `#include` is code, and a
lexer knows that where a regular expression guesses.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import cache

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.token import Comment, _TokenType
from pygments.util import ClassNotFound

from gpu_glossary.cache import fingerprint, in_memory, memoize
from gpu_glossary.chinese import HAN, LATIN

# Preprocessor lines are Comment.Preproc in Pygments' C family: code, not comments.
_NOT_COMMENTS = (Comment.Preproc, Comment.PreprocFile, Comment.Hashbang)
# Languages whose comments may be translated; any other block (text output, PTX, SASS) is compared whole.
COMMENTED_LANGUAGES = ("cuda", "cpp", "c", "c++", "python", "py", "bash", "sh", "shell", "console")


@dataclass(frozen=True)
class CodeComment:
    """One comment of a block: the line it starts on (1-based, within the block) and its text."""

    line: int
    text: str


def _is_comment(token: _TokenType) -> bool:
    return token in Comment and not any(token in kind for kind in _NOT_COMMENTS)


@cache
def _lexer(lang: str) -> Lexer | None:
    if lang.lower() not in COMMENTED_LANGUAGES:
        return None
    try:
        # stripnl=False and ensurenl=False: the lexer must hand back exactly the text it was given.
        return get_lexer_by_name(lang.lower(), stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@in_memory(1024)  # a block is compared with each reply that translates it
def _pieces(code: str, lang: str) -> tuple[tuple[bool, str], ...]:
    """The block as (is it a comment, text) pieces, in order, together exactly the block; code
    between two comments is one piece. Lexing is most of what listing or checking the examples
    costs, so the pieces are kept on disk too, under the block, its language and the lexer."""
    lexer = _lexer(lang)
    if lexer is None:
        return ((False, code),)  # not a commented language: one piece of code, nothing to lex or keep
    key = [_lexer_fingerprint(), lang.lower(), code]
    return tuple((bool(comment), text) for comment, text in memoize("code-comments", key, lambda: _lex(code, lexer)))


@cache
def _lexer_fingerprint() -> str:
    return fingerprint(["pygments"], [sys.modules[__name__]])


def _lex(code: str, lexer: Lexer) -> list[tuple[bool, str]]:
    if code.endswith("\n"):
        tokens = list(lexer.get_tokens(code))
    else:
        # A line comment is only one when a line break ends it (C's lexer): lex with one, then take it off.
        tokens = list(lexer.get_tokens(code + "\n"))
        token, value = tokens.pop()
        tokens += [(token, value[:-1])] if value[:-1] else []
    pieces: list[tuple[bool, str]] = []
    for token, value in tokens:
        comment = _is_comment(token)
        if pieces and not comment and not pieces[-1][0]:
            pieces[-1] = (False, pieces[-1][1] + value)
        else:
            pieces.append((comment, value))
    return pieces


def comments(code: str, lang: str) -> list[CodeComment]:
    """Every comment of a block, in order, without a trailing newline."""
    found: list[CodeComment] = []
    line = 1
    for comment, value in _pieces(code, lang):
        if comment:
            found.append(CodeComment(line, value.rstrip("\n")))
        line += value.count("\n")
    return found


def without_comments(code: str, lang: str) -> str:
    """The block with its comments removed: a line that held only a comment goes, trailing
    spaces go, everything else stays byte for byte."""
    pieces: list[str] = []
    commented_lines: set[int] = set()
    line = 0
    for comment, value in _pieces(code, lang):
        if comment:
            commented_lines.update(range(line, line + value.count("\n") + 1))
            pieces.append("\n" * value.count("\n"))
        else:
            pieces.append(value)
        line += value.count("\n")
    lines = "".join(pieces).split("\n")
    kept = [text.rstrip() for number, text in enumerate(lines) if text.strip() or number not in commented_lines]
    return "\n".join(kept)


def blank_comments(code: str, lang: str) -> str:
    """The block with the text of its comments removed and every line kept (trailing spaces go).

    Two blocks that differ only in what their comments say give the same text, and a line
    number a program prints about itself (a sanitizer report, an assert) still points at the
    same line: the example runner's record stays valid for a block whose comments are translated.
    """
    pieces = ["\n" * value.count("\n") if comment else value for comment, value in _pieces(code, lang)]
    return "\n".join(line.rstrip() for line in "".join(pieces).split("\n"))


def first_code_difference(expected: str, got: str, lang: str) -> str | None:
    """None when two blocks are the same code once comments are removed; else where they differ."""
    if expected == got:
        return None
    a, b = without_comments(expected, lang).split("\n"), without_comments(got, lang).split("\n")
    for number, (left, right) in enumerate(zip(a, b, strict=False), start=1):
        if left != right:
            return f"code line {number} (comments removed) is {right!r}, expected {left!r}"
    if len(a) != len(b):
        return f"{len(b)} line(s) of code once comments are removed, expected {len(a)}"
    return None


_MARKER = re.compile(r"^[ \t]*(?:/\*+|\*+(?!/)|//+!?|#+)?[ \t]*")
_CLOSING = re.compile(r"[ \t]*(?:\*+/)?[ \t]*$")


def comment_text_spans(code: str, lang: str) -> list[tuple[int, int]]:
    """(start, end) offsets in `code` of the words of each comment line: what a translation
    translates, without the comment's markers (`//`, `#`, `/*`, `*/`, a leading `*`) or the
    spaces around them; lines of a comment without a letter (`// ---`) are left out."""
    spans: list[tuple[int, int]] = []
    offset = 0
    for comment, value in _pieces(code, lang):
        if comment:
            start = offset
            for line in value.split("\n"):
                after_marker = _MARKER.sub("", line, count=1)
                words = _CLOSING.sub("", after_marker, count=1)
                if LATIN.search(words) or HAN.search(words):
                    begin = start + len(line) - len(after_marker)
                    spans.append((begin, begin + len(words)))
                start += len(line) + 1
        offset += len(value)
    return spans
