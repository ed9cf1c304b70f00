"""The one acceptance gate a translation passes, per chunk and again per page, before anything is written.

A model's reply is untrusted: it may be in the wrong language or script, echo the English, move
a link to other words, change a number, add a sentence, carry bytes that break tools, or be a
page that `gpu-glossary check` would refuse. Each check here compares the reply with the English
it translates, or runs the checker's own rules, and says what is wrong in words the model can act
on: a rejected chunk is sent again with the reasons (translator.py).

Decisions a faithful Chinese text needs, stated once:

- Script: Simplified Chinese. Any kana or hangul is refused, and so is any character OpenCC's
  Traditional-to-Simplified conversion changes (chinese.py). At least a quarter of the letters of
  a chunk's prose are Han characters, and so in each paragraph whose English has three words or
  more (a paragraph left in English is refused even when the rest of the chunk is Chinese).
- Numbers: the numbers written in digits in the prose, tables, front matter and code comments are
  the same multiset in both texts. A number is read with its thousands separators (1,024 = 1024)
  and its scale word (2.19 million = 219 万 = 2190000; thousand, million, billion, trillion; 万,
  百万, 千万, 亿, 万亿); digits glued to a letter on their left (H100, FP32, sm_90) belong to a name,
  not a number; list markers (`1.`) are structure, not numbers. An English digit 0-10 may become a
  Chinese numeral (2 GPUs = 两个 GPU) when the reply holds that numeral; a number the reply adds is
  always refused.
- Links: each paragraph keeps the link targets of its English paragraph (a target moved to another
  paragraph is refused), and a link to a glossary page whose English words name that page (its
  title, an alias, its abbreviation, its file name) names it in the reply too, in either language
  (the Chinese page's title or aliases, the terminology's rendering): Chinese may reorder a
  sentence, so links are matched by their words, not their positions.
- Additions: the reply's English words are words of the English chunk, of the terminology file or
  of the pages it links to (a chatty sentence is not); it adds no URL and no attribute list.
- Code: each block, once its comments are removed, is the English block; ```text blocks (an
  example's recorded output, listings) are copied unchanged.
- Bytes: no control character, lone surrogate or non-character; no limit of page_limits.py broken
  (the reply is never rendered then).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property

from gpu_glossary import check, page_limits
from gpu_glossary.chinese import HAN, HANGUL, KANA, traditional_characters
from gpu_glossary.code_comments import comments, first_code_difference
from gpu_glossary.glossary import SOURCE_LANG, Glossary
from gpu_glossary.page import Page, mask_inline_code, resolve_link
from gpu_glossary.render import Renderer
from gpu_glossary.terminology import Terminology
from gpu_glossary.translate.checks import MIN_CHINESE_SHARE, chinese_share, structure_problems
from gpu_glossary.translate.chunks import CheckRenderer
from gpu_glossary.translate.sections import split_blocks

TARGET_LANG = "zh"
MIN_WORDS_FOR_A_CHINESE_BLOCK = 3
_WORD = re.compile(r"\b[A-Za-z][a-z]{2,}\b")  # an English word, not an acronym or identifier
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
_LINK_TARGET = re.compile(r"\]\([^)]*\)|\]\[[^\]]*\]")
_URL = re.compile(r"https?://[^\s)>\]]+|www\.[^\s)>\]]+")
_ATTRIBUTE_LIST = re.compile(r"\{[ \t]*[:#.][^}\n]*\}")
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>|<!--.*?-->")
_LINK_LABEL = re.compile(r"!?\[[^\]]*\]\([^)]*\)")
_QUOTED = re.compile(r"“[^”]*”|\"[^\"\n]*\"")  # quoted English (an error message) may stay English
_GLOSS = re.compile(r"[（(][^（）()\n]{1,60}[）)]")  # 中文术语（English term）: the prompt asks for it
_FOOTNOTE = re.compile(r"\[\^[^\]]*\]")
_LIST_MARKER = re.compile(r"^[ \t]*\d+[.)][ \t]")
_NUMBER = re.compile(
    r"(?<![A-Za-z_\d.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?"
    r"(?:[ \t-]?(thousand|million|billion|trillion)\b|[ \t]?(万亿|千万|百万|亿|万))?"
)
_SCALES = {
    "thousand": 10**3,
    "million": 10**6,
    "billion": 10**9,
    "trillion": 10**12,
    "万": 10**4,
    "百万": 10**6,
    "千万": 10**7,
    "亿": 10**8,
    "万亿": 10**12,
}
_NUMERALS = {0: "零〇", 1: "一", 2: "二两", 3: "三", 4: "四", 5: "五", 6: "六", 7: "七", 8: "八", 9: "九", 10: "十"}


def _stem(word: str) -> str:
    word = word.lower().replace("’", "'").removesuffix("'s")
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


# -- what a text says ---------------------------------------------------------------------
def _prose(page: Page) -> list[tuple[int, str]]:
    """(line, text) of the prose a reader reads: inline code, link targets, HTML tags and
    attribute lists left out; list markers too."""
    lines = []
    for number, line in page.prose_lines():
        line = _LIST_MARKER.sub(" ", line)
        line = _LINK_TARGET.sub("]", _FOOTNOTE.sub(" ", line))
        lines.append((number, _ATTRIBUTE_LIST.sub(" ", _HTML_TAG.sub(" ", line))))
    return lines


def _front_matter_text(page: Page) -> list[str]:
    values = [page.meta.get(key) for key in ("title", "summary")]
    aliases = page.meta.get("aliases")
    values += aliases if isinstance(aliases, list) else [aliases]
    return [str(value) for value in values if isinstance(value, str | int | float)]


def _comment_text(page: Page) -> list[str]:
    return [comment.text for fence in page.fences() for comment in comments(fence.code, fence.lang)]


def readable_text(page: Page) -> str:
    """Everything of a page that is translated: front matter values, prose, code comments."""
    return "\n".join(
        [*_front_matter_text(page), *(_URL.sub(" ", text) for _, text in _prose(page)), *_comment_text(page)]
    )


def numbers(text: str) -> Counter:
    """The numbers written in digits, each as its exact value (see the module docstring)."""
    found: Counter = Counter()
    for match in _NUMBER.finditer(text):
        whole, fraction, english_scale, chinese_scale = match.groups()
        value = Decimal(whole.replace(",", "") + (fraction or ""))
        value *= _SCALES.get(english_scale or chinese_scale or "", 1)
        found[format(value.normalize(), "f")] += 1
    return found


_NUMBER_WORDS = {
    0: "zero none",
    1: "one first single once a an",
    2: "two second twice double both pair half",
    3: "three third thrice triple",
    4: "four fourth quarter quad",
    5: "five fifth",
    6: "six sixth",
    7: "seven seventh",
    8: "eight eighth",
    9: "nine ninth",
    10: "ten tenth",
    11: "eleven eleventh",
    12: "twelve twelfth dozen",
    16: "sixteen",
    20: "twenty",
    32: "thirty-two",
    100: "hundred",
    1000: "thousand",
}
_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]


def _english_words_for(value: str, english: str) -> int:
    """How often the English writes `value` in words (two, twice, June …)."""
    if not value.isdigit():
        return 0
    number = int(value)
    words = _NUMBER_WORDS.get(number, "").split() + ([_MONTHS[number - 1]] if 1 <= number <= 12 else [])
    lower = english.lower()
    return sum(len(re.findall(rf"\b{re.escape(word)}\b", lower)) for word in words)


def _digits(value: str) -> str:
    return value.replace(".", "").strip("0")


def number_problems(english: str, reply: str) -> list[str]:
    theirs, ours = numbers(_URL.sub(" ", english)), numbers(_URL.sub(" ", reply))
    added, lost = ours - theirs, theirs - ours
    for value in list(added):  # a number the English writes in words: two -> 2, June -> 6
        added[value] -= min(added[value], _english_words_for(value, english))
    for value in list(lost):  # a small number the reply writes as a Chinese numeral: 2 -> 两
        if value.isdigit() and int(value) in _NUMERALS and any(c in reply for c in _NUMERALS[int(value)]):
            lost[value] = 0
    scaled = re.search(r"万|亿", reply) or re.search(r"\b(?:thousand|million|billion|trillion)\b", english, re.I)
    for value in (
        list(+added) if scaled else []
    ):  # one scale word for a list: 0.546 and 1.093 million -> 54.6 万、109.3 万
        for other in list(+lost):
            if not (added[value] and lost[other] and _digits(value) and _digits(value) == _digits(other)):
                continue  # zero has no digits to share
            ratio = Decimal(value) / Decimal(other)
            if ratio >= 1000 or ratio <= Decimal("0.001"):
                added[value] -= 1
                lost[other] -= 1
    added, lost = +added, +lost
    problems = []
    if added:
        problems.append(
            "numbers differ from the English: the reply adds "
            + ", ".join(sorted(added.elements())[:10])
            + " (write every number as the English has it)"
        )
    if lost:
        problems.append("numbers differ from the English: the reply loses " + ", ".join(sorted(lost.elements())[:10]))
    return problems


def script_problems(english: Page, reply: Page, text: str) -> list[str]:
    """Simplified Chinese: no kana, hangul or Traditional characters; Chinese enough overall and per paragraph."""
    problems = []
    kana = sorted(set(KANA.findall(text)) - {"\u30fb"})  # the katakana middle dot is also a Chinese name separator
    if kana:
        problems.append(
            f"the reply is not Chinese: it has Japanese kana ({''.join(kana[:10])}); write Simplified Chinese"
        )
    hangul = sorted(set(HANGUL.findall(text)))
    if hangul:
        problems.append(f"the reply is not Chinese: it has Korean hangul ({''.join(hangul[:10])})")
    traditional = traditional_characters(text)
    if traditional:
        problems.append(
            f"the reply uses Traditional characters ({''.join(traditional[:10])}); write Simplified Chinese"
        )
    english_letters = sum(len(_WORD.findall(line)) for _, line in _prose(english))
    if english_letters >= MIN_WORDS_FOR_A_CHINESE_BLOCK and chinese_share(reply) < MIN_CHINESE_SHARE:
        problems.append(
            f"too little Chinese ({chinese_share(reply):.0%} of letters): the reply looks like English echoed back"
        )
    elif english_letters >= MIN_WORDS_FOR_A_CHINESE_BLOCK:
        for line, block in _english_blocks(english, reply):
            problems.append(
                f"a paragraph is still English (line {line} of the part: {block[:60]!r}…): translate every paragraph"
            )
            break
    return problems


def comment_problems(english: Page, reply: Page) -> list[str]:
    """Comments of the reply's code still in English: each comment of three English words or more
    is translated (a reply's own comments; comments kept from an older translation are not judged)."""
    for expected, got in zip(english.fences(), reply.fences(), strict=False):
        for before, after in zip(comments(expected.code, expected.lang), comments(got.code, got.lang), strict=False):
            if len(_WORD.findall(before.text)) >= MIN_WORDS_FOR_A_CHINESE_BLOCK and not HAN.search(after.text):
                return [f"a code comment is still English ({after.text[:60]!r}): translate the words of every comment"]
    return []


def _blocks(page: Page) -> list[tuple[int, int, str]]:
    """(first line, last line, text) of each block of the body."""
    spans = []
    line = page.body_line
    for section in split_blocks(page):
        for block in section:
            lines = block.count("\n")
            spans.append((line, line + max(lines - 1, 0), block))
            line += lines
    return spans


def _english_blocks(english: Page, reply: Page) -> Iterator[tuple[int, str]]:
    """(line, text) of each reply block whose English has words and which has hardly any Han."""
    theirs, ours = _blocks(english), _blocks(reply)
    if len(theirs) != len(ours):
        return
    prose_of = {number: text for number, text in _prose(reply)}
    english_prose = {number: _QUOTED.sub(" ", _HTML_TAG.sub(" ", text)) for number, text in english.prose_lines()}
    for (a1, a2, _), (b1, b2, block) in zip(theirs, ours, strict=True):
        words = sum(len(_WORD.findall(_LINK_LABEL.sub(" ", english_prose.get(n, "")))) for n in range(a1, a2 + 1))
        text = " ".join(_URL.sub(" ", prose_of.get(n, "")) for n in range(b1, b2 + 1))
        if words >= MIN_WORDS_FOR_A_CHINESE_BLOCK and not HAN.search(text):
            yield b1, block.strip()


# -- the gate -------------------------------------------------------------------------------
@dataclass
class Gate:
    """The checks for one run: the glossary the pages belong to, its terminology, the renderer."""

    glossary: Glossary
    terminology: Terminology
    renderer: Renderer

    def __post_init__(self) -> None:
        self.page_renderer = CheckRenderer(self.renderer)

    @cached_property
    def _allowed_words(self) -> set[str]:
        words = {_stem(w) for term in self.terminology.terms for w in _LATIN_WORD.findall(term.en)}
        return words | {_stem(w) for term in self.terminology.keep_english for w in _LATIN_WORD.findall(term)}

    @cached_property
    def _names(self) -> dict[str, tuple[set[str], set[str]]]:
        """Each English page's names: (English names, names in either language), casefolded."""
        by_english = {term.en.casefold(): term.zh for term in self.terminology.terms}
        names: dict[str, tuple[set[str], set[str]]] = {}
        for rel, page in self.glossary.pages[SOURCE_LANG].items():
            english = {page.title, page.abbreviation, page.slug.replace("-", " ")}
            aliases = page.meta.get("aliases")
            english |= {str(a) for a in aliases} if isinstance(aliases, list) else set()
            english = {name.casefold() for name in english if name and len(name) > 1}
            either = set(english) | {by_english[name] for name in english if name in by_english}
            chinese = self.glossary.page(TARGET_LANG, rel)
            if chinese is not None:
                either.add(chinese.title.casefold())
                zh_aliases = chinese.meta.get("aliases")
                either |= {str(a).casefold() for a in zh_aliases} if isinstance(zh_aliases, list) else set()
            names[rel] = (
                {_stem(n) for n in english} | english,
                {n for n in either if len(n) > 1},
            )  # 簇 alone names nothing
        return names

    # -- per chunk and per page ----------------------------------------------------------
    def text_problems(self, english: Page, reply: Page, whole_english: Page | None = None) -> list[str]:
        """What differs between an English text and its translation beyond the words (both
        a chunk or both a whole page). `whole_english`: the page a chunk comes from."""
        text = readable_text(reply)
        problems = self.code_problems(english, reply)
        problems += self.link_problems(english, reply)
        problems += number_problems(readable_text(english), text)
        problems += script_problems(english, reply, text)
        problems += self.addition_problems(english, reply, text, whole_english or english)
        problems += [p.message for p in check._check_body(reply, self.terminology) if "variant" in p.message]
        problems += [p.message for p in check._check_front_matter_text(reply)]
        title = reply.title.casefold()
        for rel, other in self.glossary.pages[TARGET_LANG].items():
            if title and rel != reply.rel and other.title.casefold() == title:
                problems.append(f"the title '{reply.title}' is the title of {other.display_path}: choose another")
        return problems

    def comment_page_problems(self, english: Page, translation: Page) -> list[str]:
        """A page whose comments alone were translated (translate --comments): its prose is kept as
        it was, so only what the comments can break is judged: limits, code, the checker's rules."""
        excess = page_limits.excesses(translation.text)
        if excess:
            return [f"line {e.line}: {e.message}" for e in excess]
        checked = check.translation_problems(self.glossary, translation, self.terminology)
        return self.code_problems(english, translation) + [
            f"line {p.line}: {p.message}" for p in checked if p.severity == "error"
        ]

    def page_problems(self, english: Page, translation: Page) -> list[str]:
        """The whole page, as it would be written: everything `gpu-glossary check` says of it,
        the structure of the English page, and every check of text_problems."""
        excess = page_limits.excesses(translation.text)
        if excess:
            return [f"line {e.line}: {e.message}" for e in excess]
        problems = structure_problems(english, translation, self.page_renderer)
        if problems:
            return problems
        problems = self.text_problems(english, translation)
        checked = check.translation_problems(self.glossary, translation, self.terminology)
        return problems + [f"line {p.line}: {p.message}" for p in checked if p.severity == "error"]

    # -- the checks ------------------------------------------------------------------------
    @staticmethod
    def code_problems(english: Page, reply: Page) -> list[str]:
        theirs, ours = english.fences(), reply.fences()
        if len(theirs) != len(ours):
            return [f"code blocks differ from the English ({len(ours)} blocks, expected {len(theirs)})"]
        problems = []
        for number, (expected, got) in enumerate(zip(theirs, ours, strict=True), start=1):
            difference = first_code_difference(expected.code, got.code, expected.lang)
            if expected.lang != got.lang or difference:
                problems.append(
                    f"code block {number} differs from the English: {difference or 'its language changed'} "
                    "(translate comments only; keep code, strings and ```text blocks exactly)"
                )
        return problems

    def link_problems(self, english: Page, reply: Page) -> list[str]:
        theirs, ours = _links_by_block(english), _links_by_block(reply)
        problems = []
        if len(theirs) == len(ours):
            for index, (expected, got) in enumerate(zip(theirs, ours, strict=True), start=1):
                if Counter(t for t, _ in expected) != Counter(t for t, _ in got):
                    problems.append(
                        f"paragraph {index} links to {sorted(t for t, _ in got)}, its English to "
                        f"{sorted(t for t, _ in expected)}: keep each link in the paragraph it belongs to"
                    )
        for got in ours:  # links to glossary pages: each on words that name its page, not another's
            targets = {target for target, _ in got if self._link_names(reply, target)}
            for target, label in got:
                if "#" in target or target not in targets:
                    continue  # a link to a section names the section
                best = max(targets, key=lambda t: self._naming(reply, label, t))
                if best != target and self._naming(reply, label, best) > self._naming(reply, label, target):
                    problems.append(
                        f"the link to {target} is on the words '{label}', which name {best}: "
                        "keep each link on the words it belonged to"
                    )
        return problems

    def _naming(self, page: Page, label: str, target: str) -> int:
        """How well `label` names the page `target` points at: the length of the longest of its names in it."""
        names = (self._link_names(page, target) or (set(), set()))[1]
        label = label.casefold()
        return max((len(name) for name in names if name in label), default=0)

    def _link_names(self, page: Page, target: str) -> tuple[set[str], set[str]] | None:
        path = target.split("#", 1)[0]
        if not path.endswith(".md") or "://" in path:
            return None
        return self._names.get(resolve_link(page.rel, path))

    def addition_problems(self, english: Page, reply: Page, text: str, whole_english: Page) -> list[str]:
        allowed = self._allowed_words | {_stem(w) for w in _LATIN_WORD.findall(readable_text(english))}
        allowed |= {_stem(w) for w in _LATIN_WORD.findall(" ".join(_front_matter_text(whole_english)))}
        for link in english.links():
            names = self._link_names(english, link.target)
            if names:
                allowed |= {_stem(w) for name in names[0] for w in _LATIN_WORD.findall(name)}
        unglossed = _GLOSS.sub(" ", text)
        added = sorted(
            {w for w in _LATIN_WORD.findall(unglossed) if len(w) > 1 and not w.isupper() and _stem(w) not in allowed}
        )
        problems = []
        if added:
            problems.append(
                f"the reply adds English words that are not in the English text ({', '.join(added[:8])}): "
                "translate, and add nothing"
            )
        urls = Counter(_URL.findall(_prose_with_links(reply))) - Counter(_URL.findall(_prose_with_links(english)))
        if urls:
            problems.append(f"the reply adds a URL ({', '.join(urls)}): add nothing")
        lists = len(_ATTRIBUTE_LIST.findall(_prose_with_links(reply))) - len(
            _ATTRIBUTE_LIST.findall(_prose_with_links(english))
        )
        if lists > 0:
            problems.append("the reply adds an attribute list ({: … }): add nothing")
        return problems


def _prose_with_links(page: Page) -> str:
    return "\n".join(line for _, line in page.prose_lines())


def _names_in(label: str, names: set[str]) -> bool:
    words = " ".join(_stem(w) for w in _LATIN_WORD.findall(label))
    return any(name in label or name in words for name in names)


def _links_by_block(page: Page) -> list[list[tuple[str, str]]]:
    """Each block's links (not images): (target, words)."""
    blocks = _blocks(page)
    found: list[list[tuple[str, str]]] = [[] for _ in blocks]
    for link in page.links():
        if link.is_image:
            continue
        for index, (first, last, _) in enumerate(blocks):
            if first <= link.line <= last:
                found[index].append((link.target, mask_inline_code(link.text)))
                break
    return found
