"""Rewrite Material's search index smaller, with the same search behind it.

Material writes `search/search_index.json` ASCII-escaped (each Chinese character as
`\\u7ebf`, six bytes instead of three) and copies a page's tags onto every section of the
page. The rewrite writes compact UTF-8 and keeps the tags on the page's own entry, which
is where they rank the page (a page's sections are grouped under it in the results).
What stays out of the index entirely ("Referenced by" lists, the A–Z page's letters) is
marked `data-search-exclude` where those headings are written.
"""

from __future__ import annotations

import json
from pathlib import Path

from .atomic import write_text_atomic


def compact_index(index: dict) -> dict:
    """The same index without tags repeated on section entries (`page/#section`)."""
    docs = []
    for doc in index["docs"]:
        if "#" in doc["location"]:
            doc = {key: value for key, value in doc.items() if key != "tags"}
        docs.append(doc)
    return {**index, "docs": docs}


def rewrite_index(path: Path) -> tuple[int, int]:
    """Rewrite one `search_index.json` in place; return its size in bytes before and after."""
    before = path.read_bytes()
    text = json.dumps(compact_index(json.loads(before)), ensure_ascii=False, separators=(",", ":"))
    write_text_atomic(path, text)
    return len(before), len(text.encode("utf-8"))
