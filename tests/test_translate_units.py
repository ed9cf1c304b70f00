"""Unit tests of the translator's parts: protection, sections, chunks, reply cleaning, checks, the limiter."""

import asyncio
import datetime
import email.utils
import re
from pathlib import Path

import pytest
from fake_openai import fake_translate, page_document
from helpers import ROOT, on_a_thread_of_its_own
from test_sanitize import HOSTILE

from gpu_glossary.glossary import load_glossary
from gpu_glossary.page import front_matter_block, parse_page
from gpu_glossary.render import Renderer
from gpu_glossary.translate.checks import (
    ReplyRejected,
    chinese_share,
    clean_reply,
    markup_differences,
    parse_translation,
    structure_problems,
)
from gpu_glossary.translate.chunks import MIN_CHUNK_CHARS, chunk_size, compose_page, plan_page
from gpu_glossary.translate.limiter import AdaptiveLimiter, retry_after_seconds
from gpu_glossary.translate.protect import ProtectedText
from gpu_glossary.translate.sections import (
    SECTION_HASHES_KEY,
    balanced_groups,
    format_hashes,
    plan_sections,
    recorded_hashes,
    section_hashes,
    split_blocks,
    split_sections,
)

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
    assert kinds >= {
        "inline code",
        "link target",
        "URL",
        "heading id",
        "admonition marker",
        "HTML tag",
        "HTML comment",
        "code",
        "math",
        "link definition",
    }
    for secret in (
        "__shfl_sync",
        "docs.nvidia.com",
        "{#divergence}",
        "!!! note",
        "<abbr",
        "nvcc: skip",
        "__global__",
        "2^5",
        "example.org",
    ):
        assert secret not in text, secret
    assert '"Careful"' in text and "Divergence" in text  # prose stays translatable


def test_code_comments_are_sent_to_be_translated_and_the_code_comes_back_byte_for_byte():
    text = (
        "Text.\n\n```cuda\n#include <cstdio>  // headers\n/* two\n   lines */\n"
        'int x = 1;  // "// string"\nputs("// not a comment");\n```\n\n'
        "```text\n// output, copied as it is\n```\n"
    )
    protected = ProtectedText()
    sent = protected.protect(text)
    assert re.findall(r"⟧([^⟦\n]+)", sent) == [
        "headers",
        "two",
        "lines",
        '"// string"',
    ]
    assert "not a comment" not in sent and "output, copied" not in sent and "#include" not in sent
    translated = sent.replace("headers", "头文件").replace("⟧two", "⟧两").replace("⟧lines", "⟧行")
    restored = protected.restore(translated)
    assert "#include <cstdio>  // 头文件\n/* 两\n   行 */" in restored
    assert [f.code for f in english_page("---\ntitle: a\nsummary: b\n---\n" + restored).fences()][1] == (
        "// output, copied as it is"
    )


def test_a_tab_marker_and_its_title_travel_as_a_placeholder():
    """The outputs of an example run on several GPUs are tabs (pymdownx.tabbed) titled with the
    GPU's name: a reply that turned their quotes into “…” would leave no tab."""
    text = (
        'Ran on two GPUs.\n\n=== "NVIDIA H100 80GB HBM3"\n\n    ```text\n    ok\n    ```\n\n'
        '===+ "NVIDIA H200"\n\n    Text.\n'
    )
    protected = ProtectedText()
    sent = protected.protect(text)
    assert [piece.text for piece in protected.pieces if piece.kind == "tab marker"] == [
        '=== "NVIDIA H100 80GB HBM3"',
        '===+ "NVIDIA H200"',
    ]
    assert "===" not in sent and "NVIDIA" not in sent and "Text." in sent
    assert protected.restore(sent) == text


