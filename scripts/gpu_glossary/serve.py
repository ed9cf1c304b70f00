"""Serve the built site on 127.0.0.1 the way GitHub Pages does (root 404.html for misses)."""

from __future__ import annotations

import functools
import threading
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _SiteHandler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".md": "text/markdown; charset=utf-8",
                      ".txt": "text/plain; charset=utf-8", ".js": "text/javascript", ".json": "application/json"}

    def send_error(self, code, message=None, explain=None):
        page = Path(self.directory) / "404.html"
        if code == HTTPStatus.NOT_FOUND and page.is_file():
            body = page.read_bytes()
            self.send_response(code)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
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
