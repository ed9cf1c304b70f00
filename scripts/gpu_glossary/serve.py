"""Serve the built site on 127.0.0.1 the way GitHub Pages does.

Like Pages: misses get the root `404.html`, and text responses (HTML, CSS, JavaScript,
JSON, SVG, Markdown, plain text, XML) are gzip-compressed for clients that accept it,
so bytes measured against this server are the bytes readers download. Every body that
may be compressed goes through `_SiteHandler.send_bytes`, the one place to hook into
(for example to add a script to HTML) before compression.
"""

from __future__ import annotations

import functools
import gzip
import io
import threading
import urllib.parse
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_COMPRESSIBLE = ("text/", "application/javascript", "application/json", "application/xml", "image/svg+xml")
GZIP_LEVEL = 6  # zlib's default; what most servers and CDNs use


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
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".md": "text/markdown; charset=utf-8",
                      ".txt": "text/plain; charset=utf-8", ".js": "text/javascript", ".json": "application/json"}

    def send_bytes(self, code: int, body: bytes, content_type: str) -> io.BytesIO:
        """Send status and headers for `body`, gzipped when both sides allow; return what to write."""
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
        self.end_headers()
        return io.BytesIO(body)

    def send_head(self):
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

    def send_error(self, code, message=None, explain=None):
        page = Path(self.directory) / "404.html"
        if code == HTTPStatus.NOT_FOUND and page.is_file():
            body = self.send_bytes(code, page.read_bytes(), "text/html; charset=utf-8")
            if self.command != "HEAD":
                self.wfile.write(body.getvalue())
            return
        super().send_error(code, message, explain)

    def log_message(self, format, *args):  # quiet: one line per request is noise here
        pass


def make_server(site_dir: Path, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    handler = functools.partial(_SiteHandler, directory=str(site_dir))
    return ThreadingHTTPServer((host, port), handler)


def serve_in_background(site_dir: Path, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """Start a server on a thread (port 0 picks a free port); call .shutdown() to stop it."""
    server = make_server(site_dir, host, port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
