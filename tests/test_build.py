"""The built site (both languages, strict build), read as files."""

import dataclasses
import json
import re
import subprocess
import sys

import pytest
from helpers import ROOT

from gpu_glossary.glossary import load_glossary

CJK = re.compile(r"[\u4e00-\u9fff]")


def read(site, path: str) -> str:
    return (site.dir / path).read_text(encoding="utf-8")


def test_both_languages_built_with_their_own_sitemaps_and_404(site):
    for prefix in ("", "zh/"):
        for name in (
            "index.html",
            "404.html",
            "sitemap.xml",
            "llms.txt",
            "llms-full.txt",
            "search/search_index.json",
            "terms/index.html",
            "terminology/index.html",
        ):
            assert (site.dir / prefix / name).is_file(), prefix + name
    assert '<html lang="zh"' in read(site, "zh/index.html")
    assert "页面不存在" in read(site, "zh/404.html") and "Page not found" in read(site, "404.html")
    for not_found in ("404.html", "zh/404.html"):  # the theme's own pages carry the policy too
        assert (
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self'; script-src 'self' 'sha256-"
            in read(site, not_found)
        )


def test_every_page_has_hreflang_alternates_for_both_languages(site):
    html = read(site, "zh/device-software/warp/index.html")
    assert f'<link rel="alternate" hreflang="en" href="{site.built_for}device-software/warp/">' in html
    assert f'<link rel="alternate" hreflang="zh" href="{site.built_for}zh/device-software/warp/">' in html
    for path in site.dir.rglob("index.html"):
        text = path.read_text(encoding="utf-8")
        assert text.count('hreflang="en" href=') == 1 and text.count('hreflang="zh" href=') == 1, path


def test_edit_links_point_at_the_file_of_that_language(site):
    assert "edit/main/glossary/en/device-software/warp.md" in read(site, "device-software/warp/index.html")
    assert "edit/main/glossary/zh/device-software/warp.md" in read(site, "zh/device-software/warp/index.html")
    assert 'rel="edit"' not in read(site, "terms/index.html")


def test_untranslated_page_shows_english_under_notice_and_stays_out_of_chinese_search(fixture_site):
    html = read(fixture_site, "zh/perf/beta/index.html")
    assert 'data-gg-notice="untranslated"' in html
    assert '<div lang="en">' in html
    assert "edit/main/glossary/en/perf/beta.md" in html
    zh_pages = search_pages(fixture_site, "zh/")
    assert "perf/beta/" not in zh_pages
    assert "perf/alpha/" in zh_pages


def test_stale_page_shows_notice_linking_to_english(fixture_site):
    html = read(fixture_site, "zh/perf/alpha/index.html")
    assert 'data-gg-notice="stale"' in html
    assert re.search(r'data-gg-notice="stale">\s*<p>[^<]*<a href="(\.\./)+perf/alpha/" hreflang="en">', html)
    assert "data-gg-notice" not in read(fixture_site, "zh/perf/index.html")


def search_pages(site, prefix: str) -> dict[str, dict]:
    """The search index's pages (scripts/gpu_glossary/site/search_index.py) by address."""
    index = json.loads(read(site, prefix + "search/search_index.json"))
    return {page["u"]: page for page in index["pages"]}


def test_search_indexes_hold_only_their_language(site):
    glossary = load_glossary(ROOT)
    en_pages, zh_pages = search_pages(site, ""), search_pages(site, "zh/")
    assert [page["t"] for page in en_pages.values() if CJK.search(page["t"])] == []
    translated = {(rel.removesuffix(".md") + "/").removesuffix("index/") for rel in glossary.pages["zh"]}
    assert set(zh_pages) - {"terms/", "terminology/", "path/"} <= translated
    assert zh_pages["device-software/warp/"]["t"] == "线程束"


