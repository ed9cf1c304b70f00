"""The reading path (glossary/reading-path.yml): its checks, its page, each stop's neighbours."""

from helpers import ROOT

from gpu_glossary.glossary import load_glossary
from gpu_glossary.reading_path import load_path
from gpu_glossary.site.reading_path import marker, path_page, stops_by_page


def test_the_path_includes_memory_coalescing_and_every_stop_is_a_page():
    stops, problems = load_path(load_glossary(ROOT))
    assert problems == [] and len(stops) >= 8
    assert "perf/memory-coalescing.md" in stops


def test_a_missing_or_repeated_stop_is_reported_with_its_line(project):
    path = project / "glossary" / "reading-path.yml"
    path.write_text("# comment\n- device-software/warp.md\n- perf/nope.md\n- device-software/warp.md\n")
    stops, problems = load_path(load_glossary(project))
    assert stops == ["device-software/warp.md"]
    assert [(p.path, p.line) for p in problems] == [("glossary/reading-path.yml", 3), ("glossary/reading-path.yml", 4)]
    assert "perf/nope.md" in problems[0].message and "twice" in problems[1].message


def test_path_page_and_markers_link_each_stop_to_its_neighbours():
    glossary = load_glossary(ROOT)
    stops = ["device-software/kernel.md", "device-software/warp.md", "perf/occupancy.md"]
    text = path_page(glossary, "zh", stops)
    assert "title: 阅读路线" in text and text.index("(device-software/warp.md)") < text.index("(perf/occupancy.md)")
    places = stops_by_page(stops)
    warp = marker(glossary, "en", "device-software/warp.md", places["device-software/warp.md"])
    assert warp["position"] == 2 and warp["total"] == 3
    assert warp["previous"] == {"href": "../kernel/", "title": "Kernel"}
    assert warp["next"] == {"href": "../../perf/occupancy/", "title": "Occupancy"}
    assert warp["page"] == "../../path/"
    assert marker(glossary, "en", "perf/occupancy.md", places["perf/occupancy.md"])["next"] is None
