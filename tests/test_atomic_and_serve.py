import os
import urllib.error
import urllib.request

import pytest

from gpu_glossary.atomic import write_text_atomic
from gpu_glossary.serve import serve_in_background


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
