"""The live preview's builder: what an edit rebuilds in each language (planned without building),
and a site kept up to date page by page that is, file for file, the site a whole build makes."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import edit, small_project

from gpu_glossary.glossary import LANGUAGES, load_glossary
from gpu_glossary.site.build import SiteBuildError, build_site
from gpu_glossary.site.preview import PreviewBuilder

ADDRESS = "http://127.0.0.1:9/"


@pytest.fixture
def planner(tmp_path):
    """A PreviewBuilder of the small project that believes both languages are built as they are
    on disk (no worker, no build: only its plan is asked for)."""
    root = small_project(tmp_path / "project")
    builder = PreviewBuilder(root, root / "site", ADDRESS)
    glossary = load_glossary(root)
    builder.built = {lang: glossary for lang in LANGUAGES}
    builder._stale = set()
    return root, builder


def planned(builder: PreviewBuilder, *paths: Path) -> tuple[list[str], dict[str, list[str]]]:
    plan = builder.plan(set(paths))
    return sorted(plan.whole), {lang: sorted(rels) for lang, rels in plan.pages.items() if rels}


def test_a_prose_edit_rebuilds_the_page_and_its_translation_s_notice(planner):
    root, builder = planner
    alpha = edit(root / "glossary/en/perf/alpha.md", "Alpha comes before", "Alpha now precedes")
    # The Chinese alpha page was current: it becomes stale, so its notice changes.
    assert planned(builder, alpha) == ([], {"en": ["perf/alpha.md"], "zh": ["perf/alpha.md"]})


def test_an_english_edit_shows_in_chinese_where_it_has_no_translation(planner):
    root, builder = planner
    (root / "glossary/zh/perf/beta.md").unlink()  # the Chinese site shows the English page
    builder.built = {lang: load_glossary(root) for lang in LANGUAGES}
    beta = edit(root / "glossary/en/perf/beta.md", "Beta comes after", "Beta follows")
    assert planned(builder, beta) == ([], {"en": ["perf/beta.md"], "zh": ["perf/beta.md"]})


def test_an_english_edit_leaves_a_stale_translation_alone(planner):
    root, builder = planner
    alpha = edit(root / "glossary/en/perf/alpha.md", "Alpha comes before", "Alpha now precedes")
    builder.built = {lang: load_glossary(root) for lang in LANGUAGES}
    assert builder.built["zh"].translation_status("zh", "perf/alpha.md") == "stale"
    edit(alpha, "Alpha now precedes", "Alpha precedes")  # the notice stays as it is
    assert planned(builder, alpha) == ([], {"en": ["perf/alpha.md"]})


def test_a_chinese_edit_rebuilds_only_the_chinese_page(planner):
    root, builder = planner
    beta = edit(root / "glossary/zh/perf/beta.md", "Beta comes after", "Beta 在后")
    assert planned(builder, beta) == ([], {"zh": ["perf/beta.md"]})


def test_a_new_or_dropped_link_rebuilds_the_page_it_points_at(planner):
    root, builder = planner
    beta = edit(root / "glossary/zh/perf/beta.md", "Beta comes after", "Beta 见 [warp](../device-software/warp.md)")
    assert planned(builder, beta) == ([], {"zh": ["device-software/warp.md", "perf/beta.md"]})
    builder.built["zh"] = load_glossary(root)
    edit(beta, "Beta 见 [warp](../device-software/warp.md)", "Beta 在后")  # and dropped again
    assert planned(builder, beta) == ([], {"zh": ["device-software/warp.md", "perf/beta.md"]})


@pytest.mark.parametrize(
    "path, old, new, whole",
    [
        ("glossary/en/perf/beta.md", "title: Beta", "title: Beta two", ["en", "zh"]),  # shown in previews, nav
        ("glossary/en/perf/beta.md", "summary: The second term.", "summary: Another.", ["en", "zh"]),
        ("glossary/zh/perf/beta.md", "title: Beta（中文）", "title: 贝塔", ["zh"]),
        ("mkdocs.zh.yml", "site_name: GPU 术语表", "site_name: GPU 词汇", ["zh"]),
        ("mkdocs.yml", "site_name: GPU Glossary", "site_name: GPU Terms", ["en", "zh"]),
        ("glossary/terminology.yml", "terms:", "terms:  ", ["en", "zh"]),
    ],
)
def test_what_other_pages_show_rebuilds_the_language_whole(planner, path, old, new, whole):
    root, builder = planner
    assert planned(builder, edit(root / path, old, new)) == (whole, {})


def test_a_page_added_or_removed_rebuilds_whole(planner):
    root, builder = planner
    new = root / "glossary/zh/perf/gamma.md"
    new.write_text("---\ntitle: 伽马\nsummary: 第三个。\n---\n\n正文。\n", encoding="utf-8")
    assert planned(builder, new) == (["zh"], {})
    removed = root / "glossary/en/perf/beta.md"
    removed.unlink()
    assert planned(builder, removed) == (["en", "zh"], {})


def test_a_page_s_edit_is_checked_and_so_are_links_into_it_when_its_headings_change(planner):
    root, builder = planner
    alpha = edit(root / "glossary/en/perf/alpha.md", "Alpha comes before", "## Part {#part}\n\nAlpha comes before")
    edit(root / "glossary/en/perf/beta.md", "[alpha](alpha.md)", "[alpha](alpha.md#part)")
    builder.built = {lang: load_glossary(root) for lang in LANGUAGES}
    edit(alpha, "## Part {#part}", "## Whole {#whole}")  # beta's link into it breaks
    with pytest.raises(SiteBuildError) as failure:
        builder._check(builder.plan({alpha}))
    assert str(failure.value).split("\n") == [
        "glossary/en/perf/beta.md:6: error: anchor '#part' does not exist in glossary/en/perf/alpha.md (ids: whole)",
        "1 error(s) in the glossary pages; `gpu-glossary check` shows them too",
    ]
    edit(alpha, "## Whole {#whole}", "## Part {#part}\n\nMore prose.")  # the headings as built: the link holds
    builder._check(builder.plan({alpha}))


def test_the_preview_site_is_the_site_a_whole_build_makes(small, tmp_path):
    """Page by page, through edits of both languages, a new link, a failed round and a title
    change: every file of the served site is byte for byte what a whole build writes."""
    root = small
    en, zh = root / "glossary/en", root / "glossary/zh"
    builder = PreviewBuilder(root, root / "site", ADDRESS)
    try:
        assert builder(None) == "en (whole), zh (whole)"
        steps = [
            (en / "perf/alpha.md", "Alpha comes before", "Alpha now precedes", "1 en page(s), 1 zh page(s)"),
            (
                en / "perf/beta.md",
                "comes after",
                "links [warp](../device-software/warp.md), after",
                "2 en page(s), 1 zh page(s)",
            ),
            (zh / "perf/beta.md", "Beta comes after", "Beta 在后", "1 zh page(s)"),
            (
                en / "device-software/warp.md",
                "A warp reads",
                "A warp, with `code`, reads",
                "1 en page(s), 1 zh page(s)",
            ),
        ]
        for path, old, new, rebuilt in steps:
            assert builder({edit(path, old, new)}) == rebuilt, path
        broken = edit(en / "perf/alpha.md", "Alpha now precedes", "Alpha links [nothing](nothing.md)")
        with pytest.raises(SiteBuildError, match="glossary/en/perf/alpha.md:6: error: link 'nothing.md'"):
            builder({broken})
        edit(broken, "Alpha links [nothing](nothing.md)", "Alpha is fixed")
        assert builder({broken}) == "1 en page(s)"  # its Chinese page was stale already
        assert builder({edit(zh / "perf/alpha.md", "title: Alpha（中文）", "title: 阿尔法")}) == "zh (whole)"
    finally:
        builder.close()
    build_site(root, site_dir=tmp_path / "whole", site_url=ADDRESS)
    preview, whole = root / "site", tmp_path / "whole"
    files = sorted(p.relative_to(whole).as_posix() for p in whole.rglob("*") if p.is_file())
    assert sorted(p.relative_to(preview).as_posix() for p in preview.rglob("*") if p.is_file()) == files
    assert [f for f in files if (preview / f).read_bytes() != (whole / f).read_bytes()] == []
    assert "Beta 在后" in (preview / "zh/perf/beta/index.html").read_text(encoding="utf-8")


def test_after_a_worker_dies_the_next_round_builds_whole_again(small):
    root = small
    builder = PreviewBuilder(root, root / "site", ADDRESS)
    try:
        builder(None)
        builder._workers["zh"].process.kill()
        builder._workers["zh"].process.join()
        beta = edit(root / "glossary/zh/perf/beta.md", "Beta comes after", "Beta 在后")
        with pytest.raises(RuntimeError, match="the zh preview worker failed:\nthe process ended"):
            builder({beta})
        assert builder({beta}) == "en (whole), zh (whole)"  # unsure of the workers' state: everything
        assert "Beta 在后" in (root / "site/zh/perf/beta/index.html").read_text(encoding="utf-8")
    finally:
        builder.close()
