"""pymdownx.highlight with its output kept: a code block with the same text, language and
options is highlighted by Pygments once, then read from our cache (`gpu_glossary.cache`).

Lexing and formatting code is a large part of rendering a page, and most builds render
code that an earlier build (or the other language: code is the same in both) highlighted
already. The key is the block's text and every argument of the call, the highlighter's
settings, and the versions of Pygments, pymdownx and this module, so a kept result is always
the one Pygments would give. Blocks with a title (which pymdownx may store in the Markdown
instance) and inline code are highlighted as usual. mkdocs.yml names this module instead of
`pymdownx.highlight`; it takes the same options.
"""

from __future__ import annotations

import functools
import sys
import xml.etree.ElementTree as etree

from pymdownx.highlight import Highlight, HighlightExtension

from gpu_glossary.cache import fingerprint, memoize


class KeptHighlight(Highlight):
    """pymdownx's highlighter, its block output kept by content."""

    def highlight(
        self,
        src: str,
        language: str,
        css_class: str = "highlight",
        hl_lines: list[int] | None = None,
        linestart: int = -1,
        linestep: int = -1,
        linespecial: int = -1,
        inline: bool = False,
        classes: list[str] | None = None,
        id_value: str = "",
        attrs: dict[str, str] | None = None,
        title: str | None = None,
        code_block_count: int = 0,
    ) -> str | etree.Element:
        """The highlighted block's HTML (an inline span comes back as pymdownx's <code> element)."""
        arguments = (css_class, hl_lines, linestart, linestep, linespecial, inline, classes, id_value, attrs, title)

        def compute() -> str | etree.Element:
            return super(KeptHighlight, self).highlight(src, language, *arguments, code_block_count)

        if inline or title:
            return compute()
        settings = {name: value for name, value in vars(self).items() if name != "md"}
        key = [
            _code_fingerprint(),
            repr(sorted(settings.items())),
            repr(arguments),
            language,
            str(code_block_count),
            src,
        ]
        return memoize("highlighted-code", key, compute)


class KeptHighlightExtension(HighlightExtension):
    """`pymdownx.highlight`, handing other extensions (superfences) the kept highlighter."""

    def get_pymdownx_highlighter(self) -> type[KeptHighlight]:
        return KeptHighlight


def makeExtension(**kwargs: object) -> KeptHighlightExtension:  # the name Python-Markdown looks for
    return KeptHighlightExtension(**kwargs)


@functools.cache
def _code_fingerprint() -> str:
    return fingerprint(["pygments", "pymdown-extensions", "markdown"], [sys.modules[__name__]])
