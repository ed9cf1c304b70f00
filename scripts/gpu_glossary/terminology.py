"""The terminology file: English term -> preferred Chinese rendering, variants to avoid.

The site renders it as a page; the checker rejects avoided variants; the translator puts it
in its prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from gpu_glossary.fast_yaml import compose_and_load


class TerminologyError(ValueError):
    """The terminology file is malformed: `path`, `line` and `message` say where and why."""

    def __init__(self, path: Path, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message


@dataclass(frozen=True)
class Term:
    en: str
    zh: str
    avoid: tuple[str, ...] = ()
    note: str = ""
    line: int = 0
    # (variant, what to write instead) where that is not `zh`: 驱动程序版本 → 驱动版本
    instead: tuple[tuple[str, str], ...] = ()

    def replacement(self, variant: str) -> str:
        """What a page writes in place of an avoided variant."""
        return dict(self.instead).get(variant, self.zh)

    def avoid_labels(self) -> list[str]:
        """Each avoided variant, with what to write instead where that is not `zh`: 驱动程序版本 → 驱动版本."""
        return [v if self.replacement(v) == self.zh else f"{v} → {self.replacement(v)}" for v in self.avoid]


@dataclass
class Terminology:
    terms: list[Term] = field(default_factory=list)
    keep_english: list[str] = field(default_factory=list)

    def avoided(self) -> dict[str, Term]:
        """Each avoided variant with the term whose preferred rendering replaces it."""
        return {variant: term for term in self.terms for variant in term.avoid}


def load_terminology(path: Path) -> Terminology:
    """Load and validate the terminology file; raise TerminologyError naming file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TerminologyError(path, 1, f"cannot read terminology file: {exc.strerror}") from None
    try:
        node, data = compose_and_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        raise TerminologyError(path, line, f"not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(node, yaml.MappingNode) or not isinstance(data, dict) or not isinstance(data.get("terms"), list):
        raise TerminologyError(path, 1, "expected a mapping with a 'terms' list")
    term_nodes = next((v for k, v in node.value if k.value == "terms"), None)
    result = Terminology(keep_english=[str(x) for x in data.get("keep_english") or []])
    seen: dict[str, int] = {}
    for index, entry in enumerate(data["terms"]):
        line = term_nodes.value[index].start_mark.line + 1 if term_nodes else 0
        if not isinstance(entry, dict) or not isinstance(entry.get("en"), str) or not isinstance(entry.get("zh"), str):
            raise TerminologyError(path, line, "each term needs 'en' and 'zh' text")
        avoid = entry.get("avoid") or []
        # a list of variants (write `zh` instead), or a mapping of variant -> what to write instead
        instead = dict(avoid) if isinstance(avoid, dict) else {}
        if not isinstance(avoid, list | dict) or not all(isinstance(t, str) for t in [*avoid, *instead.values()]):
            raise TerminologyError(path, line, "'avoid' must be a list of text, or a mapping of text to text")
        key = entry["en"].lower()
        if key in seen:
            raise TerminologyError(path, line, f"'{entry['en']}' is listed twice (first on line {seen[key]})")
        seen[key] = line
        note = str(entry.get("note") or "")
        result.terms.append(Term(entry["en"], entry["zh"], tuple(avoid), note, line, tuple(instead.items())))
    for variant, term in result.avoided().items():
        for other in result.terms:
            if variant in other.zh:
                raise TerminologyError(
                    path,
                    term.line,
                    f"avoided variant '{variant}' is part of the preferred "
                    f"rendering '{other.zh}' ({other.en}); a page could never use it",
                )
    return result