def test_search_entries_carry_names_summary_sections_and_weight(site):
    en_pages = search_pages(site, "")
    warp, warpgroup = en_pages["device-software/warp/"], en_pages["device-software/warpgroup/"]
    assert warp["n"][0] == "Warp" and "warps" in warp["n"]
    assert warp["w"] > warpgroup["w"] >= 1  # more pages link to Warp
    assert en_pages["device-software/"]["w"] < 1 and en_pages["terms/"]["w"] < 1
    assert warp["s"] == load_glossary(ROOT).page("en", "device-software/warp.md").summary
    libcudart = en_pages["host-software/libcudart/"]
    sections = {anchor: (heading, text) for anchor, heading, text in libcudart["x"]}
    heading, text = sections["insufficient-driver"]
    assert "CUDA driver version is insufficient for CUDA runtime version" in heading
    assert "cudaErrorInsufficientDriver" in text
    assert "referenced-by" not in sections and "¶" not in json.dumps(libcudart)
    zh_warp = search_pages(site, "zh/")["device-software/warp/"]
    assert zh_warp["n"][:2] == ["线程束", "Warp"]


def test_search_index_keeps_api_names_of_listings_and_whole_outputs(site):
    """A listing is indexed as its names, each once; a program's output stays whole."""
    sections = {anchor: text for anchor, _, text in search_pages(site, "")["host-software/libcudart/"]["x"]}
    assert "cudaRuntimeGetVersion" in sections["example"] and "dl_iterate_phdr" in sections["example"]
    assert "std::printf" not in sections["example"]
    assert "CUDA runtime (libcudart): 13.0 [13000]" in sections["example"]


def test_search_indexes_are_compact_utf8(site):
    for prefix in ("", "zh/"):
        text = (site.dir / prefix / "search/search_index.json").read_bytes().decode("utf-8")
        # UTF-8, not ASCII-escaped (\u7ebf: twice the bytes for Chinese), and no spaces between tokens
        assert text == json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
    assert "线程束" in (site.dir / "zh/search/search_index.json").read_text(encoding="utf-8")


def test_llms_files_and_markdown_twins(site):
    from test_llms import assert_llms_txt_format

    llms = read(site, "llms.txt")
    assert llms.startswith("# GPU Glossary\n\n> ")
    assert_llms_txt_format(llms)
    assert_llms_txt_format(read(site, "zh/llms.txt"))
    assert "\n## Overview\n\n- [GPU Glossary](" in llms
    assert f"[Warp]({site.built_for}device-software/warp/index.md)" in llms
    zh_llms = read(site, "zh/llms.txt")
    assert f"({site.built_for}zh/device-software/warp/index.md)" in zh_llms and "线程束" in zh_llms
    twin = read(site, "device-software/warp/index.md")
    assert twin.startswith("# Warp\n")
    full = read(site, "llms-full.txt")
    for target in set(re.findall(r"\]\(#([^)]+)\)", full)):
        assert f"{{#{target}}}" in full or f'id="{target}"' in full, target


def test_generated_index_and_terminology_pages(site):
    terms = read(site, "terms/index.html")
    assert "Streaming Multiprocessor" in terms and "(SM)" in terms
    zh_terms = read(site, "zh/terms/index.html")
    assert "线程束（Warp）" in zh_terms
    assert "线程束" in read(site, "zh/terminology/index.html")


def test_referenced_by_lists_pages_linking_here_one_line_per_section(site):
    html = read(site, "device-software/warp/index.html")
    section = html[html.index('id="referenced-by"') :]
    assert "streaming-multiprocessor/" in section
    lines = re.findall(r"<li><strong>([^<]+)</strong>", section[: section.index("</ul>")])
    assert lines[:2] == ["Device hardware", "Device software"] and len(lines) == len(set(lines)) <= 5
    zh_html = read(site, "zh/device-software/warp/index.html")
    assert "引用本页的页面" in zh_html and "<li><strong>设备硬件</strong>：" in zh_html


def test_chinese_pages_have_chinese_interface_strings(site):
    html = read(site, "zh/device-software/warp/index.html")
    assert 'title="永久链接"' in html and "Permanent link" not in html
    assert "切换到深色模式" in html and "Switch to dark mode" not in html
    assert "本站使用" in html and "Made with" not in html


def test_terminology_table_links_each_term_that_has_a_page(site):
    html = read(site, "zh/terminology/index.html")
    assert '<a data-gg-summary="' in html and 'href="../device-software/warp/">warp</a>' in html


