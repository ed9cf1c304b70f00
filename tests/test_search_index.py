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
