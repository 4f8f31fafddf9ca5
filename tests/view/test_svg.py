"""Chart axes: nice tick steps, labels with the decimals the step needs, the value→pixel map, the charts' marks."""

from __future__ import annotations

import pytest

from mpcbench_async.report import Bar, bar_chart, heatmap
from mpcbench_async.report._svg import Scale, tick_label, ticks
from tests.view.dom import parse


class TestTicks:
    @pytest.mark.parametrize(("low", "high", "expected"), [
        (0, 5, [0, 1, 2, 3, 4, 5]),
        (0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1.0]),
        (0, 100, [0, 20, 40, 60, 80, 100]),
        (0, 0.37, [0, 0.1, 0.2, 0.3, 0.4]),
        (1.5, 4.2, [1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5]),
        (-1, 1, [-1, -0.5, 0, 0.5, 1]),
        (3, 3, [3]),
        (5, 0, [0, 1, 2, 3, 4, 5]),
    ])
    def test_cover_the_domain_in_round_steps(self, low, high, expected):
        assert expected == ticks(low, high)

    def test_a_non_finite_domain_is_refused(self):
        with pytest.raises(ValueError, match="finite"):
            ticks(0, float("nan"))

    @pytest.mark.parametrize(("value", "step", "text"), [(2, 1, "2"), (0.4, 0.2, "0.4"), (40, 20, "40"),
                                                         (0.25, 0.25, "0.25"), (1.5, 0.5, "1.5"), (0.05, 0.05, "0.05")])
    def test_labels_show_the_decimals_of_the_step(self, value, step, text):
        assert text == tick_label(value, step)


class TestScale:
    def test_maps_linearly_either_way(self):
        up = Scale((0, 5), (184, 28))
        assert (184, 28, 106) == (up(0), up(5), up(2.5))
        assert 10 == Scale((0, 1), (0, 20))(0.5)

    def test_a_point_domain_maps_to_the_start(self):
        assert 7 == Scale((2, 2), (7, 9))(2)


class TestCharts:
    def test_bar_chart_has_axis_ticks_labels_bars_and_whiskers(self):
        svg = parse(bar_chart([Bar("a", 2.0, 1.5, 2.5), Bar("b", 4.0), Bar("c<x>", None)], title="T",
                              axis_label="score", domain=(0.0, 5.0)))
        ticks_shown = [g.one("text").text for g in svg.all("g", cls="tick")]
        assert ["0", "1", "2", "3", "4", "5"] == ticks_shown
        assert ["a", "b", "c<x>"] == [t.text for t in svg.all("text", cls="bar-label")]
        bars = svg.all("rect", cls="bar")
        assert 2 == len(bars)
        assert 1 == len(svg.all("g", cls="whisker"))
        assert 2 == len(svg.all("line", cls="axis"))
        # bar a: value 2 on a 0..5 axis from y=184 (0) to y=28 (5)
        assert ("121.6", "62.4") == (bars[0].attrs["y"], bars[0].attrs["height"])

    def test_heatmap_labels_rows_columns_and_cells(self):
        svg = parse(heatmap(["m1", "m2"], ["f1", "f2"], {("m1", "f1"): 4.25, ("m2", "f2"): 0.0}, title="H",
                            domain=(0, 5), row_axis="model", column_axis="family"))
        assert ["m1", "m2"] == [t.text for t in svg.all("text", cls="row-label")]
        assert ["f1", "f2"] == [t.text for t in svg.all("text", cls="column-label")]
        cells = {(g.attrs["data-row"], g.attrs["data-column"]): g.one("text").text for g in svg.all("g", cls="cell")}
        assert {("m1", "f1"): "4.25", ("m1", "f2"): "–", ("m2", "f1"): "–", ("m2", "f2"): "0.00"} == cells