def test_a_broken_page_fails_the_build_with_its_line_and_keeps_the_old_site(small):
    from gpu_glossary.site.build import SiteBuildError, build_site

    site_dir = small / "site"
    build_site(small, site_dir=site_dir)
    before = (site_dir / "device-software/warp/index.html").read_bytes()
    page = small / "glossary/en/device-software/warp.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n[broken](nowhere.md)\n", encoding="utf-8")
    with pytest.raises(SiteBuildError) as failure:
        build_site(small, site_dir=site_dir)
    line = page.read_text(encoding="utf-8").count("\n")
    assert f"glossary/en/device-software/warp.md:{line}: error: link 'nowhere.md'" in str(failure.value)
    assert (site_dir / "device-software/warp/index.html").read_bytes() == before
    assert (site_dir / "zh/index.html").is_file()


def test_each_build_gets_this_build_s_address_and_the_command_prints_only_its_progress(small):
    """Build processes come from a fork server started by the first build: each must still see
    the environment of its own build, and what the server printed while it loaded must not
    reach the builder's terminal."""
    from gpu_glossary.site.build import build_site

    first, second = "https://first.example/", "https://second.example/"
    build_site(small, site_dir=small / "site", site_url=first)
    build_site(small, site_dir=small / "site", site_url=second)
    sitemap = (small / "site/sitemap.xml").read_text(encoding="utf-8")
    assert f"<loc>{second}" in sitemap and first not in sitemap
    result = subprocess.run(
        [sys.executable, "-m", "gpu_glossary.cli", "build"], cwd=small, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0] == "Building English and Chinese in parallel…"
    assert re.fullmatch(r"Built site/ in [\d.]+ s \(en [\d.]+ s, zh [\d.]+ s\)", lines[1]) and len(lines) == 2, lines


def test_edit_and_report_links_name_the_right_file_and_page(site):
    from html import unescape
    from urllib.parse import parse_qs, urlsplit

    for prefix, lang, language in (("", "en", "English"), ("zh/", "zh", "中文")):
        html = read(site, f"{prefix}device-software/warp/index.html")
        edit = re.search(r'<a href="([^"]+)"[^>]*rel="edit"', html).group(1)
        assert edit == f"https://github.com/gpu-glossary/gpu-glossary/edit/main/glossary/{lang}/device-software/warp.md"
        report = unescape(re.search(r'<a href="([^"]+)"[^>]*data-gg-report', html).group(1))
        parts = urlsplit(report)
        assert parts.path == "/gpu-glossary/gpu-glossary/issues/new"
        query = parse_qs(parts.query)
        assert query["template"] == ["page-error.yml"]
        assert query["page"] == [f"{site.built_for}{prefix}device-software/warp/"]
        assert query["language"] == [language]
        assert query["title"][0].endswith("线程束" if lang == "zh" else "Warp")


def test_code_keeps_its_text_with_fewer_spans(site):
    """Whitespace and plain-name spans are unwrapped and runs of one kind joined (material_fixes):
    the listing's text is still exactly the page's code, and the coloured tokens keep their span."""
    import html as html_module

    page = read(site, "perf/roofline-model/index.html")
    listing = next(block for block in re.findall(r"<pre\b.*?</pre>", page, re.S) if "#include" in block)
    assert '<span class="w">' not in listing and '<span class="n">' not in listing
    assert not re.search(r'<span class="([\w-]+)">[^<]*</span>\s*<span class="\1">', listing)
    assert '<span class="cp">#include</span> <span class="cpf">&lt;algorithm&gt;</span>' in listing
    markdown = (ROOT / "glossary/en/perf/roofline-model.md").read_text(encoding="utf-8")
    source = re.search(r"^```cuda\n(.*?)^```", markdown, re.S | re.M).group(1)
    assert html_module.unescape(re.sub(r"<[^>]+>", "", listing)) == source


def test_every_recorded_output_names_the_gpu_driver_cuda_and_date_from_runs_yml(site):
    """The provenance line comes from glossary/runs.yml, localised, under each output block."""
    from gpu_glossary.examples.runs import load_runs

    record = load_runs(ROOT).get("perf/memory-coalescing.md#coalescing", "NVIDIA H100 80GB HBM3")
    expected = {
        "perf/memory-coalescing/index.html": f"<strong>Output on {record.device}</strong> · "
        f"driver {record.driver} · CUDA {record.cuda}",
        "zh/perf/memory-coalescing/index.html": f"<strong>输出来自 {record.device}</strong> · "
        f"驱动 {record.driver} · CUDA {record.cuda}",
    }
    for path, line in expected.items():
        html = read(site, path)
        assert f'<p class="gg-run">{line} · <time datetime="{record.date}">{record.date}</time></p>' in html, path
    pages_with_examples = {e.page.rel for e in _all_examples()}
    for rel in pages_with_examples:
        html = read(site, rel.removesuffix(".md") + "/index.html")
        assert 'class="gg-run"' in html, rel


