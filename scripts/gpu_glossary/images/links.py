"""The image step: find every image in every page, check it, repair links, make dark variants.

Images live once, in glossary/images/, and are shown per colour scheme with Material's
`#only-light` / `#only-dark` fragments. Chinese pages use `name.zh.svg` where it exists.
`--check` makes broken, remote, unlabelled or light-only images impossible to ship;
`--fix` rewrites the legacy and wrong forms; `--localize` copies remote images in;
`--make-dark` derives `name.dark.svg` from `name.svg` through the palette in PALETTE.md.
"""

from __future__ import annotations

import functools
import hashlib
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.cache import fingerprint, memoize
from gpu_glossary.glossary import SOURCE_LANG, Glossary
from gpu_glossary.images import svg_check
from gpu_glossary.images.names import base_name, variant
from gpu_glossary.images.svg_check import svg_problems
from gpu_glossary.page import Page, Problem, resolve_link

IMAGES = "images"
LIGHT, DARK = "#only-light", "#only-dark"
LEGACY_SCHEME = "themed-image://"

# PALETTE.md: light colour -> dark partner. --make-dark applies exactly this mapping.
DARK_PALETTE = {
    "#dcefe9": "#12352e",
    "#1b7f6b": "#5fd3b8",  # compute
    "#e3ecfa": "#16253f",
    "#2f5fb3": "#8fb4f5",  # memory
    "#fbe9d7": "#3d2612",
    "#c0620c": "#f3a55c",  # scheduling and control
    "#ece6f5": "#281f38",
    "#6a4c9c": "#b9a2e6",  # host
    "#f6f8fa": "#22272e",
    "#8c959f": "#768390",  # neutral
    "#1f2328": "#e6edf3",
    "#57606a": "#9da7b1",  # text, secondary text
    "#ffffff": "#1e2129",  # background
}

_MARKDOWN_IMAGE = re.compile(
    r"!\[(?P<alt>(?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?(?P<target>[^)\s>]*)>?(?P<title>\s+\"[^\"]*\")?\s*\)"
)
_REFERENCE_IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\[(?P<label>[^\]]*)\]")
_REFERENCE_DEFINITION = re.compile(r"^[ \t]{0,3}\[(?P<label>[^\]]+)\]:[ \t]*<?(?P<target>[^\s>]+)>?")
_HTML_IMAGE = re.compile(r"<img\b[^>]*>", re.I)
_HTML_ATTRIBUTE = re.compile(
    r"""\b(?P<name>src|alt)\s*=\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[^\s>]+))""", re.I
)
_COLOUR = re.compile(r"#[0-9a-fA-F]{6}\b")


@dataclass(frozen=True)
class ImageRef:
    """One image on a page; (line, start, end) locate its target for rewriting."""

    page: Page
    line: int
    kind: str  # "markdown", "reference" or "html"
    target: str
    alt: str
    start: int
    end: int

    @property
    def is_remote(self) -> bool:
        return self.target.lower().startswith(("http://", "https://", "//"))

    @property
    def fragment(self) -> str:
        return urlsplit(self.target).fragment

    def resolved(self) -> str | None:
        """Where a local image points, relative to the site root (`images/x.svg`); None for a
        remote or legacy link."""
        if self.is_remote or self.target.startswith(LEGACY_SCHEME):
            return None
        return self.local_path()

    def local_path(self) -> str:
        """`resolved()` for a link known to be local."""
        path = urlsplit(self.target).path
        if path.startswith("/"):
            return posixpath.normpath(path.lstrip("/"))
        return resolve_link(self.page.rel, path)


def find_images(page: Page) -> list[ImageRef]:
    """Markdown inline and reference-style images and HTML <img>, outside code."""
    definitions: dict[str, tuple[int, int, int, str]] = {}
    # Every pattern below needs a "[" or a "<": most lines have neither.
    lines = [(number, line) for number, line in page.prose_lines() if "[" in line or "<" in line]
    for number, line in lines:
        definition = _REFERENCE_DEFINITION.match(line)
        if definition:
            definitions[definition.group("label").lower()] = (
                number,
                definition.start("target"),
                definition.end("target"),
                definition.group("target"),
            )
    found = []
    for number, line in lines:
        for match in _MARKDOWN_IMAGE.finditer(line):
            found.append(
                ImageRef(
                    page,
                    number,
                    "markdown",
                    match.group("target"),
                    match.group("alt"),
                    match.start("target"),
                    match.end("target"),
                )
            )
        for match in _REFERENCE_IMAGE.finditer(line):
            label = (match.group("label") or match.group("alt")).lower()
            if label in definitions:
                where, start, end, target = definitions[label]
                found.append(ImageRef(page, where, "reference", target, match.group("alt"), start, end))
            else:
                found.append(ImageRef(page, number, "reference", "", match.group("alt"), match.start(), match.start()))
        for tag in _HTML_IMAGE.finditer(line):
            attributes = {
                m.group("name").lower(): (m, next(g for g in ("dq", "sq", "bare") if m.group(g) is not None))
                for m in _HTML_ATTRIBUTE.finditer(tag.group(0))
            }
            src = attributes.get("src")
            alt = attributes.get("alt")
            target = src[0].group(src[1]) if src else ""
            start = tag.start() + src[0].start(src[1]) if src else tag.start()
            end = tag.start() + src[0].end(src[1]) if src else tag.start()
            found.append(ImageRef(page, number, "html", target, alt[0].group(alt[1]) if alt else "", start, end))
    return found


