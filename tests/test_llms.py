import re
from pathlib import Path

from gpu_glossary.page import parse_page
from gpu_glossary.site.llms import SitePage, llms_full, llms_txt, markdown_twin


def make(rel: str, title: str, body: str) -> SitePage:
    text = f"---\ntitle: {title}\nsummary: About {title}.\n---\n\n{body}\n"
    page = parse_page(text, Path(rel), rel, rel, "en")
    return SitePage(page, rel.removesuffix(".md") + "/", title, page.summary, "Section")


def assert_llms_txt_format(text: str) -> None:
    """The llmstxt.org format: an H1, a blockquote summary, optional text without headings,
    then H2 sections that each hold a list of `- [name](url)` or `- [name](url): notes`."""
    lines = text.split("\n")
    assert re.fullmatch(r"# \S.*", lines[0]), lines[0]
    assert lines[1] == "" and re.fullmatch(r"> \S.*", lines[2]), lines[:3]
    headings = [line for line in lines if line.startswith("#")]
    assert headings[0] == lines[0] and all(re.fullmatch(r"## \S.*", h) for h in headings[1:]), headings
    section = None
    for line in lines[3:]:
        if line.startswith("## "):
            section = line
        elif line.strip():
            assert section is not None, f"text between the summary and the first section is a list: {line}"
            assert re.fullmatch(r"- \[[^\]]+\]\([^)\s]+\)(: \S.*)?", line), line


PAGES = [
    make(
        "device-software/warp.md",
        "Warp",
        "## Divergence {#divergence}\n\nSee [occupancy](../perf/occupancy.md#limits) and `[x](y.md)`.\n\n"
        "![A warp](../images/warp.svg)",
    ),
    make(
        "perf/occupancy.md",
        "Occupancy",
        "## Limits {#limits}\n\nWarps: [warp](../device-software/warp.md). [Paper](https://example.org/p.pdf)",
    ),
]
SITE = "https://example.test/"


def test_llms_txt_lists_every_page_with_summary_and_twin_url():
    home = SitePage(
        parse_page("---\ntitle: Home\nsummary: Start.\n---\n\nHi.\n", Path("index.md"), "index.md", "index.md", "en"),
        "",
        "GPU Glossary",
        "Start.",
        "",
    )
    text = llms_txt("GPU Glossary", "A glossary.", [home, *PAGES], SITE, "everything", "Overview")
    assert_llms_txt_format(text)
    assert text.startswith(
        "# GPU Glossary\n\n> A glossary.\n\n## Overview\n\n- [GPU Glossary](https://example.test/index.md): Start.\n"
    )
    assert "- [Warp](https://example.test/device-software/warp/index.md): About Warp.\n" in text
    assert "## Section" in text and "https://example.test/llms-full.txt" in text


def test_llms_full_links_point_inside_the_file():
    text = llms_full("GPU Glossary", "A glossary.", PAGES, SITE)
    targets = re.findall(r"\]\((#[^)]+)\)", text)
    assert targets == ["#perf-occupancy--limits", "#device-software-warp"]
    for target in targets:
        assert f"{{{target}}}" in text, f"no heading with id {target}"
    assert "`[x](y.md)`" in text  # inline code untouched
    assert "![A warp](https://example.test/images/warp.svg)" in text
    assert "(https://example.org/p.pdf)" in text


def test_markdown_twin_links_to_other_twins():
    by_rel = {p.page.rel: p for p in PAGES}
    text = markdown_twin(PAGES[0], by_rel, SITE)
    assert text.startswith("# Warp\n\n> About Warp.\n")
    assert "(https://example.test/perf/occupancy/index.md#limits)" in text


def test_llms_full_remakes_only_the_part_of_a_page_that_changed():
    parts: dict[str, tuple] = {}
    whole = llms_full("GPU Glossary", "All of it.", PAGES, "https://x.test/", parts)
    kept = dict(parts)
    edited = make(
        "perf/occupancy.md", "Occupancy", "## Limits {#limits}\n\nNow edited: [warp](../device-software/warp.md)."
    )
    again = llms_full("GPU Glossary", "All of it.", [PAGES[0], edited], "https://x.test/", parts)
    assert again == llms_full("GPU Glossary", "All of it.", [PAGES[0], edited], "https://x.test/")  # as made afresh
    assert again != whole and "Now edited: [warp](#device-software-warp)" in again
    assert parts["device-software/warp.md"] is kept["device-software/warp.md"]  # reused, not made again
    assert parts["perf/occupancy.md"] is not kept["perf/occupancy.md"]
