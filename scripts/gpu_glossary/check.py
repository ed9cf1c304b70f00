"""`gpu-glossary check`: every mistake a contributor can make in a page, as `path:line` messages."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Collection
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from gpu_glossary import highlight, markdown_ext, page_limits, render, sanitize
from gpu_glossary import page as page_module
from gpu_glossary.cache import fingerprint, memoize
from gpu_glossary.code_comments import first_code_difference
from gpu_glossary.examples.blocks import OUTPUT_LANG, find_output, page_examples, page_lines
from gpu_glossary.examples.check import check_examples
from gpu_glossary.examples.runs import Runs, load_runs
from gpu_glossary.glossary import GENERATED_PAGES, LANGUAGES, SOURCE_LANG, Glossary, load_glossary
from gpu_glossary.images.links import check_images
from gpu_glossary.images.names import IMAGE_EXTENSIONS
from gpu_glossary.page import SECTIONS, SOURCE_HASH_KEY, Page, Problem, resolve_link
from gpu_glossary.reading_path import load_path
from gpu_glossary.render import markdown_settings, shared_renderer
from gpu_glossary.sanitize import html_problems, is_plain_text
from gpu_glossary.terminology import Terminology, TerminologyError, load_terminology
from gpu_glossary.zh_style import style_problems

PLAIN_TEXT_KEYS = ("title", "summary", "abbreviation", "aliases")  # the theme prints them unescaped
_EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
SUMMARY_LIMIT = 200


def _check_location(page: Page) -> list[Problem]:
    parts = page.rel.split("/")
    if page.rel == "index.md" or (len(parts) == 2 and parts[0] in SECTIONS):
        return []
    return [page.problem(1, f"page is outside the sections ({', '.join(SECTIONS)}): move it into one of them")]


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
                folders = " or ".join(dict.fromkeys(f"glossary/{lang}" for lang in (page.lang, SOURCE_LANG)))
                problems.append(
                    page.problem(link.line, f"link '{target}' points at {rel}, which does not exist in {folders}")
                )
                continue
        else:
            linked = page
        if parts.fragment and parts.fragment not in linked.anchors():
            known = ", ".join(sorted(linked.anchors())) or "none"
            problems.append(
                page.problem(
                    link.line, f"anchor '#{parts.fragment}' does not exist in {linked.display_path} (ids: {known})"
                )
            )
    return problems


def _check_front_matter_text(page: Page) -> list[Problem]:
    """Front matter reaches the theme's templates, which print it as HTML: it must be plain text."""
    problems = []
    for key in PLAIN_TEXT_KEYS:
        value = page.meta.get(key)
        values = value if isinstance(value, list) else [value]
        for text in values:
            if isinstance(text, str) and not is_plain_text(text):
                problems.append(
                    page.problem(
                        page.meta_lines.get(key, 1),
                        f"front matter '{key}' must be plain text, without HTML tags or &entities;: {text!r}",
                    )
                )
    return problems


def _check_body(page: Page, terminology: Terminology | None) -> list[Problem]:
    problems = []
    for fence in page.fences():
        if not fence.lang:
            problems.append(
                page.problem(fence.line, "code fence has no language: write ```cuda, ```python, ```text, ```console …")
            )
        if not fence.closed:
            problems.append(
                page.problem(
                    fence.line,
                    "code fence opened here is never closed: the rest of the page would render as code; "
                    f"add a closing {fence.fence} line",
                )
            )
    avoided = terminology.avoided() if terminology and page.lang == "zh" else {}
    front_lines = [(page.meta_lines.get(key, 1), page.meta.get(key)) for key in ("title", "summary")]
    for number, line in [*front_lines, *page.prose_lines()]:
        if not isinstance(line, str):
            continue
        for variant, term in avoided.items():
            if variant in line:
                problems.append(
                    page.problem(
                        number,
                        f"'{variant}' is a variant the terminology file avoids: "
                        f"write '{term.replacement(variant)}' ({term.en})",
                    )
                )
    return problems


