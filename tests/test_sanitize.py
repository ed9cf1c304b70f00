"""Hostile pages: everything a pull request could do to put script on the site is refused
with its file and line, by the checker and by the build, from the same sanitizer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import ROOT, checker_messages

from gpu_glossary.check import run_check
from gpu_glossary.glossary import load_glossary
from gpu_glossary.page import parse_page
from gpu_glossary.render import Renderer, markdown_settings
from gpu_glossary.sanitize import elements, html_problems, removals, sanitize, sanitized_elements
from gpu_glossary.site.build import SiteBuildError, build_site

# (Markdown body, line of the offence counted from the body's first line, what the error says)
HOSTILE = {
    "entity-encoded scheme": ('Body <a href="&#106;avascript:alert(8)">w</a>.', 1, "href='javascript:alert(8)' on <a>"),
    "tab inside the scheme": (
        'And <a href="jav&#x09;ascript:alert(6)">z</a>.',
        1,
        "href='jav\\tascript:alert(6)' on <a>",
    ),
    "attribute list on a paragraph": ('Para two.\n{: onclick="alert(7)" }', 2, "attribute onclick='alert(7)' on <p>"),
    "attribute list on a link": (
        'Link to [q](../device-software/warp.md){: onmouseover="alert(9)" }.',
        1,
        "attribute onmouseover='alert(9)' on <a>",
    ),
    "attribute list on a heading": (
        'Text.\n\n## Title {#title onclick="alert(1)"}',
        3,
        "attribute onclick='alert(1)' on <h2>",
    ),
    "upper case": ('<A HREF="JAVASCRIPT:alert(1)">x</A>', 1, "href='JAVASCRIPT:alert(1)' on <a>"),
    "mixed case Markdown link": ("Text.\n\n[x](JaVaScRiPt:alert(1))", 3, "href='JaVaScRiPt:alert(1)' on <a>"),
    "newline entity in the scheme": (
        '<a href="java&NewLine;script:alert(1)">x</a>',
        1,
        "href='java\\nscript:alert(1)' on <a>",
    ),
    "control character before the scheme": (
        '<a href="&#x01;javascript:alert(1)">x</a>',
        1,
        "javascript:alert(1)' on <a>",
    ),
    "colon as an entity": ('<a href="javascript&colon;alert(1)">x</a>', 1, "href='javascript:alert(1)' on <a>"),
    "data URL": ("[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)", 1, "href='data:text/html;base64,"),
    "vbscript URL": ('<a href="vbscript:msgbox(1)">x</a>', 1, "href='vbscript:msgbox(1)' on <a>"),
    "protocol-relative URL": ('<a href="//evil.example/">x</a>', 1, "href='//evil.example/' on <a>"),
    "backslash protocol-relative URL": ('<a href="/\\evil.example/">x</a>', 1, "href='/\\\\evil.example/' on <a>"),
    "script element": ("Text.\n\n<SCRIPT SRC=//evil.example/x.js></SCRIPT>", 3, "<script> is not allowed"),
    "event handler on an image": ("<img src=x onerror=alert(1)>", 1, "attribute onerror='alert(1)' on <img>"),
    "slash instead of a space": ("<a/onclick=alert(1) href=x>q</a>", 1, "attribute onclick='alert(1)' on <a>"),
    "details toggle handler": (
        '<details open ontoggle="alert(1)"><summary>s</summary>x</details>',
        1,
        "attribute ontoggle='alert(1)' on <details>",
    ),
    "iframe srcdoc": ('<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>', 1, "<iframe> is not allowed"),
    "button formaction": (
        '<form><button formaction="javascript:alert(1)">go</button></form>',
        1,
        "<button> is not allowed",
    ),
    "SVG script": ("<svg><script>alert(1)</script></svg>", 1, "<svg> is not allowed"),
    "SVG onload": ('<svg onload="alert(1)"></svg>', 1, "<svg> is not allowed"),
    "MathML link": ('<math><mtext><a href="javascript:alert(1)">x</a></mtext></math>', 1, "<math> is not allowed"),
    "base element": ('<base href="https://evil.example/">', 1, "<base> is not allowed"),
    "meta refresh": ('<meta http-equiv="refresh" content="0;url=javascript:alert(1)">', 1, "<meta> is not allowed"),
    "style attribute with a CSS URL": (
        '<span style="background:url(javascript:alert(1))">x</span>',
        1,
        "attribute style=",
    ),
    "style element": ("<style>p{background:url(javascript:alert(1))}</style>", 1, "<style> is not allowed"),
    "object element": ('<object data="javascript:alert(1)"></object>', 1, "<object> is not allowed"),
    "input autofocus": ("<input autofocus onfocus=alert(1)>", 1, "attribute onfocus='alert(1)' on <input>"),
    "input other than a tab's radio button": ('<input type="text" name="pw">', 1, "attribute type='text' on <input>"),
    "noscript mutation": (
        '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></p></noscript>',
        1,
        "<noscript> is not allowed",
    ),
    "tracking ping": ('<a href="https://example.org/" ping="https://evil.example/t">x</a>', 1, "attribute ping="),
    "theme id clobbering": ('<div id="__config">{}</div>', 1, "id='__config' on <div>: names starting with '__'"),
    # Written to look like highlighted code, which the search for removals otherwise skips.
    "handler in a code block look-alike": (
        '<div class="highlight"><pre><code><span class="n" onclick="alert(1)">x</span></code></pre></div>',
        1,
        "attribute onclick='alert(1)' on <span>",
    ),
    "script in a code block look-alike": (
        '<div class="highlight"><pre><span></span><code>x<script>alert(1)</script></code></pre></div>',
        1,
        "<script> is not allowed",
    ),
}
HARMLESS = "Text.\n\n```html\n<script>fine in code</script>\n```\n\nInline `<script>` and &lt;script&gt; as text.\n"


def front(title: str = "Test term") -> str:
    return f"---\ntitle: {title}\nsummary: A test.\n---\n\n"


BODY_LINE = front().count("\n") + 1


@pytest.fixture(scope="module")
def hostile_errors() -> list[str]:
    """The checker's errors about a glossary of the hostile pages and a harmless one."""
    texts = {
        f"en/perf/hostile-{number:02}.md": front(f"Hostile {number}") + body + "\n"
        for number, (body, _, _) in enumerate(HOSTILE.values())
    }
    texts["en/perf/harmless.md"] = front("Harmless") + HARMLESS
    return checker_messages(texts, rendered=True, root=ROOT)


