"""A Content-Security-Policy for every built page: only the site's own scripts may run.

The sanitizer keeps script out of page content; the policy is the second wall, enforced
by the browser. Material writes three small inline scripts into every page (colour
scheme, storage scope, anchor handling), so instead of allowing inline script at all the
policy names each of them by its SHA-256 hash; any other inline script or handler
attribute is refused. GitHub Pages sets no headers, so the policy travels as a `<meta>`.
"""

from __future__ import annotations

import base64
import hashlib
import re

# Material's own output (trusted): inline <script> elements without src and not data blocks.
_INLINE_SCRIPT = re.compile(r"<script(?P<attributes>[^>]*)>(?P<code>.*?)</script>", re.S | re.I)
_CHARSET = re.compile(r"<meta charset=[^>]*>", re.I)
_HEAD = re.compile(r"<head(?:\s[^>]*)?>", re.I)


def _inline_script_hashes(html: str) -> list[str]:
    hashes = []
    for match in _INLINE_SCRIPT.finditer(html):
        attributes = match.group("attributes").lower()
        if "src=" in attributes or "application/json" in attributes:
            continue
        digest = base64.b64encode(hashlib.sha256(match.group("code").encode("utf-8")).digest()).decode("ascii")
        hashes.append(f"'sha256-{digest}'")
    return list(dict.fromkeys(hashes))


def policy(html: str) -> str:
    """The policy for one page: our files, Material's inline scripts by hash, nothing else."""
    scripts = " ".join(["'self'", *_inline_script_hashes(html)])
    return (
        "default-src 'self'; "
        f"script-src {scripts}; "
        "style-src 'self'; "
        "img-src 'self' data:; "  # Material's icons are data: SVGs in its CSS
        "object-src 'none'; "
        "base-uri 'self'; "
        "form-action 'self'"
    )


def with_policy(html: str) -> str:
    """`html` with the policy `<meta>` first in its head, before any script it governs."""
    start = _CHARSET.search(html) or _HEAD.search(html)
    if start is None:
        raise ValueError("the page has no <head> to hold its Content-Security-Policy")
    meta = f'\n    <meta http-equiv="Content-Security-Policy" content="{policy(html)}">'
    return html[: start.end()] + meta + html[start.end() :]
