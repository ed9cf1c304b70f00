"""The built site (both languages, strict build), read as files."""

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
    zh_index = json.loads(read(fixture_site, "zh/search/search_index.json"))
    locations = {doc["location"].split("#")[0] for doc in zh_index["docs"]}
    assert "perf/beta/" not in locations
    assert "perf/alpha/" in locations


def test_stale_page_shows_notice_linking_to_english(fixture_site):
    html = read(fixture_site, "zh/perf/alpha/index.html")
    assert 'data-gg-notice="stale"' in html
    assert re.search(r'data-gg-notice="stale">\s*<p>[^<]*<a href="(\.\./)+perf/alpha/" hreflang="en">', html)
    assert "data-gg-notice" not in read(fixture_site, "zh/perf/index.html")


def test_search_indexes_hold_only_their_language(site):
    glossary = load_glossary(ROOT)
    en_index = json.loads(read(site, "search/search_index.json"))
    zh_index = json.loads(read(site, "zh/search/search_index.json"))
    assert en_index["config"]["lang"] == ["en"] and zh_index["config"]["lang"] == ["zh"]
    assert "\\u200b" in zh_index["config"]["separator"] or "\u200b" in zh_index["config"]["separator"]
    assert [doc["title"] for doc in en_index["docs"] if CJK.search(doc["title"])] == []
    translated = {(rel.removesuffix(".md") + "/").removesuffix("index/") for rel in glossary.pages["zh"]}
    for doc in zh_index["docs"]:
        page = doc["location"].split("#")[0].rstrip("/")
        page = page + "/" if page else ""
        assert page in translated or page in ("terms/", "terminology/"), doc["location"]


def test_english_index_keeps_chinese_words_unsegmented(site):
    """English search does not split on U+200B, so Chinese in English pages stays whole there."""
    en_index = json.loads(read(site, "search/search_index.json"))
    terminology = next(doc for doc in en_index["docs"] if doc["location"] == "terminology/")
    assert "线程束" in terminology["text"]
    assert [doc["location"] for doc in en_index["docs"] if "\u200b" in doc["text"] or "\u200b" in doc["title"]] == []


def test_chinese_index_keeps_terminology_words_whole(site):
    zh_index = json.loads(read(site, "zh/search/search_index.json"))
    text = " ".join(doc["text"] for doc in zh_index["docs"])
    assert "\u200b线程束调度器\u200b" in text or "\u200b线程束调度器" in text
    assert "\u200b共享内存" in text


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


def test_referenced_by_lists_pages_linking_here(site):
    html = read(site, "device-software/warp/index.html")
    section = html[html.index('id="referenced-by"') :]
    assert "streaming-multiprocessor/" in section
    zh_html = read(site, "zh/device-software/warp/index.html")
    assert "引用本页的页面" in zh_html


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
    the environment of its own build, and what the server loaded (jieba's dictionary, with its
    "Building prefix dict" lines) must not print on the builder's terminal."""
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


def test_search_entries_carry_term_names_and_reference_boost(site):
    index = json.loads(read(site, "search/search_index.json"))
    page_docs = {doc["location"]: doc for doc in index["docs"] if "#" not in doc["location"]}
    warp, warpgroup = page_docs["device-software/warp/"], page_docs["device-software/warpgroup/"]
    assert warp["tags"] == ["Warp"]
    assert warp["boost"] > warpgroup["boost"] >= 1  # more pages link to Warp
    zh_docs = {doc["location"]: doc for doc in json.loads(read(site, "zh/search/search_index.json"))["docs"]}
    assert zh_docs["device-software/warp/"]["tags"] == ["线程束", "Warp"]


def test_search_indexes_are_compact_utf8_without_repeated_or_useless_entries(site):
    for prefix in ("", "zh/"):
        raw = (site.dir / prefix / "search/search_index.json").read_bytes()
        text = raw.decode("utf-8")
        # UTF-8, not ASCII-escaped (\u7ebf: twice the bytes for Chinese), and no spaces between tokens
        assert text == json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
        docs = json.loads(text)["docs"]
        locations = [doc["location"] for doc in docs]
        assert not [loc for loc in locations if loc.endswith("#referenced-by")]
        assert "terms/" in locations and not [loc for loc in locations if loc.startswith("terms/#")]
        assert not [doc["location"] for doc in docs if "#" in doc["location"] and "tags" in doc]
        sections = [doc for doc in docs if doc["location"].startswith("device-software/warp/#")]
        assert sections and all(
            doc.get("boost") == docs[locations.index("device-software/warp/")]["boost"] for doc in sections
        )
    assert "线程束" in (site.dir / "zh/search/search_index.json").read_text(encoding="utf-8")


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
    from gpu_glossary.examples.model import load_runs

    record = load_runs(ROOT).records["perf/memory-coalescing.md#coalescing"]
    expected = {
        "perf/memory-coalescing/index.html": f"<strong>Output on {record.device}</strong> · driver {record.driver} · CUDA {record.cuda}",
        "zh/perf/memory-coalescing/index.html": f"<strong>输出来自 {record.device}</strong> · 驱动 {record.driver} · CUDA {record.cuda}",
    }
    for path, line in expected.items():
        html = read(site, path)
        assert f'<p class="gg-run">{line} · <time datetime="{record.date}">{record.date}</time></p>' in html, path
    pages_with_examples = {e.page.rel for e in _all_examples()}
    for rel in pages_with_examples:
        html = read(site, rel.removesuffix(".md") + "/index.html")
        assert 'class="gg-run"' in html, rel


def _all_examples():
    from gpu_glossary.examples.model import all_examples

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
