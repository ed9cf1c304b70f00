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
import os
import tempfile
from pathlib import Path

from gpu_glossary.atomic import write_text_atomic


def compact_index(index: dict) -> dict:
    """The same index without tags repeated on section entries (`page/#section`)."""
    docs = []
    for doc in index["docs"]:
        if "#" in doc["location"]:
            doc = {key: value for key, value in doc.items() if key != "tags"}
        docs.append(doc)
    return {**index, "docs": docs}


def index_text(index: dict) -> str:
    """The index as we write it: compact UTF-8 JSON."""
    return json.dumps(index, ensure_ascii=False, separators=(",", ":"))


def rewrite_index(path: Path) -> tuple[int, int]:
    """Rewrite one `search_index.json` in place; return its size in bytes before and after."""
    before = path.read_bytes()
    text = index_text(compact_index(json.loads(before)))
    write_text_atomic(path, text, durable=False)
    return len(before), len(text.encode("utf-8"))


def write_jieba_dictionary(config, terminology) -> Path | None:
    """Give Material's search plugin our terms as a jieba user dictionary, so Chinese search
    splits "线程块" as one word. Returns the temporary file to delete after the build."""
    search = next((p for p in config.plugins.values() if hasattr(p.config, "jieba_dict_user")), None)
    if search is None:
        return None
    handle, path = tempfile.mkstemp(prefix="gpu-glossary-jieba-", suffix=".txt")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(terminology.jieba_dictionary())
    search.config.jieba_dict_user = path
    return Path(path)


def segment_chinese(enabled: bool) -> object:
    """Whether Material's search splits Chinese text into words with jieba in this build;
    returns what it was before, for `restore_segmentation` once the build is done.

    Material segments any Chinese it indexes, in every language, joining the words with
    U+200B. Only the Chinese search splits on U+200B (`separator` in mkdocs.zh.yml), so in the
    English index the segmented words (the terminology page's renderings) could not be found,
    and loading jieba's dictionary cost every English build about a second. Material keeps
    jieba in a module variable (None when jieba is not installed); a build sets it for its own
    language, so one process can build both, and the plugin puts it back on shutdown."""
    from material.plugins.search import plugin as material_search

    try:
        import jieba
    except ImportError:  # as Material itself: no jieba, no segmentation
        jieba = None
    previous = material_search.jieba
    material_search.jieba = jieba if enabled else None
    return previous


def restore_segmentation(previous: object) -> None:
    """Put back Material's module variable as `segment_chinese` found it."""
    from material.plugins.search import plugin as material_search

    material_search.jieba = previous
