"""Which script a text is written in: Han characters, Simplified or Traditional, kana, hangul.

One place for the character ranges the package uses (code comments, the translation gate,
token estimates). Traditional characters are told from Simplified ones by
OpenCC's Traditional-to-Simplified conversion (phrase tables first, then characters): text
written in Simplified Chinese comes back from it unchanged, so each character it changes is one
a Simplified page does not use. OpenCC is the maintained reference for this conversion (used by
Wikipedia's Chinese variants) and ships as wheels with its tables compiled in.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import opencc

# CJK Unified Ideographs and Extension A, where every character of Chinese prose lives.
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# Hiragana, katakana (and its phonetic extensions and half-width forms): Japanese, never Chinese.
KANA = re.compile(r"[\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9d]")
# Hangul syllables and jamo: Korean.
HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
LATIN = re.compile(r"[A-Za-z]")


@cache
def _to_simplified() -> opencc.OpenCC:
    import opencc  # loaded on first use: most commands never ask

    return opencc.OpenCC("t2s")


def traditional_characters(text: str) -> list[str]:
    """The characters of `text` that a Simplified Chinese text would write otherwise, in order, once each."""
    if not HAN.search(text):
        return []
    converted = _to_simplified().convert(text)
    if converted == text:
        return []
    if len(converted) != len(text):  # phrase tables keep lengths; compare character by character anyway
        return sorted({c for c in text if HAN.match(c) and _to_simplified().convert(c) != c})
    return list(dict.fromkeys(a for a, b in zip(text, converted, strict=True) if a != b))


def han_share(text: str) -> float:
    """Han characters among the letters (Han and Latin) of `text`; 0 when it has none."""
    han, latin = len(HAN.findall(text)), len(LATIN.findall(text))
    return han / (han + latin) if han + latin else 0.0
