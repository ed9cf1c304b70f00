"""Compiled theme templates kept on disk between builds (Jinja's own bytecode cache).

Each MkDocs build makes a fresh Jinja environment and compiled Material's and our templates
again: about half of the CPU time of building a small project, and a quarter of a second
on every rebuild of the live preview. Jinja stores each compiled template under its name
and file, with a checksum of its source, and compiles again when the source changed; the
folder is named after everything else the compiled code depends on (Jinja, MkDocs and
Material versions, the Python version, the environment's extensions), so no entry is ever
used by a build it does not fit. It lives in our cache folder (`gpu_glossary.cache`), and
not at all when `GPU_GLOSSARY_CACHE` is set empty. As with the rest of that cache, a
damaged entry is compiled again and a failed write only costs speed.
"""

from __future__ import annotations

import contextlib
import pickle
import sys

import jinja2

from gpu_glossary.cache import cache_dir, fingerprint


class _ForgivingBytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's file cache, except that it never fails a build."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError):
            bucket.reset()  # damaged: what marshal and pickle raise on bad bytes varies

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):  # a read-only or full disk
            super().dump_bytecode(bucket)


def with_bytecode_cache(env: jinja2.Environment) -> jinja2.Environment:
    """`env`, storing and reusing its compiled templates in our cache folder when there is one."""
    folder = cache_dir()
    if folder is None:
        return env
    key = fingerprint(
        ["jinja2", "mkdocs", "mkdocs-material"],
        [sys.modules[__name__]],
        sys.version,
        *sorted(env.extensions),
        repr(getattr(env, "newstyle_gettext", None)),
        repr(env.autoescape),
    )
    directory = folder / "jinja" / key[:16]
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return env  # a read-only or full disk only costs speed
    env.bytecode_cache = _ForgivingBytecodeCache(str(directory))
    return env
