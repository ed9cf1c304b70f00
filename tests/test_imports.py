"""Imports point one way: core -> jobs -> site and CLI.

core: the page model and what every tool shares (page, glossary, render, markdown_ext,
sanitize, cache, terminology, images/names, page_limits, chinese, code_comments, zh_style,
reading_path, ...); jobs: what a command does (check, translate/, examples/, images/,
new_term); top: the site (site/) and the command line (cli). A module may import its own
layer or a lower one, never a higher one. Read from the source (every import statement,
those inside functions too), so a lazy import counts. A new module is placed in a layer
here before the suite passes.
"""

from __future__ import annotations

import ast
from pathlib import Path

from helpers import ROOT

PACKAGE = ROOT / "scripts" / "gpu_glossary"
CORE_MODULES = {
    "",  # the package's __init__
    "atomic",
    "cache",
    "chinese",
    "code_comments",
    "fast_yaml",
    "glossary",
    "highlight",
    "markdown_ext",
    "page",
    "page_limits",
    "reading_path",
    "render",
    "sanitize",
    "terminology",
    "zh_style",
}
JOB_MODULES = {"check", "new_term"}
JOB_PACKAGES = {"translate", "examples", "images"}
DEPENDENCY_FREE = {"images.names"}  # core, though it lives beside the image step
TOP_MODULES = {"cli"}
TOP_PACKAGES = {"site"}
RANK = {"core": 0, "unplaced": 0, "jobs": 1, "top": 2}  # an unplaced module fails its own test


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """`images/names.py` -> `images.names`; a package's `__init__.py` -> the package."""
    parts = path.relative_to(package).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(name: str) -> str:
    """The layer of a module given relative to the package (`site.build`, `page`)."""
    first = name.split(".")[0]
    if name in DEPENDENCY_FREE:
        return "core"
    if first in TOP_MODULES or first in TOP_PACKAGES:
        return "top"
    if first in JOB_MODULES or first in JOB_PACKAGES:
        return "jobs"
    if name in CORE_MODULES:
        return "core"
    return "unplaced"


def imported_modules(path: Path) -> set[str]:
    """Every gpu_glossary module the file imports, relative to the package (`site.build`)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from gpu_glossary import page` imports the module gpu_glossary.page
            names = [f"{node.module}.{alias.name}" for alias in node.names] if node.module == "gpu_glossary" else []
            names.append(node.module)
        else:
            continue
        for name in names:
            if name.startswith("gpu_glossary."):
                found.add(name.removeprefix("gpu_glossary."))
    return found


def upward_imports(package: Path = PACKAGE) -> list[str]:
    """`importer (layer) imports imported (layer)` for each import from a higher layer."""
    found = []
    for path in sorted(package.rglob("*.py")):
        importer = module_name(path, package)
        for imported in sorted(imported_modules(path)):
            if RANK[layer(imported)] > RANK[layer(importer)]:
                found.append(f"{importer} ({layer(importer)}) imports {imported} ({layer(imported)})")
    return found


def test_every_module_has_a_layer():
    assert [name for path in sorted(PACKAGE.rglob("*.py")) if layer(name := module_name(path)) == "unplaced"] == []


def test_no_module_imports_from_a_higher_layer():
    assert upward_imports() == []


def test_only_the_site_and_the_command_line_import_the_site():
    importers = [
        module_name(path)
        for path in sorted(PACKAGE.rglob("*.py"))
        if any(name == "site" or name.startswith("site.") for name in imported_modules(path))
    ]
    assert [name for name in importers if layer(name) != "top"] == []


def test_the_walk_sees_an_upward_import(tmp_path):
    """The check can fail: a core module that imports the site, lazily, is reported."""
    fake = tmp_path / "gpu_glossary"
    (fake / "site").mkdir(parents=True)
    (fake / "page.py").write_text("def f():\n    from gpu_glossary.site import build\n", encoding="utf-8")
    (fake / "check.py").write_text("from gpu_glossary import page, glossary\n", encoding="utf-8")
    (fake / "site" / "build.py").write_text("import gpu_glossary.check\n", encoding="utf-8")
    assert upward_imports(fake) == ["page (core) imports site (top)"]
