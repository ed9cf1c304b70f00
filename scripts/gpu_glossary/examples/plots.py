"""Charts drawn from recorded runs: the measured roofline, the wave-quantization steps and the
all-reduce bus bandwidth on 2 and 4 GPUs.

Each chart reads one example's recorded output in `glossary/runs.yml` (the all-reduce chart: its
runs on each GPU count), so re-running the examples on a GPU and then `gpu-glossary plots` redraws
them; a test fails when a committed chart no longer matches its run. The charts are plain SVG in the palette of
`glossary/images/PALETTE.md` (light, dark and Chinese variants): nothing loads at page view.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from html import escape
from pathlib import Path

from gpu_glossary.examples.runs import Record, Runs
from gpu_glossary.images.links import make_dark_svg

FONT = "system-ui, -apple-system, 'Segoe UI', 'Noto Sans', 'Noto Sans CJK SC', sans-serif"
TEXT, MUTED, GRID = "#1f2328", "#57606a", "#8c959f"
MEMORY, COMPUTE, SCHEDULING = "#2f5fb3", "#1b7f6b", "#c0620c"
WIDTH, HEIGHT = 880, 560
LEFT, RIGHT, TOP, BOTTOM = 96, 40, 70, 480  # plot area


class PlotError(ValueError):
    """A recorded output lacks what its chart needs (the example's output format changed)."""


@dataclass(frozen=True)
class Chart:
    name: str  # glossary/images/<name>.svg
    example_id: str
    devices: tuple[str, ...]  # whose recorded runs it draws, in this order
    draw: Callable[[list[Record], str], str]  # (records, lang) -> light SVG


def _one(draw: Callable[[Record, str], str]) -> Callable[[list[Record], str], str]:
    """A chart of one device's run."""
    return lambda records, lang: draw(records[0], lang)


class _Canvas:
    """An SVG drawing with data coordinates mapped onto the plot area."""

    def __init__(self, title: str, desc: str, lang: str):
        self.parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
            f'xml:lang="{lang}" font-family="{FONT}">',
            f"<title>{escape(title)}</title>",
            f"<desc>{escape(desc)}</desc>",
            f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
            f'<text x="{WIDTH / 2}" y="32" font-size="16" fill="{TEXT}" text-anchor="middle" font-weight="bold">'
            f"{escape(title)}</text>",
        ]

    def text(
        self,
        x: float,
        y: float,
        label: str,
        size: int = 14,
        colour: str = MUTED,
        anchor: str = "middle",
        extra: str = "",
    ) -> None:
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{colour}" text-anchor="{anchor}"{extra}>'
            f"{escape(label)}</text>"
        )

    def line(self, x1: float, y1: float, x2: float, y2: float, colour: str, width: float = 1.0, dash: str = "") -> None:
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{colour}" stroke-width="{width}"{dashed}/>'
        )

    def polyline(self, points: Iterable[tuple[float, float]], colour: str, width: float = 2.5, dash: str = "") -> None:
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        self.parts.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="{width}"{dashed}/>')

    def dot(self, x: float, y: float, colour: str) -> None:
        self.parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="#fbe9d7" stroke="{colour}" stroke-width="2"/>'
        )

    def frame(self, x_label: str, y_label: str) -> None:
        self.line(LEFT, BOTTOM, WIDTH - RIGHT, BOTTOM, MUTED, 1.2)
        self.line(LEFT, TOP, LEFT, BOTTOM, MUTED, 1.2)
        self.text((LEFT + WIDTH - RIGHT) / 2, BOTTOM + 46, x_label)
        self.text(24, (TOP + BOTTOM) / 2, y_label, extra=f' transform="rotate(-90 24 {(TOP + BOTTOM) / 2})"')

    def svg(self) -> str:
        return "\n".join(self.parts + ["</svg>"]) + "\n"


def _scale(low: float, high: float, start: float, end: float, log: bool) -> Callable[[float], float]:
    def to(value: float) -> float:
        if log:
            value, low_, high_ = math.log10(value), math.log10(low), math.log10(high)
        else:
            low_, high_ = low, high
        return start + (value - low_) / (high_ - low_) * (end - start)

    return to


