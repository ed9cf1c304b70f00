"""The image step: finding, checking, repairing, localizing and darkening images."""

from __future__ import annotations

import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers import cli

from gpu_glossary.glossary import load_glossary
from gpu_glossary.images.links import (
    DARK_PALETTE,
    check_images,
    find_images,
    fix_page,
    make_dark_svg,
    make_dark_variants,
    variant,
)
from gpu_glossary.images.localize import Localizer
from gpu_glossary.page import parse_page
from gpu_glossary.site.serve import run_in_background

LIGHT_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">'
    '<rect fill="#dcefe9" stroke="#1b7f6b"/><text fill="#1f2328">x</text></svg>'
)


def page_text(body: str, title: str = "Pictures") -> str:
    return f"---\ntitle: {title}\nsummary: Test page.\n---\n\n{body}\n"


def write(project: Path, rel: str, body: str, title: str = "Pictures") -> Path:
    path = project / "glossary" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page_text(body, title), encoding="utf-8")
    return path


def add_image(project: Path, name: str, text: str = LIGHT_SVG) -> None:
    (project / "glossary/images").mkdir(exist_ok=True)
    (project / "glossary/images" / name).write_text(text, encoding="utf-8")


def problems_for(project: Path, rel: str) -> list[str]:
    return [str(p) for p in check_images(load_glossary(project)) if p.path == f"glossary/{rel}"]


def test_finds_inline_reference_and_html_images_but_not_code():
    page = parse_page(
        page_text(
            '![A](../images/a.svg#only-light) and `![no](x.svg)`\n\n![B][b]\n\n<img src="../images/c.png" alt="C">\n\n'
            "```text\n![no](y.svg)\n```\n\n[b]: ../images/b.svg"
        ),
        Path("x"),
        "glossary/en/perf/x.md",
        "perf/x.md",
        "en",
    )
    found = [(r.kind, r.target, r.alt, r.line) for r in find_images(page)]
    assert found == [
        ("markdown", "../images/a.svg#only-light", "A", 6),
        ("reference", "../images/b.svg", "B", 16),
        ("html", "../images/c.png", "C", 10),
    ]


def test_variant_names():
    assert variant("sm.svg", "zh", dark=True) == "sm.zh.dark.svg"
    assert variant("sm.zh.dark.svg", "en", dark=False) == "sm.svg"
    assert variant("sm.zh.svg", "zh", dark=True) == "sm.zh.dark.svg"


def test_check_reports_every_kind_of_problem(project):
    add_image(project, "pair.svg")
    add_image(project, "pair.dark.svg")
    add_image(project, "lonely.svg")
    write(
        project,
        "en/perf/pictures.md",
        "![](../images/pair.svg#only-light) ![](../images/pair.dark.svg#only-dark)\n\n"
        "![Lonely](../images/lonely.svg)\n\n![Gone](../images/gone.svg)\n\n![Remote](https://example.com/r.png)\n\n"
        "![Legacy](themed-image://sm.svg)",
    )
    found = problems_for(project, "en/perf/pictures.md")
    assert (
        "glossary/en/perf/pictures.md:6: error: image '../images/pair.svg#only-light' has no alt text: describe what it shows"  # noqa: E501 -- one message, whole as printed
        in found
    )
    for start in (
        "glossary/en/perf/pictures.md:8: error: image '../images/lonely.svg' has no dark variant",
        "glossary/en/perf/pictures.md:10: error: image '../images/gone.svg' does not exist",
        "glossary/en/perf/pictures.md:12: error: remote image 'https://example.com/r.png'",
        "glossary/en/perf/pictures.md:14: error: legacy image link 'themed-image://sm.svg'",
    ):
        assert [p for p in found if p.startswith(start)], (start, found)


