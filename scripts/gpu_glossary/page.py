"""The page model: one Markdown term page, its front matter and what its body contains.

Every tool (checker, MkDocs plugin, translator, image step) reads pages through this
module, so a page is parsed one way everywhere. Parsing never raises: problems are
collected on the page with their line numbers, so a malformed page gives a message,
not a traceback.
"""

from __future__ import annotations

import copy
import hashlib
import posixpath
import re
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import frontmatter
import yaml

from gpu_glossary import fast_yaml
from gpu_glossary.cache import in_memory

SECTIONS = ("device-hardware", "device-software", "host-software", "perf", "systems")
SOURCE_HASH_KEY = "source_hash"

_yaml_handler = frontmatter.YAMLHandler()


@dataclass(frozen=True)
class Problem:
    """Something wrong in a file, located to a line."""

    path: str
    line: int
    severity: str  # "error" or "warning"
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.severity}: {self.message}"


@dataclass(frozen=True)
class Fence:
    """A fenced code block: `line` is the opening fence, `end_line` the closing one, `code` the text between."""

    line: int
    end_line: int
    lang: str
    info: str
    code: str
    indent: str
    marker: str  # the HTML comment directly above the fence, e.g. "nvcc: skip", or ""
    fence: str = "```"  # the opening run of backticks or tildes
    closed: bool = True  # False: no closing fence, so the rest of the page would render as code


@dataclass(frozen=True)
class Link:
    """A Markdown link or image: `target` as written, `text` is the link text or alt."""

    line: int
    target: str
    text: str
    is_image: bool


@dataclass(frozen=True)
class Heading:
    line: int
    level: int
    text: str
    id: str
    explicit_id: bool


_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)$")
_HEADING = re.compile(r"^(?P<hashes>#{1,6})[ \t]+(?P<text>.*?)[ \t]*#*[ \t]*$")
_HEADING_ID = re.compile(r"[ \t]*\{[^}]*?#(?P<id>[A-Za-z0-9_:.-]+)[^}]*\}[ \t]*$")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_LINK = re.compile(
    r"(?P<bang>!?)\[(?P<text>(?:[^\[\]]|\[[^\[\]]*\])*)\]"
    r"\(\s*<?(?P<target>[^)\s>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)"
)
_REF_DEF = re.compile(r"^[ \t]{0,3}\[(?P<label>[^\]]+)\]:[ \t]*<?(?P<target>\S+?)>?(?:[ \t]+.*)?$")
_HTML_COMMENT_MARKER = re.compile(r"^[ \t]*<!--\s*(?P<marker>.*?)\s*-->[ \t]*$")


def resolve_link(rel: str, path: str) -> str:
    """Where a relative link `path` on the page at `rel` points, relative to the language root."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(rel), unquote(path)))


def front_matter_block(meta: dict) -> str:
    """A `---` block holding `meta` as YAML, keys in the given order, Chinese kept readable."""
    return "---\n" + yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=1000) + "---\n"


def source_hash(text: str) -> str:
    """Hash of an English page as a Chinese page records it (line endings normalised)."""
    return hashlib.sha256(text.replace("\r\n", "\n").encode("utf-8")).hexdigest()[:16]


def with_source_hash(text: str, value: str) -> str:
    """The page text with `source_hash` set in its front matter, everything else untouched."""
    return with_front_matter(text, {SOURCE_HASH_KEY: value})


def with_front_matter(text: str, values: Mapping[str, object]) -> str:
    """The page text with each key set (or removed, where the value is None) in its front
    matter; every other line is left exactly as it was."""
    head, sep, rest = text.partition("\n---")
    for key, value in values.items():
        existing = re.compile(rf"\n{re.escape(key)}[ \t]*:[^\n]*")
        if value is None:
            head = existing.sub("", head, count=1)
            continue
        line = "\n" + yaml.safe_dump({key: value}, allow_unicode=True, width=1000).rstrip("\n")
        found = existing.search(head)
        # Spliced in by position, not re.sub: the new line is literal text, backslashes included.
        head = head[: found.start()] + line + head[found.end() :] if found else head.rstrip("\n") + line
    return head + sep + rest


def fence_lang(info: str) -> str:
    """The language of a fence from its info string: `cuda`, `{.cuda}`, `cuda title="x"`."""
    info = info.strip()
    if info.startswith("{"):
        match = re.search(r"\.([\w+-]+)", info)
        return match.group(1) if match else ""
    return info.split()[0] if info else ""


def mask_inline_code(line: str) -> str:
    """Replace inline code spans by spaces, so nothing inside them is read as a link or HTML."""
    return _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)


def slugify_heading(text: str) -> str:
    """The id Python-Markdown's toc extension gives a heading without an explicit id."""
    from markdown.extensions.toc import slugify

    plain = re.sub(r"<[^>]+>", "", _INLINE_CODE.sub(lambda m: m.group(0).strip("`"), text))
    plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", plain)
    return slugify(plain, "-")