def _record_runs_on_two_devices(project) -> None:
    """Alpha gets an example recorded on an H100 and on 4 H200s (in tabs), beta one recorded on an
    H100 only (a plain block), in both languages; the Chinese pages translate the comments."""
    from gpu_glossary.examples.apply import write_outputs
    from gpu_glossary.examples.blocks import page_examples
    from gpu_glossary.examples.runs import Record, load_runs, save_runs
    from gpu_glossary.page import with_source_hash

    code = "import torch\n# {comment}\nprint(torch.cuda.get_device_name())"
    for rel in ("perf/alpha.md", "perf/beta.md"):
        for lang, comment in (("en", "Which GPU?"), ("zh", "哪块 GPU？")):
            path = project / "glossary" / lang / rel
            marker = "<!-- example: name=device -->\n```python\n" + code.format(comment=comment) + "\n```\n"
            path.write_text(path.read_text(encoding="utf-8") + "\n" + marker, encoding="utf-8")
    glossary = load_glossary(project)
    for rel in ("perf/alpha.md", "perf/beta.md"):
        zh = project / "glossary/zh" / rel
        zh.write_text(with_source_hash(zh.read_text(encoding="utf-8"), glossary.source_hash_of(rel)), encoding="utf-8")
    runs = load_runs(project)
    common = {"compute_capability": "9.0", "driver": "580.159.04", "cuda": "13.0", "date": "2026-11-27"}
    for rel in ("perf/alpha.md", "perf/beta.md"):
        (example,) = page_examples(load_glossary(project).page("en", rel))[0]
        runs.put(
            example.id, Record(example.hash, "python3 device.py", "NVIDIA H100 80GB HBM3", stdout="H100", **common)
        )
        if rel == "perf/alpha.md":
            names = ("NVIDIA H200",) * 4
            four = Record(
                example.hash, "x", "4× NVIDIA H200", stdout="H200", gpus=4, gpu_names=names, link="NV18", **common
            )
            runs.put(example.id, dataclasses.replace(four, spread=0.31))
    save_runs(runs)
    write_outputs(load_glossary(project), runs)


def test_runs_on_two_devices_are_two_tabs_each_with_its_provenance_and_one_device_looks_as_before(small, browser):
    from gpu_glossary.site.build import build_site
    from gpu_glossary.site.serve import serve_in_background

    _record_runs_on_two_devices(small)
    build_site(small, site_dir=small / "site")
    h100 = 'driver 580.159.04 · CUDA 13.0 · <time datetime="2026-11-27">2026-11-27</time></p>'
    words = {
        "": ("Output on", "NVLink NV18 all-to-all", "driver", "figures moved up to 31% between runs"),
        "zh/": ("输出来自", "NVLink NV18 全互连", "驱动", "各次运行间数值最多相差 31%"),
    }
    for prefix, (output_on, link, driver, spread) in words.items():
        alpha = (small / "site" / prefix / "perf/alpha/index.html").read_text(encoding="utf-8")
        blocks = re.findall(
            r'<div class="tabbed-block">(.*?)</div>\s*(?=<div class="tabbed-block">|</div>)', alpha, re.S
        )
        labels = re.findall(r'<label for="__tabbed_1_\d">([^<]*)</label>', alpha)
        assert labels == ["NVIDIA H100 80GB HBM3", "4× NVIDIA H200"], prefix
        assert len(blocks) == 2 and ">H100\n<" in blocks[0] and ">H200\n<" in blocks[1], prefix
        assert f'<p class="gg-run"><strong>{output_on} NVIDIA H100 80GB HBM3</strong> · ' in blocks[0]
        assert (
            f'<p class="gg-run"><strong>{output_on} 4× NVIDIA H200</strong> · {link} · {driver} 580.159.04' in blocks[1]
        )
        assert f"CUDA 13.0 · {spread} · <time" in blocks[1] and alpha.count('class="gg-run"') == 2
        beta = (small / "site" / prefix / "perf/beta/index.html").read_text(encoding="utf-8")
        assert "tabbed-set" not in beta and beta.count('class="gg-run"') == 1
        expected = f"<strong>{output_on} NVIDIA H100 80GB HBM3</strong> · " + h100.replace("driver", driver)
        assert f'</code></pre></div>\n<p class="gg-run">{expected}' in beta, prefix
    server = serve_in_background(small / "site")
    tab = browser.new_page()
    try:
        tab.goto(f"http://127.0.0.1:{server.server_address[1]}/zh/perf/alpha/")
        first, second = tab.locator(".tabbed-block").nth(0), tab.locator(".tabbed-block").nth(1)
        assert first.is_visible() and not second.is_visible()
        tab.click("label[for=__tabbed_1_2]")
        assert second.is_visible() and not first.is_visible()
        assert "4× NVIDIA H200" in second.inner_text()
    finally:
        tab.close()
        server.shutdown()


