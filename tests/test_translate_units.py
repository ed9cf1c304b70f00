"""Unit tests of the translator's parts: protection, splitting, reply cleaning, structure checks."""

import pytest

from gpu_glossary.glossary import load_glossary
from gpu_glossary.protect import ProtectedText
from gpu_glossary.render import Renderer
from gpu_glossary.translation_checks import (chinese_share, clean_reply, markup_differences, parse_translation,
                                             structure_problems)
from gpu_glossary.translator import compose_page, split_at_headings

from conftest import ROOT
from test_sanitize import HOSTILE

SOURCE = """---
title: Warp
summary: A group of threads.
abbreviation: W
---

A [warp](../device-software/warp.md) runs `__shfl_sync` on an SM; see https://docs.nvidia.com/cuda/ and $2^5$ lanes.

## Divergence {#divergence}

!!! note "Careful"
    Inline <abbr title="x">HTML</abbr> and <!-- nvcc: skip --> comments.

| a | b |
|---|---|
| 1 | 2 |

```cuda
__global__ void k() {}  // [not](a.md)
```

[ref]: https://example.org/ref
"""


def english():
    return parse_translation(SOURCE, "perf/x.md")


@pytest.fixture(scope="module")
def renderer():
    return Renderer.for_language(ROOT, "zh")


def test_protect_and_restore_every_real_page_losslessly():
    glossary = load_glossary(ROOT)
    assert glossary.pages["en"]
    for page in glossary.pages["en"].values():
        protected = ProtectedText()
        text = protected.protect(page.body)
        assert protected.restore(text) == page.body, page.display_path
        assert "```" not in text and "](" not in text.replace("](⟦P", "")


def test_protect_hides_code_links_urls_html_ids_math_and_markers():
    protected = ProtectedText()
    text = protected.protect(english().body)
    kinds = {piece.kind for piece in protected.pieces}
    assert kinds >= {"inline code", "link target", "URL", "heading id", "admonition marker", "HTML tag",
                     "HTML comment", "code block", "math", "link definition"}
    for secret in ("__shfl_sync", "docs.nvidia.com", "{#divergence}", "!!! note", "<abbr", "nvcc: skip", "__global__", "2^5", "example.org"):
        assert secret not in text, secret
    assert '"Careful"' in text and "Divergence" in text  # prose stays translatable


def test_restore_refuses_missing_repeated_and_invented_placeholders():
    protected = ProtectedText()
    text = protected.protect("Run `a` and `b`.")
    with pytest.raises(ValueError, match=r"inline code ⟦P1⟧ \('`b`'\) is missing"):
        protected.restore(text.replace("⟦P1⟧", ""))
    with pytest.raises(ValueError, match="appears 2 times"):
        protected.restore(text + "⟦P0⟧")
    with pytest.raises(ValueError, match="unknown placeholders ⟦P9⟧"):
        protected.restore(text + "⟦P9⟧")


def test_protect_reference_reuses_placeholders_for_identical_pieces():
    protected = ProtectedText()
    protected.protect("See [a](x.md) and `code`.")
    assert protected.protect_reference("见 [甲](x.md) 和 `code` 及 `new`。") == "见 [甲](⟦P1⟧) 和 ⟦P0⟧ 及 `new`。"


def test_split_at_headings_is_lossless_and_bounded():
    text = "intro\n\n" + "".join(f"## Part {i} {{#p{i}}}\n\n" + "x" * 300 + "\n\n" for i in range(10))
    chunks = split_at_headings(text, 700)
    assert "".join(chunks) == text
    assert len(chunks) > 3 and all(len(c) <= 700 for c in chunks[1:])
    assert all(c.startswith("## ") for c in chunks[1:])
    assert split_at_headings("no headings", 5) == ["no headings"]


@pytest.mark.parametrize("reply", [
    "```markdown\n---\ntitle: 甲\n---\n正文\n```",
    "Here is the translation:\n\n---\ntitle: 甲\n---\n正文\n",
    "---\ntitle: 甲\n---\n正文",
])
def test_clean_reply_removes_wrapper_fence_and_preamble(reply):
    assert clean_reply(reply) == "---\ntitle: 甲\n---\n正文\n"


def translated(body_edit=lambda s: s) -> str:
    """A correct Chinese version of SOURCE, then edited."""
    body = SOURCE.split("---\n", 2)[2]
    chinese = (body.replace("runs", "运行线程束指令").replace("on an SM; see", "在流式多处理器上；参见")
               .replace("lanes", "个通道").replace("Divergence", "分化").replace("Careful", "小心")
               .replace("Inline", "行内").replace("and", "和").replace("comments", "注释").replace("A ", "一个"))
    english_page = english()
    return compose_page(english_page, {"title": "线程束", "summary": "一组线程。"}, body_edit(chinese), "m", "abc")


