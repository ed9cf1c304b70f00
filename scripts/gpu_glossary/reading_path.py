"""The reading path's list (glossary/reading-path.yml): its pages in order, each entry checked.

The checker reports its mistakes and the site (site/reading_path.py) shows the path, so the
file is read here, below both.
"""

from __future__ import annotations

import yaml

from gpu_glossary.fast_yaml import compose_and_load
from gpu_glossary.glossary import SOURCE_LANG, Glossary
from gpu_glossary.page import Problem

PATH_FILE = "reading-path.yml"


def load_path(glossary: Glossary) -> tuple[list[str], list[Problem]]:
    """The path's pages in order, and a problem (file and line) for each entry that is not a
    page of the English glossary, is repeated, or is not a path."""
    path = glossary.glossary_dir / PATH_FILE
    if not path.is_file():
        return [], []
    display = f"glossary/{PATH_FILE}"
    try:
        node, entries = compose_and_load(path.read_text(encoding="utf-8"))
        entries = entries or []
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", 0) + 1
        return [], [Problem(display, line, "error", f"not valid YAML: {exc}")]
    if not isinstance(entries, list):
        return [], [Problem(display, 1, "error", "must be a list of page paths, one `- section/page.md` per line")]
    stops, problems = [], []
    for index, entry in enumerate(entries):
        line = node.value[index].start_mark.line + 1 if isinstance(node, yaml.SequenceNode) else 1
        if not isinstance(entry, str) or glossary.page(SOURCE_LANG, entry) is None:
            problems.append(Problem(display, line, "error", f"'{entry}' is not a page in glossary/{SOURCE_LANG}"))
        elif entry in stops:
            problems.append(Problem(display, line, "error", f"'{entry}' is on the path twice"))
        else:
            stops.append(entry)
    return stops, problems
