"""The on-disk cache behind the checker's HTML verdicts: keyed by content, never stale, optional;
and the in-memory caches, emptied together."""

from pathlib import Path

from helpers import ROOT

from gpu_glossary.cache import fingerprint, memoize


def counting():
    calls = []

    def compute():
        calls.append(1)
        return [[len(calls), "message"]]

    return calls, compute


def test_a_result_is_computed_once_per_key(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_GLOSSARY_CACHE", str(tmp_path))
    calls, compute = counting()
    assert memoize("ns", ["page text"], compute) == [[1, "message"]]
    assert memoize("ns", ["page text"], compute) == [[1, "message"]]
    assert memoize("ns", ["changed text"], compute) == [[2, "message"]]
    assert len(calls) == 2 and len(list((tmp_path / "ns").glob("*.json"))) == 2


def test_an_empty_setting_turns_the_cache_off_and_a_broken_entry_is_recomputed(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_GLOSSARY_CACHE", "")
    calls, compute = counting()
    memoize("ns", ["x"], compute)
    memoize("ns", ["x"], compute)
    assert len(calls) == 2
    monkeypatch.setenv("GPU_GLOSSARY_CACHE", str(tmp_path))
    memoize("ns", ["y"], compute)
    for entry in (tmp_path / "ns").glob("*.json"):
        entry.write_text("{not json", encoding="utf-8")
    assert memoize("ns", ["y"], compute) == [[4, "message"]]


def test_the_fingerprint_follows_code_and_versions():
    import gpu_glossary.cache as cache_module
    import gpu_glossary.page as page_module

    one = fingerprint(["nh3"], [cache_module])
    assert one == fingerprint(["nh3"], [cache_module])
    assert one != fingerprint(["nh3"], [page_module]) != fingerprint(["markdown"], [cache_module])


def test_clear_caches_empties_every_in_memory_cache():
    from gpu_glossary import page, render
    from gpu_glossary.cache import _IN_MEMORY, clear_caches
    from gpu_glossary.translate import checks

    text = "---\ntitle: T\nsummary: S.\n---\n\n```cuda\nint x;\n```\n\n[a](b.md)\n"
    parsed = page.parse_page(text, Path("t.md"), "t.md", "perf/t.md", "en")
    parsed.links()
    checks._markup(render.Renderer.for_language(ROOT, "en").html(parsed.body))
    known = {page._front_matter_data, page._fence_spans_in, page._lines_in, page._prose_in}
    known |= {render._renderer_of, checks._markup}
    assert known <= set(_IN_MEMORY)
    assert all(cached.cache_info().currsize for cached in known)
    clear_caches()
    assert [cached.__name__ for cached in _IN_MEMORY if cached.cache_info().currsize] == []
