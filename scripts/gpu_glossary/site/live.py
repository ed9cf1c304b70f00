"""Live preview for `make site`: rebuild what an edit touched and tell open pages to reload.

Two threads: the watcher records every edit as it happens, and the builder rebuilds from
what was recorded, one build at a time. An edit made while a build runs (the first one
included: the watcher is in place before it starts) is built right after it, so no edit is
lost. Watching uses `watchfiles` (a maintained, Rust-backed watcher that batches the burst
of events one save makes), rather than MkDocs' own `mkdocs serve`: that serves one config,
while the glossary is two builds in one site. A build that fails keeps the last good site
online; its `path:line` messages (or, for any other failure, its traceback) go to the
terminal and, through the reload script, onto every open page, and the next edit builds
again.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpu_glossary.site.build import SiteBuildError
from gpu_glossary.site.preview import PreviewBuilder, languages_for

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


@dataclass
class BuildState:
    generation: int = 0
    errors: str = ""  # the failed build's messages; empty once a build succeeds


# Builds the site from the paths changed since the last good build (None: everything) and
# says what it rebuilt; raises SiteBuildError with the checker's messages.
Builder = Callable[[set[Path] | None], str]


class LivePreview:
    """Owns the site folder: builds it, rebuilds on edits, and answers 'has it changed?'."""

    def __init__(
        self,
        root: Path,
        site_dir: Path,
        site_url: str,
        log: Callable[[str], None] | None = None,
        builder: Builder | None = None,
    ):
        self.root = root
        self.site_dir = site_dir
        self.site_url = site_url
        self.builder = builder  # made at the first build (site_url may be set until then)
        self.state = BuildState()
        self._changed = threading.Condition()  # held to read or replace `state`
        self._work = threading.Condition()  # held to read or change the four fields below
        self._requested = False  # a build is due
        self._pending: set[Path] | None = set()  # what it must cover (None: everything)
        self._building = False
        self._everything_next = False  # after an unexpected failure, the next build is whole
        self.watching = threading.Event()  # set once the watcher sees the files: edits from then on count
        self._log = log or (lambda message: print(message, file=sys.stderr, flush=True))

    # -- what to build ---------------------------------------------------------------
    def request(self, changed: set[Path] | None) -> None:
        """Ask for a build covering `changed` (None: everything); it starts when the current one ends."""
        with self._work:
            if changed is None or self._pending is None or self._everything_next:
                self._pending = None
            else:
                self._pending |= changed
            self._requested = True
            self._work.notify_all()

    def _carry_over(self, changed: set[Path] | None) -> None:
        """Keep what a failed build covered for the next one: a build covers everything
        changed since the last good build."""
        with self._work:
            if changed is None or self._pending is None:
                self._pending = None
            else:
                self._pending |= changed

    def pending(self) -> set[Path] | None:
        """What the next build will cover, as recorded so far (None: everything)."""
        with self._work:
            return None if self._pending is None else set(self._pending)

    def wait_until_idle(self, timeout: float) -> bool:
        """Block until no build runs and none is due; False if `timeout` passed first."""
        with self._work:
            return self._work.wait_for(lambda: not self._requested and not self._building, timeout=timeout)

    # -- building -----------------------------------------------------------------
    def rebuild(self, changed: set[Path] | None = None) -> bool:
        """Build now, on this thread; publish the result to open pages. True if it succeeded."""
        if self.builder is None:
            self.builder = PreviewBuilder(self.root, self.site_dir, self.site_url)
        started = time.perf_counter()
        try:
            what = self.builder(changed)
            errors = ""
            self._log(f"Rebuilt {what} in {time.perf_counter() - started:.2f} s")
        except SiteBuildError as exc:
            errors = str(exc)
            self._log(f"The build failed; still serving the last good site:\n{errors}")
            self._carry_over(changed)
        except Exception:  # a bug or the disk (rmtree, os.replace): say so, keep watching
            errors = (
                "The live preview failed unexpectedly; it keeps watching, and the next edit rebuilds everything."
                f"\n\n{traceback.format_exc()}"
            )
            self._log(errors)
            with self._work:
                self._everything_next = True
        else:
            with self._work:
                self._everything_next = False
        with self._changed:
            self.state = BuildState(self.state.generation + 1, errors)
            self._changed.notify_all()
        return not errors

    def build_forever(self, stop: threading.Event) -> None:
        """Build what was requested, one build at a time, until `stop` is set (runs on its own thread)."""
        while True:
            with self._work:
                # A timeout, not one long wait: `stop` is an Event, which cannot wake this condition.
                if not self._work.wait_for(lambda: self._requested or stop.is_set(), timeout=0.2):
                    continue
                if stop.is_set():
                    self.close()
                    return
                changed, self._pending, self._requested = self._pending, set(), False
                self._building = True
            try:
                self.rebuild(changed)
            finally:
                with self._work:
                    self._building = False
                    self._work.notify_all()

    def start(self, stop: threading.Event, build_first: bool = True) -> None:
        """Watch for edits and build what each one touched; with `build_first`, build
        everything first, once the watcher is in place (so an edit made during that build
        is seen and built after it)."""
        threading.Thread(target=self.watch, args=(stop,), name="live-preview watcher", daemon=True).start()

        def build_once_watching() -> None:
            while not self.watching.wait(0.1):
                if stop.is_set():
                    return
            if build_first:
                self.request(None)
            self.build_forever(stop)

        threading.Thread(target=build_once_watching, name="live-preview builder", daemon=True).start()

    def close(self) -> None:
        """End what the builder keeps running (the preview's language processes)."""
        close = getattr(self.builder, "close", None)
        if close is not None:
            close()

    def wait_for_change(self, since: int, timeout: float) -> BuildState:
        """Block until a build newer than `since` finished (or `timeout`); the current state."""
        with self._changed:
            self._changed.wait_for(lambda: self.state.generation != since, timeout=timeout)
            return self.state

    def watch(self, stop: threading.Event) -> None:
        """Record each batch of edits as a build request until `stop` is set (runs on its own thread)."""
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
            changed = {Path(path) for _, path in changes}
            if languages_for(self.root, changed):
                names = ", ".join(sorted(path.name for path in changed)[:3])
                self._log(f"Changed: {names}{'…' if len(changed) > 3 else ''}")
                self.request(changed)