def _check_page(glossary: Glossary, page: Page, terminology: Terminology | None) -> list[Problem]:
    problems = list(page.problems)
    if not page.meta and page.problems:
        return problems  # nothing more can be said about a page whose front matter failed
    problems.extend(_check_location(page))
    if page.rel not in glossary.nav:
        problems.append(page.problem(1, f"page is missing from the navigation: add '{page.rel}' to nav in mkdocs.yml"))
    if page.lang == SOURCE_LANG and len(page.summary) > SUMMARY_LIMIT:
        problems.append(
            page.problem(
                page.meta_lines.get("summary", 1),
                f"summary is {len(page.summary)} characters; keep it under {SUMMARY_LIMIT}",
                "warning",
            )
        )
    problems.extend(_check_front_matter_text(page))
    problems.extend(_check_links(glossary, page))
    problems.extend(_check_body(page, terminology))
    if page.lang == "zh":
        problems.extend(style_problems(page))
    return problems


class _HtmlCheck:
    """The sanitizer's verdict on each page's rendered HTML, as the build will reach it.

    Rendering and sanitizing every page takes seconds, so verdicts are cached under the
    page's text, the Markdown settings and the code and library versions behind them.
    """

    def __init__(self, root: Path):
        self.settings = {lang: markdown_settings(root, lang) for lang in LANGUAGES}

    def problems(self, page: Page) -> list[Problem]:
        settings = self.settings[page.lang]

        def compute() -> list[tuple[int, str]]:
            return [(p.line, p.message) for p in html_problems(page, shared_renderer(settings).html(page.body))]

        key = [_code_fingerprint(), json.dumps(settings, sort_keys=True), page.text]
        return [page.problem(line, message) for line, message in memoize("page-html", key, compute)]


@cache
def _code_fingerprint() -> str:
    return fingerprint(
        ["nh3", "markdown", "pymdown-extensions", "pygments"], [sanitize, render, markdown_ext, highlight, page_module]
    )


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
                problems.append(
                    page.problem(
                        page.meta_lines.get("title", 1),
                        f"duplicate title '{page.title}': {first.display_path} has it too",
                    )
                )
    return problems


def _recorded_output_lines(page: Page) -> set[int]:
    """Lines where the output blocks of a page's runnable examples open."""
    fences, lines = page.fences(), page_lines(page)
    outputs = (find_output(lines, example, fences) for example in page_examples(page)[0])
    return {block.fence.line for output in outputs if output for block in output.blocks}


def _check_code_of_translation(glossary: Glossary, page: Page) -> list[Problem]:
    """A translated page translates the comments of its code blocks and nothing else: once
    comments are removed, each block is the English page's, and output blocks are identical."""
    english = glossary.page(SOURCE_LANG, page.rel)
    if english is None or english.problems or page.problems:
        return []
    if glossary.translation_status(page.lang, page.rel) != "current":
        return []  # a stale translation is flagged as such; its next translation brings the new code
    theirs, ours = english.fences(), page.fences()
    if len(theirs) != len(ours):
        return [page.problem(1, f"has {len(ours)} code block(s); {english.display_path} has {len(theirs)}")]
    recorded = _recorded_output_lines(page)  # the examples check compares those with their runs
    problems = []
    for expected, got in zip(theirs, ours, strict=True):
        if got.line in recorded:
            continue
        if expected.lang != got.lang:
            problems.append(
                page.problem(
                    got.line,
                    f"code block is ```{got.lang}, {english.display_path}:{expected.line} is ```{expected.lang}",
                )
            )
            continue
        difference = first_code_difference(expected.code, got.code, expected.lang)
        if difference:
            rule = (
                "a ```text block (an example's output, a listing) is copied unchanged"
                if expected.lang == OUTPUT_LANG
                else "only comments are translated"
            )
            problems.append(
                page.problem(
                    got.line, f"code block differs from {english.display_path}:{expected.line}: {difference} ({rule})"
                )
            )
    return problems


def _check_translations(glossary: Glossary, lang: str) -> list[Problem]:
    problems = []
    for rel, english in glossary.pages[SOURCE_LANG].items():
        translated = glossary.page(lang, rel)
        if translated is None:
            problems.append(english.problem(1, f"no {lang} translation: glossary/{lang}/{rel} is missing", "warning"))
        elif glossary.translation_status(lang, rel) == "stale":
            line = translated.meta_lines.get(SOURCE_HASH_KEY, 1)
            problems.append(
                translated.problem(
                    line,
                    f"translation may be out of date: {english.display_path} changed since it was translated "
                    f"({SOURCE_HASH_KEY} does not match)",
                    "warning",
                )
            )
    for rel, translated in glossary.pages[lang].items():
        if rel not in glossary.pages[SOURCE_LANG]:
            problems.append(
                translated.problem(
                    1, f"no English page {SOURCE_LANG}/{rel}: translate only pages that exist in glossary/{SOURCE_LANG}"
                )
            )
    return problems


