"""`translate --comments`: the code comments of current Chinese pages, translated without touching their prose.

A Chinese page translated before comments were translated shows its code with English comments.
Such a page is current (its English page has not changed), so the usual run leaves it alone and a
forced one would translate its prose again. Here only its code blocks whose comments are still the
English page's are sent; everything else of the page is kept byte for byte, its front matter and
hashes included, so it stays current. The reply passes the same gate as any translation.
"""

from __future__ import annotations

from gpu_glossary.chinese import HAN
from gpu_glossary.code_comments import comments, first_code_difference
from gpu_glossary.page import Fence, Page
from gpu_glossary.translate.chunks import PagePlan
from gpu_glossary.translate.protect import ProtectedText
from gpu_glossary.translate.sections import Part


def untranslated_blocks(english: Page, chinese: Page) -> list[Fence]:
    """The Chinese page's code blocks that are the English page's code and still carry one of
    its comments untranslated (English words, no Chinese)."""
    theirs, ours = english.fences(), chinese.fences()
    if len(theirs) != len(ours):
        return []
    found = []
    for expected, got in zip(theirs, ours, strict=True):
        if expected.lang != got.lang or first_code_difference(expected.code, got.code, expected.lang):
            continue
        english_comments = {comment.text for comment in comments(expected.code, expected.lang)}
        if any(
            comment.text in english_comments
            and any(c.isalpha() and c.isascii() for c in comment.text)
            and not HAN.search(comment.text)
            for comment in comments(got.code, got.lang)
        ):
            found.append(got)
    return found


def plan_comments(english: Page, chinese: Page) -> PagePlan:
    """The Chinese page as parts: its code blocks with English comments to send, the rest kept."""
    lines = chinese.body.splitlines(keepends=True)
    parts = [Part("", kept="")]  # the first part carries no front matter: the page's own is kept
    position = 0
    for fence in untranslated_blocks(english, chinese):
        start, end = fence.line - chinese.body_line, fence.end_line - chinese.body_line + 1
        parts.append(Part("".join(lines[position:start]), kept="".join(lines[position:start])))
        parts.append(Part("".join(lines[start:end])))
        position = end
    parts.append(Part("".join(lines[position:]), kept="".join(lines[position:])))
    protected = []
    for part in parts:
        holder = ProtectedText()
        protected.append((holder.protect(part.english), holder))
    text = chinese.text.replace("\r\n", "\n")
    return PagePlan(
        english, chinese, parts, protected, front_matter="", kept_front_matter=text[: len(text) - len(chinese.body)]
    )