def _all_examples():
    from gpu_glossary.examples.blocks import all_examples

    return all_examples(load_glossary(ROOT).pages["en"].values())[0]


def test_compiled_templates_are_reused_and_an_edited_template_is_compiled_again(small, tmp_path, monkeypatch):
    """Builds keep Jinja's compiled templates in the cache folder; a damaged entry is compiled
    again, and an edit to a template of the theme's overrides must still show in the next build."""
    import jinja2.bccache

    from gpu_glossary.site.build import build_site

    monkeypatch.setenv("GPU_GLOSSARY_CACHE", str(tmp_path / "cache"))
    build_site(small, site_dir=small / "site")
    compiled = {p: p.stat().st_mtime_ns for p in (tmp_path / "cache" / "jinja").rglob("*.cache")}
    assert len(compiled) >= 10  # Material's base, partials and our overrides
    build_site(small, site_dir=small / "site")
    assert {
        p: p.stat().st_mtime_ns for p in (tmp_path / "cache" / "jinja").rglob("*.cache")
    } == compiled  # read, not rewritten
    for entry in compiled:  # damaged entries (a checksum that does not unpickle) are compiled again
        entry.write_bytes(jinja2.bccache.bc_magic + b"damaged")
    before = (small / "site/perf/alpha/index.html").read_bytes()
    build_site(small, site_dir=small / "site")
    assert (small / "site/perf/alpha/index.html").read_bytes() == before
    assert [entry for entry in compiled if entry.read_bytes() == jinja2.bccache.bc_magic + b"damaged"] == []
    main = small / "overrides" / "main.html"
    main.write_text(
        main.read_text(encoding="utf-8").replace("{% block content %}", "{% block content %}<p>edited-template</p>", 1),
        encoding="utf-8",
    )
    build_site(small, site_dir=small / "site")
    assert "<p>edited-template</p>" in (small / "site/perf/alpha/index.html").read_text(encoding="utf-8")


def test_an_empty_cache_setting_keeps_no_compiled_templates(tmp_path, monkeypatch):
    import jinja2

    from gpu_glossary.site.template_cache import with_bytecode_cache

    monkeypatch.setenv("GPU_GLOSSARY_CACHE", str(tmp_path))
    assert isinstance(with_bytecode_cache(jinja2.Environment()).bytecode_cache, jinja2.FileSystemBytecodeCache)
    monkeypatch.setenv("GPU_GLOSSARY_CACHE", "")
    assert with_bytecode_cache(jinja2.Environment()).bytecode_cache is None


def test_a_page_over_a_limit_fails_the_build_before_any_page_is_rendered(small):
    from gpu_glossary.site.build import SiteBuildError, build_site

    page = small / "glossary/en/perf/beta.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n" + "[" * 20000 + "\n", encoding="utf-8")
    with pytest.raises(SiteBuildError) as failure:
        build_site(small, site_dir=small / "site")
    line = page.read_text(encoding="utf-8").count("\n")
    assert f"glossary/en/perf/beta.md:{line}: error: paragraph holds 20,000 '['; the limit is 200" in str(failure.value)
