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
from helpers import ROOT

from gpu_glossary.cache import cache_dir
from gpu_glossary.examples.blocks import DEFAULT_ARCH, DEFAULT_NVCC_FLAGS, page_examples
from gpu_glossary.examples.machine import find_nvcc
from gpu_glossary.glossary import load_glossary

SKIP_MARKER = "nvcc: skip"
COMPILED_CACHE = "nvcc-compiled"
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


def compiler_identity(nvcc: str, includes: list[str]) -> str:
    """A hash of everything besides the code and flags that decides whether a block compiles:
    nvcc's and the host compiler's versions and the extra headers' bytes."""
    parts = [subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout]
    parts.append(subprocess.run(["c++", "--version"], capture_output=True, text=True).stdout)
    parts += [(NVML_INCLUDE / "nvml.h").read_text(encoding="utf-8", errors="replace") for _ in includes]
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def test_every_cuda_block_compiles(tmp_path):
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.fail("nvcc not found on PATH or in /usr/local/cuda/bin: install the CUDA toolkit to check CUDA code")
    # The Chinese pages carry the English code byte for byte: compile each distinct block once.
    distinct: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for page, fence, flags in cuda_blocks():
        if fence.marker != SKIP_MARKER:
            distinct.setdefault((fence.code, tuple(flags)), []).append(f"{page.display_path}:{fence.line}")
    includes = [f"-I{NVML_INCLUDE}"] if (NVML_INCLUDE / "nvml.h").is_file() else []
    # Like ccache: a block that compiled with this very compiler, these flags and this code
    # compiles again, so a success is remembered in the on-disk cache (gpu_glossary.cache,
    # ~/.cache/gpu-glossary/) and a re-run compiles only what changed. Failures are never kept.
    identity = compiler_identity(nvcc, includes)
    folder = cache_dir()

    def marker(code: str, flags: tuple[str, ...]) -> Path | None:
        # Not the include paths themselves: they name this checkout's .venv, and a fresh clone
        # (CI) would miss every entry; the identity already covers the headers' bytes.
        digest = hashlib.sha256("\0".join([identity, *flags, code]).encode("utf-8")).hexdigest()
        return folder / COMPILED_CACHE / digest if folder else None

    markers = {block: marker(*block) for block in distinct}
    todo = {block: places for block, places in distinct.items() if not (markers[block] and markers[block].exists())}

    def compile_block(item):
        index, ((code, flags), locations) = item
        source = tmp_path / f"block{index}.cu"
        source.write_text(code + "\n", encoding="utf-8")
        command = [nvcc, *flags, *includes, "-c", str(source), "-o", str(tmp_path / f"block{index}.o")]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            return f"{', '.join(locations)}: does not compile:\n{result.stderr.strip()}"
        remembered = markers[(code, flags)]
        if remembered:
            try:
                remembered.parent.mkdir(parents=True, exist_ok=True)
                remembered.touch()
            except OSError:
                pass  # a read-only cache only costs speed
        return None

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        failures = [f for f in pool.map(compile_block, enumerate(todo.items())) if f]
    assert not failures, "\n\n".join(failures)


def test_skipped_blocks_are_declared_fragments():
    """The skip marker is the only way out, and each use is visible here."""
    skipped = [f"{page.display_path}:{fence.line}" for page, fence, _ in cuda_blocks() if fence.marker == SKIP_MARKER]
    assert len(skipped) <= 4, f"too many uncompiled CUDA fragments: {skipped}"
