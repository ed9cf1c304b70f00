import markdown
from helpers import ROOT

from gpu_glossary.glossary import load_glossary
from gpu_glossary.site.generated_pages import index_page, terminology_page
from gpu_glossary.terminology import load_terminology


def body(page_markdown: str) -> str:
    return page_markdown.split("---\n", 2)[2]


def test_index_lists_every_term_once_under_its_letter_with_plain_summaries():
    glossary = load_glossary(ROOT)
    text = index_page(glossary, "en")
    for page in glossary.term_pages("en"):
        assert text.count(f"]({page.rel})") == 1
    html = markdown.markdown(body(text), extensions=["attr_list"])
    assert "<strong>global</strong>" not in html and "__global__" in html  # a summary is text, not Markdown
    assert (
        text.index("## K {#k data-search-exclude}")
        < text.index("device-software/kernel.md")
        < text.index("## N {#n data-search-exclude}")
    )


def test_chinese_index_shows_english_term_and_full_width_punctuation():
    text = index_page(load_glossary(ROOT), "zh")
    assert "**[线程束（Warp）](device-software/warp.md)**：" in text
    assert "（SM）：" in text


def test_terminology_page_has_a_row_per_term():
    terminology = load_terminology(ROOT / "glossary/terminology.yml")
    text = terminology_page(terminology, "zh")
    assert "| warp | 线程束 | 经线、翘曲、线程包 |" in text
    assert "| driver | 驱动程序 | 驱动程序版本 → 驱动版本、驱动程序分支 → 驱动分支 |" in text
    assert text.count("\n| ") == len(terminology.terms) + 1