def test_restore_refuses_missing_repeated_and_invented_placeholders():
    protected = ProtectedText()
    text = protected.protect("Run `a` and `b`.")
    with pytest.raises(ReplyRejected, match=r"inline code ⟦P1⟧ \('`b`'\) is missing"):
        protected.restore(text.replace("⟦P1⟧", ""))
    with pytest.raises(ReplyRejected, match="appears 2 times"):
        protected.restore(text + "⟦P0⟧")
    with pytest.raises(ReplyRejected, match="unknown placeholders ⟦P9⟧"):
        protected.restore(text + "⟦P9⟧")


def test_protect_reference_reuses_placeholders_for_identical_pieces():
    protected = ProtectedText()
    protected.protect("See [a](x.md) and `code`.")
    assert protected.protect_reference("见 [甲](x.md) 和 `code` 及 `new`。") == "见 [甲](⟦P1⟧) 和 ⟦P0⟧ 及 `new`。"


@pytest.mark.parametrize(
    "reply",
    [
        "```markdown\n---\ntitle: 甲\n---\n正文\n```",
        "Here is the translation:\n\n---\ntitle: 甲\n---\n正文\n",
        "---\ntitle: 甲\n---\n正文",
    ],
)
def test_clean_reply_removes_wrapper_fence_and_preamble(reply):
    assert clean_reply(reply) == "---\ntitle: 甲\n---\n正文\n"


def translated(body_edit=lambda s: s) -> str:
    """A correct Chinese version of SOURCE, then edited."""
    body = SOURCE.split("---\n", 2)[2]
    chinese = (
        body.replace("runs", "运行线程束指令")
        .replace("on an SM; see", "在流式多处理器上；参见")
        .replace("lanes", "个通道")
        .replace("Divergence", "分化")
        .replace("Careful", "小心")
        .replace("Inline", "行内")
        .replace("and", "和")
        .replace("comments", "注释")
        .replace("A ", "一个")
    )
    english_page = english()
    return compose_page(english_page, {"title": "线程束", "summary": "一组线程。"}, body_edit(chinese), "m", "abc")


def test_a_faithful_translation_passes_and_keeps_front_matter_keys(renderer):
    page = parse_translation(translated(), "perf/x.md")
    assert structure_problems(english(), page, renderer) == []
    assert page.meta == {
        "title": "线程束",
        "summary": "一组线程。",
        "abbreviation": "W",
        "source_hash": "abc",
        "translation_model": "m",
    }


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda s: s.replace("(../device-software/warp.md)", "(https://evil.example/)"),
            "link and image targets differ",
        ),
        (lambda s: s.replace("void k()", "void j()"), "code blocks differ"),
        (lambda s: s.replace("{#divergence}", "{#fenhua}"), "headings differ"),
        (lambda s: s.replace("| 1 | 2 |\n", ""), "table shapes differ"),
        (lambda s: s + "\n<script>alert(1)</script>\n", "beyond its text: adds <script>"),
        (lambda s: s + "\n<img src=x onerror=alert(1)>\n", '<img src="x" onerror="alert(1)">'),
        (lambda s: s.replace("个通道.", '个通道.\n{: onclick="alert(7)" }'), 'adds <p onclick="alert(7)">'),
    ],
)
def test_structure_changes_are_caught(renderer, edit, message):
    problems = structure_problems(english(), parse_translation(translated(edit), "perf/x.md"), renderer)
    assert any(message in p for p in problems), problems


def test_english_echoed_back_is_caught():
    echoed = compose_page(
        english(), {"title": "Warp", "summary": "A group of threads."}, SOURCE.split("---\n", 2)[2], "m", "abc"
    )
    page = parse_translation(echoed, "perf/x.md")
    assert chinese_share(page) < 0.25
    assert any("too little Chinese" in p for p in structure_problems(english(), page))


def test_broken_front_matter_in_a_reply_is_caught():
    page = parse_translation("---\ntitle: [unclosed\n---\n正文\n", "perf/x.md")
    assert any("not valid YAML" in p for p in structure_problems(english(), page))


