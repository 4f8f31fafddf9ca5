"""Tariff reports a sweep wrote (``<suite>_<model>.json``) are compared file by file with the sweeps."""

from __future__ import annotations

from mpcbench_async.compare import compare_paths, render_markdown
from tests.tariff.test_compare import BASELINE, CURRENT

from .reports import add_to_sweep
from .sweeps import sweep_a, sweep_b


class TestSweepTariffReports:
    def test_reports_in_both_are_compared_and_their_findings_join_the_lists(self, tmp_path):
        """tariff_m.json in both sweeps: its regression and new failure follow the agent runs' own; a report in
        one sweep only is named, not compared."""
        a, b = sweep_a(tmp_path / "A"), sweep_b(tmp_path / "B")
        add_to_sweep(a, "tariff_m", BASELINE)
        add_to_sweep(b, "tariff_m", CURRENT)
        add_to_sweep(b, "hscodecomp_m", CURRENT)
        result = compare_paths(a, b)
        assert ([("m", None, "t1"), ("m", None, "t4"), ("m", "s", "b")],
                [("m", None, "t3"), ("m", None, "t4"), ("m", "s", "b")], [str(b / "tariff_m.json")], [],
                ["hscodecomp_m.json"]) == (
            [(f.model, f.suite, f.task) for f in result.regressions],
            [(f.model, f.suite, f.task) for f in result.new_failures], [r.b for r in result.tariff],
            result.tariff_only_in_a, result.tariff_only_in_b)
        text = render_markdown(result)
        assert """## Tariff report `tariff_m.json` (suite `s`, model `m`)

4 cases in both, average score change -0.0875 (errors score 0); improved 1, regressed 1, new failures 1, added 0, \
removed 0.

| case type | cases | Δ average |
|---|---:|---:|
| negative | 1 | +0.0000 |
| positive | 3 | -0.1167 |

| case | type | A | B | Δ |
|---|---|---:|---:|---:|
| a | positive | 1.00 | 1.00 | +0.00 |
| b | positive | 1.00 | error | -1.00 |
| c | positive | 0.35 | 1.00 | +0.65 |
| n | negative | 1.00 | 1.00 | +0.00 |
""" in text
        assert "Tariff reports only in B: `hscodecomp_m.json`" in text.splitlines()

    def test_a_sweep_with_only_tariff_reports(self, tmp_path):
        """A tariff-only sweep (no runs.jsonl, a manifest) still compares: its reports, no agent models."""
        for side, report in (("A", BASELINE), ("B", CURRENT)):
            add_to_sweep(tmp_path / side, "tariff_m", report)
            (tmp_path / side / "manifest.json").write_text("{}")
        result = compare_paths(tmp_path / "A", tmp_path / "B")
        assert ([], ["b"], ["b"]) == (result.models, [f.task for f in result.regressions],
                                      [f.task for f in result.new_failures])
