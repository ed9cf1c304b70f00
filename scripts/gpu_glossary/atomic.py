"""Writing files so that a crash or Ctrl-C leaves either the old file or the new one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text_atomic(path: Path, text: str, durable: bool = True) -> None:
    """Write to a temporary file beside `path`, flush it to disk, then rename over `path`.

    `durable=False` skips the flush to disk: readers still see the old file or the new one,
    but a power cut may leave neither (for the built site, which a build writes again)."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            if durable:
                out.flush()
                os.fsync(out.fileno())
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