# A page's body is read line by line by several checks (links, images, headings, HTML, the
# translator's); each reading of the same body shares one split, cached by the body's text.
@in_memory(maxsize=1024)
def _fence_spans_in(body: str) -> tuple[tuple[int, int, re.Match[str]], ...]:
    """(opening index, closing index, opening match) of each fenced block, by body line.

    An unclosed fence runs to the end of the body: its closing index is len(lines).
    """
    lines = body.split("\n")
    spans: list[tuple[int, int, re.Match[str]]] = []
    open_fence: tuple[int, re.Match[str]] | None = None  # (opening index, its match) while inside a block
    for index, line in enumerate(lines):
        if open_fence is None:
            opener = _FENCE_OPEN.match(line)
            if opener:
                open_fence = (index, opener)
        else:
            opened, opener = open_fence
            fence, stripped = opener.group("fence"), line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                spans.append((opened, index, opener))
                open_fence = None
    if open_fence is not None:
        spans.append((open_fence[0], len(lines), open_fence[1]))
    return tuple(spans)


@in_memory(maxsize=1024)
def _lines_in(body: str) -> tuple[tuple[int, str, bool], ...]:
    """(offset, line, in_code) of each body line."""
    in_code: set[int] = set()
    for first, last, _ in _fence_spans_in(body):
        in_code.update(range(first, last + 1))
    return tuple((offset, line, offset in in_code) for offset, line in enumerate(body.split("\n")))


@in_memory(maxsize=1024)
def _prose_in(body: str) -> tuple[tuple[int, str], ...]:
    """(offset, line) of each line outside code, inline code masked."""
    return tuple((offset, mask_inline_code(line)) for offset, line, in_code in _lines_in(body) if not in_code)


@dataclass
class Page:
    """A glossary page: `rel` is its path inside its language folder, e.g. `perf/occupancy.md`."""

    path: Path
    display_path: str
    rel: str
    lang: str
    text: str = ""
    meta: dict = field(default_factory=dict)
    body: str = ""
    body_line: int = 1
    problems: list[Problem] = field(default_factory=list)
    meta_lines: dict[str, int] = field(default_factory=dict)

    # -- identity -----------------------------------------------------------------
    @property
    def section(self) -> str | None:
        parts = self.rel.split("/")
        return parts[0] if len(parts) > 1 else None

    @property
    def slug(self) -> str:
        return self.rel.rsplit("/", 1)[-1].removesuffix(".md")

    @property
    def is_index(self) -> bool:
        return self.slug == "index"

    def _text(self, key: str) -> str:
        value = self.meta.get(key)
        return value if isinstance(value, str) else ""

    @property
    def title(self) -> str:
        return self._text("title")

    @property
    def summary(self) -> str:
        return self._text("summary")

    @property
    def abbreviation(self) -> str:
        return self._text("abbreviation")

    @property
    def recorded_source_hash(self) -> str:
        value = self.meta.get(SOURCE_HASH_KEY)
        return str(value) if value is not None else ""

    def problem(self, line: int, message: str, severity: str = "error") -> Problem:
        return Problem(self.display_path, line, severity, message)

    # -- body structure -----------------------------------------------------------
    def body_lines(self) -> Iterator[tuple[int, str, bool]]:
        """Yield (line_number, line, in_code) for each body line; fences count as code."""
        for offset, line, in_code in _lines_in(self.body):
            yield self.body_line + offset, line, in_code

    def prose_lines(self) -> Iterator[tuple[int, str]]:
        """Yield (line_number, line) for lines outside code, with inline code masked."""
        for offset, line in _prose_in(self.body):
            yield self.body_line + offset, line

    def fences(self) -> list[Fence]:
        return list(_fences_in(self.body, self.body_line))

    def links(self) -> list[Link]:
        """Inline links and images, and reference definitions, outside code."""
        return list(_links_in(self.body, self.body_line))

    def headings(self) -> list[Heading]:
        return list(_headings_in(self.body, self.body_line))

    def anchors(self) -> set[str]:
        return {heading.id for heading in _headings_in(self.body, self.body_line)}


