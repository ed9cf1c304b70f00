"""Charts drawn from recorded runs stay in step with the runs, in every variant."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ElementTree

import pytest
from helpers import ROOT

from gpu_glossary.examples.plots import CHARTS, H100, PlotError, chart_files, draw_bus_bandwidth, draw_roofline
from gpu_glossary.examples.runs import load_runs

IMAGES = ROOT / "glossary" / "images"


def test_committed_charts_match_what_their_recorded_runs_draw():
    stale = [
        name
        for name, svg in chart_files(load_runs(ROOT)).items()
        if not (IMAGES / name).is_file() or (IMAGES / name).read_text(encoding="utf-8") != svg
    ]
    assert not stale, f"charts out of step with glossary/runs.yml: {stale}; run `gpu-glossary plots`"


def test_each_chart_has_light_dark_and_chinese_variants_that_parse():
    files = chart_files(load_runs(ROOT))
    for chart in CHARTS:
        for suffix in (".svg", ".dark.svg", ".zh.svg", ".zh.dark.svg"):
            root = ElementTree.fromstring(files[chart.name + suffix])
            assert root.find("{http://www.w3.org/2000/svg}title") is not None
    assert "#ffffff" not in files["roofline-h100-measured.dark.svg"]
    assert "实测屋顶线" in files["roofline-h100-measured.zh.svg"]


def test_the_roofline_plots_every_measured_point_at_its_value():
    record = load_runs(ROOT).get("perf/roofline-model.md#roofline", H100)
    points = [line for line in record.stdout.split("\n") if line.startswith("point ")]
    svg = draw_roofline(record, "en")
    assert svg.count("<circle") == len(points) + 1  # and the legend's dot
    bandwidth = int(record.stdout.split("bandwidth_GBps=")[1].split()[0])
    assert f"copy roof {bandwidth:,} GB/s" in svg


def test_an_output_without_the_expected_lines_is_a_clear_error():
    record = load_runs(ROOT).get("perf/roofline-model.md#roofline", H100)
    broken = dataclasses.replace(record, stdout="device: something else")
    with pytest.raises(PlotError, match="no memory roof"):
        draw_roofline(broken, "en")


# Made-up numbers in the format the all-reduce page's program prints (systems/all-reduce.md).
ALLREDUCE_2 = """all_reduce (sum, float32) on 2 GPUs: NVIDIA H100 80GB HBM3, NCCL 2.28.9
busbw = algbw x 2(n-1)/n = algbw x 1.00
     size    time_us  algbw_GBps  busbw_GBps  check
    1 KiB       11.9        0.09        0.09  ok
    4 KiB       12.1        0.34        0.34  ok
   16 KiB       12.6        1.30        1.30  ok
   64 KiB       14.0        4.68        4.68  ok
  256 KiB       18.4       14.25       14.25  ok
    1 MiB       27.5       38.13       38.13  ok
    4 MiB       45.2       92.80       92.80  ok
   16 MiB       92.6      181.17      181.17  ok
   64 MiB      253.3      264.94      264.94  ok
  256 MiB      863.0      311.05      311.05  ok
    1 GiB     3305.1      324.87      324.87  ok"""
ALLREDUCE_4 = """all_reduce (sum, float32) on 4 GPUs: NVIDIA H100 80GB HBM3, NCCL 2.28.9
busbw = algbw x 2(n-1)/n = algbw x 1.50
     size    time_us  algbw_GBps  busbw_GBps  check
    1 KiB       14.2        0.07        0.11  ok
    4 KiB       14.5        0.28        0.42  ok
   16 KiB       15.3        1.07        1.61  ok
   64 KiB       17.9        3.66        5.49  ok
  256 KiB       24.0       10.92       16.38  ok
    1 MiB       38.8       27.02       40.54  ok
    4 MiB       61.0       68.76      103.14  ok
   16 MiB      124.5      134.76      202.14  ok
   64 MiB      352.2      190.54      285.81  ok
  256 MiB     1199.6      223.77      335.66  ok
    1 GiB     4607.5      233.04      349.56  ok"""


def _allreduce_records(*outputs: str):
    record = load_runs(ROOT).get("perf/roofline-model.md#roofline", H100)
    return [dataclasses.replace(record, stdout=output) for output in outputs]


def test_the_bus_bandwidth_chart_draws_one_line_per_gpu_count_with_a_dot_per_size():
    svg = draw_bus_bandwidth(_allreduce_records(ALLREDUCE_4, ALLREDUCE_2), "en")
    root = ElementTree.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}polyline")) == 2
    assert len(root.findall(f"{ns}circle")) == 22
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert texts.index("2 GPUs: 325 GB/s at 1 GiB") < texts.index("4 GPUs: 350 GB/s at 1 GiB")  # sorted by count
    assert "All-reduce bus bandwidth measured on NVIDIA H100 80GB HBM3" in texts
    assert {"1 KiB", "1 MiB", "1 GiB"} <= set(texts)
    # the 1 KiB dots sit below the 1 GiB dots (SVG y grows downwards)
    circles = root.findall(f"{ns}circle")
    assert float(circles[0].get("cy")) > float(circles[10].get("cy"))
    zh = draw_bus_bandwidth(_allreduce_records(ALLREDUCE_2, ALLREDUCE_4), "zh")
    assert "全归约总线带宽" in zh and "2 个 GPU：1 GiB 时 325 GB/s" in zh


def test_the_bus_bandwidth_chart_refuses_a_run_whose_check_failed_or_lacks_its_lines():
    failed = ALLREDUCE_2.replace("324.87  ok", "324.87  MISMATCH")
    with pytest.raises(PlotError, match="check failed at 1 GiB"):
        draw_bus_bandwidth(_allreduce_records(failed, ALLREDUCE_4), "en")
    with pytest.raises(PlotError, match="no all-reduce header"):
        draw_bus_bandwidth(_allreduce_records("device: something else"), "en")
    with pytest.raises(PlotError, match="no measured sizes"):
        draw_bus_bandwidth(_allreduce_records(ALLREDUCE_2.split("\n     size")[0]), "en")