def test_a_faithful_translation_passes_and_keeps_front_matter_keys(renderer):
    page = parse_translation(translated(), "perf/x.md")
    assert structure_problems(english(), page, renderer) == []
    assert page.meta == {"title": "线程束", "summary": "一组线程。", "abbreviation": "W", "source_hash": "abc", "translation_model": "m"}


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.replace("(../device-software/warp.md)", "(https://evil.example/)"), "link and image targets differ"),
    (lambda s: s.replace("void k()", "void j()"), "code blocks differ"),
    (lambda s: s.replace("{#divergence}", "{#fenhua}"), "headings differ"),
    (lambda s: s.replace("| 1 | 2 |\n", ""), "table shapes differ"),
    (lambda s: s + "\n<script>alert(1)</script>\n", "beyond its text: adds <script>"),
    (lambda s: s + "\n<img src=x onerror=alert(1)>\n", '<img src="x" onerror="alert(1)">'),
    (lambda s: s.replace("个通道.", '个通道.\n{: onclick="alert(7)" }'), 'adds <p onclick="alert(7)">'),
])
def test_structure_changes_are_caught(renderer, edit, message):
    problems = structure_problems(english(), parse_translation(translated(edit), "perf/x.md"), renderer)
    assert any(message in p for p in problems), problems


def test_english_echoed_back_is_caught():
    echoed = compose_page(english(), {"title": "Warp", "summary": "A group of threads."}, SOURCE.split("---\n", 2)[2], "m", "abc")
    page = parse_translation(echoed, "perf/x.md")
    assert chinese_share(page) < 0.25
    assert any("too little Chinese" in p for p in structure_problems(english(), page))


def test_broken_front_matter_in_a_reply_is_caught():
    page = parse_translation("---\ntitle: [unclosed\n---\n正文\n", "perf/x.md")
    assert any("not valid YAML" in p for p in structure_problems(english(), page))


PARAGRAPH = ('See [warp](../device-software/warp.md "Warp") and `code`, *really*.\n\n'
             '![A diagram](../images/sm.svg#only-light)\n\n## Heading\n\nText.\n')


@pytest.mark.parametrize("chinese", [
    '参见 `code` 和 [线程束](../device-software/warp.md "线程束")。\n\n'  # links and code reordered, emphasis dropped
    '![一张图](../images/sm.zh.svg#only-light)\n\n## 标题\n\n文字。\n',   # image variant, heading id from Chinese text
])
def test_markup_may_differ_in_text_order_emphasis_and_image_variant(renderer, chinese):
    assert markup_differences(renderer.html(PARAGRAPH), renderer.html(chinese)) == []


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.replace("Text.\n", 'Text.\n{: onclick="alert(7)" }\n'), 'adds <p onclick="alert(7)">'),
    (lambda s: s.replace("(../device-software/warp.md", "(../device-software/kernel.md"), 'adds <a href="../device-software/kernel.md">'),
    (lambda s: s.replace("(../device-software/warp.md", "(../device-software/warp.md){: data-x=1 }"), "data-x"),
    (lambda s: s.replace("Text.", "Text <span>x</span>."), "adds <span>"),
    (lambda s: s.replace("`code`", "code"), "loses <code>"),
    (lambda s: s.replace("Text.", "- Text."), "adds <ul>"),
    (lambda s: s.replace("*really*", '<em class="x">really</em>'), 'adds <em class="x">'),
])
def test_markup_changes_beyond_text_are_caught(renderer, edit, message):
    problems = markup_differences(renderer.html(PARAGRAPH), renderer.html(edit(PARAGRAPH)))
    assert any(message in p for p in problems), problems


def test_markup_blocks_must_keep_their_order(renderer):
    english = "Para.\n\n- item\n"
    assert any("orders its blocks differently" in p
               for p in markup_differences(renderer.html(english), renderer.html("- item\n\nPara.\n")))


@pytest.mark.parametrize("case", HOSTILE)
def test_every_hostile_page_as_a_reply_is_rejected(renderer, case):
    """A reply that adds any of the hostile corpus to a faithful translation is caught."""
    body, _, _ = HOSTILE[case]
    problems = structure_problems(english(), parse_translation(translated(lambda s: s + "\n" + body + "\n"), "perf/x.md"), renderer)
    assert any("rendered HTML differs from the English page's beyond its text" in p for p in problems), problems