def image_file(glossary: Glossary, site_path: str | None) -> Path | None:
    """The file in glossary/images/ behind a site path like `images/x.svg` (None if outside it)."""
    if not site_path or not site_path.startswith(f"{IMAGES}/"):
        return None
    return glossary.images_dir / site_path.removeprefix(f"{IMAGES}/")


def relative_link(rel: str, site_path: str) -> str:
    """The link from the page at `rel` to `site_path` (both relative to the site root)."""
    return posixpath.relpath(site_path, posixpath.dirname(rel) or ".")


# -- check ------------------------------------------------------------------------------
def check_images(glossary: Glossary, pages: list[Page] | None = None) -> list[Problem]:
    """The diagrams and every page's images; `pages` limits it to those pages' images."""
    problems: list[Problem] = []
    diagrams = glossary.images_dir.rglob("*.svg") if pages is None and glossary.images_dir.is_dir() else []
    for svg in sorted(diagrams):
        display = svg.relative_to(glossary.root).as_posix()
        problems.extend(
            Problem(display, line, "error", message) for line, message in cached_svg_problems(svg.read_bytes())
        )
    for page in [p for lang_pages in glossary.pages.values() for p in lang_pages.values()] if pages is None else pages:
        problems.extend(_check_page(glossary, page))
        english = glossary.page(SOURCE_LANG, page.rel)
        if page.lang != SOURCE_LANG and english is not None:
            problems.extend(_compare_with_english(page, english))
    return problems


def cached_svg_problems(data: bytes) -> list[tuple[int, str]]:
    """svg_problems(data), kept in our cache by the file's bytes and the checking code: parsing
    every diagram was a fifth of each `gpu-glossary check` and of every build's check."""
    key = [_svg_check_fingerprint(), hashlib.sha256(data).hexdigest()]
    return [(line, message) for line, message in memoize("svg-verdict", key, lambda: svg_problems(data))]


@functools.cache
def _svg_check_fingerprint() -> str:
    return fingerprint([], [svg_check])


def _check_page(glossary: Glossary, page: Page) -> list[Problem]:
    problems = []
    refs = find_images(page)
    shown = {(ref.resolved(), ref.fragment) for ref in refs}
    for ref in refs:
        where = ref.target or "(no target)"
        if not ref.alt.strip():
            problems.append(page.problem(ref.line, f"image '{where}' has no alt text: describe what it shows"))
        if not ref.target:
            problems.append(page.problem(ref.line, "image has no target (an undefined reference?)"))
            continue
        if ref.target.startswith(LEGACY_SCHEME):
            problems.append(
                page.problem(
                    ref.line,
                    f"legacy image link '{ref.target}': `gpu-glossary images --fix` turns it into a light/dark pair",
                )
            )
            continue
        if ref.is_remote:
            problems.append(
                page.problem(
                    ref.line,
                    f"remote image '{ref.target}': `gpu-glossary images --localize` copies it into glossary/images/ "
                    "(no hot-linking)",
                )
            )
            continue
        site_path = ref.local_path()  # remote and legacy links were reported above
        file = image_file(glossary, site_path)
        if file is None or not file.is_file():
            fixable = _find_by_name(glossary, site_path)
            hint = (
                f": `gpu-glossary images --fix` points it at {relative_link(page.rel, fixable)}"
                if fixable
                else f" (looked for glossary/{site_path})"
            )
            problems.append(page.problem(ref.line, f"image '{ref.target}' does not exist{hint}"))
            continue
        if ".dark." in file.name:
            continue
        dark_site = posixpath.join(posixpath.dirname(site_path), variant(file.name, page.lang, dark=True))
        dark_file = image_file(glossary, dark_site)
        if ref.fragment != LIGHT[1:] or (dark_site, DARK[1:]) not in shown or not (dark_file and dark_file.is_file()):
            problems.append(
                page.problem(
                    ref.line,
                    f"image '{ref.target}' has no dark variant: show it with {LIGHT} next to "
                    f"{relative_link(page.rel, dark_site)}{DARK} (`gpu-glossary images --make-dark` draws it)",
                )
            )
    return problems


def _compare_with_english(page: Page, english: Page) -> list[Problem]:
    def normalised(refs: list[ImageRef]) -> list[tuple[str, str]]:
        return sorted(
            (base_name(posixpath.basename(urlsplit(r.target).path)) if not r.is_remote else r.target, r.fragment)
            for r in refs
        )

    ours, theirs = normalised(find_images(page)), normalised(find_images(english))
    if ours != theirs:
        missing = [name for name in theirs if name not in ours]
        extra = [name for name in ours if name not in theirs]
        return [
            page.problem(
                1,
                f"images differ from {english.display_path}: "
                f"missing {[m[0] for m in missing]}, extra {[e[0] for e in extra]}",
            )
        ]
    return []