def test_a_complete_pair_passes_and_chinese_must_show_the_same_images(project):
    for name in ("d.svg", "d.dark.svg", "d.zh.svg", "d.zh.dark.svg", "e.svg", "e.dark.svg"):
        add_image(project, name)
    pair = "![D](../images/d.svg#only-light) ![D](../images/d.dark.svg#only-dark)"
    write(project, "en/perf/pictures.md", pair)
    assert problems_for(project, "en/perf/pictures.md") == []
    write(
        project,
        "zh/perf/pictures.md",
        "![图](../images/d.zh.svg#only-light) ![图](../images/d.zh.dark.svg#only-dark)",
        "图片",
    )
    assert problems_for(project, "zh/perf/pictures.md") == []
    write(
        project,
        "zh/perf/pictures.md",
        "![图](../images/e.svg#only-light) ![图](../images/e.dark.svg#only-dark)",
        "图片",
    )
    found = problems_for(project, "zh/perf/pictures.md")
    assert [p for p in found if "images differ from glossary/en/perf/pictures.md" in p], found


def test_check_is_part_of_gpu_glossary_check(project):
    from gpu_glossary.check import run_check

    write(project, "en/perf/occupancy.md", "![](../images/missing.svg)")
    found = [str(p) for p in run_check(project, pages={("en", "perf/occupancy.md")})]
    assert [p for p in found if "image '../images/missing.svg' does not exist" in p], found


def test_fix_turns_legacy_links_into_light_dark_pairs_also_in_chinese_text(project):
    for name in ("sm.svg", "sm.dark.svg", "sm.zh.svg", "sm.zh.dark.svg"):
        add_image(project, name)
    en = write(project, "en/perf/pictures.md", "See ![The SM](themed-image://sm.svg) here.")
    zh = write(project, "zh/perf/pictures.md", "如图![流式多处理器](themed-image://sm.svg)所示。", "图片")
    glossary = load_glossary(project)
    changes = fix_page(glossary, glossary.page("en", "perf/pictures.md")) + fix_page(
        glossary, glossary.page("zh", "perf/pictures.md")
    )
    assert len(changes) == 2
    assert (
        "See ![The SM](../images/sm.svg#only-light) ![The SM](../images/sm.dark.svg#only-dark) here."
        in en.read_text(encoding="utf-8")
    )
    assert (
        "如图![流式多处理器](../images/sm.zh.svg#only-light) ![流式多处理器](../images/sm.zh.dark.svg#only-dark)所示。"
        in zh.read_text(encoding="utf-8")
    )
    assert problems_for(project, "zh/perf/pictures.md") == []


