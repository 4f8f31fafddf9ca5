"""An unknown price is shown as unknown, never as $0 (issue 15 points 1 and 4): in summary.json's spend counts,
the terminal table, summary.md and the progress line; response-cache hits are counted apart with their value."""

from __future__ import annotations

import io

from mpcbench_async.report import render_markdown, render_table
from mpcbench_async.runner import SweepStats
from mpcbench_async.sweep import summarize
from mpcbench_async.sweep._summary import Spend

from .summary_lines import call, run, write


def unpriced(key: str, **fields) -> dict:
    return call(key, **fields) | {"cost_usd": None}


def cached(key: str, *, value: float, **fields) -> dict:
    return call(key, **fields) | {"cached": True, "value_usd": value}


class TestUnknownCost:
    def test_spend_counts_unpriced_and_cached_calls_and_the_value(self, tmp_path):
        """Model p: one call at $0.5 and one cache hit (spent $0, worth $0.25); model u: two calls of unknown price.
        Their spend says so; the tables show p's cost and 'unknown' for u, never 0.0000; the directory's paragraph
        in summary.md counts both kinds."""
        write(tmp_path / "runs.jsonl", run("run-p", model="p", checks="p"), run("run-u", model="u", checks="p"))
        write(tmp_path / "calls.jsonl", call("run-p/turn1", model="p", cost=0.5),
              cached("run-p/turn2", model="p", value=0.25), unpriced("run-u/turn1", model="u"),
              unpriced("run-u/turn2", model="u"))
        summary = summarize(tmp_path)
        spends = {m.model: m.spent for m in summary.models}
        assert spends == {
            "p": Spend(calls=2, tokens=200, cost_usd=0.5, unpriced_calls=0, cached_calls=1, value_usd=0.75),
            "u": Spend(calls=2, tokens=200, cost_usd=0.0, unpriced_calls=2, cached_calls=0, value_usd=0.0)}
        assert (summary.directory_calls.cost_text(), spends["p"].cost_text(), spends["u"].cost_text()) == (
            "0.5000 + unknown", "0.5000", "unknown")
        table = render_table(summary)
        p_row, u_row = (next(line for line in table.splitlines() if line.startswith(f"{m} ")) for m in "pu")
        assert ("0.5000/0.5000" in p_row, "unknown/unknown" in u_row, "0.0000" in u_row) == (True, True, False)
        markdown = render_markdown(summary)
        assert "| unknown | unknown |" in markdown
        assert ("calls.jsonl holds 4, 2 of models with no known price, cost unknown (set models.<name>.prices), "
                "1 answered by the response cache ($0 spent; all calls worth $0.7500))") in " ".join(markdown.split())

    def test_the_progress_line_shows_unknown_cost_and_cache_hits(self):
        """$X while every call is priced, $X + unknown once some are not, $unknown when none is; hits counted."""
        from mpcbench_async.cli._progress import ProgressLine

        def cost_part(**counters) -> str:
            line = ProgressLine(SweepStats(tokens=10, **counters), stream=io.StringIO()).line()
            return line.split(" | ")[2]

        assert [cost_part(calls=2, cost_usd=0.5), cost_part(calls=3, cost_usd=0.5, unpriced_calls=1, cached_calls=1),
                cost_part(calls=2, unpriced_calls=2)] == [
            "10 tok $0.5000", "10 tok $0.5000 + unknown (1 cached)", "10 tok $unknown"]
