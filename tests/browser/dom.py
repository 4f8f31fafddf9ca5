"""What the viewer and the report must show, read from the DOM and compared with the sweep's own files.

Shared by the viewer and report tests: both pages carry the same leaderboard and transcript markup (the DOM
contract: ``table#leaderboard tr[data-model]``, ``.tool-call`` with ``.tool-name``/``.tool-args``/
``.tool-result``, ``#final-answer``, ``table#checks``, ``#judgements .judgement[data-judge]``). Expected values
come from ``summary.json`` and the run and judge records, never from the viewer's code.
"""

from __future__ import annotations

from statistics import mean
from typing import Any

import orjson

from tests.browser.conftest import Sweep

AXES = ("answer_requirements_satisfaction", "source_grounded_reasoning")


def cells_by_header(table: Any, row: Any) -> dict[str, str]:
    """A row's cell texts keyed by its table's header texts."""
    header = [h.strip() for h in table.locator("thead th").all_inner_texts()]
    return dict(zip(header, (c.strip() for c in row.locator("td").all_inner_texts()), strict=True))


def judge_mean(model: dict[str, Any], axis: str) -> float:
    """A model's mean on ``axis`` ("ars"/"sgr") over every judge's scored judgements, from summary.json."""
    n = sum(j[axis]["n"] for j in model["judges"])
    return sum(j[axis]["n"] * j[axis]["mean"] for j in model["judges"]) / n


def assert_leaderboard(scope: Any, sweep: Sweep) -> None:
    """One row per agent model, in the summary's order, showing the summary's numbers."""
    table = scope.locator("table#leaderboard")
    rows = table.locator("tbody tr")
    models = sweep.summary["models"]
    assert [m["model"] for m in models] == [r.get_attribute("data-model") for r in rows.all()]
    assert sorted({r["model"] for r in sweep.runs}) == [m["model"] for m in models]
    for model in models:
        row = table.locator(f'tbody tr[data-model="{model["model"]}"]')
        cells = cells_by_header(table, row)
        runs = [r for r in sweep.runs if r["model"] == model["model"]]
        assert (cells["agent model"], cells["runs"], cells["errors"], cells["tokens (kept)"]) == (
            model["model"], str(model["runs"]), str(model["errors"]), str(model["kept"]["tokens"]))
        assert len(runs) == model["runs"]
        ars, sgr = (next(v for k, v in cells.items() if k.startswith(axis)) for axis in ("ARS", "SGR"))
        assert f"{judge_mean(model, 'ars'):.2f}" == ars.split()[0]
        assert f"{judge_mean(model, 'sgr'):.2f}" == sgr.split()[0]
        assert (f"{model['tasks_checked']} of {model['tasks']}", str(model["unverified"])) == (
            cells["tasks checked"], cells["unverified"])
        if model["pass_at_k"] is None:  # no checked task: unverified runs are no pass, so there is no pass^k at all
            assert all(td.inner_text().strip() == "–" for td in row.locator("td.pass-k").all())
            continue
        k_cell = row.locator(f'td.pass-k[data-k="{model["k"]}"]')
        assert f"{100 * model['pass_at_k']:.1f}%" == k_cell.inner_text().strip()


def assert_run(scope: Any, record: dict[str, Any], judgements: list[dict[str, Any]]) -> None:
    """A run's transcript (tool calls with arguments and results, final answer), checks and judgements."""
    run = record["run"]
    roles = scope.locator("#transcript .message").evaluate_all("els => els.map(e => e.dataset.role)")
    assert set(roles) <= {"system", "user", "assistant", "tool"} and "user" in roles, roles
    assert run["user_prompt"] in scope.locator('#transcript .message[data-role="user"]').first.inner_text()
    calls = scope.locator("#transcript .tool-call")
    assert [c["tool_name"] for c in run["raw_tool_calls"]] == [
        t.strip() for t in calls.locator(".tool-name").all_inner_texts()]
    assert [c["arguments"] for c in run["raw_tool_calls"]] == [
        orjson.loads(t) for t in calls.locator(".tool-args pre").all_text_contents()]
    assert [c["result"] for c in run["raw_tool_calls"]] == [
        orjson.loads(t) for t in calls.locator(".tool-result pre").all_text_contents()]
    assert run["final_answer"] == scope.locator("#final-answer").inner_text().strip()
    checks = scope.locator("table#checks tbody tr")
    assert [(c["name"], c["status"]) for c in record["checks"]] == [
        tuple(t.strip() for t in row.locator("td").all_inner_texts()[:2]) for row in checks.all()]
    shown = scope.locator("#judgements .judgement")
    assert sorted(j["judge_model"] for j in judgements) == sorted(
        shown.evaluate_all("els => els.map(e => e.dataset.judge)"))
    for j in judgements:
        block = scope.locator(f'#judgements .judgement[data-judge="{j["judge_model"]}"]')
        scores = j["judgement"]["scores"]
        assert (str(scores[AXES[0]]["score"]), str(scores[AXES[1]]["score"])) == (
            block.locator(".score-ars").inner_text().strip(), block.locator(".score-sgr").inner_text().strip())
        rationale = block.locator(".rationale").inner_text()
        assert all(scores[axis]["justification"] in rationale for axis in AXES)


def run_ars(sweep: Sweep, key: str) -> float:
    """A run's ARS: the mean over its judges."""
    return mean(j["judgement"]["scores"][AXES[0]]["score"] for j in sweep.judgements if j["run_key"] == key)