PARAGRAPH = (
    'See [warp](../device-software/warp.md "Warp") and `code`, *really*.\n\n'
    "![A diagram](../images/sm.svg#only-light)\n\n## Heading\n\nText.\n"
)


@pytest.mark.parametrize(
    "chinese",
    [
        # links and code reordered, emphasis dropped; an image variant; a heading id from Chinese text
        '参见 `code` 和 [线程束](../device-software/warp.md "线程束")。\n\n'
        "![一张图](../images/sm.zh.svg#only-light)\n\n## 标题\n\n文字。\n",
    ],
)
def test_markup_may_differ_in_text_order_emphasis_and_image_variant(renderer, chinese):
    assert markup_differences(renderer.html(PARAGRAPH), renderer.html(chinese)) == []


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda s: s.replace("Text.\n", 'Text.\n{: onclick="alert(7)" }\n'), 'adds <p onclick="alert(7)">'),
        (
            lambda s: s.replace("(../device-software/warp.md", "(../device-software/kernel.md"),
            'adds <a href="../device-software/kernel.md">',
        ),
        (lambda s: s.replace("(../device-software/warp.md", "(../device-software/warp.md){: data-x=1 }"), "data-x"),
        (lambda s: s.replace("Text.", "Text <span>x</span>."), "adds <span>"),
        (lambda s: s.replace("`code`", "code"), "loses <code>"),
        (lambda s: s.replace("Text.", "- Text."), "adds <ul>"),
        (lambda s: s.replace("*really*", '<em class="x">really</em>'), 'adds <em class="x">'),
    ],
)
def test_markup_changes_beyond_text_are_caught(renderer, edit, message):
    problems = markup_differences(renderer.html(PARAGRAPH), renderer.html(edit(PARAGRAPH)))
    assert any(message in p for p in problems), problems


def test_markup_blocks_must_keep_their_order(renderer):
    english = "Para.\n\n- item\n"
    assert any(
        "orders its blocks differently" in p
        for p in markup_differences(renderer.html(english), renderer.html("- item\n\nPara.\n"))
    )


@pytest.mark.parametrize("case", HOSTILE)
def test_every_hostile_page_as_a_reply_is_rejected(renderer, case):
    """A reply that adds any of the hostile corpus to a faithful translation is caught."""
    body, _, _ = HOSTILE[case]
    problems = structure_problems(
        english(), parse_translation(translated(lambda s: s + "\n" + body + "\n"), "perf/x.md"), renderer
    )
    assert any("rendered HTML differs from the English page's beyond its text" in p for p in problems), problems


# -- sections, chunks and the concurrency limiter -----------------------------------------
THREE_SECTIONS = """---
title: Warp
summary: A group of threads.
---

Intro about warps.

```python
# a comment, not a heading
```

## First {#first}

First section text.

## Second {#second}

Second section text.
"""


def zh_page_of(english_text: str, hashes: bool = True) -> object:
    """A 'Chinese' page for an English text: every section marked, ids kept, hashes recorded."""
    english = english_page(english_text)
    body = "".join(s.replace("text", "文本").replace("Intro", "导言") for s in split_sections(english))
    meta = {"title": "线程束", "summary": "一组线程。", "source_hash": "x"}
    if hashes:
        meta[SECTION_HASHES_KEY] = format_hashes(section_hashes(english))
    return parse_translation(front_matter_block(meta) + "\n" + body, "perf/x.md")


def english_page(text: str):
    return parse_page(text, Path("x.md"), "x.md", "perf/x.md", "en")


def test_sections_rejoin_every_real_page_and_cut_only_at_headings_outside_code():
    glossary = load_glossary(ROOT)
    for pages in glossary.pages.values():
        for page in pages.values():
            sections = split_sections(page)
            assert "".join(sections) == page.body, page.display_path
            assert all(s.startswith("#") for s in sections[1:]), page.display_path
    sections = split_sections(english_page(THREE_SECTIONS))
    assert len(sections) == 3 and "# a comment" in sections[0] and sections[2].startswith("## Second")


