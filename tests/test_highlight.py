"""Highlighted code is kept by content: the same HTML as pymdownx.highlight, computed once."""

from __future__ import annotations

import markdown

CODE = "```cuda\n__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n```\n\nText.\n\n```python\nprint(1)\n```\n"
OPTIONS = {"anchor_linenums": True}


def render(highlighter: str) -> str:
    md = markdown.Markdown(extensions=["pymdownx.superfences", highlighter], extension_configs={highlighter: OPTIONS})
    return md.convert(CODE)


def test_kept_highlighting_is_pymdownx_s_and_is_computed_once(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_GLOSSARY_CACHE", str(tmp_path))
    expected = render("pymdownx.highlight")
    assert '<span class="kt">void</span>' in expected and "__codelineno-1-1" in expected
    assert render("gpu_glossary.highlight") == expected
    kept = sorted((tmp_path / "highlighted-code").glob("*.json"))
    assert len(kept) == 2  # one entry per block
    stamps = [entry.stat().st_mtime_ns for entry in kept]
    assert render("gpu_glossary.highlight") == expected  # read back, not computed again
    assert [entry.stat().st_mtime_ns for entry in kept] == stamps
    for entry in kept:  # an entry is the block's HTML; a changed entry shows, so it is what is used
        entry.write_text(entry.read_text(encoding="utf-8").replace("void", "VOID"), encoding="utf-8")
    assert "VOID" in render("gpu_glossary.highlight")


def test_without_a_cache_folder_code_is_highlighted_as_usual(monkeypatch):
    monkeypatch.setenv("GPU_GLOSSARY_CACHE", "")
    assert render("gpu_glossary.highlight") == render("pymdownx.highlight")
