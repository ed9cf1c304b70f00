"""Image file names, with no dependency: which files are images, and the language and scheme
variants of a diagram (`x.svg`, `x.dark.svg`, `x.zh.svg`, `x.zh.dark.svg`).

The checker, the site build and the translation checks all need these names; keeping them
here lets each import them without loading the image step.
"""

from __future__ import annotations

import re

IMAGE_EXTENSIONS = (".svg", ".png", ".jpg", ".jpeg", ".gif", ".webp")


def variant(name: str, lang: str, dark: bool) -> str:
    """`x.svg` -> `x.zh.dark.svg` etc.: the file for a language and scheme."""
    stem, dot, extension = name.rpartition(".")
    stem = re.sub(r"(\.zh)?(\.dark)?$", "", stem)
    return stem + (".zh" if lang == "zh" else "") + (".dark" if dark else "") + dot + extension


def base_name(name: str) -> str:
    """The author's file name behind any variant: `x.zh.dark.svg` -> `x.svg`."""
    return variant(name, "en", dark=False)