def test_section_hashes_change_only_where_the_english_changed():
    before = section_hashes(english_page(THREE_SECTIONS))
    edited = section_hashes(english_page(THREE_SECTIONS.replace("First section text.", "First section text, edited.")))
    retitled = section_hashes(english_page(THREE_SECTIONS.replace("title: Warp", "title: Warps")))
    spaced = section_hashes(english_page(THREE_SECTIONS.replace("\n## Second", "\n\n\n## Second")))
    assert [len(blocks) for blocks in before] == [2, 2, 2]  # intro + code; heading + paragraph; twice
    assert before[1][0] == edited[1][0] and before[1][1] != edited[1][1] and before[0::2] == edited[0::2]
    assert retitled[0][0] != before[0][0] and retitled[0][1:] + retitled[1:] == before[0][1:] + before[1:]
    assert spaced == before
    chinese = zh_page_of(THREE_SECTIONS)
    assert recorded_hashes(chinese) == before and chinese.meta[SECTION_HASHES_KEY].count(" ") == 2


def test_the_plan_keeps_unchanged_sections_and_blocks_and_sends_only_changed_blocks():
    chinese = zh_page_of(THREE_SECTIONS)
    old = split_blocks(chinese)
    new_text = (
        THREE_SECTIONS.replace("First section text.", "First section text, edited.") + "\n## Third {#third}\n\nNew.\n"
    )
    parts = plan_sections(english_page(new_text), chinese)
    assert [p.to_translate for p in parts] == [False, False, True, False, True]
    assert parts[0].kept == "".join(old[0]) and parts[1].kept == old[1][0] and parts[3].kept == "".join(old[2])
    assert parts[2].english.startswith("First section text, edited.") and parts[2].reference == old[1][1]
    assert parts[4].english.startswith("## Third") and parts[4].reference is None
    dropped = plan_sections(english_page(THREE_SECTIONS.split("## Second")[0]), chinese)  # a section deleted
    assert [p.kept for p in dropped] == ["".join(old[0]), "".join(old[1])]


def test_a_changed_section_whose_chinese_blocks_do_not_line_up_is_sent_whole():
    english_text = THREE_SECTIONS.replace("First section text.", "First `code` here.\n\nMore first text.")
    edited = english_page(english_text.replace("More first text.", "More first text, edited."))
    swapped = zh_page_of(english_text)
    blocks = split_blocks(swapped)
    blocks[1][1], blocks[1][2] = blocks[1][2].rstrip("\n") + "\n\n", blocks[1][1]  # the model reordered two paragraphs
    swapped = parse_translation(swapped.text.replace(swapped.body, "".join("".join(b) for b in blocks)), "perf/x.md")
    parts = plan_sections(edited, swapped)
    assert [p.to_translate for p in parts] == [False, True, False]
    assert parts[1].english == split_sections(edited)[1] and parts[1].reference == "".join(blocks[1])
    extra = zh_page_of(english_text)
    extra = parse_translation(extra.text.replace("## Second", "多出的一段。\n\n## Second"), "perf/x.md")
    assert [p.to_translate for p in plan_sections(edited, extra)] == [False, True, False]


def test_a_page_without_section_hashes_is_sent_whole_with_the_old_chinese_of_each_heading():
    chinese = zh_page_of(THREE_SECTIONS, hashes=False)
    old = split_sections(chinese)
    intro, first, second = split_sections(english_page(THREE_SECTIONS))
    reordered = THREE_SECTIONS.split("\n\n", 1)[0] + "\n\n" + intro.lstrip("\n") + second.rstrip("\n") + "\n\n" + first
    parts = plan_sections(english_page(reordered), chinese)
    assert all(p.to_translate for p in parts)
    assert [p.reference for p in parts] == [old[0], old[2], old[1]]
    broken = parse_translation("---\ntitle: [x\n---\n正文\n", "perf/x.md")
    assert all(p.reference is None for p in plan_sections(english_page(THREE_SECTIONS), broken))


