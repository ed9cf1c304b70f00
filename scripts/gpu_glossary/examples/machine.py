"""What a run is recorded on: the machine's GPUs (nvidia-smi), how they are linked
(`nvidia-smi topo -m`), the driver, nvcc's CUDA release, and where NCCL is.

Everything here only reads: nothing changes a GPU's settings.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

NO_GPU = "CPU only (no GPU)"
_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_GPU_COLUMN = re.compile(r"^GPU(\d+)$")


@dataclass(frozen=True)
class Gpu:
    index: int  # nvidia-smi's, which is CUDA's with CUDA_DEVICE_ORDER=PCI_BUS_ID
    name: str
    compute_capability: str


@dataclass(frozen=True)
class Machine:
    """The GPUs a run may use (the first `--gpus` of the machine), and the software around them."""

    gpus: tuple[Gpu, ...]
    driver: str
    cuda: str
    nvcc: str | None
    links: dict[tuple[int, int], str] = field(default_factory=dict)  # (GPU i, GPU j) → "NV18", "SYS" …
    installed: int | None = None  # GPUs in the machine, whatever --gpus leaves to the run (None: len(gpus))

    @property
    def gpus_installed(self) -> int:
        return len(self.gpus) if self.installed is None else self.installed

    @property
    def has_gpu(self) -> bool:
        return bool(self.gpus)

    @property
    def device(self) -> str:
        """The machine in words: 'NVIDIA H100 80GB HBM3', '4× NVIDIA H100 80GB HBM3'."""
        return self.label(len(self.gpus)) if self.gpus else NO_GPU

    def label(self, count: int) -> str:
        """The device key of a run on the first `count` GPUs."""
        if not self.gpus:
            return NO_GPU
        names = [gpu.name for gpu in self.gpus[:count]]
        if count == 1:
            return names[0]
        return f"{count}× {names[0]}" if len(set(names)) == 1 else " + ".join(names)

    def link(self, count: int) -> str:
        """The kinds of link between the first `count` GPUs, as `nvidia-smi topo -m` names them ('NV18')."""
        kinds = {self.links[(i, j)] for i in range(count) for j in range(count) if i != j and (i, j) in self.links}
        return ", ".join(sorted(kinds, key=_natural))

    def visible_devices(self, count: int) -> str:
        """CUDA_VISIBLE_DEVICES for a run on the first `count` GPUs."""
        return ",".join(str(gpu.index) for gpu in self.gpus[:count])

    def limited_to(self, count: int) -> Machine:
        return Machine(self.gpus[:count], self.driver, self.cuda, self.nvcc, self.links, self.gpus_installed)


def _natural(text: str) -> tuple:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def find_nvcc() -> str | None:
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def _output_of(command: list[str]) -> str | None:
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None


def parse_gpus(query: str) -> tuple[tuple[Gpu, ...], str]:
    """The GPUs and driver from `nvidia-smi --query-gpu=index,name,compute_cap,driver_version --format=csv,noheader`."""
    gpus, driver = [], ""
    for line in query.strip().split("\n"):
        fields = [part.strip() for part in line.split(",")]
        if len(fields) == 4 and fields[0].isdigit():
            gpus.append(Gpu(int(fields[0]), fields[1], fields[2]))
            driver = driver or fields[3]
    return tuple(sorted(gpus, key=lambda gpu: gpu.index)), driver


def parse_topology(text: str) -> dict[tuple[int, int], str]:
    """The GPU-to-GPU cells of `nvidia-smi topo -m` ('NV18', 'SYS', 'PIX' …), by pair of GPU indices."""
    lines = [_ESCAPE.sub("", line) for line in text.split("\n")]
    at = next((i for i, line in enumerate(lines) if "GPU0" in line.split()), None)
    if at is None:
        return {}
    columns = []
    for word in lines[at].split():  # GPU and NIC columns come first, then CPU Affinity and the rest
        if not re.match(r"^(GPU|NIC)\d+$", word):
            break
        columns.append(word)
    links: dict[tuple[int, int], str] = {}
    for line in lines[at + 1 :]:
        cells = line.split()
        row = _GPU_COLUMN.match(cells[0]) if cells else None
        if row is None or len(cells) < len(columns) + 1:
            continue
        for column, value in zip(columns, cells[1 : len(columns) + 1], strict=True):
            other = _GPU_COLUMN.match(column)
            if other and value != "X":
                links[(int(row.group(1)), int(other.group(1)))] = value
    return links


def describe_machine() -> Machine:
    """This machine's GPUs, driver and links (from nvidia-smi), and nvcc's CUDA release."""
    nvcc = find_nvcc()
    version = _output_of([nvcc, "--version"]) if nvcc else None
    release = re.search(r"release (\d+\.\d+)", version or "")
    cuda = release.group(1) if release else ""
    smi = shutil.which("nvidia-smi")
    query = "index,name,compute_cap,driver_version"
    listed = _output_of([smi, f"--query-gpu={query}", "--format=csv,noheader"]) if smi else None
    gpus, driver = parse_gpus(listed or "")
    links = parse_topology(_output_of([smi, "topo", "-m"]) or "") if smi and len(gpus) > 1 else {}
    return Machine(gpus, driver, cuda, nvcc, links)


def find_nccl(python: str) -> Path | None:
    """NCCL's folder (include/nccl.h, lib/libnccl.so*) in `python`'s packages: PyTorch's wheels
    bring it as nvidia-nccl-cu13, where there may be no system NCCL at all."""
    paths = _output_of([python, "-c", "import sys; print('\\n'.join(sys.path))"]) or ""
    for entry in paths.split("\n"):
        folder = Path(entry.strip() or ".") / "nvidia" / "nccl"
        if entry.strip() and (folder / "include" / "nccl.h").is_file() and any((folder / "lib").glob("libnccl.so*")):
            return folder
    return None