@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_markup_is_an_error_naming_file_and_line(hostile_errors, case):
    number = list(HOSTILE).index(case)
    _, line, message = HOSTILE[case]
    path = f"glossary/en/perf/hostile-{number:02}.md"
    mine = [e for e in hostile_errors if e.startswith(path + ":")]
    assert [e for e in mine if e.startswith(f"{path}:{BODY_LINE + line - 1}: error: ") and message in e], mine


def test_code_and_escaped_text_are_not_markup(hostile_errors):
    assert not [e for e in hostile_errors if "perf/harmless.md" in e]


def test_highlighted_code_is_read_as_an_empty_block_only_when_it_holds_nothing_else():
    """The search for removals skips code blocks as Pygments writes them (most of a page's
    elements); a block of that shape with anything more is read, and its removal reported."""
    code = "```cuda\n__global__ void k(int *x) { x[threadIdx.x] = 1; }\n```\n"
    page = parse_page(front() + code, Path("x.md"), "x.md", "perf/x.md", "en")
    html = Renderer.for_language(ROOT, "en").html(page.body)
    assert html.count('<div class="highlight">') == 1 and html_problems(page, html) == []
    hostile = html.replace('<span class="kt">', '<span class="kt" onclick="alert(1)">', 1)
    assert [p.message for p in html_problems(page, hostile)] == [
        "attribute onclick='alert(1)' on <span> is not allowed on the site (the sanitizer removes it)"
        " (written by a Markdown extension or the build: no line of the page holds it)"
    ]