# What the checker, the site and the translator read of a body, read once per body: a check
# resolves every link against the headings of the page it points at.
@in_memory(maxsize=1024)
def _fences_in(body: str, body_line: int) -> tuple[Fence, ...]:
    lines = body.split("\n")
    result = []
    for first, last, opener in _fence_spans_in(body):
        indent = opener.group("indent")
        code = "\n".join(row[len(indent) :] if row.startswith(indent) else row for row in lines[first + 1 : last])
        above = _HTML_COMMENT_MARKER.match(lines[first - 1]) if first > 0 else None
        result.append(
            Fence(
                line=body_line + first,
                end_line=body_line + last,
                lang=fence_lang(opener.group("info")),
                info=opener.group("info").strip(),
                code=code,
                indent=indent,
                marker=above.group("marker") if above else "",
                fence=opener.group("fence"),
                closed=last < len(lines),
            )
        )
    return tuple(result)


@in_memory(maxsize=1024)
def _links_in(body: str, body_line: int) -> tuple[Link, ...]:
    result = []
    for offset, line in _prose_in(body):
        if "[" not in line:
            continue  # both patterns need one; most lines have none
        for match in _LINK.finditer(line):
            result.append(
                Link(body_line + offset, match.group("target"), match.group("text"), bool(match.group("bang")))
            )
        ref = _REF_DEF.match(line)
        if ref:
            result.append(Link(body_line + offset, ref.group("target"), ref.group("label"), False))
    return tuple(result)


@in_memory(maxsize=1024)
def _headings_in(body: str, body_line: int) -> tuple[Heading, ...]:
    result = []
    seen: set[str] = set()
    for offset, line, in_code in _lines_in(body):
        if in_code:
            continue
        match = _HEADING.match(line)
        if not match:
            continue
        text = match.group("text")
        id_match = _HEADING_ID.search(text)
        if id_match:
            heading_id, explicit = id_match.group("id"), True
            text = text[: id_match.start()].rstrip()
        else:
            heading_id, explicit = slugify_heading(text), False
            base, counter = heading_id, 1
            while heading_id in seen:
                heading_id = f"{base}_{counter}"
                counter += 1
        seen.add(heading_id)
        result.append(Heading(body_line + offset, len(match.group("hashes")), text, heading_id, explicit))
    return tuple(result)


class FrontMatterRefused(yaml.MarkedYAMLError):
    """Valid YAML that front matter does not accept: `reason` says why, `line` (0-based) where."""

    def __init__(self, reason: str, mark: yaml.Mark) -> None:
        super().__init__(problem=reason, problem_mark=mark)
        self.reason = reason
        self.line = mark.line


