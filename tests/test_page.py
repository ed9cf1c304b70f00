from pathlib import Path

from gpu_glossary.page import parse_page, source_hash, with_front_matter, with_source_hash


def parse(text: str, rel: str = "perf/x.md", lang: str = "en"):
    return parse_page(text, Path(rel), f"glossary/{lang}/{rel}", rel, lang)


GOOD = """---
title: Warp
summary: Thirty-two threads.
abbreviation: W
---

Intro with a [link](../device-hardware/streaming-multiprocessor.md#how) and `[not](a.md)`.

## How it works {#how-it-works}

![A diagram](../images/warp.svg)

```cuda
// [not a link](b.md)
__global__ void k() {}
```

## Second heading
"""


def test_front_matter_and_body_lines():
    page = parse(GOOD)
    assert page.problems == []
    assert page.title == "Warp" and page.summary == "Thirty-two threads." and page.abbreviation == "W"
    assert page.meta_lines == {"title": 2, "summary": 3, "abbreviation": 4}
    assert page.body.split("\n")[7 - page.body_line].startswith("Intro")


def test_links_images_outside_code_with_lines():
    links = parse(GOOD).links()
    assert [(link.line, link.target, link.is_image) for link in links] == [
        (7, "../device-hardware/streaming-multiprocessor.md#how", False),
        (11, "../images/warp.svg", True),
    ]


def test_headings_explicit_and_generated_ids():
    headings = parse(GOOD).headings()
    assert [(h.line, h.level, h.text, h.id, h.explicit_id) for h in headings] == [
        (9, 2, "How it works", "how-it-works", True),
        (18, 2, "Second heading", "second-heading", False),
    ]


def test_fences_language_code_and_marker():
    page = parse("---\ntitle: a\nsummary: b\n---\n<!-- nvcc: skip -->\n```cuda\nint x;\n```\n\n```\nplain\n```\n")
    fences = page.fences()
    assert [(f.line, f.lang, f.code, f.marker) for f in fences] == [
        (6, "cuda", "int x;", "nvcc: skip"),
        (10, "", "plain", ""),
    ]


def test_yaml_error_reports_the_line():
    page = parse("---\ntitle: ok\nsummary: [unclosed\nfoo: bar\n---\nbody\n")
    assert len(page.problems) == 1
    problem = page.problems[0]
    assert problem.path == "glossary/en/perf/x.md"
    assert problem.line == 4  # the scanner notices the unclosed list on the next line
    assert "not valid YAML" in problem.message


def test_missing_front_matter_keys_and_wrong_types():
    page = parse("---\ntitle: [a, b]\n---\nbody\n")
    messages = {p.message for p in page.problems}
    assert "front matter lacks 'summary'" in messages
    assert "front matter 'title' must be text" in messages


def test_no_front_matter_and_non_mapping():
    assert "no front matter" in parse("just text\n").problems[0].message
    assert "must be a mapping" in parse("---\n- a\n- b\n---\nx\n").problems[0].message
    assert "not closed" in parse("---\ntitle: a\n").problems[0].message or parse("---\ntitle: a\n").problems


def test_source_hash_ignores_line_endings_only():
    assert source_hash("a\r\nb\n") == source_hash("a\nb\n")
    assert source_hash("a\nb\n") != source_hash("a\nc\n")
    assert len(source_hash("x")) == 16


def test_unclosed_fence_runs_to_the_end_and_hides_links():
    page = parse("---\ntitle: a\nsummary: b\n---\n```cuda\nint x;\n[not a link](x.md)\n")
    assert [(f.line, f.code) for f in page.fences()] == [(5, "int x;\n[not a link](x.md)\n")]
    assert page.links() == []
    assert not page.fences()[0].closed
    assert parse(GOOD).fences()[0].closed


def test_yaml_anchors_and_aliases_are_refused_with_their_line():
    laughs = "---\ntitle: a\nsummary: b\nx: &a [lol, lol]\ny: &b [*a, *a, *a]\nz: [*b, *b, *b]\n---\nbody\n"
    problems = parse(laughs).problems
    assert [(p.line, p.severity) for p in problems] == [(4, "error")]
    assert "anchors or aliases" in problems[0].message
    assert "anchors or aliases" in parse("---\ntitle: &t a\nsummary: *t\n---\nx\n").problems[0].message


def test_a_repeated_front_matter_key_is_refused():
    problems = parse("---\ntitle: First\nsummary: s\ntitle: Second\n---\nbody\n").problems
    assert [(p.line, p.message) for p in problems] == [
        (4, "front matter has the key 'title' twice (first on line 2): keep one")
    ]


def test_a_byte_order_mark_is_accepted():
    page = parse("\ufeff" + GOOD)
    assert page.problems == [] and page.title == "Warp"
    assert page.headings()[0].line == 9  # line numbers unchanged


def test_pages_with_the_same_front_matter_share_no_data_and_each_gets_its_problems():
    """Front matter is parsed once per text (a cache): each page must still get its own data
    and its own located problems."""
    first, second = parse(GOOD), parse(GOOD, rel="perf/y.md")
    first.meta["title"] = "Changed by one reader"
    first.meta.setdefault("tags", []).append("x")
    assert second.meta["title"] == "Warp" and "tags" not in second.meta
    assert parse(GOOD).meta == {"title": "Warp", "summary": "Thirty-two threads.", "abbreviation": "W"}
    repeated = "---\ntitle: First\nsummary: s\ntitle: Second\n---\nbody\n"
    for rel in ("perf/a.md", "perf/b.md"):
        page = parse(repeated, rel=rel)
        assert [(p.path, p.line) for p in page.problems] == [(f"glossary/en/{rel}", 4)]


def test_with_source_hash_adds_or_replaces_only_that_key():
    assert with_source_hash("---\ntitle: a\n---\nbody\n", "abc") == "---\ntitle: a\nsource_hash: abc\n---\nbody\n"
    assert (
        with_source_hash("---\nsource_hash: old\ntitle: a\n---\nx\n---\n", "new")
        == "---\nsource_hash: new\ntitle: a\n---\nx\n---\n"
    )


def test_with_front_matter_sets_quotes_and_removes_keys():
    assert (
        with_front_matter("---\ntitle: a\nx: 1\n---\nb\n", {"x": None, "h": "0123 abcd"})
        == "---\ntitle: a\nh: 0123 abcd\n---\nb\n"
    )
    assert with_front_matter("---\ntitle: a\n---\nb\n", {"h": "12345678"}) == "---\ntitle: a\nh: '12345678'\n---\nb\n"


def test_with_front_matter_gives_each_of_several_keys_its_own_value():
    """Replaced and added keys in one call: each line carries its own key's value, not the last
    one's, and a value's backslashes are written as they are (not read as a replacement pattern)."""
    text = "---\ntitle: a\nsource_hash: old\nsection_hashes: old\n---\nbody\n"
    values = {"source_hash": "new1", "section_hashes": "new2", "added": "new3", "path": "C:\\1\\g<0>"}
    assert with_front_matter(text, values) == (
        "---\ntitle: a\nsource_hash: new1\nsection_hashes: new2\nadded: new3\npath: C:\\1\\g<0>\n---\nbody\n"
    )
    assert parse_page(with_front_matter(text, values), Path("x.md"), "x.md", "x.md", "en").meta == {
        "title": "a",
        **values,
    }
