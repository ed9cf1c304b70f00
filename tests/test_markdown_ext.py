import markdown

from gpu_glossary.markdown_ext import GlossaryExtension, GlossaryState, TermInfo


def render(text: str, page_rel: str = "perf/occupancy.md") -> str:
    state = GlossaryState(
        abbreviations={"SM": "流式多处理器（Streaming Multiprocessor）", "PTX": "Parallel Thread Execution"},
        terms={"device-software/warp.md": TermInfo("Warp", "Thirty-two threads that execute together.")},
        page_rel=page_rel,
    )
    return markdown.markdown(text, extensions=["attr_list", "toc", GlossaryExtension(state)])


def test_abbreviation_expands_between_chinese_characters():
    html = render("每个SM有 4 个线程束调度器，每个 SM 都一样。")
    assert html.count('<abbr title="流式多处理器（Streaming Multiprocessor）">SM</abbr>') == 2


def test_abbreviation_needs_a_boundary_against_latin_letters_but_allows_plural():
    html = render("SMs and PTXAS and XSM and SM-level and PTX.")
    assert '<abbr title="流式多处理器（Streaming Multiprocessor）">SM</abbr>s and' in html
    assert "PTXAS" in html and "XSM" in html and ">SM</abbr>-level" in html
    assert html.count("<abbr") == 3


def test_no_abbreviation_inside_code_or_links_but_in_text_after_them():
    html = render("`SM` and [SM](x.md) then SM\n\n```\nSM\n```\n")
    assert "<code>SM</code>" in html
    assert '<a href="x.md">SM</a> then <abbr' in html
    assert html.count("<abbr") == 1


def test_heading_id_is_kept_and_heading_gets_abbreviation():
    html = render("## SM 的结构 {#structure}")
    assert 'id="structure"' in html and "<abbr" in html


def test_link_to_a_term_carries_its_summary():
    html = render("See [warps](../device-software/warp.md#divergence) and [other](../perf/nothing.md).")
    assert 'data-gg-summary="Thirty-two threads that execute together."' in html
    assert 'data-gg-title="Warp"' in html
    assert html.count("data-gg-summary") == 1


def test_no_preview_on_a_link_to_the_page_itself():
    assert "data-gg-summary" not in render("[me](warp.md)", page_rel="device-software/warp.md")
