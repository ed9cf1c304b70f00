"""Two fixes to what Material and Pygments write, each one small and checked."""

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

# Pygments wraps every run of spaces in code in <span class="w">, which no style uses.
WHITESPACE_SPAN = re.compile(r'<span class="w">(\s*)</span>')


def unwrap_whitespace_spans(html: str) -> str:
    """On a page with a long listing these spans are a fifth of all elements, paid for in
    style and layout time on every load."""
    return WHITESPACE_SPAN.sub(r"\1", html)


def patch_alternate_lookup(site_dir: Path) -> None:
    for bundle in (site_dir / "assets" / "javascripts").glob("bundle.*.min.js"):
        code = bundle.read_text(encoding="utf-8")
        if PATCHED_ALTERNATE_SELECTOR in code:
            continue
        if MATERIAL_ALTERNATE_SELECTOR not in code:
            raise PluginError(f"{bundle}: Material's language-selector code changed; "
                              f"update MATERIAL_ALTERNATE_SELECTOR in {Path(__file__).name}")
        bundle.write_text(code.replace(MATERIAL_ALTERNATE_SELECTOR, PATCHED_ALTERNATE_SELECTOR), encoding="utf-8")
