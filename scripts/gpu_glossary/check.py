"""`gpu-glossary check`: every mistake a contributor can make in a page, as `path:line` messages."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

from .examples import check_examples, load_runs
from .images import check_images
from .glossary import GENERATED_PAGES, LANGUAGES, SOURCE_LANG, Glossary, load_glossary
from .page import SECTIONS, SOURCE_HASH_KEY, Page, Problem, resolve_link
from .terminology import Terminology, TerminologyError, load_terminology

_RAW_HTML = [
    (re.compile(r"<\s*script\b", re.I), "raw <script> is not allowed in a page"),
    (re.compile(r"<\s*iframe\b", re.I), "raw <iframe> is not allowed in a page"),
    (re.compile(r"<\s*style\b", re.I), "raw <style> is not allowed in a page"),
    (re.compile(r"<[a-zA-Z][^>]*?\son[a-z]+\s*=", re.I), "an on…= event attribute is not allowed in a page"),
    (re.compile(r"javascript\s*:", re.I), "a javascript: URL is not allowed in a page"),
]
_EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
IMAGE_EXTENSIONS = (".svg", ".png", ".jpg", ".jpeg", ".gif", ".webp")
SUMMARY_LIMIT = 200


def _check_location(page: Page) -> list[Problem]:
    parts = page.rel.split("/")
    if page.rel == "index.md" or (len(parts) == 2 and parts[0] in SECTIONS):
        return []
    return [page.problem(1, f"page is outside the four sections ({', '.join(SECTIONS)}): move it into one of them")]


def _check_links(glossary: Glossary, page: Page) -> list[Problem]:
    problems = []
    for link in page.links():
        target = link.target
        if not target:
            problems.append(page.problem(link.line, f"link '[{link.text}]()' has no target"))
            continue
        if _EXTERNAL.match(target):
            continue
        if target.startswith("//"):
            problems.append(page.problem(link.line, f"protocol-relative link '{target}': use https://"))
            continue
        parts = urlsplit(target)
        if link.is_image or parts.path.lower().endswith(IMAGE_EXTENSIONS):
            continue  # images are the image step's: images.check_images
        if target.startswith("/"):
            problems.append(page.problem(link.line, f"site-absolute link '{target}': use a relative .md link"))
            continue
        if parts.path:
            rel = resolve_link(page.rel, parts.path)
            if not rel.endswith(".md"):
                problems.append(page.problem(link.line, f"link '{target}' must point at a .md file"))
                continue
            if rel in GENERATED_PAGES:
                continue
            linked = glossary.resolved_page(page.lang, rel)
            if linked is None:
                problems.append(page.problem(link.line, f"link '{target}' points at {rel}, which does not exist in glossary/{page.lang} or glossary/{SOURCE_LANG}"))
                continue
        else:
            linked = page
        if parts.fragment and parts.fragment not in linked.anchors():
            known = ", ".join(sorted(linked.anchors())) or "none"
            problems.append(page.problem(link.line, f"anchor '#{parts.fragment}' does not exist in {linked.display_path} (ids: {known})"))
    return problems


def _check_body(page: Page, terminology: Terminology | None) -> list[Problem]:
    problems = []
    for fence in page.fences():
        if not fence.lang:
            problems.append(page.problem(fence.line, "code fence has no language: write ```cuda, ```python, ```text, ```console …"))
    avoided = terminology.avoided() if terminology and page.lang == "zh" else {}
    front_lines = [(page.meta_lines.get(key, 1), page.meta.get(key)) for key in ("title", "summary")]
    for number, line in [*front_lines, *page.prose_lines()]:
        if not isinstance(line, str):
            continue
        for pattern, message in _RAW_HTML:
            if pattern.search(line):
                problems.append(page.problem(number, message))
        for variant, term in avoided.items():
            if variant in line:
                problems.append(page.problem(number, f"'{variant}' is a variant the terminology file avoids: write '{term.zh}' ({term.en})"))
    return problems


def _check_page(glossary: Glossary, page: Page, terminology: Terminology | None) -> list[Problem]:
    problems = list(page.problems)
    if not page.meta and page.problems:
        return problems  # nothing more can be said about a page whose front matter failed
    problems.extend(_check_location(page))
    if page.rel not in glossary.nav:
        problems.append(page.problem(1, f"page is missing from the navigation: add '{page.rel}' to nav in mkdocs.yml"))
    if page.lang == SOURCE_LANG and len(page.summary) > SUMMARY_LIMIT:
        problems.append(page.problem(page.meta_lines.get("summary", 1), f"summary is {len(page.summary)} characters; keep it under {SUMMARY_LIMIT}", "warning"))
    problems.extend(_check_links(glossary, page))
    problems.extend(_check_body(page, terminology))
    return problems


def _check_duplicates(pages: list[Page]) -> list[Problem]:
    problems = []
    by_slug: dict[str, Page] = {}
    by_title: dict[str, Page] = {}
    for page in pages:
        if not page.is_index:
            first = by_slug.setdefault(page.slug, page)
            if first is not page:
                problems.append(page.problem(1, f"duplicate slug '{page.slug}': {first.display_path} has it too"))
        if page.title:
            first = by_title.setdefault(page.title.casefold(), page)
            if first is not page:
                problems.append(page.problem(page.meta_lines.get("title", 1), f"duplicate title '{page.title}': {first.display_path} has it too"))
    return problems


def _check_translations(glossary: Glossary, lang: str) -> list[Problem]:
    problems = []
    for rel, english in glossary.pages[SOURCE_LANG].items():
        status = glossary.translation_status(lang, rel)
        if status == "missing":
            problems.append(english.problem(1, f"no {lang} translation: glossary/{lang}/{rel} is missing", "warning"))
        elif status == "stale":
            translated = glossary.page(lang, rel)
            line = translated.meta_lines.get(SOURCE_HASH_KEY, 1)
            problems.append(translated.problem(line, f"translation may be out of date: {english.display_path} changed since it was translated ({SOURCE_HASH_KEY} does not match)", "warning"))
    for rel, translated in glossary.pages[lang].items():
        if rel not in glossary.pages[SOURCE_LANG]:
            problems.append(translated.problem(1, f"no English page {SOURCE_LANG}/{rel}: translate only pages that exist in glossary/{SOURCE_LANG}"))
    return problems


def check_glossary(glossary: Glossary, terminology: Terminology | None) -> list[Problem]:
    problems: list[Problem] = []
    for lang in LANGUAGES:
        pages = list(glossary.pages[lang].values())
        for page in pages:
            problems.extend(_check_page(glossary, page, terminology))
        problems.extend(_check_duplicates(pages))
        if lang != SOURCE_LANG:
            problems.extend(_check_translations(glossary, lang))
    problems.extend(check_images(glossary))
    problems.extend(check_examples([p for lang in LANGUAGES for p in glossary.pages[lang].values() if not p.problems],
                                   load_runs(glossary.root)))
    for rel in glossary.nav:
        if rel not in GENERATED_PAGES and glossary.page(SOURCE_LANG, rel) is None:
            problems.append(Problem("mkdocs.yml", 1, "error", f"nav lists '{rel}', which does not exist in glossary/{SOURCE_LANG}"))
    return sorted(set(problems), key=lambda p: (p.path, p.line, p.message))


def run_check(root: Path) -> list[Problem]:
    """Load everything under `root` and check it; the one function the CLI and tests call."""
    glossary = load_glossary(root)
    try:
        terminology = load_terminology(glossary.terminology_path)
        problems: list[Problem] = []
    except TerminologyError as exc:
        terminology = None
        location, _, message = str(exc).partition(": ")
        path, _, line = location.rpartition(":")
        relative = Path(path).resolve().relative_to(root.resolve()).as_posix() if Path(path).is_absolute() else path
        problems = [Problem(relative, int(line) if line.isdigit() else 1, "error", message)]
    return sorted(set(problems + check_glossary(glossary, terminology)), key=lambda p: (p.path, p.line, p.message))


def github_annotation(problem: Problem) -> str:
    """The same problem as a GitHub Actions workflow command, shown on the pull request's diff."""
    message = problem.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return f"::{problem.severity} file={problem.path},line={problem.line},title=gpu-glossary check::{message}"


def group_by_severity(problems: list[Problem]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for problem in problems:
        counts[problem.severity] += 1
    return counts
