"""Serve the built site on 127.0.0.1 the way GitHub Pages does.

Like Pages: misses get the root `404.html`, text responses (HTML, CSS, JavaScript,
JSON, SVG, Markdown, plain text, XML) are gzip-compressed for clients that accept it,
so bytes measured against this server are the bytes readers download, and every response
may be cached for ten minutes (`Cache-Control: max-age=600`), so a reader's second page
reuses the theme's scripts and styles, and connections stay open for the next request
(HTTP/1.1 keep-alive). The live preview caches nothing: an edit shows on the next load.
Every body that may be compressed goes through `_SiteHandler.send_bytes`, the one place to
hook into (for example to add a script to HTML) before compression.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import io
import json
import threading
import urllib.parse
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from gpu_glossary.site.live import LivePreview

_COMPRESSIBLE = ("text/", "application/javascript", "application/json", "application/xml", "image/svg+xml")
LIVE_PREFIX = "/__live/"  # the live preview's own addresses (not part of the site)
GZIP_LEVEL = 6  # zlib's default; what most servers and CDNs use
PAGES_CACHE_CONTROL = "max-age=600"  # what GitHub Pages sends with every file
# What the live preview answers before its first build has written a site (the reload script,
# added to every page it serves, loads the site once the build is done).
FIRST_BUILD_PAGE = (
    b"<!doctype html><html lang=en><head><meta charset=utf-8><title>Building the site</title></head>"
    b"<body><p>The site is being built; this page loads it when the build is done.</p></body></html>"
)


def compressible(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower().startswith(_COMPRESSIBLE)


def accepts_gzip(accept_encoding: str | None) -> bool:
    """True if an Accept-Encoding header allows gzip (`gzip;q=0` refuses it)."""
    for item in (accept_encoding or "").split(","):
        name, _, params = item.partition(";")
        if name.strip().lower() in ("gzip", "*"):
            params = params.strip().lower()
            try:
                return not params.startswith("q=") or float(params[2:]) > 0
            except ValueError:
                return False
    return False


class _SiteHandler(SimpleHTTPRequestHandler):
    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".md": "text/markdown; charset=utf-8",
        ".txt": "text/plain; charset=utf-8",
        ".js": "text/javascript",
        ".json": "application/json",
    }
    # Keep-alive, as Pages and every CDN: a browser fetches a page's files over a few open
    # connections. HTTP/1.0 (the standard library's default) closes each after one response,
    # so every file would cost a new connection and a new thread.
    protocol_version = "HTTP/1.1"
    live: LivePreview | None = None  # when `make site` watches for edits
    _cache_control_sent = False  # by this response, so far (end_headers adds the default otherwise)

    def do_GET(self) -> None:
        if self.live is not None and self.path.startswith(LIVE_PREFIX):
            self._send_live(self.live)
        else:
            super().do_GET()

    def _send_live(self, live: LivePreview) -> None:
        """The reload script, or (long poll) the build state once it differs from `since`."""
        from gpu_glossary.site.live import RELOAD_SCRIPT

        url = urllib.parse.urlsplit(self.path)
        if url.path == LIVE_PREFIX + "reload.js":
            body, content_type = RELOAD_SCRIPT.encode("utf-8"), "text/javascript"
        elif url.path == LIVE_PREFIX + "state":
            since = urllib.parse.parse_qs(url.query).get("since", ["-1"])[0]
            state = live.wait_for_change(int(since) if since.lstrip("-").isdigit() else -1, timeout=25)
            body, content_type = json.dumps(state.__dict__).encode("utf-8"), "application/json"
        else:
            self.send_error(HTTPStatus.NOT_FOUND)
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the page reloaded or closed while polling
            self.wfile.write(self.send_bytes(HTTPStatus.OK, body, content_type, cache=False).getvalue())

    def send_bytes(self, code: int, body: bytes, content_type: str, cache: bool = True) -> io.BytesIO:
        """Send status and headers for `body`, gzipped when both sides allow; return what to write."""
        if self.live is not None and content_type.startswith("text/html"):
            tag = f'<script src="{LIVE_PREFIX}reload.js" data-generation="{self.live.state.generation}" defer></script>'
            body = body.replace(b"</body>", tag.encode("utf-8") + b"</body>", 1)
            cache = False
        text = compressible(content_type)
        if text and body and accepts_gzip(self.headers.get("Accept-Encoding")):
            body = gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)
            encoding = "gzip"
        else:
            encoding = None
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if encoding:
            self.send_header("Content-Encoding", encoding)
        if text:
            self.send_header("Vary", "Accept-Encoding")
        if not cache:
            self.send_header("Cache-Control", "no-store")
        self.end_headers()
        return io.BytesIO(body)

    def send_header(self, keyword: str, value: str) -> None:
        if keyword.lower() == "cache-control":
            self._cache_control_sent = True
        super().send_header(keyword, value)

    def end_headers(self) -> None:
        """Every response says how long it may be cached, unless it already said (no-store)."""
        if not self._cache_control_sent:
            self.send_header("Cache-Control", "no-store" if self.live is not None else PAGES_CACHE_CONTROL)
        self._cache_control_sent = False  # one handler answers every request of a kept-alive connection
        super().end_headers()

    def send_head(self) -> io.BytesIO | BinaryIO | None:
        path = self._file_to_send()
        if path is None:
            return super().send_head()  # redirects, directory listings, misses, non-text files
        return self.send_bytes(HTTPStatus.OK, path.read_bytes(), self.guess_type(str(path)))

    def _file_to_send(self) -> Path | None:
        """The file a GET would send if it is text we may compress, else None."""
        url_path = urllib.parse.urlsplit(self.path).path
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not url_path.endswith("/"):
                return None  # the parent class redirects to the URL with a slash
            path = path / "index.html"
        elif url_path.endswith("/"):
            return None
        if not path.is_file():
            return None
        return path if compressible(self.guess_type(str(path))) else None

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = Path(self.directory) / "404.html"
        if code == HTTPStatus.NOT_FOUND and (page.is_file() or self.live is not None):
            html = page.read_bytes() if page.is_file() else FIRST_BUILD_PAGE  # no site yet: it is being built
            body = self.send_bytes(code, html, "text/html; charset=utf-8")
            if self.command != "HEAD":
                self.wfile.write(body.getvalue())
            return
        super().send_error(code, message, explain)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: one line per request is noise here
        pass


def make_server(
    site_dir: Path, host: str = "127.0.0.1", port: int = 8000, live: LivePreview | None = None
) -> ThreadingHTTPServer:
    """A server for `site_dir`; with `live` (a LivePreview), pages reload after each rebuild."""
    handler_class = type("_LiveSiteHandler", (_SiteHandler,), {"live": live}) if live is not None else _SiteHandler
    handler = functools.partial(handler_class, directory=str(site_dir))
    return ThreadingHTTPServer((host, port), handler)


def serve_in_background(
    site_dir: Path, host: str = "127.0.0.1", port: int = 0, live: LivePreview | None = None
) -> ThreadingHTTPServer:
    """Start a server on a thread (port 0 picks a free port); call .shutdown() to stop it."""
    return run_in_background(make_server(site_dir, host, port, live))


def run_in_background(server: ThreadingHTTPServer) -> ThreadingHTTPServer:
    """Serve `server` on a daemon thread. A short poll interval: .shutdown() returns within
    50 ms instead of serve_forever's 0.5 s (tests start and stop many servers)."""
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server
