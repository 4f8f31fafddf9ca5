"""Tariff report against tariff report: the tariff compare's findings in compare's shape, and every case's score."""

from __future__ import annotations

import msgspec

from mpcbench_async.compare import compare_paths, render_markdown
from mpcbench_async.tariff import render_diff

from .reports import write_reports


class TestTariffReports:
    def test_findings(self, tmp_path):
        """b passed (1.0) and now errors: a regression and a new failure; c went 0.35 → 1.0: an improvement."""
        a, b = write_reports(tmp_path)
        result = compare_paths(a, b)
        assert ("tariff_reports", "s", "m", [("b", 1.0, 0.0, -1.0, "Δ ≤ −0.05")], [("c", 0.35, 1.0, 0.65, "Δ ≥ 0.05")],
                [{"model": "m", "suite": "s", "task": "b", "change": "passed → error",
                  "detail": "no reply within 60 s"}]) == (
            result.kind, result.suite_b, result.model_b,
            [(f.task, f.a, f.b, f.delta, f.rule) for f in result.regressions],
            [(f.task, f.a, f.b, f.delta, f.rule) for f in result.improvements],
            msgspec.to_builtins(result.new_failures))
        assert [("a", "positive", 1.0, 1.0), ("b", "positive", 1.0, 0.0), ("c", "positive", 0.35, 1.0),
                ("n", "negative", 1.0, 1.0)] == result.diff.changes

    def test_markdown_is_the_tariff_diff_and_every_case(self, tmp_path):
        """The Markdown starts with the tariff compare's own text, then the score of each shared case."""
        a, b = write_reports(tmp_path)
        result = compare_paths(a, b)
        text = render_markdown(result)
        assert text.startswith(render_diff(result.diff, str(a), str(b)).rstrip("\n") + "\n\n")
        assert text.endswith("""## Score per case (the 4 cases in both runs)

A: suite `s`, model `m`. B: suite `s`, model `m`.

| case | type | A | B | Δ |
|---|---|---:|---:|---:|
| a | positive | 1.00 | 1.00 | +0.00 |
| b | positive | 1.00 | error | -1.00 |
| c | positive | 0.35 | 1.00 | +0.65 |
| n | negative | 1.00 | 1.00 | +0.00 |
""")
