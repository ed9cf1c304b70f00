"""The search index builder: sections of a page's article, weights, the file it writes."""

import json

from gpu_glossary.site.search_index import SearchPage, page_sections, page_weight, write_search_index

ARTICLE = """<h1>Warp<a class="headerlink" href="#">¶</a></h1>
<p>A <strong>warp</strong> is 32 <a href="../thread/">threads</a>.</p>
<h2 id="divergence">Divergence<a class="headerlink" href="#divergence">¶</a></h2>
<p>Lanes take<br>different paths.</p>
<div class="highlight"><pre><code>__global__ void k(int *x) { __syncthreads(); __syncthreads(); }</code></pre></div>
<p class="gg-run"><strong>Output on NVIDIA H100</strong> · driver 580</p>
<div class="highlight"><pre><code>no kernel image is available for execution on the device</code></pre></div>
<h2 data-search-exclude id="referenced-by">Referenced by</h2>
<ul><li><a href="../sm/">SM</a></li></ul>
<h3 id="after">After</h3><p>Indexed again.</p>"""


def test_page_sections_split_at_headings_and_leave_out_what_search_should_not_find():
    sections = page_sections(ARTICLE)
    assert [(anchor, heading) for anchor, heading, _ in sections] == [
        ("", ""),
        ("divergence", "Divergence"),
        ("after", "After"),
    ]
    assert sections[0][2] == "A warp is 32 threads."
    text = sections[1][2]
    assert text.startswith("Lanes take different paths.")
    assert "__global__ void int __syncthreads no kernel" in text and text.count("__syncthreads") == 1  # names, once
    assert "no kernel image is available for execution on the device" in text  # output: whole
    assert "Output on" not in text and "¶" not in text and "SM" not in json.dumps(sections)


def test_page_weight_favours_terms_that_many_pages_link_to():
    assert page_weight("term", 40) > page_weight("term", 3) > page_weight("term", 0) == 1
    assert page_weight("overview", 40) < 1 and page_weight("generated", 40) < page_weight("overview", 0)


def test_write_search_index_writes_compact_utf8(tmp_path):
    page = SearchPage(
        "device-software/warp/", "线程束", ["线程束", "Warp"], "32 个线程。", "设备软件", 1.2, [("", "", "正文")]
    )
    path = tmp_path / "search" / "search_index.json"
    size = write_search_index(path, "zh", [page])
    text = path.read_text(encoding="utf-8")
    assert size == len(text.encode("utf-8"))
    assert json.loads(text) == {
        "v": 1,
        "lang": "zh",
        "pages": [
            {
                "u": "device-software/warp/",
                "t": "线程束",
                "n": ["线程束", "Warp"],
                "s": "32 个线程。",
                "p": "设备软件",
                "w": 1.2,
                "x": [["", "", "正文"]],
            }
        ],
    }
    assert "线程束" in text and "\\u" not in text


def test_material_s_search_plugin_indexes_no_page_and_ours_replaces_its_index(small):
    """Material's search plugin stays for its header button and dialog, but parses no page (each
    takes Material's `search: exclude`); the index the site serves is ours, with every page."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    config = load_config(str(small / "mkdocs.zh.yml"), site_dir=str(small / "site-zh"))
    config.plugins.on_startup(command="build", dirty=False)
    try:
        build(config)
        assert config.plugins["material/search"].search_index.entries == []
    finally:
        config.plugins.on_shutdown()
    served = json.loads((small / "site-zh" / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert served["v"] == 1 and served["lang"] == "zh" and len(served["pages"]) > 3
    assert 'class="md-search"' in (small / "site-zh" / "index.html").read_text(encoding="utf-8")  # the dialog
