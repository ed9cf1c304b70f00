"""A diagram must be a picture only: no script, no handlers, no HTML inside, nothing fetched.

Pages show diagrams through <img>, where a browser runs no script and loads nothing else;
but each file is also served on its own (`/images/x.svg`), where it runs as a page of our
site, and an external reference would tell a third party who looked. So an SVG sent by pull
request (or downloaded by `--localize`) is refused if it could run script or call out.
It is read with expat, which reports lines; a DTD with entities is refused before any
entity is expanded ("billion laughs").
"""

from __future__ import annotations

import re
from typing import NoReturn
from xml.parsers import expat

# Elements that run script or embed a document that can.
_ACTIVE_ELEMENTS = {"script", "foreignObject", "iframe", "embed", "object", "handler", "listener"}
# Animation elements can set an attribute (an href, a handler) after load.
_ANIMATIONS = {"set", "animate", "animateMotion", "animateTransform", "animateColor"}
_EXTERNAL_CSS = re.compile(r"url\(\s*['\"]?\s*(?!#)|@import", re.I)


class _Refused(Exception):
    """Stops the parse: the file declares something we never read past."""


def svg_problems(data: bytes) -> list[tuple[int, str]]:
    """(line, message) for everything in an SVG that could run script or fetch from elsewhere."""
    problems: list[tuple[int, str]] = []
    parser = expat.ParserCreate(namespace_separator=" ")
    style_depth = [0]

    def line() -> int:
        return parser.CurrentLineNumber

    def start(name: str, attributes: dict[str, str]) -> None:
        tag = name.rsplit(" ", 1)[-1]
        if tag in _ACTIVE_ELEMENTS:
            problems.append((line(), f"<{tag}> is not allowed in a diagram: it can run script"))
        if tag == "style":
            style_depth[0] += 1
        for qualified, value in attributes.items():
            attribute = qualified.rsplit(" ", 1)[-1]
            if attribute.lower().startswith("on"):
                problems.append((line(), f"event attribute {attribute}= on <{tag}> is not allowed in a diagram"))
            elif attribute == "href" and not value.strip().startswith("#"):
                problems.append((line(), f"<{tag}> refers to '{value}': a diagram may only refer to its own #ids"))
            elif _EXTERNAL_CSS.search(value):
                problems.append((line(), f"{attribute}= on <{tag}> loads '{value}': a diagram may only use url(#id)"))
            if (
                tag in _ANIMATIONS
                and attribute == "attributeName"
                and (value.rsplit(":", 1)[-1] == "href" or value.lower().startswith("on"))
            ):
                problems.append(
                    (line(), f"<{tag}> changes {value}: animating links or handlers is not allowed in a diagram")
                )

    def end(name: str) -> None:
        if name.rsplit(" ", 1)[-1] == "style":
            style_depth[0] -= 1

    def text(data: str) -> None:
        if style_depth[0] and _EXTERNAL_CSS.search(data):
            problems.append(
                (line(), "a <style> in a diagram loads from elsewhere (url() or @import): use url(#id) only")
            )

    def entity(name: str, *_: object) -> NoReturn:
        raise _Refused(f"the diagram declares the entity '{name}': DTDs and entities are not allowed")

    def external(*_: object) -> NoReturn:
        raise _Refused("the diagram refers to an external entity: DTDs and entities are not allowed")

    def instruction(target: str, data: str) -> None:
        if target.lower() == "xml-stylesheet":
            problems.append((line(), f"<?xml-stylesheet {data}?> loads a stylesheet from elsewhere"))

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    parser.EntityDeclHandler = entity
    parser.ExternalEntityRefHandler = external
    parser.ProcessingInstructionHandler = instruction
    try:
        parser.Parse(data, True)
    except _Refused as refused:
        problems.append((line(), str(refused)))
    except expat.ExpatError as error:
        problems.append((error.lineno, f"not well-formed XML: {expat.errors.messages[error.code]}"))
    return problems
