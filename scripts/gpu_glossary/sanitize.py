"""The one allowlist between a page's rendered HTML and the published site.

Pages come from pull requests and from a language model, so what Markdown renders is
untrusted HTML. Patterns over the Markdown miss entity-encoded schemes and attribute
lists (`{: onclick=… }`); an allowlist applied to the *rendered* HTML by a browser-grade
parser does not. nh3 (the Python binding of Rust's ammonia, which parses with html5ever
as a browser does) keeps only the elements, attributes and URL schemes listed here.

The build publishes nh3's output, and anything nh3 would remove is an error naming the
page and line: nothing is dropped silently. To find what nh3 removed, both the input and
the output are read with Python's HTML parser and compared; should the two parsers ever
disagree, a removal could go unreported, but never unremoved.
"""

from __future__ import annotations

import html as html_lib
import re
import sys
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cache
from html.parser import HTMLParser

import nh3

from gpu_glossary import page as page_module
from gpu_glossary.cache import fingerprint, memoize
from gpu_glossary.page import Page, Problem, mask_inline_code

# What Markdown, our extensions, footnotes, tables, code highlighting, math, admonitions,
# details, content tabs, md_in_html and the recorded-output lines produce, and nothing else.
ALLOWED_TAGS = frozenset(
    {
        "a",
        "abbr",
        "b",
        "blockquote",
        "br",
        "caption",
        "cite",
        "code",
        "col",
        "colgroup",
        "dd",
        "del",
        "details",
        "dfn",
        "div",
        "dl",
        "dt",
        "em",
        "figcaption",
        "figure",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "img",
        "input",
        "ins",
        "kbd",
        "label",
        "li",
        "mark",
        "ol",
        "p",
        "pre",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "summary",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "time",
        "tr",
        "u",
        "ul",
        "var",
    }
)
ALLOWED_ATTRIBUTES = {
    "*": {"id", "class", "title", "lang", "dir"},
    "a": {"href", "name", "data-gg-title", "data-gg-summary"},  # name: code line anchors
    "h2": {"data-search-exclude"},  # Material's search skips the section (Referenced by, A-Z letters)
    "img": {"src", "alt", "width", "height"},
    # Content tabs (pymdownx.tabbed): radio buttons and their labels, switched by the theme's CSS.
    "input": {"type", "name", "checked"},
    "label": {"for"},
    "div": {"data-tabs"},
    "td": {"align", "colspan", "rowspan"},  # align: table column alignment
    "th": {"align", "colspan", "rowspan", "scope"},
    "ol": {"start", "reversed", "type"},
    "li": {"value"},
    "details": {"open"},
    "time": {"datetime"},
    "col": {"span"},
    "colgroup": {"span"},
    "blockquote": {"cite"},
    "q": {"cite"},
    "del": {"cite", "datetime"},
    "ins": {"cite", "datetime"},
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})  # and relative URLs, #anchors among them
URL_ATTRIBUTES = frozenset({"href", "src", "cite"})

# `//host/x` (or `/\host`, which browsers read alike) leaves the site like an absolute URL.
_PROTOCOL_RELATIVE = re.compile(r"^[\x00-\x20]*[/\\]{2}")
# Material's own elements have ids like `__config` and `__search`; a page element with such
# an id would shadow them (DOM clobbering). Code highlighting's line anchors and content tabs'
# radio buttons are the exceptions.
_RESERVED_ID = re.compile(r"^__(?!(?:codelineno|span)-\d+-\d+$|tabbed_\d+(?:_\d+)?$)")
_MARKUP = re.compile(r"<[A-Za-z!/?]|&(?:#\d+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")


def _filter(tag: str, attribute: str, value: str) -> str | None:
    if attribute in ("id", "name") and _RESERVED_ID.match(value):
        return None
    if tag == "input" and attribute == "type" and value != "radio":
        return None
    if attribute in URL_ATTRIBUTES and _PROTOCOL_RELATIVE.match(value):
        return None
    return value