class _FrontMatterLoader(yaml.SafeLoader):
    """Safe YAML without what front matter has no use for and what hides mistakes.

    Anchors and aliases (`&a`, `*a`) can nest into a "billion laughs" and repeated keys
    silently keep the last value; both are refused with the line they are on.
    """

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise FrontMatterRefused(
                "front matter may not use YAML anchors or aliases (&name, *name): write each value out",
                event.start_mark,
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        first_lines: dict[Hashable, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                seen = first_lines.setdefault(key, key_node.start_mark.line)
            except TypeError:
                continue  # an unhashable key: construct_mapping below reports it
            if seen != key_node.start_mark.line:
                raise FrontMatterRefused(
                    f"front matter has the key '{key}' twice (first on line {seen + 1}): keep one",
                    key_node.start_mark,
                )
        return super().construct_mapping(node, deep)


def _meta_key_lines(front: str, first_line: int) -> dict[str, int]:
    lines: dict[str, int] = {}
    for offset, line in enumerate(front.split("\n")):
        match = re.match(r"^([A-Za-z_][\w-]*)\s*:", line)
        if match:
            lines.setdefault(match.group(1), first_line + offset)
    return lines


@in_memory(maxsize=4096)
def _front_matter_data(front: str) -> tuple[object, tuple[int, str] | None]:
    """(data, None) of a front matter block, or (None, (line, problem)) if it is refused.

    Cached by text: a command or a test process reads the same pages again and again (the
    translate command loads the glossary, then checks each page it writes), and reading one
    block takes three passes of libyaml (anchors, repeated keys, data)."""
    try:
        if fast_yaml.has_anchors_or_repeated_keys(front):
            return yaml.load(front, Loader=_FrontMatterLoader), None  # raises with the line and reason
        return fast_yaml.load(front, _FrontMatterLoader), None
    except FrontMatterRefused as exc:
        return None, (1 + exc.line, exc.reason)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        reason = getattr(exc, "problem", None) or str(exc).split("\n")[0]
        return None, (1 + mark.line if mark is not None else 1, f"front matter is not valid YAML: {reason}")


def parse_page(text: str, path: Path, display_path: str, rel: str, lang: str) -> Page:
    """Parse a page's text; never raises. Problems land in `page.problems`."""
    text = text.removeprefix("\ufeff")  # a byte-order mark, as some editors write (MkDocs drops it too)
    page = Page(path=path, display_path=display_path, rel=rel, lang=lang, text=text)
    normalized = text.replace("\r\n", "\n")
    if not _yaml_handler.detect(normalized):
        page.body = normalized
        page.problems.append(
            page.problem(1, "no front matter: the page must start with a '---' block holding title and summary")
        )
        return page
    try:
        front, content = _yaml_handler.split(normalized)
    except ValueError:
        page.body = normalized
        page.problems.append(page.problem(1, "front matter is not closed: add a '---' line after it"))
        return page
    page.body_line = normalized[: len(normalized) - len(content)].count("\n") + 1
    page.body = content
    # The body starts right after the closing '---' line; its first line is that line's rest.
    if page.body.startswith("\n"):
        page.body = page.body[1:]
        page.body_line += 1
    # `front` starts with the newline that ends the opening '---' line: its line 0 is file line 1.
    page.meta_lines = _meta_key_lines(front, 1)
    meta, refused = _front_matter_data(front)
    if refused:
        page.problems.append(page.problem(*refused))
        return page
    meta = copy.deepcopy(meta)  # the cached value stays as read
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        page.problems.append(page.problem(2, "front matter must be a mapping of keys (title: ..., summary: ...)"))
        return page
    page.meta = meta
    for key in ("title", "summary"):
        value = meta.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            page.problems.append(page.problem(page.meta_lines.get(key, 1), f"front matter lacks '{key}'"))
        elif not isinstance(value, str):
            page.problems.append(page.problem(page.meta_lines.get(key, 1), f"front matter '{key}' must be text"))
    return page


def read_page(path: Path, root: Path, lang_dir: Path, lang: str) -> Page:
    """Read and parse a page file; an unreadable or non-UTF-8 file becomes a problem."""
    display = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    rel = path.relative_to(lang_dir).as_posix()
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        page = Page(path=path, display_path=display, rel=rel, lang=lang)
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        page.problems.append(page.problem(line, "file is not valid UTF-8"))
        return page
    except OSError as exc:
        page = Page(path=path, display_path=display, rel=rel, lang=lang)
        page.problems.append(page.problem(1, f"cannot read file: {exc.strerror}"))
        return page
    return parse_page(text, path, display, rel, lang)