def _numbers(pattern: str, stdout: str, what: str) -> list[tuple[float, ...]]:
    found = [tuple(float(g) for g in m.groups()) for m in re.finditer(pattern, stdout, re.M)]
    if not found:
        raise PlotError(f"the recorded output has no {what} (pattern {pattern!r})")
    return found


# -- the roofline --------------------------------------------------------------------

ROOFLINE_WORDS = {
    "en": {
        "title": "Measured roofline of an {device}",
        "x": "arithmetic intensity (FLOP per byte of HBM traffic)",
        "y": "achieved GFLOP/s (FP32 FMA)",
        "memory": "copy roof {bw:,.0f} GB/s",
        "compute": "FMA roof {fp:,.0f} GFLOP/s",
        "ridge": "ridge {ai:.1f} FLOP/byte",
        "points": "measured kernels (K FMAs per element)",
        "desc": "Log-log roofline drawn from a recorded run on an {device}: "
        "the measured memory roof of {bw:,.0f} GB/s, "
        "the measured FP32 roof of {fp:,.0f} GFLOP/s, a ridge at {ai:.1f} FLOP/byte, and {n} measured kernels "
        "from {lo} to {hi} FLOP/byte that sit on the memory roof left of the ridge "
        "and on the compute roof right of it.",
    },
    "zh": {
        "title": "{device} 的实测屋顶线",
        "x": "算术强度（每字节 HBM 流量的 FLOP 数）",
        "y": "实测 GFLOP/s（FP32 FMA）",
        "memory": "拷贝屋顶 {bw:,.0f} GB/s",
        "compute": "FMA 屋顶 {fp:,.0f} GFLOP/s",
        "ridge": "脊点 {ai:.1f} FLOP/字节",
        "points": "实测核函数（每个元素 K 次 FMA）",
        "desc": "根据 {device} 上一次记录的运行绘制的双对数屋顶线："
        "实测内存屋顶 {bw:,.0f} GB/s，实测 FP32 屋顶 {fp:,.0f} GFLOP/s，"
        "脊点在 {ai:.1f} FLOP/字节；{n} 个实测核函数的算术强度从 {lo} 到 {hi} FLOP/字节，"
        "脊点左侧的落在内存屋顶上，右侧的落在计算屋顶上。",
    },
}


def draw_roofline(record: Record, lang: str) -> str:
    words = ROOFLINE_WORDS[lang]
    ((bandwidth,),) = _numbers(r"^roof bandwidth_GBps=([\d.]+)", record.stdout, "memory roof")
    ((compute,),) = _numbers(r"^roof fp32_GFLOPs=([\d.]+)", record.stdout, "compute roof")
    points = _numbers(
        r"^point K=\d+\s+AI=([\d.]+)\s+ms=[\d.]+\s+GBps=[\d.]+\s+GFLOPs=([\d.]+)", record.stdout, "measured points"
    )
    ridge = compute / bandwidth
    x_low, x_high, y_low, y_high = 0.125, 256.0, 100.0, 200_000.0
    x = _scale(x_low, x_high, LEFT, WIDTH - RIGHT, log=True)
    y = _scale(y_low, y_high, BOTTOM, TOP, log=True)
    canvas = _Canvas(
        words["title"].format(device=record.device),
        words["desc"].format(
            device=record.device,
            bw=bandwidth,
            fp=compute,
            ai=ridge,
            n=len(points),
            lo=f"{points[0][0]:g}",
            hi=f"{points[-1][0]:g}",
        ),
        lang,
    )
    for exponent in range(-3, 9):  # x grid: powers of two
        value = 2.0**exponent
        canvas.line(x(value), TOP, x(value), BOTTOM, "#f6f8fa" if exponent % 2 else "#e3ecfa", 1)
        canvas.text(x(value), BOTTOM + 22, f"{value:g}", size=13)
    for exponent in range(2, 6):  # y grid: powers of ten
        value = 10.0**exponent
        canvas.line(LEFT, y(value), WIDTH - RIGHT, y(value), "#e3ecfa", 1)
        canvas.text(LEFT - 10, y(value) + 5, f"{value:,.0f}", size=13, anchor="end")
    canvas.frame(words["x"], words["y"])
    canvas.polyline([(x(x_low), y(bandwidth * x_low)), (x(ridge), y(compute))], MEMORY, 3)
    canvas.polyline([(x(ridge), y(compute)), (x(x_high), y(compute))], COMPUTE, 3)
    canvas.line(x(ridge), y(compute), x(ridge), BOTTOM, GRID, 1.2, "5 4")
    slope = math.degrees(math.atan((y(1) - y(2)) / (x(2) - x(1))))  # the memory roof's angle on the page
    canvas.text(
        x(0.5),
        y(bandwidth * 0.5) - 26,
        words["memory"].format(bw=bandwidth),
        colour=MEMORY,
        anchor="start",
        extra=f' transform="rotate(-{slope:.1f} {x(0.5):.1f} {y(bandwidth * 0.5) - 26:.1f})"',
    )
    canvas.text(x(x_high) - 4, y(compute) - 12, words["compute"].format(fp=compute), colour=COMPUTE, anchor="end")
    canvas.text(x(ridge) + 6, BOTTOM - 10, words["ridge"].format(ai=ridge), colour=MUTED, anchor="start")
    for intensity, gflops in points:
        canvas.dot(x(intensity), y(gflops), SCHEDULING)
    canvas.dot(LEFT + 24, TOP + 14, SCHEDULING)
    canvas.text(LEFT + 38, TOP + 19, words["points"], colour=TEXT, anchor="start")
    return canvas.svg()


