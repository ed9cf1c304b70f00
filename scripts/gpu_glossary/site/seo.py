"""What search engines and chat apps show for a page: its title, its own summary as the
description, Open Graph and Twitter tags.

A term's <title> asks the question people type ("What is a warp?", "什么是线程束？") where the
page's first sentence answers it in that form ("A warp is …", "线程束（warp）是…"); the H1
stays the term. Where the first sentence is shaped otherwise ("The roofline model uses …"),
a question would not read naturally, and the title is the term.
"""

from __future__ import annotations

import re
from typing import Any

from gpu_glossary.glossary import LANGUAGES
from gpu_glossary.page import Page
from gpu_glossary.site.search_index import term_names

LOCALES = {"en": "en_US", "zh": "zh_CN"}
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"[`*_]")
_ENGLISH_SUBJECT = re.compile(r"^(?P<article>(?:an?|the)\s+)?(?P<noun>.+?)(?:\s+\([^)]*\))?\s+(?P<verb>is|are)\s", re.I)


def first_sentence(body: str) -> str:
    """The page's opening sentence as plain text (links and code marks removed)."""
    for block in body.strip().split("\n\n"):
        block = block.strip()
        if block and not block.startswith(("#", "!", "<", "|", "```", "-", ">")):
            text = _MARKUP.sub("", _LINK.sub(r"\1", " ".join(block.split())))
            return re.split(r"(?<=\.)\s+|(?<=。)", text, maxsplit=1)[0]
    return ""


def question_title(model: Page, english: Page | None, lang: str) -> str | None:
    """ "What is a warp?" for a term page whose first sentence opens "A warp is"; None when the
    sentence is shaped otherwise or the page is not a term."""
    if not model.section or model.is_index:
        return None
    sentence = first_sentence(model.body)
    if lang == "zh":
        title = model.title
        rest = sentence[len(title) :] if sentence.startswith(title) else None
        if rest is None:
            return None
        rest = re.sub(r"^（[^）]*）", "", rest).lstrip()
        space = " " if title[:1].isascii() else ""  # a space between Chinese and Latin letters or digits
        return f"什么是{space}{title}？" if rest.startswith("是") else None
    match = _ENGLISH_SUBJECT.match(sentence)
    if not match or match.group("noun").casefold() not in {name.casefold() for name in term_names(model, english)}:
        return None
    noun = match.group("noun")
    first_word = noun.split()[0]
    # Sentence-initial capitals go ("Occupancy is" -> "What is occupancy?") where the page
    # writes the word in lower case elsewhere; names keep theirs ("Little's Law", "NVLink").
    lower_elsewhere = re.search(rf"(?<![\w-]){re.escape(first_word.lower())}(?![\w-])", model.body)
    if not match.group("article") and first_word[1:].islower() and first_word[0].isupper() and lower_elsewhere:
        noun = first_word.lower() + noun[len(first_word) :]
    article = (match.group("article") or "").lower()
    return f"What {match.group('verb').lower()} {article}{noun}?"


def page_meta(
    model: Page,
    english: Page | None,
    lang: str,
    site_name: str,
    site_description: str,
    url: str,
    alternates: list[dict[str, Any]],
) -> dict[str, Any]:
    """The <title>, description and social tags of one page (`url`: its absolute address)."""
    is_home = not model.section and model.rel == "index.md"
    question = question_title(model, english, lang)
    heading = question or model.title or site_name
    description = model.summary or site_description
    return {
        "title": site_name if is_home else f"{heading} - {site_name}",
        "og_title": site_name if is_home else heading,
        "description": description,
        "type": "website" if is_home else "article",
        "url": url,
        "locale": LOCALES.get(lang, lang),
        "alternate_locales": [LOCALES[a["lang"]] for a in alternates if a["lang"] != lang and a["lang"] in LANGUAGES],
        "site_name": site_name,
    }
