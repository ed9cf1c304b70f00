"""Conventions of Chinese pages, each made and fixed in a page string."""

from pathlib import Path

from gpu_glossary.page import parse_page
from gpu_glossary.zh_style import style_problems

HEAD = "---\ntitle: 测试\nsummary: 测试页面。\n---\n\n"  # the body starts on line 6


def problems(body: str) -> list[str]:
    page = parse_page(HEAD + body, Path("glossary/zh/perf/test.md"), "glossary/zh/perf/test.md", "perf/test.md", "zh")
    return [str(problem) for problem in style_problems(page)]


def test_gloss_inside_link_text_is_an_error_with_the_fix():
    assert problems("每个[线程束（warp）](../device-software/warp.md)有 32 个线程。") == [
        "glossary/zh/perf/test.md:6: error: English gloss inside the link text '[线程束（warp）]': "
        "put it after the link, '[线程束](…)（warp）'"
    ]
    assert problems("每个[线程束 (warp)](warp.md)有 32 个线程。") != []
    assert problems("每个[线程束](../device-software/warp.md)（warp）有 32 个线程。") == []
    assert problems("见 [H100（SXM5）](h100.md)。") == []  # a Latin term with a remark is no gloss


def test_a_source_description_in_parentheses_is_no_gloss():
    body = "## 参考资料 {#sources}\n\n- [NVIDIA Container Toolkit release notes（CUDA 前向兼容支持）](https://x.test/)"
    assert problems(body) == []


def test_full_width_colon_in_an_english_source_title():
    body = (
        "正文里可以用全角冒号，比如 SM：四个子分区。\n\n## 参考资料 {#sources}\n\n"
        "- [CUDA Driver API：Rules for version mixing](https://x.test/)"
    )
    assert problems(body) == [
        "glossary/zh/perf/test.md:10: error: full-width colon after the English title 'CUDA Driver API：': "
        "Sources keep the title's ASCII colon and a space, 'CUDA C++ Programming Guide: …'"
    ]
    assert problems(body.replace("API：Rules", "API: Rules")) == []
    chinese_titles = "## 参考资料 {#sources}\n\n- [CUTLASS 示例 48：Hopper GEMM](https://x.test/)\n- [发布说明（CTK 13.2：Ampere）](https://x.test/)"
    assert problems(chinese_titles) == []  # a Chinese title or description keeps its full-width colon


def test_ascii_quotes_in_chinese_text():
    body = '- [Volkov，"Better Performance at Lower Occupancy"，GTC 2010](https://x.test/ "title")'
    assert problems(body) == [
        'glossary/zh/perf/test.md:6: error: ASCII quotes around "Better Performance at Lower Occupancy": '
        "Chinese text, paper titles included, quotes with “…”: “Better Performance at Lower Occupancy”"
    ]
    assert problems(body.replace('"Better', "“Better").replace('Occupancy"', "Occupancy”")) == []
    assert problems('用 `printf("%d")` 打印，<img alt="图" src="x.svg"> 不算。') == []  # code and HTML
    # Markdown's own quoted titles: an admonition's and a content tab's
    assert problems('!!! tip "刚接触 GPU？从这里开始"\n\n    正文。\n\n=== "中文标签"\n\n    正文。') == []
    assert problems('他说 "刚接触 GPU？从这里开始"。') != []


def test_bold_that_ends_in_punctuation_needs_a_space_after_it():
    assert problems("- **重新编译。**新的形状会触发编译。") == [
        "glossary/zh/perf/test.md:6: error: no space after the bold text '**重新编译。**': a bold run that "
        "ends in punctuation needs a space after it ('**重新编译。** 新…'), or CommonMark renderers leave it unclosed"
    ]
    assert problems("- **重新编译。** 新的形状会触发编译。") == []
    assert problems("- **重新编译**：新的形状会触发编译。") == []  # punctuation after it is fine
    assert problems("这叫“**流**”。") == []
    assert len(problems("这叫**“流”**的东西")) == 2  # opens after 叫 and closes before 的: neither works


def test_nested_full_width_parentheses():
    assert problems("功耗上限（H100 SXM5 为 700 W，即其[热设计功耗](tdp.md)（TDP））。") == [
        "glossary/zh/perf/test.md:6: error: '（TDP）' sits inside another pair of full-width parentheses: "
        "separate it with '，' (“（H100 SXM5 为 700 W，即其[热设计功耗](…)，TDP）”) or move it out of the brackets"
    ]
    assert problems("功耗上限（H100 SXM5 为 700 W，即其[热设计功耗](tdp.md)，TDP）。") == []
    assert problems("见（一）和（二）。") == []


def test_code_is_never_read():
    assert problems('```cuda\n// [线程束（warp）](x.md) "a" **粗体。**字（a（b））\n```') == []