# -- wave quantization ------------------------------------------------------------------

WAVE_WORDS = {
    "en": {
        "title": "Wave quantization measured on an {device}",
        "x": "thread blocks in the grid",
        "y": "kernel time (µs)",
        "wave": "{n} wave(s) = {blocks} blocks",
        "desc": "Kernel time against grid size from a recorded run on an {device} "
        "with {sms} SMs and {per} blocks per SM, "
        "so one wave is {wave} blocks: the time stays flat within a wave and jumps by about one block's time "
        "each time the grid passes a multiple of {wave}, "
        "from {first:.0f} µs at one block to {last:.0f} µs at {blocks} blocks.",
    },
    "zh": {
        "title": "在 {device} 上实测的波次量化",
        "x": "网格中的线程块数",
        "y": "核函数耗时（µs）",
        "wave": "{n} 个波次 = {blocks} 个线程块",
        "desc": "根据 {device} 上一次记录的运行绘制的核函数耗时与网格大小的关系：{sms} 个 SM，每个 SM {per} 个线程块，"
        "一个波次是 {wave} 个线程块。在一个波次之内耗时不变，"
        "网格每越过 {wave} 的一个倍数，耗时就跳高约一个线程块的时间："
        "1 个线程块时 {first:.0f} µs，{blocks} 个线程块时 {last:.0f} µs。",
    },
}


def draw_waves(record: Record, lang: str) -> str:
    words = WAVE_WORDS[lang]
    ((sms, per_sm, wave),) = _numbers(r"^SMs=(\d+) blocks_per_SM=(\d+) wave=(\d+)", record.stdout, "wave size")
    points = _numbers(r"^grid=(\d+) waves=[\d.]+ time_us=([\d.]+)", record.stdout, "measured grids")
    max_blocks = max(p[0] for p in points)
    x_high = math.ceil(max_blocks / wave) * wave
    y_high = math.ceil(max(p[1] for p in points) / 50) * 50 + 50
    x = _scale(0, x_high, LEFT, WIDTH - RIGHT, log=False)
    y = _scale(0, y_high, BOTTOM, TOP, log=False)
    canvas = _Canvas(
        words["title"].format(device=record.device),
        words["desc"].format(
            device=record.device,
            sms=int(sms),
            per=int(per_sm),
            wave=int(wave),
            first=points[0][1],
            last=points[-1][1],
            blocks=int(points[-1][0]),
        ),
        lang,
    )
    for value in range(0, int(y_high) + 1, 50):
        canvas.line(LEFT, y(value), WIDTH - RIGHT, y(value), "#e3ecfa", 1)
        canvas.text(LEFT - 10, y(value) + 5, f"{value}", size=13, anchor="end")
    for n in range(1, int(x_high / wave) + 1):
        canvas.line(x(n * wave), TOP, x(n * wave), BOTTOM, GRID, 1.2, "5 4")
        canvas.text(x(n * wave), BOTTOM + 22, f"{int(n * wave)}", size=13)
    canvas.text(x(0), BOTTOM + 22, "0", size=13)
    canvas.frame(words["x"], words["y"])
    canvas.text(x(wave) - 6, TOP + 16, words["wave"].format(n=1, blocks=int(wave)), colour=MUTED, anchor="end")
    steps = []
    for blocks, micros in points:
        steps.append((x(blocks), y(micros)))
    canvas.polyline(steps, COMPUTE, 2)
    for blocks, micros in points:
        canvas.dot(x(blocks), y(micros), SCHEDULING)
    return canvas.svg()