def translation_problems(glossary: Glossary, page: Page, terminology: Terminology | None) -> list[Problem]:
    """What the checker would say of a translated page before it is written (the translation
    gate's last look): its limits, its own checks, its code against the English page, its title
    against the other pages' and its rendered HTML."""
    over_limits = page_limits.problems_of(page)
    if over_limits:
        return over_limits
    problems = _check_page(glossary, page, terminology) + _check_code_of_translation(glossary, page)
    others = [other for rel, other in glossary.pages[page.lang].items() if rel != page.rel]
    problems += [p for p in _check_duplicates([*others, page]) if p.path == page.display_path]
    if page.meta:
        settings = markdown_settings(glossary.root, page.lang)
        problems += html_problems(page, shared_renderer(settings).html(page.body))
    return problems


def check_glossary(
    glossary: Glossary,
    terminology: Terminology | None,
    rendered: bool = True,
    pages: Collection[tuple[str, str]] | None = None,
    runs: Runs | None = None,
) -> list[Problem]:
    """Every problem in the glossary; `rendered=False` skips the sanitizer's verdict on the
    rendered HTML (the build gives it on the HTML it actually renders).

    `pages`, (lang, rel) pairs, limits the rules about one page to those pages: the live
    preview checks the pages an edit touched and the pages that link to them. The rules about
    the whole glossary (duplicates, translations, the navigation) still run; the diagrams are
    checked, and unused recorded runs reported, only without it. `runs`: the recorded runs,
    where the caller has them read already (default: read from glossary/runs.yml)."""

    def chosen(page: Page) -> bool:
        return pages is None or (page.lang, page.rel) in pages

    problems: list[Problem] = []
    html_check = _HtmlCheck(glossary.root) if rendered else None
    for lang in LANGUAGES:
        every_page = list(glossary.pages[lang].values())
        for page in filter(chosen, every_page):
            over_limits = page_limits.problems_of(page)
            if over_limits:  # never handed to Markdown, nor to the checks below
                problems.extend(over_limits)
                continue
            problems.extend(_check_page(glossary, page, terminology))
            if lang != SOURCE_LANG:
                problems.extend(_check_code_of_translation(glossary, page))
            if html_check and page.meta:
                problems.extend(html_check.problems(page))
        problems.extend(_check_duplicates(every_page))
        if lang != SOURCE_LANG:
            problems.extend(_check_translations(glossary, lang))
    selected = [p for lang in LANGUAGES for p in glossary.pages[lang].values() if chosen(p)]
    problems.extend(check_images(glossary, None if pages is None else selected))
    examples = check_examples([p for p in selected if not p.problems], runs or load_runs(glossary.root))
    shown = {page.display_path for page in selected}
    problems.extend(p for p in examples if pages is None or p.severity == "error" or p.path in shown)
    problems.extend(load_path(glossary)[1])
    for rel in glossary.nav:
        if rel not in GENERATED_PAGES and glossary.page(SOURCE_LANG, rel) is None:
            problems.append(
                Problem("mkdocs.yml", 1, "error", f"nav lists '{rel}', which does not exist in glossary/{SOURCE_LANG}")
            )
    return sorted(set(problems), key=lambda p: (p.path, p.line, p.message))


def run_check(root: Path, pages: set[tuple[str, str]] | None = None) -> list[Problem]:
    """Load everything under `root` and check it; the one function the CLI and tests call.
    `pages` limits the rules about one page to those (lang, rel) pages, as in `check_glossary`."""
    glossary = load_glossary(root)
    try:
        terminology = load_terminology(glossary.terminology_path)
        problems: list[Problem] = []
    except TerminologyError as exc:
        terminology = None
        path = exc.path.resolve()
        shown = path.relative_to(root.resolve()).as_posix() if path.is_relative_to(root.resolve()) else str(exc.path)
        problems = [Problem(shown, exc.line, "error", exc.message)]
    found = check_glossary(glossary, terminology, pages=pages)
    return sorted(set(problems + found), key=lambda p: (p.path, p.line, p.message))


def github_annotation(problem: Problem) -> str:
    """The same problem as a GitHub Actions workflow command, shown on the pull request's diff."""
    message = problem.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return f"::{problem.severity} file={problem.path},line={problem.line},title=gpu-glossary check::{message}"


def group_by_severity(problems: list[Problem]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for problem in problems:
        counts[problem.severity] += 1
    return counts