@pytest.mark.parametrize(
    "rel, written, expected",
    [
        ("en/perf/pictures.md", "/images/x.svg", "../images/x.svg"),
        ("en/perf/pictures.md", "images/x.svg", "../images/x.svg"),
        ("en/perf/pictures.md", "../../images/x.svg", "../images/x.svg"),
        ("en/index.md", "../images/x.svg", "images/x.svg"),
        ("en/index.md", "/images/x.svg", "images/x.svg"),
        ("en/perf/pictures.md", "https://cdn.example.com/assets/x.svg", "../images/x.svg"),
        ("zh/perf/pictures.md", "../images/x.svg", "../images/x.zh.svg"),
        ("zh/perf/pictures.md", "../images/x.dark.svg#only-dark", "../images/x.zh.dark.svg#only-dark"),
    ],
)
def test_fix_repairs_paths_for_the_pages_depth_and_language(project, rel, written, expected):
    for name in ("x.svg", "x.dark.svg", "x.zh.svg", "x.zh.dark.svg"):
        add_image(project, name)
    path = project / "glossary" / rel
    original = path.read_text(encoding="utf-8") if path.exists() else page_text("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(original + f"\n![X]({written})\n", encoding="utf-8")
    glossary = load_glossary(project)
    lang, page_rel = rel.split("/", 1)
    changes = fix_page(glossary, glossary.page(lang, page_rel))
    assert [(c.old, c.new) for c in changes] == [(written, expected)]
    assert path.read_text(encoding="utf-8").endswith(f"\n![X]({expected})\n")
    again = load_glossary(project)
    assert fix_page(again, again.page(lang, page_rel)) == []  # idempotent


def test_fix_leaves_what_it_cannot_repair_and_never_deletes(project):
    add_image(project, "keep.svg")
    write(project, "en/perf/pictures.md", "![R](https://example.com/unknown.png) ![M](../images/none.svg)")
    glossary = load_glossary(project)
    assert fix_page(glossary, glossary.page("en", "perf/pictures.md")) == []
    assert (project / "glossary/images/keep.svg").exists()


def empty_images(project: Path) -> None:
    """Start from no images, so the real diagrams don't count."""
    import shutil

    shutil.rmtree(project / "glossary/images", ignore_errors=True)
    (project / "glossary/images").mkdir()


def test_make_dark_maps_the_palette_and_never_overwrites(project):
    empty_images(project)
    add_image(project, "diagram.svg", LIGHT_SVG.replace("#1f2328", "#123456"))
    add_image(project, "hand.svg")
    add_image(project, "hand.dark.svg", "hand-made")
    add_image(project, "diagram.zh.svg")
    created = {path.name: unknown for path, unknown in make_dark_variants(load_glossary(project))}
    assert set(created) == {"diagram.dark.svg", "diagram.zh.dark.svg"}
    assert created["diagram.dark.svg"] == {"#123456"}
    dark = (project / "glossary/images/diagram.dark.svg").read_text(encoding="utf-8")
    assert DARK_PALETTE["#dcefe9"] in dark and DARK_PALETTE["#1b7f6b"] in dark and "#dcefe9" not in dark
    assert (project / "glossary/images/hand.dark.svg").read_text(encoding="utf-8") == "hand-made"
    assert make_dark_variants(load_glossary(project)) == []


def test_make_dark_svg_is_case_insensitive():
    dark, unknown = make_dark_svg('<rect fill="#DCEFE9"/>')
    assert dark == f'<rect fill="{DARK_PALETTE["#dcefe9"]}"/>' and unknown == set()


class _ImageServer(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        routes = {
            "/ok.svg": ("image/svg+xml", LIGHT_SVG.encode()),
            "/page.html": ("text/html", b"<html></html>"),
            "/big.png": ("image/png", b"\x89PNG" + b"0" * 5000),
            "/script.svg": (
                "image/svg+xml",
                b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
            ),
        }
        if self.path == "/slow.png":
            time.sleep(2)
        if self.path not in routes:
            self.send_response(404)
            self.end_headers()
            return
        kind, body = routes[self.path]
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def image_server():
    server = run_in_background(ThreadingHTTPServer(("127.0.0.1", 0), _ImageServer))
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_localize_downloads_checks_and_rewrites(project, image_server):
    empty_images(project)
    good = write(
        project,
        "en/perf/pictures.md",
        f"![Remote]({image_server}/ok.svg#only-light) and ![Again]({image_server}/ok.svg)",
    )
    bad = write(
        project,
        "en/perf/bad.md",
        f"![Page]({image_server}/page.html)\n\n![Big]({image_server}/big.png)\n\n"
        f"![Slow]({image_server}/slow.png)\n\n![Gone]({image_server}/gone.png)\n\n"
        f"![Script]({image_server}/script.svg)",
    )
    bad_before = bad.read_text(encoding="utf-8")
    changes, problems = Localizer(load_glossary(project), timeout=0.5, max_bytes=1000).localize()
    name = next(p.name for p in (project / "glossary/images").iterdir() if p.suffix == ".svg")
    assert len(name) == len("0123456789abcdef.svg")
    assert (project / "glossary/images" / name).read_text(encoding="utf-8") == LIGHT_SVG
    assert f"![Remote](../images/{name}#only-light) and ![Again](../images/{name})" in good.read_text(encoding="utf-8")
    assert len(changes) == 2
    messages = sorted(str(p) for p in problems)
    for expected in (
        "page.html': content type 'text/html' is not an image type",
        "slow.png': timed out after 0.5 s",
        "gone.png': HTTP 404",
        "script.svg': the SVG is not safe to serve (line 1: <script> is not allowed",
    ):
        assert [m for m in messages if expected in m], (expected, messages)
    assert [m for m in messages if "big.png': " in m and "1,000-byte limit" in m], messages
    assert len(list((project / "glossary/images").iterdir())) == 1  # only ok.svg was saved
    assert bad.read_text(encoding="utf-8") == bad_before


def test_images_cli_check_exit_code(project, monkeypatch):
    monkeypatch.chdir(project)
    ok = cli("images", "--check")
    assert ok.exit_code == 0, ok.stdout
    write(project, "en/perf/pictures.md", "![](../images/none.svg)")
    bad = cli("images")
    assert bad.exit_code == 1
    assert "glossary/en/perf/pictures.md:6: error: image '../images/none.svg' has no alt text" in bad.stdout, bad.stdout


SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10">'
    "\n{}\n</svg>\n"
)


@pytest.mark.parametrize(
    "inside, message",
    [
        ("<script>alert(1)</script>", "<script> is not allowed in a diagram"),
        ('<rect width="5" height="5" onclick="alert(1)"/>', "event attribute onclick= on <rect>"),
        ('<g ONLOAD="alert(1)"/>', "event attribute ONLOAD= on <g>"),
        (
            '<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>',
            "<foreignObject> is not allowed",
        ),
        ('<image href="https://tracker.example/p.png"/>', "<image> refers to 'https://tracker.example/p.png'"),
        ('<use xlink:href="other.svg#shape"/>', "<use> refers to 'other.svg#shape'"),
        ('<a href="javascript:alert(1)"><text>x</text></a>', "<a> refers to 'javascript:alert(1)'"),
        ('<rect fill="url(https://tracker.example/#p)"/>', "fill= on <rect> loads"),
        ("<rect style=\"fill: url('//tracker.example/p')\"/>", "style= on <rect> loads"),
        ("<style>@import url(https://tracker.example/s.css);</style>", "a <style> in a diagram loads from elsewhere"),
        ('<a href="#x"><set attributeName="href" to="javascript:alert(1)"/></a>', "<set> changes href"),
    ],
)
def test_unsafe_svg_is_an_error_with_its_line(project, inside, message):
    add_image(project, "evil.svg", SVG.format(inside))
    found = problems_for(project, "images/evil.svg")
    assert [p for p in found if p.startswith("glossary/images/evil.svg:2: error: ") and message in p], found


def test_svg_entities_and_broken_xml_are_errors(project):
    laughs = '<?xml version="1.0"?>\n<!DOCTYPE svg [\n<!ENTITY a "lol">\n<!ENTITY b "&a;&a;&a;">\n]>\n<svg xmlns="http://www.w3.org/2000/svg"><text>&b;</text></svg>\n'
    add_image(project, "laughs.svg", laughs)
    add_image(project, "broken.svg", '<svg xmlns="http://www.w3.org/2000/svg">\n<g>\n</svg>\n')
    laughs_found = problems_for(project, "images/laughs.svg")
    assert [
        p
        for p in laughs_found
        if p.startswith("glossary/images/laughs.svg:3: error: the diagram declares the entity 'a'")
    ], laughs_found
    broken_found = problems_for(project, "images/broken.svg")
    assert [p for p in broken_found if p.startswith("glossary/images/broken.svg:3: error: not well-formed XML")], (
        broken_found
    )


def test_our_diagrams_and_internal_references_pass(project):
    add_image(
        project,
        "fine.svg",
        SVG.format(
            '<defs><linearGradient id="g"/></defs><rect fill="url(#g)"/><use href="#g"/>'
            '<a xlink:href="#g"><text xml:lang="zh">线程束</text></a>'
        ),
    )
    assert problems_for(project, "images/fine.svg") == []
    assert not [p for p in check_images(load_glossary(project)) if p.path.startswith("glossary/images/")]


def test_svg_verdicts_are_cached_by_content_and_an_edit_is_judged_again(project, tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_GLOSSARY_CACHE", str(tmp_path / "cache"))
    add_image(project, "later.svg", SVG.format('<rect width="5" height="5"/>'))
    assert problems_for(project, "images/later.svg") == []
    assert len(list((tmp_path / "cache" / "svg-verdict").glob("*.json"))) >= 2  # ours and later.svg
    add_image(project, "later.svg", SVG.format("<script>alert(1)</script>"))
    for _ in range(2):  # judged, then read from the cache
        found = problems_for(project, "images/later.svg")
        assert [p for p in found if p.startswith("glossary/images/later.svg:2: error: <script> is not allowed")], found
