import gzip
import os
import urllib.error
import urllib.request

import pytest

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.site.serve import serve_in_background


def test_atomic_write_replaces_whole_file_and_keeps_mode(tmp_path):
    target = tmp_path / "page.md"
    target.write_text("old", encoding="utf-8")
    os.chmod(target, 0o640)
    write_text_atomic(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓"
    assert target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["page.md"]


def test_atomic_write_interrupted_leaves_old_file(tmp_path, monkeypatch):
    target = tmp_path / "page.md"
    target.write_text("old", encoding="utf-8")

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_text_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["page.md"]


def test_server_answers_misses_with_the_root_404_page(tmp_path):
    (tmp_path / "404.html").write_text("<h1>not here</h1>", encoding="utf-8")
    (tmp_path / "index.md").write_text("# twin", encoding="utf-8")
    server = serve_in_background(tmp_path)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with urllib.request.urlopen(base + "index.md") as response:
            assert response.headers["Content-Type"].startswith("text/markdown")
        with pytest.raises(urllib.error.HTTPError) as miss:
            urllib.request.urlopen(base + "zh/missing/")
        assert miss.value.code == 404 and b"not here" in miss.value.read()
    finally:
        server.shutdown()


def _get(url: str, accept_encoding: str | None = None, method: str = "GET"):
    request = urllib.request.Request(url, method=method)
    if accept_encoding:
        request.add_header("Accept-Encoding", accept_encoding)
    try:
        response = urllib.request.urlopen(request)
    except urllib.error.HTTPError as error:
        response = error
    with response:
        return response.status, response.headers, response.read()


def test_server_gzips_text_like_github_pages(tmp_path):
    page = ("<!doctype html><title>warp</title>" + "<p>A warp is 32 threads.</p>" * 200).encode()
    (tmp_path / "device-software" / "warp").mkdir(parents=True)
    (tmp_path / "device-software" / "warp" / "index.html").write_bytes(page)
    (tmp_path / "search.json").write_text('{"docs": ["线程束"]}' * 50, encoding="utf-8")
    (tmp_path / "diagram.png").write_bytes(b"\x89PNG" + bytes(2000))
    (tmp_path / "404.html").write_text("<h1>not here</h1>" * 50, encoding="utf-8")
    server = serve_in_background(tmp_path)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        status, headers, body = _get(base + "device-software/warp/", "gzip, deflate, br, zstd")
        assert status == 200 and headers["Content-Encoding"] == "gzip" and headers["Vary"] == "Accept-Encoding"
        assert int(headers["Content-Length"]) == len(body) < len(page) / 5
        assert gzip.decompress(body) == page
        assert headers["Cache-Control"] == "max-age=600"  # as Pages: a second page reuses the theme's files
        status, headers, body = _get(base + "search.json", "gzip")
        assert headers["Content-Encoding"] == "gzip" and headers["Content-Type"] == "application/json"
        assert gzip.decompress(body) == (tmp_path / "search.json").read_bytes()
        status, headers, body = _get(base + "device-software/warp/")  # a client that asks for nothing
        assert headers["Content-Encoding"] is None and body == page
        status, headers, body = _get(base + "device-software/warp/", "gzip;q=0, identity")
        assert headers["Content-Encoding"] is None and body == page
        status, headers, body = _get(base + "diagram.png", "gzip")  # already compressed formats go as they are
        assert headers["Content-Encoding"] is None and body == (tmp_path / "diagram.png").read_bytes()
        assert headers["Cache-Control"] == "max-age=600"
        status, headers, body = _get(base + "zh/missing/", "gzip")
        assert status == 404 and headers["Content-Encoding"] == "gzip"
        assert gzip.decompress(body) == (tmp_path / "404.html").read_bytes()
        status, headers, body = _get(base + "device-software/warp/", "gzip", method="HEAD")
        assert status == 200 and headers["Content-Encoding"] == "gzip" and body == b""
        status, headers, _ = _get(base + "device-software/warp", "gzip")  # redirected to the slash, then gzipped
        assert status == 200 and headers["Content-Encoding"] == "gzip"
    finally:
        server.shutdown()


def test_server_keeps_the_connection_open_for_the_next_request(tmp_path):
    """One connection carries a page, a redirect, a miss, a binary file and a HEAD, in turn."""
    import http.client

    (tmp_path / "warp").mkdir()
    (tmp_path / "warp" / "index.html").write_text("<p>warp</p>", encoding="utf-8")
    (tmp_path / "404.html").write_text("<h1>not here</h1>", encoding="utf-8")
    (tmp_path / "diagram.png").write_bytes(b"\x89PNG" + bytes(2000))
    server = serve_in_background(tmp_path)
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        answers, sockets = [], []
        for method, path in [
            ("GET", "/warp/"),
            ("GET", "/warp"),
            ("GET", "/missing/"),
            ("GET", "/diagram.png"),
            ("HEAD", "/warp/"),
            ("GET", "/warp/"),
        ]:
            connection.request(method, path, headers={"Accept-Encoding": "gzip"})
            response = connection.getresponse()
            answers.append((response.status, response.version, response.will_close, len(response.read())))
            sockets.append(connection.sock)  # None once the server has closed the connection
        assert sockets[0] is not None and all(s is sockets[0] for s in sockets)  # the first request's connection
        assert [status for status, *_ in answers] == [200, 301, 404, 200, 200, 200]
        assert all(version == 11 and not closes for _, version, closes, _ in answers), answers
        assert answers[3][3] == 2004 and answers[4][3] == 0
    finally:
        connection.close()
        server.shutdown()
