"""Every ```cuda block on every page, both languages, compiles with nvcc.

A block that is deliberately a fragment says so with `<!-- nvcc: skip -->` on the line
above its fence; those are listed, never silently ignored.
"""

from __future__ import annotations

import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gpu_glossary.glossary import load_glossary

from conftest import ROOT

SKIP_MARKER = "nvcc: skip"


def cuda_blocks():
    glossary = load_glossary(ROOT)
    for lang, pages in glossary.pages.items():
        for page in pages.values():
            for fence in page.fences():
                if fence.lang == "cuda":
                    yield page, fence


def find_nvcc() -> str:
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.fail("nvcc not found on PATH or in /usr/local/cuda/bin: install the CUDA toolkit to check CUDA code")


def test_pages_have_cuda_blocks_to_compile():
    assert sum(1 for _ in cuda_blocks()) >= 4


def test_every_cuda_block_compiles(tmp_path):
    nvcc = find_nvcc()
    blocks = [(page, fence) for page, fence in cuda_blocks() if fence.marker != SKIP_MARKER]

    def compile_block(item):
        index, (page, fence) = item
        source = tmp_path / f"block{index}.cu"
        source.write_text(fence.code + "\n", encoding="utf-8")
        result = subprocess.run([nvcc, "-std=c++17", "-arch=sm_90", "-c", str(source), "-o", str(tmp_path / f"block{index}.o")],
                                capture_output=True, text=True)
        return None if result.returncode == 0 else f"{page.display_path}:{fence.line}: does not compile:\n{result.stderr.strip()}"

    with ThreadPoolExecutor(max_workers=2) as pool:
        failures = [f for f in pool.map(compile_block, enumerate(blocks)) if f]
    assert not failures, "\n\n".join(failures)


def test_skipped_blocks_are_declared_fragments():
    """The skip marker is the only way out, and each use is visible here."""
    skipped = [f"{page.display_path}:{fence.line}" for page, fence in cuda_blocks() if fence.marker == SKIP_MARKER]
    assert len(skipped) <= 4, f"too many uncompiled CUDA fragments: {skipped}"
