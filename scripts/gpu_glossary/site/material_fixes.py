"""Small fixes to what Material and Pygments write, each one checked by a test."""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.exceptions import PluginError

# Material's language selector fetches `sitemap.xml` beside every <link rel=alternate>,
# assuming they point at site roots; our per-page hreflang and Markdown links make that a
# 404 on every page load (mkdocs-material#6582). Our selector links straight to the same
# page, so the lookup is switched off: no link carries the attribute the patch asks for.
MATERIAL_ALTERNATE_SELECTOR = '"link[rel=alternate]"'
PATCHED_ALTERNATE_SELECTOR = '"link[rel=alternate][data-gg-site-root]"'

# Pygments puts every token of code in a <span>. Three kinds draw nothing a reader can see:
# - runs of spaces (<span class="w">), which no style colours;
# - plain names (<span class="n">): Material colours them with --md-code-hl-name-color,
#   which is the code's own colour (--md-code-fg-color) in both schemes;
# - a token right after one of the same kind (`)` after `(`, spaces between): one span can
#   colour both.
# In a long listing they are a large part of all the page's elements, and every element costs
# style and layout time on each load. test_build and test_browser check the text and the
# colours stay as they were.
CODE_BLOCK = re.compile(r"<pre\b.*?</pre>", re.S)
WHITESPACE_SPAN = re.compile(r'<span class="w">(\s*)</span>')
NAME_SPAN = re.compile(r'<span class="n">([^<]*)</span>')
SAME_KIND_AGAIN = re.compile(r'(<span class="([\w-]+)">[^<]*)</span>(\s*)<span class="\2">')


def lighten_code_spans(html: str) -> str:
    """Fewer elements in code listings, the same text and colours (see above)."""

    def lighten(block: re.Match) -> str:
        code = NAME_SPAN.sub(r"\1", WHITESPACE_SPAN.sub(r"\1", block.group(0)))
        merged = 1
        while merged:  # each pass joins one more token onto each run
            code, merged = SAME_KIND_AGAIN.subn(r"\1\3", code)
        return code

    return CODE_BLOCK.sub(lighten, html)


def patch_alternate_lookup(site_dir: Path) -> None:
    for bundle in (site_dir / "assets" / "javascripts").glob("bundle.*.min.js"):
        code = bundle.read_text(encoding="utf-8")
        if PATCHED_ALTERNATE_SELECTOR in code:
            continue
        if MATERIAL_ALTERNATE_SELECTOR not in code:
            raise PluginError(
                f"{bundle}: Material's language-selector code changed; "
                f"update MATERIAL_ALTERNATE_SELECTOR in {Path(__file__).name}"
            )
        bundle.write_text(code.replace(MATERIAL_ALTERNATE_SELECTOR, PATCHED_ALTERNATE_SELECTOR), encoding="utf-8")
