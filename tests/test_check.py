"""Each mistake `gpu-glossary check` must catch, with its file, line and message.

The rules are checked on glossaries made in memory from page texts (no copy of the project);
the command line through click's runner on a small project; the real glossary as it is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ROOT, cli, small_project
from helpers import checker_messages as problems

from gpu_glossary.check import github_annotation, run_check
from gpu_glossary.glossary import load_glossary
from gpu_glossary.page import Problem, source_hash, with_source_hash
from gpu_glossary.translate.sections import SECTION_HASHES_KEY, recorded_hashes, section_hashes

WARP_EN = "glossary/en/device-software/warp.md"
WARP_ZH = "glossary/zh/device-software/warp.md"


def page(body: str, title: str = "Test term", summary: str = "A test.") -> str:
    return f"---\ntitle: {title}\nsummary: {summary}\n---\n\n{body}\n"


def starting(found: list[str], prefix: str) -> list[str]:
    """The messages that start with `prefix`: compare with an expected list, so a failure shows all."""
    return [message for message in found if message.startswith(prefix)]


WARP = page("A warp.\n\n## Divergence {#divergence}\n\nText.", title="Warp")


@pytest.mark.slow
def test_the_real_glossary_has_no_errors():
    assert [str(p) for p in run_check(ROOT) if p.severity == "error"] == []


def test_front_matter_that_does_not_parse_names_file_and_line():
    found = problems({"en/perf/broken.md": "---\ntitle: Broken\nsummary: a: b: c\n---\nbody\n"})
    assert found == [
        "glossary/en/perf/broken.md:3: error: front matter is not valid YAML: mapping values are not allowed here"
    ]


def test_missing_title_or_summary():
    assert problems({"en/perf/untitled.md": "---\nsummary: s\n---\nbody\n"}) == [
        "glossary/en/perf/untitled.md:1: error: front matter lacks 'title'"
    ]


def test_page_outside_sections_and_missing_from_nav():
    found = problems({"en/misc/stray.md": page("")}, nav=[])
    assert found == [
        "glossary/en/misc/stray.md:1: error: page is missing from the navigation: add 'misc/stray.md' to nav in mkdocs.yml",  # noqa: E501 -- one message, whole as printed
        "glossary/en/misc/stray.md:1: error: page is outside the sections "
        "(device-hardware, device-software, host-software, perf, systems): move it into one of them",
    ]


def test_duplicate_slug_and_title():
    found = problems({"en/device-software/warp.md": WARP, "en/perf/warp.md": page("text", title="Warp")})
    assert starting(found, "glossary/en/perf/warp.md:") == [
        "glossary/en/perf/warp.md:1: error: duplicate slug 'warp': glossary/en/device-software/warp.md has it too",
        "glossary/en/perf/warp.md:2: error: duplicate title 'Warp': glossary/en/device-software/warp.md has it too",
    ]


def test_broken_link_and_anchor_name_the_line():
    body = "See [warp](../device-software/warp.md#no-such-anchor).\n\n[gone](nowhere.md)\n\n[abs](/perf/occupancy.md)"
    found = problems({"en/device-software/warp.md": WARP, "en/perf/links.md": page(body)})
    assert found == [
        "glossary/en/perf/links.md:6: error: anchor '#no-such-anchor' does not exist in "
        "glossary/en/device-software/warp.md (ids: divergence)",
        "glossary/en/perf/links.md:8: error: link 'nowhere.md' points at perf/nowhere.md, "
        "which does not exist in glossary/en",
        "glossary/en/perf/links.md:10: error: site-absolute link '/perf/occupancy.md': use a relative .md link",
    ]


def test_link_into_untranslated_page_resolves_in_chinese():
    """A Chinese link to a page with no translation is fine: the site shows the English page."""
    texts = {
        "en/device-software/warp.md": WARP,
        "en/perf/occupancy.md": page("See [warp](../device-software/warp.md#divergence).", title="Occupancy"),
        "zh/perf/occupancy.md": page("见[线程束](../device-software/warp.md#divergence)。", title="占用率"),
    }
    assert problems(texts) == []


def test_missing_image_and_missing_alt(tmp_path):
    (tmp_path / "glossary/images").mkdir(parents=True)
    (tmp_path / "glossary/images/real.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>", encoding="utf-8")
    body = "![](../images/real.svg)\n\n![A chart](../images/missing.svg)\n\n![Remote](https://example.com/x.png)"
    assert problems({"en/perf/pictures.md": page(body)}, root=tmp_path) == [
        "glossary/en/perf/pictures.md:6: error: image '../images/real.svg' has no alt text: describe what it shows",
        "glossary/en/perf/pictures.md:6: error: image '../images/real.svg' has no dark variant: show it with "
        "#only-light next to ../images/real.dark.svg#only-dark (`gpu-glossary images --make-dark` draws it)",
        "glossary/en/perf/pictures.md:8: error: image '../images/missing.svg' does not exist "
        "(looked for glossary/images/missing.svg)",
        "glossary/en/perf/pictures.md:10: error: remote image 'https://example.com/x.png': "
        "`gpu-glossary images --localize` copies it into glossary/images/ (no hot-linking)",
    ]


def test_code_fence_never_closed_names_the_line_it_opened():
    assert problems({"en/perf/fence.md": page("Text.\n\n~~~~cuda\nint x;\n~~~\n\nMore text.")}) == [
        "glossary/en/perf/fence.md:8: error: code fence opened here is never closed: the rest of the page "
        "would render as code; add a closing ~~~~ line"
    ]


def test_a_page_saved_with_a_byte_order_mark_passes():
    assert problems({"en/device-software/warp.md": "\ufeff" + WARP}) == []


def test_code_fence_without_language():
    assert problems({"en/perf/fence.md": page("```\nplain\n```")}) == [
        "glossary/en/perf/fence.md:6: error: code fence has no language: write ```cuda, ```python, ```text, ```console …"  # noqa: E501 -- one message, whole as printed
    ]


def test_missing_and_stale_translations_are_warnings():
    occupancy = page("Occupancy.", title="Occupancy")
    texts = {
        "en/device-software/warp.md": WARP + "\nMore.\n",
        "en/perf/occupancy.md": occupancy,
        "zh/device-software/warp.md": with_source_hash(page("线程束。", title="线程束"), source_hash(WARP)),
    }
    assert problems(texts, "warning") == [
        "glossary/en/perf/occupancy.md:1: warning: no zh translation: glossary/zh/perf/occupancy.md is missing",
        "glossary/zh/device-software/warp.md:4: warning: translation may be out of date: "
        "glossary/en/device-software/warp.md changed since it was translated (source_hash does not match)",
    ]
    assert problems(texts) == []


def test_a_stale_translation_may_lack_the_new_code_of_its_english_page():
    english = WARP + "\n```python\nprint('new')\n```\n"
    chinese = page("线程束。\n\n## 分歧 {#divergence}\n\n正文。", title="线程束")
    texts = {
        "en/device-software/warp.md": english,
        "zh/device-software/warp.md": with_source_hash(chinese, source_hash(WARP)),
    }
    assert problems(texts) == [], "the translation pull request brings the new block; until then it is a warning"
    texts["zh/device-software/warp.md"] = with_source_hash(chinese, source_hash(english))  # current: checked
    assert problems(texts) == [
        "glossary/zh/device-software/warp.md:1: error: has 0 code block(s); glossary/en/device-software/warp.md has 1"
    ]


def test_avoided_chinese_variant():
    texts = {
        "en/device-software/warp.md": WARP,
        "zh/device-software/warp.md": page("每个经线有 32 个线程。", title="线程束"),
    }
    assert problems(texts) == [
        "glossary/zh/device-software/warp.md:6: error: '经线' is a variant the terminology file avoids: "
        "write '线程束' (warp)"
    ]


def test_chinese_page_without_english_page():
    assert problems({"zh/perf/orphan.md": page("孤立的页面。")}, nav=[]) == [
        "glossary/zh/perf/orphan.md:1: error: no English page en/perf/orphan.md: "
        "translate only pages that exist in glossary/en",
        "glossary/zh/perf/orphan.md:1: error: page is missing from the navigation: add 'perf/orphan.md' to nav in mkdocs.yml",  # noqa: E501 -- one message, whole as printed
    ]


# -- the command line ------------------------------------------------------------------
@pytest.fixture
def cli_project(tmp_path, monkeypatch) -> Path:
    """The small project (tests/helpers.py), its warp page given sections; the command line
    runs from inside it."""
    root = small_project(tmp_path / "project")
    for path, heading in (
        ("glossary/en/device-software/warp.md", "Why"),
        ("glossary/zh/device-software/warp.md", "为何"),
    ):
        text = (root / path).read_text(encoding="utf-8")
        (root / path).write_text(text + f"\n## {heading} {{#why}}\n\nText.\n", encoding="utf-8")
    english = load_glossary(root).source_hash_of("device-software/warp.md")
    zh = root / "glossary/zh/device-software/warp.md"
    zh.write_text(with_source_hash(zh.read_text(encoding="utf-8"), english), encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def test_a_project_without_mistakes_passes_the_check(cli_project):
    result = cli("check")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "0 error(s), 0 warning(s)\n")


@pytest.mark.parametrize(
    "content, error",
    [
        (b"\xff\xfe\x00garbage", "1: error: file is not valid UTF-8"),
        (b"---\n: : :\n---\n", "2: error: front matter is not valid YAML: expected <block end>, but found ':'"),
        (
            b"---\n- just\n- a list\n---\nbody\n",
            "2: error: front matter must be a mapping of keys (title: ..., summary: ...)",
        ),
        (b"---\ntitle: unterminated\n", "1: error: front matter is not closed: add a '---' line after it"),
        (b"", "1: error: no front matter: the page must start with a '---' block holding title and summary"),
        (
            b"---\ntitle: !!python/object:os.system x\nsummary: s\n---\n",
            "2: error: front matter is not valid YAML: could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object:os.system'",
        ),
    ],
)
def test_malformed_pages_never_crash_the_cli(cli_project, content, error):
    (cli_project / "glossary/en/perf/malformed.md").write_bytes(content)
    result = cli("check")
    assert result.exit_code == 1
    assert [line for line in result.stdout.split("\n") if ": error: " in line] == [
        f"glossary/en/perf/malformed.md:{error}"
    ]


def test_cli_exit_codes_and_github_annotations(cli_project):
    (cli_project / "glossary/en/perf/beta.md").write_text(page("```\nplain\n```", title="Beta"), encoding="utf-8")
    result = cli("check", env={"GITHUB_ACTIONS": "true"})
    assert result.exit_code == 1
    message = "code fence has no language: write ```cuda, ```python, ```text, ```console …"
    assert result.stdout.split("\n") == [
        f"glossary/en/perf/beta.md:6: error: {message}",
        f"::error file=glossary/en/perf/beta.md,line=6,title=gpu-glossary check::{message}",
        "glossary/zh/perf/beta.md:4: warning: translation may be out of date: glossary/en/perf/beta.md changed "
        "since it was translated (source_hash does not match)",
        "::warning file=glossary/zh/perf/beta.md,line=4,title=gpu-glossary check::translation may be out of date: "
        "glossary/en/perf/beta.md changed since it was translated (source_hash does not match)",
        "",
    ]


def test_annotation_escapes_newlines():
    assert (
        github_annotation(Problem("a.md", 2, "warning", "x\ny"))
        == "::warning file=a.md,line=2,title=gpu-glossary check::x%0Ay"
    )


def test_stamp_marks_a_translation_current(cli_project):
    english = cli_project / WARP_EN
    english.write_text(english.read_text(encoding="utf-8") + "\nMore.\n", encoding="utf-8")
    assert load_glossary(cli_project).translation_status("zh", "device-software/warp.md") == "stale"
    result = cli("stamp", WARP_ZH)
    assert result.exit_code == 0, result.stderr
    assert load_glossary(cli_project).translation_status("zh", "device-software/warp.md") == "current"
    refused = cli("stamp", WARP_EN)
    assert refused.exit_code == 1
    assert refused.stderr == f"{cli_project / WARP_EN}: error: not a translated page (English pages carry no hash)\n"


def test_stamp_records_section_hashes_only_where_the_sections_line_up(cli_project):
    chinese = cli_project / WARP_ZH
    original = chinese.read_text(encoding="utf-8")
    assert cli("stamp", WARP_ZH).exit_code == 0
    glossary = load_glossary(cli_project)
    recorded = recorded_hashes(glossary.page("zh", "device-software/warp.md"))
    assert recorded and recorded == section_hashes(glossary.page("en", "device-software/warp.md"))
    stamped = chinese.read_text(encoding="utf-8").split("\n")
    assert [row for row in stamped if not row.startswith(("source_hash:", "section_hashes:"))] == [
        row for row in original.split("\n") if not row.startswith("source_hash:")
    ]  # nothing else touched
    chinese.write_text(chinese.read_text(encoding="utf-8") + "\n## 多出的一节 {#extra}\n\n手写。\n", encoding="utf-8")
    assert cli("stamp", WARP_ZH).exit_code == 0  # a hand-made section the English page lacks: no section hashes
    assert SECTION_HASHES_KEY not in load_glossary(cli_project).page("zh", "device-software/warp.md").meta


# -- a translation's code, and limits no page may pass -------------------------------------
def errors(root: Path) -> list[str]:
    """The errors of the rules about the whole glossary (no page's own rules: they have their tests)."""
    return [str(p) for p in run_check(root, pages=set()) if p.severity == "error"]


def translated(english: str, chinese: str) -> dict[str, str]:
    """An English page and its current translation, as glossary texts."""
    return {
        "en/device-software/warp.md": english,
        "zh/device-software/warp.md": with_source_hash(chinese, source_hash(english)),
    }


def test_a_chinese_page_may_translate_comments_but_not_code_or_output():
    code = "```cuda\n__global__ void sum(float *x) {\n  x[0] += x[1];  // sum within the warp\n}\n```"
    english = page(f"A warp.\n\n{code}", title="Warp")
    comment = code.replace("// sum within the warp", "// 线程束内求和")
    assert (
        problems(translated(english, page(f"线程束。\n\n{comment}", title="线程束"))) == []
    )  # a translated comment is fine
    changed = comment.replace("x[0] += x[1];", "x[0] += x[1] + 1;")
    assert problems(translated(english, page(f"线程束。\n\n{changed}", title="线程束"))) == [
        "glossary/zh/device-software/warp.md:9: error: code block differs from glossary/en/device-software/warp.md:8: "
        "code line 2 (comments removed) is '  x[0] += x[1] + 1;', expected '  x[0] += x[1];' "
        "(only comments are translated)"
    ]


def test_an_output_block_of_a_chinese_page_is_the_english_one():
    # a listing, not an example's output (those are compared with their recorded runs instead)
    listing = "```text\n$ nvidia-smi -L\nGPU 0: NVIDIA H100\n```"
    english = page(f"A warp.\n\n{listing}", title="Warp")
    assert problems(translated(english, page(f"线程束。\n\n{listing}", title="线程束"))) == []
    changed = listing.replace("NVIDIA H100", "NVIDIA H100 改")
    assert problems(translated(english, page(f"线程束。\n\n{changed}", title="线程束"))) == [
        "glossary/zh/device-software/warp.md:9: error: code block differs from glossary/en/device-software/warp.md:8: "
        "code line 2 (comments removed) is 'GPU 0: NVIDIA H100 改', expected 'GPU 0: NVIDIA H100' "
        "(a ```text block (an example's output, a listing) is copied unchanged)"
    ]


def test_a_page_over_a_limit_is_an_error_and_is_never_rendered(monkeypatch):
    from gpu_glossary import render

    rendered: list[str] = []
    convert = render.Renderer._convert
    monkeypatch.setattr(render.Renderer, "_convert", lambda self, text: rendered.append(text) or convert(self, text))
    hostile = page("Intro.\n\n" + "[" * 5000 + "\n\nA NUL \x00 here.")
    found = problems({"en/perf/hostile.md": hostile}, rendered=True, root=ROOT)
    assert starting(found, "glossary/en/perf/hostile.md:") == [
        "glossary/en/perf/hostile.md:1: error: page holds 5,000 '[' outside code; the limit is 1,000",
        "glossary/en/perf/hostile.md:8: error: paragraph holds 5,000 '['; the limit is 200 "
        "(Markdown's time grows with their square)",
        "glossary/en/perf/hostile.md:10: error: holds 1 control or invalid character(s), the first U+0000: remove them",
    ]
    assert not [text for text in rendered if "[[[[" in text]  # Markdown alone takes seconds on it


def test_a_malformed_terminology_file_is_an_error_naming_its_line(project):
    path = project / "glossary/terminology.yml"
    text = path.read_text(encoding="utf-8")
    first = text.index("  - {en: warp,")
    path.write_text(text[:first] + "  - {en: Warp, zh: 线程束}\n" + text[first:], encoding="utf-8")
    line = text[:first].count("\n") + 2
    assert f"glossary/terminology.yml:{line}: error: 'warp' is listed twice (first on line {line - 1})" in errors(
        project
    )
