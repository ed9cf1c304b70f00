"""YAML through libyaml when it can, with PyYAML's own error messages when it cannot.

PyYAML's pure-Python parser takes milliseconds per page's front matter and over a second
for `runs.yml`; libyaml (PyYAML's C binding, in PyYAML's wheels) does the same in a tenth of
that. Errors are rare and their messages are part of what the checker prints, so input that
libyaml rejects is read again by the pure-Python loader, which raises the error it always did.
"""

from __future__ import annotations

from typing import Any

import yaml

# None where PyYAML was built without libyaml.
C_LOADER: type[yaml.CSafeLoader] | None = getattr(yaml, "CSafeLoader", None)


def compose_and_load(text: str, loader: type[yaml.SafeLoader] = yaml.SafeLoader) -> tuple[yaml.Node | None, Any]:
    """(node tree, data) of one YAML document: the nodes give line numbers, the data values."""
    if C_LOADER is not None:
        try:
            return yaml.compose(text, Loader=C_LOADER), yaml.load(text, Loader=C_LOADER)
        except yaml.YAMLError:
            pass  # read it again below for PyYAML's message and mark
    return yaml.compose(text, Loader=loader), yaml.load(text, Loader=loader)


def load(
    text: str, loader: type[yaml.SafeLoader] = yaml.SafeLoader, c_loader: type[yaml.CSafeLoader] | None = C_LOADER
) -> Any:
    """The data of one YAML document (`c_loader`: libyaml's twin of `loader`, if it has its own constructors)."""
    if c_loader is not None:
        try:
            return yaml.load(text, Loader=c_loader)
        except yaml.YAMLError:
            pass
    return yaml.load(text, Loader=loader)


def has_anchors_or_repeated_keys(text: str) -> bool:
    """Whether the document uses `&anchor`/`*alias` or repeats a mapping key on another line
    (what front matter refuses). Also True when libyaml is missing or rejects the text: the
    caller then reads it with its pure-Python loader, which decides and explains."""
    if C_LOADER is None:
        return True
    try:
        for event in yaml.parse(text, Loader=C_LOADER):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                return True
        pending = [yaml.compose(text, Loader=C_LOADER)]
    except yaml.YAMLError:
        return True
    while pending:
        node = pending.pop()
        if isinstance(node, yaml.MappingNode):
            first_lines: dict[object, int] = {}
            for key, value in node.value:
                identity = (key.tag, key.value) if isinstance(key, yaml.ScalarNode) else id(key)
                if first_lines.setdefault(identity, key.start_mark.line) != key.start_mark.line:
                    return True
                pending += [key, value]
        elif isinstance(node, yaml.SequenceNode):
            pending += node.value
    return False
