"""Charts drawn from recorded runs stay in step with the runs, in every variant."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ElementTree

import pytest
from helpers import ROOT

from gpu_glossary.examples.model import load_runs
from gpu_glossary.examples.plots import CHARTS, PlotError, chart_files, draw_roofline

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
    record = load_runs(ROOT).records["perf/roofline-model.md#roofline"]
    points = [line for line in record.stdout.split("\n") if line.startswith("point ")]
    svg = draw_roofline(record, "en")
    assert svg.count("<circle") == len(points) + 1  # and the legend's dot
    bandwidth = int(record.stdout.split("bandwidth_GBps=")[1].split()[0])
    assert f"copy roof {bandwidth:,} GB/s" in svg


def test_an_output_without_the_expected_lines_is_a_clear_error():
    record = load_runs(ROOT).records["perf/roofline-model.md#roofline"]
    broken = dataclasses.replace(record, stdout="device: something else")
    with pytest.raises(PlotError, match="no memory roof"):
        draw_roofline(broken, "en")