def test_balanced_groups_are_few_even_and_in_order():
    groups = balanced_groups([500] * 10, 1600)
    assert [i for group in groups for i in group] == list(range(10))
    assert len(groups) == 4 and max(len(g) * 500 for g in groups) == 1500  # not 3+3+3+1
    assert balanced_groups([100, 5000, 100], 1000) == [[0], [1], [2]]  # an oversized section stands alone
    assert balanced_groups([], 1000) == []


def test_chunk_size_is_the_pools_share_within_bounds():
    assert chunk_size(1_000_000, 100, 12000) == 10000
    assert chunk_size(10_000, 100, 12000) == MIN_CHUNK_CHARS
    assert chunk_size(10_000_000, 100, 12000) == 12000
    assert chunk_size(10_000, 100, 800) == 800


def test_replies_to_chunks_join_into_the_page_without_losing_a_line_break():
    english = english_page(THREE_SECTIONS)
    plan = plan_page(english, None)
    chunks = plan.cut(1)  # one section per chunk
    assert len(chunks) == 3
    for chunk in chunks:  # the model strips the blank line that ends a section
        chunk.reply = fake_translate(page_document(chunk.request)).strip("\n")
        assert chunk.problems(chunk.reply, "stop") == []
    text = plan.assemble("m", "abc")
    translated = parse_translation(text, "perf/x.md")
    assert structure_problems(english, translated) == []
    assert [s.count("\n") for s in split_sections(translated)] == [s.count("\n") for s in split_sections(english)]
    assert recorded_hashes(translated) == section_hashes(english)


def run_async(coroutine):
    return on_a_thread_of_its_own(lambda: asyncio.run(coroutine), timeout=30)


def test_the_limiter_halves_once_per_burst_and_grows_back_slowly():
    async def scenario():
        limiter = AdaptiveLimiter(16)
        burst = [await limiter.acquire() for _ in range(16)]
        for epoch in burst[:5]:  # five refusals from one burst
            limiter.overloaded(epoch)
        assert (limiter.level, limiter.backoffs) == (8, 1)
        for _ in burst:
            limiter.release()
        later = await limiter.acquire()
        limiter.overloaded(later)
        limiter.release()
        assert limiter.level == 4
        window = [await limiter.acquire() for _ in range(4)]  # the level in full use
        for _ in window:
            limiter.succeeded()
        assert 4.8 < limiter.level < 5  # about +1 per round of `level` successes
        for _ in window:
            limiter.release()
        for _ in range(10):
            limiter.overloaded(limiter.epoch)
        assert limiter.level == 1 and limiter.allowed == 1
        for _ in range(1000):
            held = [await limiter.acquire() for _ in range(limiter.allowed)]
            limiter.succeeded()
            for _ in held:
                limiter.release()
        assert limiter.level == 16
        limiter.overloaded(limiter.epoch)
        await limiter.acquire()  # one request in flight where eight are allowed
        for _ in range(100):
            limiter.succeeded()
        assert limiter.level == 8  # a level nobody used does not grow
        limiter.release()

    run_async(scenario())


def test_the_limiter_admits_at_most_its_level_and_the_highest_priority_first():
    async def scenario():
        limiter = AdaptiveLimiter(2)
        started: list[int] = []
        most = 0

        async def request(priority: int):
            nonlocal most
            await limiter.acquire(priority)
            started.append(priority)
            most = max(most, limiter.in_flight)
            await asyncio.sleep(0)
            limiter.release()

        await limiter.acquire()
        await limiter.acquire()
        waiting = [asyncio.create_task(request(p)) for p in (5, 1, 3, 2)]
        await asyncio.sleep(0)
        assert started == [] and limiter.in_flight == 2
        limiter.release()
        limiter.release()
        await asyncio.wait_for(asyncio.gather(*waiting), 5)
        assert started == [1, 2, 3, 5] and most == 2 and limiter.in_flight == 0

    run_async(scenario())


