"""Every ```cuda block on every page, both languages, compiles with nvcc.

Runnable examples compile with their own flags (`<!-- example: flags=… -->`), as
`gpu-glossary examples run` builds them on a GPU machine; linking needs the driver, so
here each block is compiled only (-c). A block that is deliberately a fragment says so
with `<!-- nvcc: skip -->` on the line above its fence; those are listed, never silently ignored.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gpu_glossary.examples.runner import find_nvcc
from gpu_glossary.examples.model import DEFAULT_ARCH, DEFAULT_NVCC_FLAGS, page_examples
from gpu_glossary.glossary import load_glossary

from conftest import ROOT

SKIP_MARKER = "nvcc: skip"
COMPILED_CACHE = "gpu-glossary/cuda-blocks-compiled"
# NVIDIA's nvml.h, from the nvidia-nvml-dev wheel, for toolkits installed without it.
NVML_INCLUDE = Path(sysconfig.get_paths()["purelib"]) / "nvidia" / "cu13" / "include"


def cuda_blocks():
    """(page, fence, nvcc flags) of every ```cuda block of both languages."""
    glossary = load_glossary(ROOT)
    for pages in glossary.pages.values():
        for page in pages.values():
            examples = {e.fence.line: e for e in page_examples(page)[0] if e.kind == "cuda"}
            for fence in page.fences():
                if fence.lang == "cuda":
                    example = examples.get(fence.line)
                    yield page, fence, example.compile_flags() if example else [*DEFAULT_NVCC_FLAGS, DEFAULT_ARCH]


def test_pages_have_cuda_blocks_to_compile():
    assert sum(1 for _ in cuda_blocks()) >= 4


def test_every_cuda_block_compiles(tmp_path, request):
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.fail("nvcc not found on PATH or in /usr/local/cuda/bin: install the CUDA toolkit to check CUDA code")
    # The Chinese pages carry the English code byte for byte: compile each distinct block once.
    distinct: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for page, fence, flags in cuda_blocks():
        if fence.marker != SKIP_MARKER:
            distinct.setdefault((fence.code, tuple(flags)), []).append(f"{page.display_path}:{fence.line}")
    includes = [f"-I{NVML_INCLUDE}"] if (NVML_INCLUDE / "nvml.h").is_file() else []
    # A block that compiled with this very nvcc, these flags and this code compiles again:
    # pytest's cache (.pytest_cache/) remembers successes, so a re-run compiles what changed.
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    def key(code, flags):
        return hashlib.sha256("\0".join([version, *includes, *flags, code]).encode("utf-8")).hexdigest()
    compiled = set(request.config.cache.get(COMPILED_CACHE, [])) if request.config.cache else set()
    todo = {block: locations for block, locations in distinct.items() if key(*block) not in compiled}

    def compile_block(item):
        index, ((code, flags), locations) = item
        source = tmp_path / f"block{index}.cu"
        source.write_text(code + "\n", encoding="utf-8")
        command = [nvcc, *flags, *includes, "-c", str(source), "-o", str(tmp_path / f"block{index}.o")]
        result = subprocess.run(command, capture_output=True, text=True)
        return None if result.returncode == 0 else f"{', '.join(locations)}: does not compile:\n{result.stderr.strip()}"

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(compile_block, enumerate(todo.items())))
    if request.config.cache:
        now_good = {key(*block) for block, failure in zip(todo, results) if failure is None}
        current = {key(*block) for block in distinct}  # forget blocks no page has any more
        request.config.cache.set(COMPILED_CACHE, sorted((compiled | now_good) & current))
    failures = [f for f in results if f]
    assert not failures, "\n\n".join(failures)


def test_skipped_blocks_are_declared_fragments():
    """The skip marker is the only way out, and each use is visible here."""
    skipped = [f"{page.display_path}:{fence.line}" for page, fence, _ in cuda_blocks() if fence.marker == SKIP_MARKER]
    assert len(skipped) <= 4, f"too many uncompiled CUDA fragments: {skipped}"
