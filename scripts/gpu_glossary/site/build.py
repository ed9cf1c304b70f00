"""Build both languages (in parallel: two processes) and assemble them into one site folder.

Each `mkdocs build` cleans its own output folder, so the English build must not write
into the folder that holds the Chinese site: each builds into `.site.build/<lang>`, and
the finished site replaces `site/` in one rename, so a failed build leaves the old site.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from gpu_glossary.glossary import LANGUAGES, SOURCE_LANG, url_prefix

CONFIGS = {"en": "mkdocs.yml", "zh": "mkdocs.zh.yml"}


class BuildError(RuntimeError):
    """A language failed to build; the message holds MkDocs' own output."""


@dataclass
class BuildResult:
    seconds: float
    per_language: dict[str, float]
    site_dir: Path


def _command(root: Path, lang: str, out_dir: Path) -> list[str]:
    return [sys.executable, "-m", "mkdocs", "build", "--quiet", "--strict",
            "-f", str(root / CONFIGS[lang]), "-d", str(out_dir)]


def build_site(root: Path, site_dir: Path | None = None, parallel: bool = True,
               site_url: str | None = None, languages: tuple[str, ...] = LANGUAGES) -> BuildResult:
    """Build `languages` (default: all) into `site_dir` (default `site/`); raise BuildError on failure.

    A language left out keeps its pages from the site already there (the live preview
    rebuilds only what an edit touched); the others are replaced all at once.
    """
    site_dir = Path(site_dir or root / "site")
    staging = site_dir.parent / f".{site_dir.name}.build"  # same file system: renames stay atomic
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")  # Material's end-of-life banner, once per build, is noise here
    if site_url:
        env["SITE_URL"] = site_url
    started = time.perf_counter()
    per_language: dict[str, float] = {}
    failures = []

    def finish(lang: str, process: subprocess.Popen, began: float) -> None:
        output, _ = process.communicate()
        per_language[lang] = time.perf_counter() - began
        if process.returncode != 0:
            failures.append(f"--- {CONFIGS[lang]} failed (exit {process.returncode}) ---\n{output.strip()}")

    running = []
    for lang in languages:
        process = subprocess.Popen(_command(root, lang, staging / lang), cwd=root, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        running.append((lang, process, time.perf_counter()))
        if not parallel:
            finish(*running.pop())
    for item in running:
        finish(*item)
    if failures:
        raise BuildError("\n".join(failures))

    if SOURCE_LANG in languages:
        assembled = staging / "site"
        os.replace(staging / SOURCE_LANG, assembled)
        for lang in LANGUAGES:
            built = staging / lang if lang in languages else site_dir / url_prefix(lang).rstrip("/")
            if lang != SOURCE_LANG and built.exists():
                os.replace(built, assembled / url_prefix(lang).rstrip("/"))
        _swap(assembled, site_dir, staging / "previous")
    else:  # only translations: swap each one's folder inside the site
        for lang in languages:
            _swap(staging / lang, site_dir / url_prefix(lang).rstrip("/"), staging / f"previous-{lang}")
    shutil.rmtree(staging, ignore_errors=True)
    return BuildResult(time.perf_counter() - started, per_language, site_dir)


def _swap(new: Path, target: Path, previous: Path) -> None:
    """Put `new` where `target` is, by renames (the old one goes to `previous`)."""
    if target.exists():
        os.replace(target, previous)
    os.replace(new, target)
