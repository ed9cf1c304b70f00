"""Each mistake `gpu-glossary check` must catch, made in a copy of the real glossary."""

import subprocess
import sys
from pathlib import Path

import pytest

from gpu_glossary import check
from gpu_glossary.check import github_annotation, run_check
from gpu_glossary.glossary import load_glossary
from gpu_glossary.page import with_front_matter, with_source_hash
from gpu_glossary.translate.sections import SECTION_HASHES_KEY, recorded_hashes, section_hashes

ROOT = Path(__file__).resolve().parents[1]
WARP_EN = "glossary/en/device-software/warp.md"
WARP_ZH = "glossary/zh/device-software/warp.md"


def errors(project: Path) -> list[str]:
    return [str(p) for p in run_check(project) if p.severity == "error"]


def page(body: str, title: str = "Test term", summary: str = "A test.") -> str:
    return f"---\ntitle: {title}\nsummary: {summary}\n---\n\n{body}\n"


def add_page(project: Path, rel: str, text: str, nav: bool = True) -> None:
    (project / rel).parent.mkdir(parents=True, exist_ok=True)
    (project / rel).write_text(text, encoding="utf-8")
    if nav:
        lang_rel = rel.split("/", 2)[2]
        config = project / "mkdocs.yml"
        config.write_text(
            config.read_text(encoding="utf-8").replace("  - terms.md\n", f"  - {lang_rel}\n  - terms.md\n"),
            encoding="utf-8",
        )


def test_the_real_glossary_has_no_errors():
    assert errors(ROOT) == []


def test_front_matter_that_does_not_parse_names_file_and_line(project):
    add_page(project, "glossary/en/perf/broken.md", "---\ntitle: Broken\nsummary: a: b: c\n---\nbody\n")
    assert any(
        e.startswith("glossary/en/perf/broken.md:3: error: front matter is not valid YAML") for e in errors(project)
    )


def test_missing_title_or_summary(project):
    add_page(project, "glossary/en/perf/untitled.md", "---\nsummary: s\n---\nbody\n")
    assert "glossary/en/perf/untitled.md:1: error: front matter lacks 'title'" in errors(project)


def test_page_outside_sections_and_missing_from_nav(project):
    add_page(project, "glossary/en/misc/stray.md", page(""), nav=False)
    found = errors(project)
    assert any("glossary/en/misc/stray.md:1: error: page is outside the sections" in e for e in found)
    assert any("glossary/en/misc/stray.md:1: error: page is missing from the navigation" in e for e in found)


def test_duplicate_slug_and_title(project):
    add_page(project, "glossary/en/perf/warp.md", page("text", title="Warp"))
    found = errors(project)
    assert any("duplicate slug 'warp'" in e for e in found)
    assert any("duplicate title 'Warp'" in e for e in found)


def test_broken_link_and_anchor_name_the_line(project):
    add_page(
        project,
        "glossary/en/perf/links.md",
        page(
            "See [warp](../device-software/warp.md#no-such-anchor).\n\n[gone](nowhere.md)\n\n[abs](/perf/occupancy.md)"
        ),
    )
    found = errors(project)
    assert any(
        e.startswith("glossary/en/perf/links.md:6: error: anchor '#no-such-anchor' does not exist") for e in found
    )
    assert (
        "glossary/en/perf/links.md:8: error: link 'nowhere.md' points at perf/nowhere.md, which does not exist in glossary/en"
        in found
    )
    assert any(e.startswith("glossary/en/perf/links.md:10: error: site-absolute link") for e in found)


def test_link_into_untranslated_page_resolves_in_chinese(project):
    """A Chinese link to a page with no translation is fine: the site shows the English page."""
    (project / "glossary/zh/perf/occupancy.md").unlink()
    assert not any("occupancy" in e for e in errors(project))


def test_missing_image_and_missing_alt(project):
    (project / "glossary/images").mkdir(exist_ok=True)
    (project / "glossary/images/real.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>", encoding="utf-8")
    add_page(
        project,
        "glossary/en/perf/pictures.md",
        page("![](../images/real.svg)\n\n![A chart](../images/missing.svg)\n\n![Remote](https://example.com/x.png)"),
    )
    found = errors(project)
    assert any(
        e.startswith("glossary/en/perf/pictures.md:6: error: image '../images/real.svg' has no alt text") for e in found
    )
    assert any(
        e.startswith("glossary/en/perf/pictures.md:8: error: image '../images/missing.svg' does not exist")
        for e in found
    )
    assert any(e.startswith("glossary/en/perf/pictures.md:10: error: remote image") for e in found)


def test_code_fence_never_closed_names_the_line_it_opened(project):
    add_page(project, "glossary/en/perf/fence.md", page("Text.\n\n~~~~cuda\nint x;\n~~~\n\nMore text."))
    found = errors(project)
    assert (
        "glossary/en/perf/fence.md:8: error: code fence opened here is never closed: the rest of the page would render as code; add a closing ~~~~ line"
        in found
    )