def sanitize(html: str) -> str:
    """The HTML the site publishes: only allowed elements, attributes and URLs remain."""
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        attributes={k: set(v) for k, v in ALLOWED_ATTRIBUTES.items()},
        url_schemes=set(URL_SCHEMES),
        attribute_filter=_filter,
        set_tag_attribute_values={"input": {"type": "radio"}},  # a content tab's switch, never a form field
        link_rel=None,
        strip_comments=True,
    )


def is_plain_text(value: str) -> bool:
    """True if `value` holds no tag and no character reference: it reads the same as text and as HTML."""
    return not _MARKUP.search(value)


# -- what the sanitizer removed ---------------------------------------------------------
@dataclass(frozen=True)
class Element:
    """A start tag as an HTML parser reads it: attributes decoded, first of duplicates kept."""

    tag: str
    attributes: tuple[tuple[str, str], ...]

    def get(self, name: str) -> str | None:
        return dict(self.attributes).get(name)


class _StartTags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[Element] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        first: dict[str, str] = {}
        for name, value in attrs:
            first.setdefault(name, value or "")
        self.found.append(Element(tag, tuple(first.items())))


def elements(html: str) -> list[Element]:
    """Every start tag in `html`, in document order."""
    parser = _StartTags()
    parser.feed(html)
    parser.close()
    return parser.found


@dataclass(frozen=True)
class Removal:
    """An element, or one attribute of an element, that the sanitizer removes."""

    tag: str
    attribute: str = ""  # "" when the whole element goes
    value: str = ""

    @property
    def message(self) -> str:
        if not self.attribute:
            return f"<{self.tag}> is not allowed on the site (the sanitizer removes it): pages are Markdown"
        shown = self.value if len(self.value) <= 60 else self.value[:57] + "…"
        allowed = self.attribute in ALLOWED_ATTRIBUTES.get(self.tag, set()) | ALLOWED_ATTRIBUTES["*"]
        if allowed and self.attribute in URL_ATTRIBUTES:
            return (
                f"{self.attribute}={shown!r} on <{self.tag}> is not allowed on the site: links and images "
                "may only be relative paths (not //host), #anchors, http:, https: or mailto: (the sanitizer removes it)"
            )
        if allowed and self.attribute in ("id", "name"):
            return (
                f"{self.attribute}={shown!r} on <{self.tag}>: names starting with '__' belong to the theme "
                "(the sanitizer removes it)"
            )
        return (
            f"attribute {self.attribute}={shown!r} on <{self.tag}> is not allowed on the site "
            "(the sanitizer removes it)"
        )


def _attribute_removals(before: Element, after: Element) -> list[Removal]:
    kept = dict(after.attributes)
    return [Removal(before.tag, name, value) for name, value in before.attributes if kept.get(name) != value]


# nh3 writes HTML in one form (html5ever's serializer): attribute values in double quotes with
# `&` and `"` escaped, `<` escaped in text, no comments, no raw-text element left (script, style
# and the like are not allowed). Its start tags can be read with these patterns instead of an
# HTML parser; a test compares the two on every page.
_SERIALIZED_TAG = re.compile(r'<([a-z][^\s/>]*)((?:\s+[^\s/>="]+(?:="[^"]*")?)*)\s*/?>')
_SERIALIZED_ATTRIBUTE = re.compile(r'([^\s/>="]+)(?:="([^"]*)")?')


def sanitized_elements(clean: str) -> list[Element]:
    """`elements(clean)` for HTML that `sanitize` wrote, read with patterns (see above)."""
    found = []
    for tag in _SERIALIZED_TAG.finditer(clean):
        first: dict[str, str] = {}
        for attribute in _SERIALIZED_ATTRIBUTE.finditer(tag[2]):
            first.setdefault(attribute[1], html_lib.unescape(attribute[2] or ""))
        found.append(Element(tag[1], tuple(first.items())))
    return found


