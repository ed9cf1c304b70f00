"""The search index rewrite: compact UTF-8, tags only where they rank a page."""

import json

from gpu_glossary.site.search_index import compact_index, rewrite_index


def test_compact_index_keeps_tags_only_on_the_pages_own_entry():
    index = {
        "config": {"lang": ["en"]},
        "docs": [
            {"location": "device-software/warp/", "title": "Warp", "text": "t", "tags": ["Warp"], "boost": 6.7},
            {
                "location": "device-software/warp/#divergence",
                "title": "Divergence",
                "text": "u",
                "tags": ["Warp"],
                "boost": 6.7,
            },
        ],
    }
    compacted = compact_index(index)
    assert compacted["config"] == index["config"]
    assert compacted["docs"][0] == index["docs"][0]
    assert compacted["docs"][1] == {
        "location": "device-software/warp/#divergence",
        "title": "Divergence",
        "text": "u",
        "boost": 6.7,
    }


def test_rewrite_index_writes_utf8_and_reports_sizes(tmp_path):
    path = tmp_path / "search_index.json"
    index = {"config": {"lang": ["zh"]}, "docs": [{"location": "", "title": "线程束", "text": "线程束\u200b调度器"}]}
    path.write_text(json.dumps(index), encoding="utf-8")  # Material's way: ASCII-escaped
    before, after = rewrite_index(path)
    assert before == len(json.dumps(index)) and after == path.stat().st_size < before
    assert (
        path.read_text(encoding="utf-8")
        == '{"config":{"lang":["zh"]},"docs":[{"location":"","title":"线程束","text":"线程束\u200b调度器"}]}'
    )


def test_a_build_puts_back_material_s_segmentation_setting_on_shutdown(small):
    """Each build sets Material's module variable for its language; the previous value comes
    back when MkDocs shuts the plugins down, so nothing else in the process inherits ours."""
    from material.plugins.search import plugin as material_search
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    before = object()
    material_search.jieba, original = before, material_search.jieba
    try:
        config = load_config(str(small / "mkdocs.zh.yml"), site_dir=str(small / "site-zh"))
        config.plugins.on_startup(command="build", dirty=False)
        build(config)
        assert material_search.jieba is not before  # the Chinese build segmented with jieba
        config.plugins.on_shutdown()
        assert material_search.jieba is before
    finally:
        material_search.jieba = original


def test_search_entries_from_html_without_code_markup_are_the_same():
    """Material's search is fed each page without the spans and line anchors of highlighted
    code (LighterIndexing): every entry, code text included, must stay what it was."""
    from types import SimpleNamespace

    from helpers import ROOT
    from material.plugins.search.plugin import SearchIndex

    from gpu_glossary.render import Renderer
    from gpu_glossary.sanitize import sanitize
    from gpu_glossary.site.search_index import without_code_markup

    body = (
        "Intro with `code`.\n\n## Kernel {#kernel}\n\n```cuda\n__global__ void k(float *x) {\n"
        '  x[threadIdx.x] *= 2.0f; // "quoted" & <angled>\n}\n```\n\nAfter the code.\n\n'
        "## Referenced by {#referenced-by data-search-exclude}\n\n- [Warp](warp.md)\n"
    )
    html = sanitize(Renderer.for_language(ROOT, "en").html(body))
    light = without_code_markup(html)
    assert html.count("<span") > 10 and "<span" not in light.split("<pre")[1]

    def entries(content: str) -> list[dict]:
        index = SearchIndex(lang=["en"], separator=r"[\s\-]+", pipeline=[], fields={})
        page = SimpleNamespace(meta={"title": "T"}, content=content, toc=[], url="t/", title="T")
        index.add_entry_from_context(page)
        return index.entries

    assert entries(light) == entries(html)
    assert [e["location"] for e in entries(html)] == ["t/", "t/#kernel"]  # the excluded section stays out
    assert 'x[threadIdx.x] *= 2.0f; // "quoted" &amp; &lt;angled&gt;' in entries(light)[1]["text"]