def test_the_limiter_starts_nothing_before_retry_after_and_a_cancelled_waiter_frees_its_turn():
    async def scenario():
        loop = asyncio.get_running_loop()
        limiter = AdaptiveLimiter(4)
        limiter.overloaded(await limiter.acquire(), retry_after=0.2)
        limiter.release()
        asked = loop.time()
        cancelled = asyncio.create_task(limiter.acquire(0))
        waiting = asyncio.create_task(limiter.acquire(1))
        await asyncio.sleep(0)
        cancelled.cancel()
        await asyncio.wait_for(waiting, 5)
        assert loop.time() - asked >= 0.19
        assert limiter.in_flight == 1

    run_async(scenario())


@pytest.mark.parametrize(
    "headers, seconds",
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "3600"}, None),
        ({}, None),
    ],
)
def test_retry_after_is_read_from_either_header(headers, seconds):
    assert retry_after_seconds(headers) == seconds


def test_retry_after_as_a_date():
    when = email.utils.format_datetime(datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=30))
    assert 25 < retry_after_seconds({"retry-after": when}) <= 30


def test_a_reply_to_an_indented_block_keeps_its_indent():
    text = THREE_SECTIONS.replace(
        "First section text.", '!!! note "Mind"\n    First line.\n\n    Second line, inside the note.'
    )
    english = english_page(text)
    chinese = zh_page_of(text)
    edited = english_page(text.replace("Second line, inside the note.", "Second line, inside the note, edited."))
    plan = plan_page(edited, chinese)
    (chunk,) = plan.cut(10_000)
    assert chunk.english == "    Second line, inside the note, edited.\n\n"
    chunk.reply = fake_translate(page_document(chunk.request)).lstrip()  # the model dropped the indent
    assert chunk.problems(chunk.reply, "stop") == []
    renderer = Renderer.for_language(ROOT, "zh")
    assert markup_differences(chunk.html(chunk.document, renderer), chunk.html(chunk.reply, renderer)) == []
    page = parse_translation(plan.assemble("m", "abc"), "perf/x.md")
    assert structure_problems(english, page) == []
    assert split_blocks(page)[1][2].startswith("    ") and split_blocks(page)[1][:2] == split_blocks(chinese)[1][:2]


@pytest.mark.parametrize(
    "english, chinese, problem",
    [
        ("It moves 1,024 bytes at 2.19 million ops.", "它以 219 万次操作移动 1024 字节。", None),
        ("Two GPUs in June, 2 links.", "6 月里 2 个 GPU，两条链路。", None),  # words may become digits
        ("0.546, 1.093 and 2.186 million cycles", "54.6 万、109.3 万和 218.6 万个周期", None),
        ("1. First\n2. Second\n", "1. 第一\n2. 第二\n", None),  # list markers are not numbers
        ("600 GB/s on 2 GPUs", "601 GB/s，2 个 GPU", "adds 601"),
        ("600 GB/s on 2 GPUs", "600 GB/s，3 个 GPU", "adds 3"),
        ("It holds 0 or 64 warps.", "它容纳 0 或 64000 个线程束。", "adds 64000"),
        ("H100 has 132 SMs", "H100 有 13 个 SM", "loses 132"),
    ],
)
def test_numbers_are_compared_as_a_multiset_with_the_normalisations_chinese_needs(english, chinese, problem):
    from gpu_glossary.translate.gate import number_problems

    problems = number_problems(english, chinese)
    assert (problems == []) if problem is None else any(problem in p for p in problems), problems


@pytest.mark.parametrize(
    "text, found",
    [("线程束与线程块", ""), ("線程塊與記憶體", "線塊與記憶體"), ("スレッドです", "")],
)
def test_traditional_characters_are_told_from_simplified_ones(text, found):
    from gpu_glossary.chinese import traditional_characters

    assert "".join(traditional_characters(text)) == found
