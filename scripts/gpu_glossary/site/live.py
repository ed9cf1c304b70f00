"""Live preview for `make site`: rebuild what an edit touched and tell open pages to reload.

Watching uses `watchfiles` (a maintained, Rust-backed watcher that batches the burst of
events one save makes), rather than MkDocs' own `mkdocs serve`: that serves one config,
while the glossary is two builds in one site, and an edit to a Chinese page needs only the
Chinese build. A build that fails keeps the last good site online; its `path:line`
messages go to the terminal and, through the reload script, onto every open page.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from gpu_glossary.glossary import LANGUAGES, SOURCE_LANG
from gpu_glossary.site.build import SiteBuildError, build_site

WATCHED = ("glossary", "overrides", "mkdocs.yml", "mkdocs.zh.yml")

# Served as /__live/reload.js and loaded by every page the live preview serves (a file of our
# own origin, so the pages' Content-Security-Policy lets it run). It long-polls the build state:
# a new good build reloads the page; a failed one shows its path:line messages over the page.
RELOAD_SCRIPT = """(function () {
  var generation = Number(document.currentScript.dataset.generation);
  function show(errors) {
    var box = document.getElementById("gg-live-errors");
    if (!errors) { if (box) box.remove(); return; }
    if (!box) {
      box = document.createElement("pre");
      box.id = "gg-live-errors";
      box.setAttribute("role", "alert");
      Object.assign(box.style, {position: "fixed", zIndex: 1000, inset: "auto 0 0 0", maxHeight: "50vh",
        overflow: "auto", margin: 0, padding: "1em", background: "#3d1212", color: "#ffdede",
        font: "13px/1.4 monospace", whiteSpace: "pre-wrap"});
      document.body.appendChild(box);
    }
    box.textContent = "The build failed; this is the last good build of the page.\\n\\n" + errors;
  }
  function poll(since) {
    fetch("/__live/state?since=" + since, {cache: "no-store"}).then(function (response) {
      return response.json();
    }).then(function (state) {
      if (state.generation !== generation && !state.errors) { location.reload(); return; }
      show(state.errors);
      poll(state.generation);
    }, function () { setTimeout(function () { poll(since); }, 1000); });
  }
  poll(-1);
})();
"""


def languages_for(root: Path, changed: set[Path]) -> tuple[str, ...]:
    """Which builds an edit affects: a translation's own files rebuild that language only;
    English pages, images, shared data, theme and base config rebuild every language
    (translations fall back to English pages and link to them)."""
    touched: set[str] = set()
    for path in changed:
        try:
            parts = path.resolve().relative_to(root.resolve()).parts
        except ValueError:
            continue
        if not parts or parts[0] == "site" or any(part.startswith(".") for part in parts):
            continue
        if (
            parts[:2]
            and parts[0] == "glossary"
            and len(parts) > 1
            and parts[1] in LANGUAGES
            and parts[1] != SOURCE_LANG
        ):
            touched.add(parts[1])
        elif parts[0] == "mkdocs.zh.yml":
            touched.add("zh")
        else:
            touched.update(LANGUAGES)
    return tuple(lang for lang in LANGUAGES if lang in touched)


@dataclass
class BuildState:
    generation: int = 0
    errors: str = ""  # the failed build's messages; empty once a build succeeds


class LivePreview:
    """Owns the site folder: builds it, rebuilds on edits, and answers 'has it changed?'."""

    def __init__(self, root: Path, site_dir: Path, site_url: str, log=None):
        self.root = root
        self.site_dir = site_dir
        self.site_url = site_url
        self.state = BuildState()
        self._changed = threading.Condition()
        self.watching = threading.Event()  # set once the watcher sees the files: edits from then on count
        self._log = log or (lambda message: print(message, file=sys.stderr, flush=True))

    def rebuild(self, languages: tuple[str, ...] = LANGUAGES) -> bool:
        started = time.perf_counter()
        try:
            build_site(self.root, site_dir=self.site_dir, site_url=self.site_url, languages=languages)
            errors = ""
            self._log(f"Rebuilt {' and '.join(languages)} in {time.perf_counter() - started:.1f} s")
        except SiteBuildError as exc:
            errors = str(exc)
            self._log(f"The build failed; still serving the last good site:\n{errors}")
        with self._changed:
            self.state = BuildState(self.state.generation + 1, errors)
            self._changed.notify_all()
        return not errors

    def wait_for_change(self, since: int, timeout: float) -> BuildState:
        """Block until a build newer than `since` finished (or `timeout`); the current state."""
        with self._changed:
            self._changed.wait_for(lambda: self.state.generation != since, timeout=timeout)
            return self.state

    def watch(self, stop: threading.Event) -> None:
        """Rebuild after each batch of edits until `stop` is set (runs on its own thread)."""
        import watchfiles

        paths = [self.root / name for name in WATCHED if (self.root / name).exists()]
        # yield_on_timeout: the first (empty) batch arrives once the watcher is in place.
        for changes in watchfiles.watch(
            *paths,
            stop_event=stop,
            debounce=300,
            step=50,
            rust_timeout=200,
            yield_on_timeout=True,
            watch_filter=lambda change, path: not Path(path).name.startswith("."),
        ):
            self.watching.set()
            languages = languages_for(self.root, {Path(path) for _, path in changes})
            if languages:
                names = ", ".join(sorted(Path(path).name for _, path in changes)[:3])
                self._log(f"Changed: {names}{'…' if len(changes) > 3 else ''}")
                self.rebuild(languages)