def _find_by_name(glossary: Glossary, site_path: str | None) -> str | None:
    if not site_path:
        return None
    name = posixpath.basename(site_path)
    return f"{IMAGES}/{name}" if (glossary.images_dir / name).is_file() else None


# -- fix --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Change:
    path: str
    line: int
    old: str
    new: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.old} -> {self.new}"


def fix_text(glossary: Glossary, page: Page) -> tuple[str, list[Change]]:
    """The page's text with every repairable image link repaired, and what changed."""
    lines = page.text.replace("\r\n", "\n").split("\n")
    changes: list[Change] = []
    refs = sorted(find_images(page), key=lambda r: (r.line, -r.start))
    for ref in refs:
        index = ref.line - 1
        line = lines[index]
        if ref.target.startswith(LEGACY_SCHEME) and ref.kind == "markdown":
            name = ref.target[len(LEGACY_SCHEME) :].lstrip("/")
            light = relative_link(page.rel, f"{IMAGES}/{_local_variant(glossary, name, page.lang, dark=False)}")
            dark = relative_link(page.rel, f"{IMAGES}/{_local_variant(glossary, name, page.lang, dark=True)}")
            whole = re.compile(r"!\[[^\]]*\]\(\s*<?" + re.escape(ref.target) + r">?(?:\s+\"[^\"]*\")?\s*\)")
            match = whole.search(line)
            if match:
                pair = f"![{ref.alt}]({light}{LIGHT}) ![{ref.alt}]({dark}{DARK})"
                lines[index] = line[: match.start()] + pair + line[match.end() :]
                changes.append(Change(page.display_path, ref.line, ref.target, f"{light}{LIGHT} + {dark}{DARK}"))
            continue
        new_target = _repaired_target(glossary, page, ref)
        if new_target and new_target != ref.target:
            lines[index] = line[: ref.start] + new_target + line[ref.end :]
            changes.append(Change(page.display_path, ref.line, ref.target, new_target))
    return "\n".join(lines), changes


def _local_variant(glossary: Glossary, name: str, lang: str, dark: bool) -> str:
    """The best file for a language and scheme: the Chinese variant where it exists."""
    folder, _, file = name.rpartition("/")
    candidates = [variant(file, lang, dark)] if lang != SOURCE_LANG else []
    candidates.append(variant(file, SOURCE_LANG, dark))
    for candidate in candidates:
        if (glossary.images_dir / folder / candidate).is_file():
            return posixpath.join(folder, candidate) if folder else candidate
    return posixpath.join(folder, candidates[-1]) if folder else candidates[-1]


def _repaired_target(glossary: Glossary, page: Page, ref: ImageRef) -> str | None:
    parts = urlsplit(ref.target)
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    name = posixpath.basename(parts.path)
    if ref.is_remote:
        if not (glossary.images_dir / name).is_file():
            return None  # only --localize can bring it in
    else:
        site_path = ref.resolved()
        here = image_file(glossary, site_path)
        if site_path is not None and here is not None and here.is_file() and not parts.path.startswith("/"):
            name = site_path.removeprefix(f"{IMAGES}/")
        elif not (glossary.images_dir / name).is_file():
            return None
    dark = ".dark." in name or parts.fragment == DARK[1:]
    chosen = _local_variant(glossary, name, page.lang, dark)
    return relative_link(page.rel, f"{IMAGES}/{chosen}") + fragment


def fix_page(glossary: Glossary, page: Page) -> list[Change]:
    """Repair a page in place (atomically); idempotent; returns what changed."""
    text, changes = fix_text(glossary, page)
    if changes:
        write_text_atomic(page.path, text)
    return changes


# -- dark variants ----------------------------------------------------------------------
def make_dark_svg(svg: str) -> tuple[str, set[str]]:
    """The dark version of a light SVG, and the colours outside the palette it left alone."""
    unknown: set[str] = set()

    def swap(match: re.Match) -> str:
        colour = match.group(0).lower()
        if colour in DARK_PALETTE:
            return DARK_PALETTE[colour]
        if colour not in DARK_PALETTE.values():
            unknown.add(colour)
        return match.group(0)

    return _COLOUR.sub(swap, svg), unknown


def make_dark_variants(glossary: Glossary) -> list[tuple[Path, set[str]]]:
    """Create every missing `.dark.svg`; never overwrite one (a hand-made one wins)."""
    created = []
    for light in sorted(glossary.images_dir.rglob("*.svg")):
        if ".dark." in light.name:
            continue
        dark = light.with_name(variant(light.name, "zh" if ".zh." in light.name else SOURCE_LANG, dark=True))
        if dark.exists():
            continue
        text, unknown = make_dark_svg(light.read_text(encoding="utf-8"))
        write_text_atomic(dark, text)
        created.append((dark, unknown))
    return created


def content_name(data: bytes, extension: str) -> str:
    """Images brought in from the web are named by their content: same bytes, same file."""
    return hashlib.sha256(data).hexdigest()[:16] + extension