H100 = "NVIDIA H100 80GB HBM3"
# -- all-reduce bus bandwidth against message size ----------------------------------------

BUSBW_WORDS = {
    "en": {
        "title": "All-reduce bus bandwidth measured on {device}",
        "x": "message size (each GPU's buffer)",
        "y": "bus bandwidth (GB/s)",
        "series": "{n} GPUs: {bw:,.0f} GB/s at {size}",
        "desc": "Log-log chart of NCCL all-reduce bus bandwidth against message size, from recorded runs on {device} "
        "with {counts} GPUs. From {first} to {last} the bandwidth rises in proportion to the size while a fixed "
        "latency dominates, then levels off where the links are the limit: {plateaus}.",
    },
    "zh": {
        "title": "在 {device} 上实测的全归约总线带宽",
        "x": "消息大小（每个 GPU 的缓冲区）",
        "y": "总线带宽（GB/s）",
        "series": "{n} 个 GPU：{size} 时 {bw:,.0f} GB/s",
        "desc": "根据 {device} 上 {counts} 个 GPU 的记录运行绘制的双对数图：NCCL 全归约的总线带宽随消息大小的变化。"
        "从 {first} 到 {last}，小消息受固定延迟支配，带宽与大小成正比增长；"
        "大消息受链路带宽限制，曲线趋于平坦：{plateaus}。",
    },
}
_BUSBW_HEADER = r"^all_reduce \(sum, float32\) on (\d+) GPUs: (.+), NCCL [\d.]+$"
_BUSBW_ROW = r"^\s*([\d.]+) (KiB|MiB|GiB)\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+(\S+)$"
_UNIT_BYTES = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def _size_label(size: float) -> str:
    for unit in ("GiB", "MiB", "KiB"):
        if size >= _UNIT_BYTES[unit]:
            return f"{size / _UNIT_BYTES[unit]:g} {unit}"
    return f"{size:g} B"


def _busbw_series(record: Record) -> tuple[int, str, list[tuple[float, float]]]:
    """(GPU count, GPU name, [(bytes, busbw GB/s)]) from one recorded run of the all-reduce sweep."""
    header = re.search(_BUSBW_HEADER, record.stdout, re.M)
    if header is None:
        raise PlotError(f"the recorded output has no all-reduce header (pattern {_BUSBW_HEADER!r})")
    rows = re.findall(_BUSBW_ROW, record.stdout, re.M)
    if not rows:
        raise PlotError(f"the recorded output has no measured sizes (pattern {_BUSBW_ROW!r})")
    failed = [f"{size} {unit}" for size, unit, _, verdict in rows if verdict != "ok"]
    if failed:
        raise PlotError(f"the recorded run's check failed at {', '.join(failed)}")
    points = [(float(size) * _UNIT_BYTES[unit], float(busbw)) for size, unit, busbw, _ in rows]
    return int(header.group(1)), header.group(2), points


