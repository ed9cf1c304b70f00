"""Caches: on disk, per-page results that are slow to compute; in memory, what one process
reads again and again.

On disk:

Rendering every page of both languages and sanitizing the HTML takes seconds, and the
checker runs on every build and many times in the tests. A result is stored under the
hash of everything it depends on (the page, the library versions, the source of our own
modules that compute it), so an entry can never be stale: any change makes a new key.
Entries are small JSON files (and, under `jinja/`, the theme templates that
`site/template_cache.py` keeps compiled); deleting the folder is always safe.
`GPU_GLOSSARY_CACHE` names another folder, or, set to an empty value, turns the cache off.

In memory: every cache of a function's results is made with `in_memory` below, so all of
them are emptied by one `clear_caches()` (tests that measure memory, or a long-lived process
that wants its memory back). Each is keyed by whole texts, so it can never be stale, and
bounded; together they are the process's memory budget for caching:
- page.py: a body's fenced blocks, lines, prose lines, fences, links and headings (1024
  bodies each), front matter data (4096 blocks);
- render.py: the shared renderers (8 Markdown settings), each with the HTML of its last
  1024 texts;
- code_comments.py: the comment and code pieces of 1024 code blocks (on disk too: lexing
  every example is most of what `gpu-glossary examples` and the checker's example rules cost);
- translate/checks.py: the markup of the last 1024 HTML texts;
- site/term_index.py: the pages each of 4096 bodies links to.
Fingerprints of our own source (`functools.cache`, one string each) are not counted.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import TypeVar, cast

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., object])


def cache_dir() -> Path | None:
    configured = os.environ.get("GPU_GLOSSARY_CACHE")
    if configured is not None:
        return Path(configured) if configured else None
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpu-glossary"


def fingerprint(packages: list[str], modules: list[ModuleType], *extra: str) -> str:
    """A hash of installed package versions, our modules' source and any other input."""
    digest = hashlib.sha256()
    for name in packages:
        digest.update(f"{name}=={metadata.version(name)}\n".encode())
    for module in modules:
        if module.__file__ is None:
            raise ValueError(f"module {module.__name__} has no source file to fingerprint")
        digest.update(Path(module.__file__).read_bytes())
    for part in extra:
        digest.update(part.encode("utf-8") + b"\0")
    return digest.hexdigest()


def memoize(namespace: str, key_parts: list[str], compute: Callable[[], T]) -> T:
    """`compute()`'s result, read from the cache when `key_parts` were seen before.

    The result must be JSON-able; a tuple in it comes back from disk as a list, so callers
    unpack pairs rather than compare them.
    """
    folder = cache_dir()
    if folder is None:
        return compute()
    digest = hashlib.sha256()
    for part in key_parts:
        digest.update(part.encode("utf-8") + b"\0")
    path = folder / namespace / f"{digest.hexdigest()}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass  # not cached yet, or unreadable: compute it
    value = compute()
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(value, out, ensure_ascii=False)
        os.replace(temporary, path)  # readers see the whole entry or none
    except OSError:
        if temporary:
            Path(temporary).unlink(missing_ok=True)  # a read-only or full disk only costs speed
    return value


_IN_MEMORY: list[functools._lru_cache_wrapper[object]] = []  # every cache made by in_memory(), for clear_caches()


def in_memory(maxsize: int) -> Callable[[F], F]:
    """`functools.lru_cache(maxsize)`, emptied by `clear_caches()` with all the others.

    The cached function keeps its signature for the type checker (lru_cache's wrapper would
    accept any hashable arguments).
    """

    def decorate(function: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(function)
        _IN_MEMORY.append(cached)
        return cast(F, cached)

    return decorate


def clear_caches() -> None:
    """Empty every in-memory cache of this process (see the module's docstring for the list)."""
    for cached in _IN_MEMORY:
        cached.cache_clear()