def test_the_sanitized_hostile_pages_hold_no_script_or_handler():
    renderer = Renderer.for_language(ROOT, "en")
    for body, _, _ in HOSTILE.values():
        clean = sanitize(renderer.html(body))
        assert not re.search(
            r"<(script|iframe|svg|math|object|base|meta|style|form)\b|<input\b(?![^>]*\btype=\"radio\")"
            r"|\son\w+\s*=|javascript|vbscript|data:",
            clean,
            re.I,
        ), clean
        assert removals(clean) == []  # sanitizing twice changes nothing


@pytest.mark.slow
def test_the_sanitizer_s_output_is_read_the_same_with_patterns_as_with_a_parser():
    """html_problems reads nh3's output with patterns (sanitized_elements): on every English page
    and every hostile body, what they find must be what Python's HTML parser finds."""
    renderer = Renderer.for_language(ROOT, "en")
    bodies = [page.body for page in load_glossary(ROOT).pages["en"].values()]
    bodies += [body for body, _, _ in HOSTILE.values()] + [HARMLESS]
    bodies.append('[q](https://example.org/?a=1&b=2 "say \\"hi\\" & <go>") and <abbr title="a &lt; b">ab</abbr>')
    cleans = [sanitize(renderer.html(body)) for body in bodies]
    assert [index for index, clean in enumerate(cleans) if sanitized_elements(clean) != elements(clean)] == []
    assert sum(len(elements(clean)) for clean in cleans) > 10000  # the corpus is not empty


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("title", "<img src=x onerror=alert(1)>", "front matter 'title' must be plain text"),
        ("summary", "Looks fine &#60;script&#62;", "front matter 'summary' must be plain text"),
    ],
)
def test_markup_in_front_matter_is_an_error(key, value, message):
    fields = {"title": "Term", "summary": "A test."} | {key: value}
    text = f"---\ntitle: '{fields['title']}'\nsummary: '{fields['summary']}'\n---\n\nText.\n"
    line = 2 if key == "title" else 3
    found = checker_messages({"en/perf/front.md": text})
    assert [e for e in found if e.startswith(f"glossary/en/perf/front.md:{line}: error: {message}")], found


def test_everything_our_pages_use_passes_the_sanitizer():
    """Admonitions, details, footnotes, aligned tables, highlighted code with line anchors,
    math, abbreviations, images per scheme, ids, link-preview data and recorded-output lines."""
    body = """Intro with a footnote[^1], $x^2$ math, <abbr title="Streaming Multiprocessor">SM</abbr>
and [a link](../device-software/warp.md "Warp"){ data-gg-title="Warp" data-gg-summary="32 threads." }.

!!! note "Note"
    Inside an admonition.

??? tip "More"
    Inside details.

| left | centre | right |
|:-----|:------:|------:|
| 1    | 2      | 3     |

```cuda title="k.cu" linenums="1"
__global__ void k() {}
```

<p class="gg-run">Output on NVIDIA H100 · driver 580.95 · CUDA 13.0 · <time datetime="2026-11-23">2026-11-23</time></p>

=== "NVIDIA H100 80GB HBM3"

    ```text
    one
    ```

=== "4× NVIDIA H200"

    ```text
    four
    ```

<div class="gg-note" markdown>
**Bold** inside md_in_html, <span class="gg-x">span</span>, <kbd>Ctrl</kbd>, H<sub>2</sub>O, x<sup>2</sup>.
</div>

$$
\\sum_i x_i
$$

![A diagram](../images/memory-hierarchy.svg#only-light) ![A diagram](../images/memory-hierarchy.dark.svg#only-dark)

Term
:   Definition with <https://example.org/> and <mailto:team@example.org>.

## Heading {#heading}

[^1]: The footnote.
"""
    model = parse_page(front() + body, Path("x.md"), "x.md", "x.md", "en")
    html = Renderer.for_language(ROOT, "en").html(model.body)
    assert html_problems(model, html) == []
    clean = sanitize(html)
    for kept in (
        'class="gg-run"',
        '<time datetime="2026-11-23">',
        'class="admonition note"',
        "<details",
        'class="footnote"',
        'align="center"',
        'class="arithmatex"',
        'id="__codelineno-0-1"',
        "#only-dark",
        'data-gg-summary="32 threads."',
        'id="heading"',
        'class="headerlink"',
        '<input checked="checked" id="__tabbed_1_1" name="__tabbed_1" type="radio">',
        '<label for="__tabbed_1_2">4× NVIDIA H200</label>',
        'data-tabs="1:2"',
    ):
        assert kept in clean, kept


