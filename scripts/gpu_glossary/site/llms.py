"""`llms.txt`, `llms-full.txt` and the Markdown twin of every page (https://llmstxt.org/).

A language model reading the glossary gets Markdown, not HTML: an index of every page
with its summary, the whole glossary in one file whose links point inside that file,
and each page's source beside its HTML with links to the other sources.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.page import Page, mask_inline_code, resolve_link

_LINK_TARGET = re.compile(r"(!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?)([^)\s>]*)")
_HEADING = re.compile(r"^(#{1,6}[ \t]+)(.*?)[ \t]*(?:\{[^}]*\})?[ \t]*$")


@dataclass
class SitePage:
    """A page as built: its source, where it lives on the site and what the reader sees."""

    page: Page
    url: str  # relative to the language root, e.g. "device-software/warp/"
    title: str
    summary: str
    section_title: str = ""

    @property
    def anchor(self) -> str:
        return self.page.rel.removesuffix(".md").replace("/", "-")


def rewrite_link_targets(page: Page, rewrite: Callable[[str, bool], str]) -> str:
    """The page body with every link target outside code replaced by `rewrite(target, is_image)`."""
    out = []
    for _, line, in_code in page.body_lines():
        if in_code:
            out.append(line)
            continue
        masked = mask_inline_code(line)
        pieces, last = [], 0
        for match in _LINK_TARGET.finditer(masked):
            start, end = match.span(2)
            pieces.append(line[last:start])
            pieces.append(rewrite(line[start:end], match.group(1).startswith("!")))
            last = end
        pieces.append(line[last:])
        out.append("".join(pieces))
    return "\n".join(out)


def _resolve(page: Page, target: str) -> tuple[str, str] | None:
    """(site-relative path, fragment) of an internal link, or None for an external one."""
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or target.startswith("/"):
        return None
    path = resolve_link(page.rel, parts.path) if parts.path else page.rel
    return path, parts.fragment


def twin_url(url: str) -> str:
    """Where a page's Markdown twin is served: beside its index.html."""
    return f"{url}index.md" if url.endswith("/") or not url else url.removesuffix(".html") + ".md"


def markdown_twin(site_page: SitePage, pages_by_rel: dict[str, SitePage], site_url: str) -> str:
    """A page's Markdown with links pointing at the other pages' twins (absolute URLs)."""

    def rewrite(target: str, is_image: bool) -> str:
        resolved = _resolve(site_page.page, target)
        if resolved is None:
            return target
        path, fragment = resolved
        if path in pages_by_rel:
            url = site_url + twin_url(pages_by_rel[path].url)
            return f"{url}#{fragment}" if fragment else url
        return site_url + path if is_image else target

    body = rewrite_link_targets(site_page.page, rewrite)
    return f"# {site_page.title}\n\n> {site_page.summary}\n\n{body.strip()}\n"


def llms_full(
    site_name: str, summary: str, pages: list[SitePage], site_url: str, parts: dict[str, tuple] | None = None
) -> str:
    """Every page in one Markdown file; links between pages become links inside the file.

    `parts`, kept by the caller between builds of the same pages (the live preview), holds
    each page's part of the file, made again only for a page whose text or title changed."""
    by_rel = {p.page.rel: p for p in pages}
    parts = {} if parts is None else parts
    out = [f"# {site_name}\n\n> {summary}\n"]
    for site_page in pages:
        key = (site_page.page.text, site_page.url, site_page.title, site_page.summary, site_url)
        known = parts.get(site_page.page.rel)
        if known is None or known[0] != key:
            known = parts[site_page.page.rel] = (key, _full_text_part(site_page, by_rel, site_url))
        out.append(known[1])
    return "".join(out)


def _full_text_part(site_page: SitePage, by_rel: dict, site_url: str) -> str:
    """One page of llms-full.txt: its headings one level down with file-wide ids, its links
    to other pages pointing at their parts of the file."""
    page = site_page.page
    ids = {h.line: h.id for h in page.headings()}

    def rewrite(target: str, is_image: bool) -> str:
        resolved = _resolve(page, target)
        if resolved is None:
            return target
        path, fragment = resolved
        if path in by_rel:
            anchor = by_rel[path].anchor
            return f"#{anchor}--{fragment}" if fragment else f"#{anchor}"
        return site_url + path if is_image else target

    lines = rewrite_link_targets(page, rewrite).split("\n")
    for offset, line in enumerate(lines):
        number = page.body_line + offset
        match = _HEADING.match(line) if number in ids else None
        if match:  # headings shift down one level and get file-wide ids
            lines[offset] = f"#{match.group(1)}{match.group(2)} {{#{site_page.anchor}--{ids[number]}}}"
    return (
        f'\n---\n\n<a id="{site_page.anchor}"></a>\n\n## {site_page.title} {{#{site_page.anchor}}}\n\n'
        f"> {site_page.summary}\n\nSource: {site_url}{site_page.url}\n\n" + "\n".join(lines).strip() + "\n"
    )


def llms_txt(
    site_name: str, summary: str, pages: list[SitePage], site_url: str, full_text_label: str, overview_label: str
) -> str:
    """The llms.txt index: title, summary, then each section's pages with their summaries.

    Pages outside the sections (the home page, the generated index pages) come first, under
    `overview_label`: llmstxt.org lists files only under named H2 sections.
    """
    out = [f"# {site_name}\n\n> {summary}\n"]
    groups: dict[str, list[SitePage]] = {overview_label: []}
    for site_page in pages:
        groups.setdefault(site_page.section_title or overview_label, []).append(site_page)
    for section, members in groups.items():
        if members:
            out.append(f"\n## {section}\n\n")
            out.extend(f"- [{p.title}]({site_url}{twin_url(p.url)}): {p.summary}\n" for p in members)
    out.append(f"\n## Optional\n\n- [llms-full.txt]({site_url}llms-full.txt): {full_text_label}\n")
    return "".join(out)


def write_llms_files(
    site_dir: Path,
    site_name: str,
    site_url: str,
    home_summary: str,
    pages: list[SitePage],
    words: dict[str, str],
    rels: set[str] | None = None,
    parts: dict[str, tuple] | None = None,
) -> None:
    """The Markdown twin beside the HTML of each page in `rels` (default: every page), then
    llms.txt and llms-full.txt at the root (`parts`: see `llms_full`)."""
    home = next((p for p in pages if p.page.rel == "index.md"), None)
    if home is not None:
        home_summary = home.summary
    by_rel = {p.page.rel: p for p in pages}
    for site_page in pages:
        if rels is not None and site_page.page.rel not in rels:
            continue
        target = site_dir / twin_url(site_page.url)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(target, markdown_twin(site_page, by_rel, site_url), durable=False)
    write_text_atomic(
        site_dir / "llms.txt",
        llms_txt(site_name, home_summary, pages, site_url, words["full_text"], words["overview"]),
        durable=False,
    )
    write_text_atomic(
        site_dir / "llms-full.txt", llms_full(site_name, home_summary, pages, site_url, parts), durable=False
    )
