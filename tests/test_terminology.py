from pathlib import Path

import pytest

from gpu_glossary.terminology import TerminologyError, load_terminology

ROOT = Path(__file__).resolve().parents[1]


def test_project_terminology_loads_with_key_terms():
    terminology = load_terminology(ROOT / "glossary/terminology.yml")
    by_en = {t.en: t.zh for t in terminology.terms}
    assert by_en["warp"] == "线程束"
    assert by_en["shared memory"] == "共享内存"
    assert by_en["kernel"] == "核函数"
    assert "CUDA" in terminology.keep_english


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "terminology.yml"
    path.write_text(text, encoding="utf-8")
    return path


def test_avoided_variant_inside_a_preferred_rendering_is_rejected(tmp_path):
    path = write(tmp_path, "terms:\n  - {en: Tensor Core, zh: 张量核心, avoid: [张量核]}\n")
    with pytest.raises(TerminologyError, match=r"terminology.yml:2: avoided variant '张量核'"):
        load_terminology(path)


def test_duplicate_and_malformed_terms_name_the_line(tmp_path):
    with pytest.raises(TerminologyError, match=r":3: 'Warp' is listed twice \(first on line 2\)"):
        load_terminology(write(tmp_path, "terms:\n  - {en: warp, zh: 线程束}\n  - {en: Warp, zh: 线程束}\n"))
    with pytest.raises(TerminologyError, match=r":2: each term needs 'en' and 'zh'"):
        load_terminology(write(tmp_path, "terms:\n  - {en: warp}\n"))
    with pytest.raises(TerminologyError, match="not valid YAML"):
        load_terminology(write(tmp_path, "terms: [\n"))


def test_an_avoided_variant_may_name_its_own_replacement(tmp_path):
    path = write(
        tmp_path,
        "terms:\n"
        "  - {en: driver, zh: 驱动程序, avoid: {驱动程序版本: 驱动版本}}\n"
        "  - {en: dispatch unit, zh: 分发单元, avoid: [分派单元]}\n",
    )
    driver, dispatch = load_terminology(path).terms
    assert driver.avoid == ("驱动程序版本",) and driver.replacement("驱动程序版本") == "驱动版本"
    assert dispatch.replacement("分派单元") == "分发单元"  # a list's variants are replaced by the rendering
    with pytest.raises(TerminologyError, match=r":2: 'avoid' must be a list of text, or a mapping of text to text"):
        load_terminology(write(tmp_path, "terms:\n  - {en: driver, zh: 驱动程序, avoid: {驱动程序版本: [驱动版本]}}\n"))


def test_the_project_writes_driver_compounds_with_qu_dong():
    terms = {t.en: t for t in load_terminology(ROOT / "glossary/terminology.yml").terms}
    assert terms["driver"].replacement("驱动程序版本") == "驱动版本"
    assert terms["driver"].replacement("驱动程序分支") == "驱动分支"


def test_a_terminology_error_says_where_and_why_in_fields(tmp_path):
    path = write(tmp_path, "terms:\n  - {en: warp, zh: 线程束}\n  - {en: Warp, zh: 线程束}\n")
    with pytest.raises(TerminologyError) as raised:
        load_terminology(path)
    assert (raised.value.path, raised.value.line) == (path, 3)
    assert raised.value.message == "'Warp' is listed twice (first on line 2)"