def test_a_page_saved_with_a_byte_order_mark_passes(project):
    path = project / WARP_EN
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert not [e for e in errors(project) if WARP_EN in e]


def test_code_fence_without_language(project):
    add_page(project, "glossary/en/perf/fence.md", page("```\nplain\n```"))
    assert any(e.startswith("glossary/en/perf/fence.md:6: error: code fence has no language") for e in errors(project))


def test_missing_and_stale_translations_are_warnings(project):
    (project / "glossary/zh/perf/occupancy.md").unlink()
    english = project / WARP_EN
    english.write_text(english.read_text(encoding="utf-8") + "\nMore.\n", encoding="utf-8")
    problems = [str(p) for p in run_check(project)]
    assert (
        "glossary/en/perf/occupancy.md:1: warning: no zh translation: glossary/zh/perf/occupancy.md is missing"
        in problems
    )
    assert any(
        p.startswith(f"{WARP_ZH}:") and ": warning: translation may be out of date: " + WARP_EN in p for p in problems
    )
    assert errors(project) == []


def test_a_stale_translation_may_lack_the_new_code_of_its_english_page(project):
    english = project / WARP_EN
    english.write_text(english.read_text(encoding="utf-8") + "\n```python\nprint('new')\n```\n", encoding="utf-8")
    assert errors(project) == [], "the translation pull request brings the new block; until then it is a warning"


def test_avoided_chinese_variant(project):
    path = project / WARP_ZH
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    body_line = next(
        i
        for i, row in enumerate(lines)
        if row and not row.startswith(("---", "title", "summary", "abbreviation", "aliases", "source_hash")) and i > 3
    )
    lines[body_line] = lines[body_line] + "每个经线有 32 个线程。"
    path.write_text("\n".join(lines), encoding="utf-8")
    assert (
        f"{WARP_ZH}:{body_line + 1}: error: '经线' is a variant the terminology file avoids: write '线程束' (warp)"
        in errors(project)
    )