def test_checker_renders_with_the_builds_markdown_extensions():
    from mkdocs.config import load_config

    for lang, config_file in (("en", "mkdocs.yml"), ("zh", "mkdocs.zh.yml")):
        config = load_config(str(ROOT / config_file))
        extensions, options = markdown_settings(ROOT, lang)
        assert extensions == config.markdown_extensions
        assert options == {name: value for name, value in config.mdx_configs.items() if value}


def test_the_build_refuses_a_hostile_page_with_the_checkers_messages(small):
    """The issue's own example: each of these passed the old pattern-based checker."""
    site_dir = small / "site"
    page = small / "glossary/en/device-software/warp.md"
    page.write_text(
        page.read_text(encoding="utf-8")
        + (
            '\nBody <a href="&#106;avascript:alert(8)">w</a> and <a href="jav&#x09;ascript:alert(6)">z</a>.\n\n'
            'Para two.\n{: onclick="alert(7)" }\n\n'
            'Link to [q](../device-software/warp.md){: onmouseover="alert(9)" }.\n'
        ),
        encoding="utf-8",
    )
    checked = sorted(str(p) for p in run_check(small) if p.severity == "error")
    assert len(checked) == 4 and all(p.startswith("glossary/en/device-software/warp.md:") for p in checked), checked
    with pytest.raises(SiteBuildError) as failure:
        build_site(small, site_dir=site_dir)
    for problem in checked:
        assert problem in str(failure.value)
    assert not site_dir.exists()  # nothing was published


@pytest.mark.parametrize("sanitized", [True, False])
def test_no_hostile_page_runs_script_in_chromium_once_sanitized(browser, sanitized):
    """The whole corpus in one document, every element clicked, hovered and focused: after the
    sanitizer nothing runs; before it, handlers fire (so the test can tell)."""
    renderer = Renderer.for_language(ROOT, "en")
    bodies = [renderer.html(body) for body, _, _ in HOSTILE.values()]
    document = "<!doctype html><html><head><meta charset='utf-8'></head><body>{}</body></html>".format(
        "\n".join(sanitize(b) if sanitized else b for b in bodies)
    )
    context = browser.new_context()
    tab = context.new_page()
    dialogs = []
    tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    url = "http://127.0.0.1:9/hostile.html"  # answered by the route below, never by a server
    tab.route(url, lambda route: route.fulfill(status=200, content_type="text/html; charset=utf-8", body=document))
    tab.route("**/*", lambda route: route.fulfill(status=204) if route.request.url != url else route.fallback())
    tab.goto(url)
    tab.evaluate("""() => { for (const el of document.body.querySelectorAll('*')) {
        for (const type of ['mouseover', 'focus', 'toggle', 'click'])
            el.dispatchEvent(new Event(type, {bubbles: true}));
        if (el.tagName === 'A' && el.href) el.click(); } }""")
    tab.wait_for_timeout(500)
    context.close()
    if sanitized:
        assert dialogs == []
    else:
        assert dialogs, "the unsanitized corpus ran no script: the test could not tell"
