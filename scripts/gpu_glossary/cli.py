"""The `gpu-glossary` command: check pages, build and serve the site, stamp translations."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import click

from .atomic import write_text_atomic
from .build import BuildError, build_site
from .check import github_annotation, group_by_severity, run_check
from .glossary import SOURCE_LANG, find_root, load_glossary
from .page import SOURCE_HASH_KEY


def _root() -> Path:
    try:
        return find_root()
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from None


@click.group()
@click.version_option(package_name="gpu-glossary")
def main() -> None:
    """Tools for the GPU Glossary: run them from anywhere inside the repository."""


@main.command()
def check() -> None:
    """Validate every page of both languages; exit 1 on any error."""
    problems = run_check(_root())
    annotate = os.environ.get("GITHUB_ACTIONS") == "true"
    for problem in problems:
        click.echo(str(problem))
        if annotate:
            click.echo(github_annotation(problem))
    counts = group_by_severity(problems)
    errors, warnings = counts.get("error", 0), counts.get("warning", 0)
    click.echo(f"{errors} error(s), {warnings} warning(s)", err=True)
    sys.exit(1 if errors else 0)


@main.command()
@click.option("--sequential", is_flag=True, help="Build one language after the other (for comparison).")
@click.option("--site-url", envvar="SITE_URL", default=None, help="Public address of the site (default: mkdocs.yml's).")
def build(sequential: bool, site_url: str | None) -> None:
    """Build English and Chinese into site/ (strict: any warning fails the build)."""
    root = _root()
    click.echo("Building English and Chinese" + (" one after the other…" if sequential else " in parallel…"), err=True)
    try:
        result = build_site(root, parallel=not sequential, site_url=site_url)
    except BuildError as exc:
        raise click.ClickException(f"the build failed:\n{exc}") from None
    timings = ", ".join(f"{lang} {seconds:.1f} s" for lang, seconds in result.per_language.items())
    click.echo(f"Built {result.site_dir.relative_to(root)}/ in {result.seconds:.1f} s ({timings})", err=True)


@main.command()
@click.option("--port", default=8000, show_default=True, help="Port on 127.0.0.1.")
@click.option("--no-build", is_flag=True, help="Serve site/ as it is.")
def serve(port: int, no_build: bool) -> None:
    """Build both languages for this address and serve them on 127.0.0.1 (Ctrl-C stops)."""
    from .serve import make_server

    root = _root()
    address = f"http://127.0.0.1:{port}/"
    try:
        server = make_server(root / "site", port=port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}; try --port") from None
    if not no_build:
        click.echo("Building English and Chinese in parallel…", err=True)
        try:
            result = build_site(root, site_url=address)
        except BuildError as exc:
            raise click.ClickException(f"the build failed:\n{exc}") from None
        click.echo(f"Built in {result.seconds:.1f} s", err=True)
    click.echo(f"Serving English at {address} and Chinese at {address}zh/ (Ctrl-C stops)", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
def stamp(paths: tuple[Path, ...]) -> None:
    """Mark Chinese pages as translated from the current English page (after a hand review).

    Writes the English page's hash into each page's `source_hash`, so the page is no
    longer reported stale. Only do this when the translation matches the English text.
    """
    root = _root()
    glossary = load_glossary(root)
    failed = False
    for path in paths:
        path = path.resolve()
        try:
            lang, rel = path.relative_to(glossary.glossary_dir).as_posix().split("/", 1)
        except ValueError:
            click.echo(f"{path}: error: not a page under glossary/<lang>/", err=True)
            failed = True
            continue
        page = glossary.page(lang, rel)
        if lang == SOURCE_LANG or page is None:
            click.echo(f"{path}: error: not a translated page (English pages carry no hash)", err=True)
            failed = True
            continue
        if page.problems:
            click.echo(f"{page.problems[0]}", err=True)
            failed = True
            continue
        if glossary.page(SOURCE_LANG, rel) is None:
            click.echo(f"{page.display_path}: error: no English page glossary/{SOURCE_LANG}/{rel}", err=True)
            failed = True
            continue
        write_text_atomic(page.path, with_source_hash(page.text, glossary.source_hash_of(rel)))
        click.echo(f"{page.display_path}: {SOURCE_HASH_KEY} = {glossary.source_hash_of(rel)}")
    sys.exit(1 if failed else 0)


def with_source_hash(text: str, value: str) -> str:
    """The page text with `source_hash` set in its front matter, everything else untouched."""
    line = f"{SOURCE_HASH_KEY}: {value}"
    head, sep, rest = text.partition("\n---")
    if re.search(rf"^{SOURCE_HASH_KEY}\s*:.*$", head, flags=re.M):
        head = re.sub(rf"^{SOURCE_HASH_KEY}\s*:.*$", line, head, count=1, flags=re.M)
    else:
        head = head.rstrip("\n") + "\n" + line
    return head + sep + rest


if __name__ == "__main__":
    main()