def draw_bus_bandwidth(records: list[Record], lang: str) -> str:
    """One line per recorded GPU count (e.g. 2 and 4) of the all-reduce sweep on the all-reduce page."""
    words = BUSBW_WORDS[lang]
    series = sorted((_busbw_series(record) for record in records), key=lambda s: s[0])
    device = " / ".join(dict.fromkeys(name for _, name, _ in series))
    sizes = [size for _, _, points in series for size, _ in points]
    values = [bw for _, _, points in series for _, bw in points if bw > 0]
    if not values:
        raise PlotError("every measured bus bandwidth is zero")
    x_low, x_high = min(sizes), max(sizes)
    y_low = 10.0 ** math.floor(math.log10(min(values)))
    y_high = 10.0 ** math.ceil(math.log10(max(values)))
    x = _scale(x_low, x_high if x_high > x_low else x_low * 4, LEFT + 20, WIDTH - RIGHT - 20, log=True)
    y = _scale(y_low, y_high, BOTTOM, TOP, log=True)
    legend = [words["series"].format(n=n, bw=points[-1][1], size=_size_label(points[-1][0])) for n, _, points in series]
    canvas = _Canvas(
        words["title"].format(device=device),
        words["desc"].format(
            device=device,
            counts=", ".join(str(n) for n, _, _ in series),
            first=_size_label(x_low),
            last=_size_label(x_high),
            plateaus="; ".join(legend),
        ),
        lang,
    )
    for exponent in range(round(math.log10(y_low)), round(math.log10(y_high)) + 1):
        value = 10.0**exponent
        canvas.line(LEFT, y(value), WIDTH - RIGHT, y(value), "#e3ecfa", 1)
        canvas.text(LEFT - 10, y(value) + 5, f"{value:,g}", size=13, anchor="end")
    for size in sorted(set(sizes)):
        canvas.line(x(size), TOP, x(size), BOTTOM, "#f6f8fa", 1)
        canvas.text(x(size), BOTTOM + 22, _size_label(size), size=12)
    canvas.frame(words["x"], words["y"])
    colours = (MEMORY, COMPUTE, SCHEDULING)
    for index, (_, _, points) in enumerate(series):
        colour = colours[index % len(colours)]
        canvas.polyline([(x(size), y(max(bw, y_low))) for size, bw in points], colour, 2.5)
        for size, bw in points:
            canvas.dot(x(size), y(max(bw, y_low)), colour)
        canvas.line(LEFT + 16, TOP + 14 + 24 * index, LEFT + 44, TOP + 14 + 24 * index, colour, 3)
        canvas.text(LEFT + 52, TOP + 19 + 24 * index, legend[index], colour=TEXT, anchor="start")
    return canvas.svg()


H200_NODE = ("2× NVIDIA H200", "4× NVIDIA H200")
CHARTS = (
    Chart("roofline-h100-measured", "perf/roofline-model.md#roofline", (H100,), _one(draw_roofline)),
    Chart("wave-quantization-h100-measured", "perf/wave-quantization.md#waves", (H100,), _one(draw_waves)),
    Chart("all-reduce-busbw-h200-measured", "systems/all-reduce.md#allreduce", H200_NODE, draw_bus_bandwidth),
)


def chart_files(runs: Runs) -> dict[str, str]:
    """Every chart variant's file name (light, dark, Chinese) and SVG text, from the recorded runs."""
    files: dict[str, str] = {}
    for chart in CHARTS:
        found = {device: runs.get(chart.example_id, device) for device in chart.devices}
        records = [record for record in found.values() if record is not None]
        missing = [device for device, record in found.items() if record is None]
        if missing:
            raise PlotError(f"{chart.name}: no recorded run of {chart.example_id} on {', '.join(missing)}")
        for lang, suffix in (("en", ""), ("zh", ".zh")):
            try:
                light = chart.draw(records, lang)
            except PlotError as exc:
                raise PlotError(f"{chart.name}: {chart.example_id}: {exc}") from None
            files[f"{chart.name}{suffix}.svg"] = light
            files[f"{chart.name}{suffix}.dark.svg"] = make_dark_svg(light)[0]
    return files


def write_charts(images_dir: Path, runs: Runs) -> list[Path]:
    """Write the charts that changed; returns their paths."""
    from gpu_glossary.atomic import write_text_atomic

    written = []
    for name, svg in chart_files(runs).items():
        path = images_dir / name
        if not path.is_file() or path.read_text(encoding="utf-8") != svg:
            write_text_atomic(path, svg)
            written.append(path)
    return written
