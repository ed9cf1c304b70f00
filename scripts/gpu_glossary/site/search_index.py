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
import re
import tempfile
from pathlib import Path
from types import SimpleNamespace

from gpu_glossary.atomic import write_text_atomic


def compact_index(index: dict) -> dict:
    """The same index without tags repeated on section entries (`page/#section`)."""
    docs = []
    for doc in index["docs"]:
        if "#" in doc["location"]:
            doc = {key: value for key, value in doc.items() if key != "tags"}
        docs.append(doc)
    return {**index, "docs": docs}


# Inside code, Material's search reads text only; the highlighting's spans and line anchors
# are most of a page's elements, and each costs its HTML parser time.
_CODE_BLOCK = re.compile(r"(<pre\b[^>]*>)(.*?)(</pre>)", re.S)
_CODE_MARKUP = re.compile(
    r'<span(?: class="[\w -]*")?>|</span>'
    r'|<a id="__codelineno-[\w-]+" name="__codelineno-[\w-]+" href="#__codelineno-[\w-]+"></a>'
)


def without_code_markup(html: str) -> str:
    """`html` with the spans and line anchors of highlighted code taken out: the same text."""
    return _CODE_BLOCK.sub(lambda block: block[1] + _CODE_MARKUP.sub("", block[2]) + block[3], html)


class LighterIndexing:
    """Material's search indexes each page from a copy of its HTML without the markup of
    highlighted code (`without_code_markup`), which gives the same entries from far fewer
    elements. `before` runs ahead of Material's search in the page_context event: it keeps the
    copy and marks the page excluded, so Material's own pass indexes nothing (it still removes
    the `data-search-*` attributes from the page); `after` runs behind it, puts the page's
    search settings back and has Material's index add the copy, through the index's own method."""

    def __init__(self, search_plugin) -> None:
        self.search_plugin = search_plugin
        self._copy: SimpleNamespace | None = None
        self._settings: object = None

    def before(self, page) -> None:
        self._copy = None
        settings = page.meta.get("search")
        if self.search_plugin is None or (isinstance(settings, dict) and settings.get("exclude")):
            return
        self._copy = SimpleNamespace(
            meta=page.meta, content=without_code_markup(page.content), toc=page.toc, url=page.url, title=page.title
        )
        self._settings = settings
        page.meta["search"] = {**(settings if isinstance(settings, dict) else {}), "exclude": True}

    def after(self, page) -> None:
        if self._copy is None:
            return
        if self._settings is None:
            page.meta.pop("search", None)
        else:
            page.meta["search"] = self._settings
        self.search_plugin.search_index.add_entry_from_context(self._copy)
        self._copy = None


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
