"""Build both languages (in parallel: two processes) and assemble them into one site folder.

Each `mkdocs build` cleans its own output folder, so the English build must not write
into the folder that holds the Chinese site: each builds into `.site.build/<lang>`, and
the finished site replaces `site/` by two renames (the old site aside, then the new one in
its place), so a failed build leaves the old site, and `site/` is missing only between them.

Each build is a process of its own, forked from a multiprocessing fork server that has
MkDocs and Material loaded already (`mkdocs_preload`): a rebuild starts at once instead of
importing for a second or two. As with any multiprocessing code, a script that builds must
start its work under `if __name__ == "__main__":` (the fork server imports the script).
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from gpu_glossary.glossary import CONFIGS, LANGUAGES, SOURCE_LANG, url_prefix


class SiteBuildError(RuntimeError):
    """A language failed to build; the message holds MkDocs' own output."""


@dataclass
class BuildResult:
    seconds: float
    per_language: dict[str, float]
    site_dir: Path


def _mkdocs_args(root: Path, lang: str, out_dir: Path) -> list[str]:
    return ["build", "--quiet", "--strict", "-f", str(root / CONFIGS[lang]), "-d", str(out_dir)]


def build_process_context() -> multiprocessing.context.SpawnContext | multiprocessing.context.ForkServerContext:
    """Where build processes come from: forked from a server that imported the main script and
    `mkdocs_preload` (started by this process's first build; it ends with this process).
    Where there is no fork server (Windows), each build process imports what it needs."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["__main__", "gpu_glossary.site.mkdocs_preload"])
    return context


def _run_mkdocs(args: list[str], cwd: str, env: dict[str, str], output: str) -> None:
    """In a build process: `mkdocs <args>` in `cwd` under `env`, everything it prints going
    to the file `output`, as a subprocess's would; exits with MkDocs' exit status."""
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    from mkdocs.__main__ import cli  # loaded already where a fork server preloaded it

    cli.main(args=args, prog_name="mkdocs")  # click's standalone mode: always exits


def build_site(
    root: Path,
    site_dir: Path | None = None,
    parallel: bool = True,
    site_url: str | None = None,
    languages: tuple[str, ...] = LANGUAGES,
) -> BuildResult:
    """Build `languages` (default: all) into `site_dir` (default `site/`); raise SiteBuildError on failure.

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

    def log_of(lang: str) -> Path:  # what the language's build printed
        return staging / f"{lang}.log"

    def finish(lang: str, process: multiprocessing.process.BaseProcess, began: float) -> None:
        process.join()
        per_language[lang] = time.perf_counter() - began
        if process.exitcode != 0:
            log = log_of(lang)
            output = log.read_text(encoding="utf-8", errors="replace") if log.exists() else "(it printed nothing)"
            failures.append(f"--- {CONFIGS[lang]} failed (exit {process.exitcode}) ---\n{output.strip()}")

    context = build_process_context()
    running = []
    for lang in languages:
        process = context.Process(
            target=_run_mkdocs,
            name=f"mkdocs build {lang}",
            args=(_mkdocs_args(root, lang, staging / lang), str(root), env, str(log_of(lang))),
        )
        process.start()
        running.append((lang, process, time.perf_counter()))
        if not parallel:
            finish(*running.pop())
    for item in running:
        finish(*item)
    if failures:
        raise SiteBuildError("\n".join(failures))

    install_languages(staging, site_dir, languages)
    shutil.rmtree(staging, ignore_errors=True)
    return BuildResult(time.perf_counter() - started, per_language, site_dir)


def install_languages(staging: Path, site_dir: Path, languages: tuple[str, ...]) -> None:
    """Put each language built into `staging/<lang>` in its place in `site_dir`: English at
    the root, the others in their folders; a language not built keeps what `site_dir` has."""
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


def _swap(new: Path, target: Path, previous: Path) -> None:
    """Put `new` where `target` is, by renames (the old one goes to `previous`)."""
    if target.exists():
        os.replace(target, previous)
    os.replace(new, target)