def test_chinese_page_without_english_page(project):
    add_page(project, "glossary/zh/perf/orphan.md", page("孤立的页面。"), nav=False)
    assert any("glossary/zh/perf/orphan.md:1: error: no English page" in e for e in errors(project))


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe\x00garbage",
        b"---\n: : :\n---\n",
        b"---\n- just\n- a list\n---\nbody\n",
        b"---\ntitle: unterminated\n",
        b"",
        b"---\ntitle: !!python/object:os.system x\nsummary: s\n---\n",
    ],
)
def test_malformed_pages_never_crash_the_cli(project, content):
    target = project / "glossary/en/perf/malformed.md"
    target.write_bytes(content)
    result = subprocess.run(
        [sys.executable, "-m", "gpu_glossary.cli", "check"], cwd=project, capture_output=True, text=True
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    assert "glossary/en/perf/malformed.md:" in result.stdout


def test_cli_exit_codes_and_github_annotations(project):
    ok = subprocess.run(
        [sys.executable, "-m", "gpu_glossary.cli", "check"], cwd=project, capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stdout
    add_page(project, "glossary/en/perf/fence.md", page("```\nplain\n```"))
    env = {"GITHUB_ACTIONS": "true", "PATH": "/usr/bin:/bin"}
    bad = subprocess.run(
        [sys.executable, "-m", "gpu_glossary.cli", "check"], cwd=project, capture_output=True, text=True, env=env
    )
    assert bad.returncode == 1
    assert "glossary/en/perf/fence.md:6: error: code fence has no language" in bad.stdout
    assert (
        "::error file=glossary/en/perf/fence.md,line=6,title=gpu-glossary check::code fence has no language"
        in bad.stdout
    )


def test_annotation_escapes_newlines():
    from gpu_glossary.page import Problem

    assert (
        github_annotation(Problem("a.md", 2, "warning", "x\ny"))
        == "::warning file=a.md,line=2,title=gpu-glossary check::x%0Ay"
    )


def test_stamp_marks_a_translation_current(project):
    english = project / WARP_EN
    english.write_text(english.read_text(encoding="utf-8") + "\nMore.\n", encoding="utf-8")
    assert load_glossary(project).translation_status("zh", "device-software/warp.md") == "stale"
    result = subprocess.run(
        [sys.executable, "-m", "gpu_glossary.cli", "stamp", WARP_ZH], cwd=project, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert load_glossary(project).translation_status("zh", "device-software/warp.md") == "current"
    refused = subprocess.run(
        [sys.executable, "-m", "gpu_glossary.cli", "stamp", WARP_EN], cwd=project, capture_output=True, text=True
    )
    assert refused.returncode == 1 and "not a translated page" in refused.stderr


def test_with_source_hash_adds_or_replaces_only_that_key():
    assert with_source_hash("---\ntitle: a\n---\nbody\n", "abc") == "---\ntitle: a\nsource_hash: abc\n---\nbody\n"
    assert (
        with_source_hash("---\nsource_hash: old\ntitle: a\n---\nx\n---\n", "new")
        == "---\nsource_hash: new\ntitle: a\n---\nx\n---\n"
    )


def test_stamp_records_section_hashes_only_where_the_sections_line_up(project):
    def stamp():
        command = [sys.executable, "-m", "gpu_glossary.cli", "stamp", WARP_ZH]
        return subprocess.run(command, cwd=project, capture_output=True, text=True)

    chinese = project / WARP_ZH
    original = chinese.read_text(encoding="utf-8")
    assert stamp().returncode == 0
    glossary = load_glossary(project)
    recorded = recorded_hashes(glossary.page("zh", "device-software/warp.md"))
    assert recorded == section_hashes(glossary.page("en", "device-software/warp.md"))
    stamped = chinese.read_text(encoding="utf-8").split("\n")
    assert [row for row in stamped if not row.startswith(("source_hash:", "section_hashes:"))] == [
        row for row in original.split("\n") if not row.startswith("source_hash:")
    ]  # nothing else touched
    chinese.write_text(chinese.read_text(encoding="utf-8") + "\n## 多出的一节 {#extra}\n\n手写。\n", encoding="utf-8")
    assert stamp().returncode == 0  # a hand-made section the English page lacks: no section hashes
    assert SECTION_HASHES_KEY not in load_glossary(project).page("zh", "device-software/warp.md").meta


def test_with_front_matter_sets_quotes_and_removes_keys():
    assert (
        with_front_matter("---\ntitle: a\nx: 1\n---\nb\n", {"x": None, "h": "0123 abcd"})
        == "---\ntitle: a\nh: 0123 abcd\n---\nb\n"
    )
    assert with_front_matter("---\ntitle: a\n---\nb\n", {"h": "12345678"}) == "---\ntitle: a\nh: '12345678'\n---\nb\n"


# -- a translation's code, and limits no page may pass -------------------------------------
def test_a_chinese_page_may_translate_comments_but_not_code_or_output(project):
    zh = project / WARP_ZH
    text = zh.read_text(encoding="utf-8")
    english = load_glossary(project).page("en", "device-software/warp.md")
    fence = english.fences()[0]
    comment = next(line for line in fence.code.split("\n") if "//" in line)
    translated = text.replace(comment, comment.split("//")[0] + "// 线程束内求和")
    zh.write_text(translated, encoding="utf-8")
    assert not [e for e in errors(project) if WARP_ZH in e]  # a translated comment is fine
    code_line = next(line for line in fence.code.split("\n") if line.strip() and "//" not in line)
    zh.write_text(
        translated.replace(code_line, code_line + " ", 1).replace(code_line + " ", code_line + "+1", 1),
        encoding="utf-8",
    )
    found = [e for e in errors(project) if WARP_ZH in e]
    assert len(found) == 1 and "code block differs from glossary/en/device-software/warp.md" in found[0]
    assert "(comments removed)" in found[0] and "only comments are translated" in found[0]


def test_an_output_block_of_a_chinese_page_is_the_english_one(project):
    glossary = load_glossary(project)
    # a listing, not an example's output (those are compared with their recorded runs instead)
    rel, chinese, block = next(
        (rel, page, fence)
        for rel, page in sorted(glossary.pages["zh"].items())
        for fence in page.fences()
        if fence.lang == "text" and fence.line not in check._recorded_output_lines(page)
    )
    lines = chinese.text.split("\n")
    lines[block.line] += " 改"
    chinese.path.write_text("\n".join(lines), encoding="utf-8")
    found = [e for e in errors(project) if f"glossary/zh/{rel}:{block.line}:" in e]
    assert found and "a ```text block (an example's output, a listing) is copied unchanged" in found[0]


def test_a_page_over_a_limit_is_an_error_and_is_never_rendered(project, monkeypatch):
    from gpu_glossary import render

    rendered: list[str] = []
    convert = render.Renderer._convert
    monkeypatch.setattr(render.Renderer, "_convert", lambda self, text: rendered.append(text) or convert(self, text))
    add_page(project, "glossary/en/perf/hostile.md", page("Intro.\n\n" + "[" * 5000 + "\n\nA NUL \x00 here."))
    found = [e for e in errors(project) if "hostile.md" in e]
    assert "glossary/en/perf/hostile.md:8: error: paragraph holds 5,000 '['; the limit is 200" in "\n".join(found)
    assert "glossary/en/perf/hostile.md:10: error: holds 1 control or invalid character(s), the first U+0000" in (
        "\n".join(found)
    )
    assert not [text for text in rendered if "[[[[" in text]  # Markdown alone takes about 10 s on it


def test_a_malformed_terminology_file_is_an_error_naming_its_line(project):
    path = project / "glossary/terminology.yml"
    text = path.read_text(encoding="utf-8")
    first = text.index("  - {en: warp,")
    path.write_text(text[:first] + "  - {en: Warp, zh: 线程束}\n" + text[first:], encoding="utf-8")
    line = text[:first].count("\n") + 2
    assert f"glossary/terminology.yml:{line}: error: 'warp' is listed twice (first on line {line - 1})" in errors(
        project
    )