def removals(html: str) -> list[Removal]:
    """What `sanitize(html)` takes away from `html`, in document order."""
    before, after = elements(html), sanitized_elements(sanitize(html))
    if [e.tag for e in before] == [e.tag for e in after]:
        pairs = zip(before, after, strict=True)
        return [r for b, a in pairs if b != a for r in _attribute_removals(b, a)]
    found: list[Removal] = []
    matcher = SequenceMatcher(a=[e.tag for e in before], b=[e.tag for e in after], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            for b, a in zip(before[i1:i2], after[j1:j2], strict=True):
                found.extend(_attribute_removals(b, a))
        elif op in ("delete", "replace"):
            found.extend(Removal(element.tag) for element in before[i1:i2])
    return found


# -- where in the Markdown it came from --------------------------------------------------
def _source_lines(page: Page) -> list[tuple[int, str, str]]:
    """(line number, line, line with entities decoded) for every line that can produce HTML.

    Code inside fences and inline code renders as text, so it is left out; a fence's
    opening line stays (its `{…}` may carry attributes).
    """
    openers = {fence.line for fence in page.fences()}
    lines = []
    for number, line, in_code in page.body_lines():
        if not in_code or number in openers:
            masked = mask_inline_code(line) if not in_code else line
            lines.append((number, masked, html_lib.unescape(masked)))
    return lines


def _occurrences(removal: Removal, lines: list[tuple[int, str, str]]) -> list[int]:
    """Line numbers where the removed thing is written, once per occurrence."""
    if not removal.attribute:
        tag = re.compile(rf"<\s*{re.escape(removal.tag)}(?![\w-])", re.I)
        return [number for number, raw, _ in lines for _ in tag.finditer(raw)]
    name = re.compile(rf"(?<![\w-]){re.escape(removal.attribute)}\s*=", re.I)
    value = removal.value.strip()
    with_value = [(n, decoded) for n, _, decoded in lines if value and value in decoded]
    both = [n for n, decoded in with_value if name.search(decoded) for _ in range(decoded.count(value))]
    return (
        both
        or [n for n, decoded in with_value for _ in range(decoded.count(value))]
        or [n for n, _, decoded in lines for _ in name.finditer(decoded)]
    )


# A fenced code block as pymdownx.highlight writes it: Pygments' spans with a class, line
# anchors and escaped text, nothing else. Such a block holds nothing the sanitizer removes,
# yet it is most of a page's elements, so the search for removals reads it as an empty block
# (the published HTML still passes nh3 whole). A block with anything more is read in full.
_HIGHLIGHTED_CODE = re.compile(
    r'^<div class="highlight"><pre>(?:<span></span>)?<code>'
    r'(?:[^<]+|<span class="[\w -]*">|</span>'
    r'|<a id="__codelineno-\d+-\d+" name="__codelineno-\d+-\d+" href="#__codelineno-\d+-\d+"></a>)*'
    r"</code></pre></div>",
    re.M,
)
_EMPTY_CODE_BLOCK = '<div class="highlight"></div>'


def html_problems(page: Page, html: str) -> list[Problem]:
    """An error for each thing the sanitizer would remove from `html`, the page's rendered body.

    The line is the Markdown line the element or attribute came from, found by searching
    the page for it: HTML follows the Markdown's order (footnotes aside), so each removal
    takes the first unused occurrence at or after the previous one's line. Where no line
    holds it (HTML an extension or the build writes), the message says so.
    """
    found = removals(_HIGHLIGHTED_CODE.sub(_EMPTY_CODE_BLOCK, html))
    if not found:
        return []
    lines = _source_lines(page)
    unused: dict[tuple, list[int]] = {}
    problems = []
    cursor = 0
    for removal in found:
        key = (removal.tag, removal.attribute, removal.value)
        left = unused.setdefault(key, _occurrences(removal, lines))
        if not left:
            problems.append(
                page.problem(
                    page.body_line,
                    removal.message + " (written by a Markdown extension or the build: no line of the page holds it)",
                )
            )
            continue
        line = next((n for n in left if n >= cursor), left[0])
        if len(left) > 1:
            left.remove(line)
        cursor = line
        problems.append(page.problem(line, removal.message))
    return problems


@cache
def _fingerprint() -> str:
    return fingerprint(["nh3"], [sys.modules[__name__], page_module])


def cached_html_problems(page: Page, html: str) -> list[Problem]:
    """`html_problems`, remembered across builds for the same page text and HTML."""
    found = memoize(
        "built-html",
        [_fingerprint(), page.display_path, page.text, html],
        lambda: [(p.line, p.message) for p in html_problems(page, html)],
    )
    return [page.problem(line, message) for line, message in found]
