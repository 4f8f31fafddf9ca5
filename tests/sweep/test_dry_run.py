"""``estimate_sweep``: the plan, what a resume skips and the cost estimate, without a call (issue 15, point 3).

A dry run must count units and skips exactly as the runner will, give ranges a real sweep at the sim falls
inside (before any history, and narrower once the history of an earlier sweep is read), show an unknown
price as unknown, compute the time the limits imply as written down by hand, and send nothing.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import msgspec
import orjson
import pytest

from mpcbench_async._exceptions import InputError
from mpcbench_async.mpcbench import AgentRunRecord, JudgeRecord, MPCBenchSuite, SweepPlan, build_plan
from mpcbench_async.runner import Runner
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import SimServer
from mpcbench_async.sweep import DryRun, render_dry_run
from mpcbench_async.sweep._dry_run import RoleEstimate, TokenRange, estimate_sweep
from mpcbench_async.testing import write_workspace
from tests.sweep.conftest import FAST_RETRY, plan_of

PRICED = {**FAST_RETRY, "params": {"max_tokens": 1024}, "prices": {"input_per_1m": 1.0, "output_per_1m": 4.0}}


def append(path: Path, *records: msgspec.Struct) -> None:
    with path.open("ab") as f:
        f.writelines(msgspec.json.encode(r) + b"\n" for r in records)


def run(key: str, status: str = "ok", *, retryable: bool = False) -> AgentRunRecord:
    return AgentRunRecord(key=key, status=status, retryable=retryable, task_id="t", task_type="", scenario_id="",
                          model="m", trial=0)


def judged(key: str, run_key: str) -> JudgeRecord:
    return JudgeRecord(key=key, run_key=run_key, status="ok", task_id="t", task_type="", agent_model="m",
                       judge_model="sim/judge", trial=0)


def half_done(out: Path, plan: SweepPlan) -> Path:
    """``out`` with 5 records of sim/lazy-agent's runs (3 ok, 1 failed for good, 1 retryably) and the judgements
    of runs 0, 1 (ok) and 4 (to be run again)."""
    out.mkdir()
    keys = [u.key for u in plan.agent_units() if u.model == "sim/lazy-agent"]
    append(out / "runs.jsonl", run(keys[0]), run(keys[1]), run(keys[2]), run(keys[3], "error"),
           run(keys[4], "error", retryable=True))
    append(out / "judgements.jsonl", *(judged(plan.judge_key(k, "sim/judge"), k) for k in (keys[0], keys[1], keys[4])))
    return out


def row(dry: DryRun, model: str, role: str) -> RoleEstimate:
    return next(r for r in dry.rows if (r.model, r.role) == (model, role))


def actual(out: Path) -> dict[tuple[str, str], tuple[int, int, int, float]]:
    """Calls, prompt tokens, output tokens and cost per (model, role) in ``out/calls.jsonl``."""
    found: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0, 0, 0.0])
    for call in read_jsonl(out / "calls.jsonl")[0]:
        sums = found[call["model"], "agent" if call["key"].startswith("run-") else "judge"]
        for i, value in enumerate((1, call["usage"]["prompt_tokens"], call["usage"]["completion_tokens"],
                                   call["cost_usd"])):
            sums[i] += value
    return {k: (int(v[0]), int(v[1]), int(v[2]), v[3]) for k, v in found.items()}


def inside(r: RoleEstimate, calls: int, prompt: int, output: int, cost: float) -> bool:
    def within(span: TokenRange, value: int) -> bool:
        return span.low <= value and (span.high is None or value <= span.high)

    assert r.cost_usd.low is not None and r.cost_usd.high is not None
    return (within(r.calls, calls) and within(r.prompt_tokens, prompt) and within(r.output_tokens, output)
            and r.cost_usd.low - 1e-9 <= cost <= r.cost_usd.high + 1e-9)


def width(span: TokenRange) -> int:
    assert span.high is not None
    return span.high - span.low


class TestUnitsAndSkips:
    def test_units_and_what_a_resume_skips_are_counted_by_the_runners_rules(self, tmp_path):
        """8 runs per agent model and 16 judgements; of sim/lazy-agent's runs 3 are ok, 1 failed for good and
        1 failed retryably: 4 skipped. A judge is skipped when its ok run has it (2) or its run failed for good
        (1); a judgement of a run that runs again is redone. With retry_errors the failed run runs again."""
        root = write_workspace(tmp_path / "ws", defaults=PRICED)
        config, prompts, plan = plan_of(root, trials=2)
        out = half_done(tmp_path / "out", plan)
        dry = estimate_sweep(plan, config, prompts, out, concurrency=4)
        counts = [(r.model, r.role, r.units, r.skipped, r.to_run) for r in dry.rows]
        assert [("sim/lazy-agent", "agent", 8, 4, 4), ("sim/echo", "agent", 8, 0, 8),
                ("sim/judge", "judge", 16, 3, 13)] == counts
        assert [(4, 48), (8, 96), (13, 39)] == [(r.calls.low, r.calls.high) for r in dry.rows]
        assert (32, 7) == (dry.units, dry.skipped)
        again = estimate_sweep(plan, config, prompts, out, concurrency=4, retry_errors=True)
        assert [3, 0, 2] == [r.skipped for r in again.rows]
        assert dry == msgspec.json.decode(msgspec.json.encode(dry), type=DryRun)

    async def test_the_runner_skips_what_the_dry_run_said(self, workspace, tmp_path):
        """The same directory run for real: the runner's skip counters equal the dry run's (4 runs, 3 judges)."""
        async with SimServer(seed=3) as sim:
            root = workspace(sim.base_url)
            config, prompts, plan = plan_of(root, trials=2)
            out = half_done(tmp_path / "out", plan)
            dry = estimate_sweep(plan, config, prompts, out, concurrency=4)
            async with Runner(config, out_dir=out, concurrency=4) as runner:
                stats = await runner.run(MPCBenchSuite(plan, prompts))
        assert (4, 3) == (stats.runs_skipped, stats.judges_skipped)
        assert (4, 3) == (sum(r.skipped for r in dry.rows if r.role == "agent"),
                          sum(r.skipped for r in dry.rows if r.role == "judge"))


class TestRangesAgainstARealSweep:
    async def test_a_sweep_falls_inside_the_ranges_before_and_inside_narrower_ones_after(self, tmp_path):
        """sim/oracle-agent (several turns), sim/lazy-agent (one) and sim/judge, priced: every row's calls,
        prompt and output tokens and cost fall inside the first dry run's ranges; a dry run of a second directory
        that reads the first as history has narrower ranges, the same calls as likely, and the second sweep falls
        inside them. No dry run sends a request (the sim counts them)."""
        async with SimServer(seed=5) as sim:
            root = write_workspace(tmp_path / "ws", base_url=sim.base_url, defaults=PRICED,
                                   agent_models=("sim/oracle-agent", "sim/lazy-agent"))
            config, prompts, plan = plan_of(root, trials=2)
            first, second = tmp_path / "first", tmp_path / "second"
            before = estimate_sweep(plan, config, prompts, first, concurrency=4)
            assert 0 == sum(sim.stats.received.values())
            async with Runner(config, out_dir=first, concurrency=4) as runner:
                await runner.run(MPCBenchSuite(plan, prompts))
            sent = sum(sim.stats.received.values())
            after = estimate_sweep(plan, config, prompts, second, concurrency=4, history=[first])
            resumed = estimate_sweep(plan, config, prompts, first, concurrency=4)
            assert sent == sum(sim.stats.received.values())
            async with Runner(config, out_dir=second, concurrency=4) as runner:
                await runner.run(MPCBenchSuite(plan, prompts))
        made, remade = actual(first), actual(second)
        assert {(r.model, r.role) for r in before.rows} == set(made)
        for estimate in before.rows:
            key = (estimate.model, estimate.role)
            assert inside(estimate, *made[key]), (key, made[key])
            narrower = row(after, *key)
            assert inside(narrower, *remade[key]), (key, remade[key])
            assert narrower.calls.likely == remade[key][0]
            assert width(narrower.calls) <= width(estimate.calls)
            assert width(narrower.prompt_tokens) < width(estimate.prompt_tokens)
        assert made[("sim/oracle-agent", "agent")][0] > 16  # several turns a run: the growth is exercised
        assert (32, 0) == (resumed.skipped, resumed.calls.high)
        assert [str(first)] == after.history
        assert not any(a.startswith("sim/oracle-agent") for a in after.assumptions)


class TestPricesAndLimits:
    def test_a_model_without_a_known_price_costs_unknown_never_zero(self, tmp_path):
        """An unpriced API model's row and the total say unknown; the sim model next to it is priced ($0)."""
        root = write_workspace(tmp_path / "ws", agent_models=("acme-chat-1", "sim/lazy-agent"),
                               defaults={"params": {"max_tokens": 256}})
        config, prompts, plan = plan_of(root)
        dry = estimate_sweep(plan, config, prompts, tmp_path / "out", concurrency=2)
        assert (None, None, None) == tuple(msgspec.structs.astuple(row(dry, "acme-chat-1", "agent").cost_usd))
        assert (0.0, 0.0) == (row(dry, "sim/lazy-agent", "agent").cost_usd.low,
                              row(dry, "sim/lazy-agent", "agent").cost_usd.high)
        assert dry.cost_usd.low is None
        text = render_dry_run(dry).splitlines()
        unpriced = next(line for line in text if line.startswith("acme-chat-1"))
        assert unpriced.endswith("  unknown") and "$0" not in unpriced
        assert next(line for line in text if line.startswith("total")).endswith("  unknown")
        assert (f"  - acme-chat-1: no known price: cost unknown (set models.acme-chat-1.prices in "
                f"{root / 'model_config.json'})") in text

    def test_the_time_the_limits_imply_is_the_hand_computed_one(self, tmp_path):
        """4 runs of 1-2 calls at rpm 30, tpm 2000, max_concurrency 2 (sweep concurrency 8), 2 s assumed a call:
        calls/RPM = 8-16 s, Little = 4-8 s, TPM charge = prompt + 100 a call over 2000 a minute; the sweep's
        bound is the slowest model's."""
        limits = {"rpm": 30, "tpm": 2000, "max_concurrency": 2}
        root = write_workspace(tmp_path / "ws", agent_models=("sim/lazy-agent",), judge_models=(),
                               defaults={"params": {"max_tokens": 100}, "limits": limits})
        config, prompts, _ = plan_of(root)
        plan = build_plan(config=config, prompts=prompts, tasks_dir=root / "tasks", data_dir=root / "data",
                          scenarios_dir=root / "scenarios", max_turns=2)
        dry = estimate_sweep(plan, config, prompts, tmp_path / "out", concurrency=8)
        (time,), (only,) = dry.times, dry.rows
        prompt = only.prompt_tokens
        assert prompt.high is not None
        tpm_s = ((prompt.low + 4 * 100) * 60 / 2000, (prompt.high + 8 * 100) * 60 / 2000)
        assert ((4, 8), 2, 2.0) == ((only.calls.low, only.calls.high), time.concurrency, time.latency_s)
        assert ((8.0, 16.0), tpm_s, (4.0, 8.0)) == (time.rpm_s, time.tpm_s, time.latency_bound_s)
        assert (max(8.0, tpm_s[0]), max(16.0, tpm_s[1])) == time.bound_s == dry.time_s
        assert "sim/lazy-agent" == dry.slowest_model
        (line,) = [text for text in render_dry_run(dry).splitlines() if text.startswith("  sim/lazy-agent: ")]
        assert "(rpm 30: 8.0 s-16.0 s; tpm 2000: " in line
        assert line.endswith("; 2 at a time, 2.00 s assumed: 4.0 s-8.0 s)")


class TestInputs:
    def test_a_history_directory_without_calls_or_a_concurrency_below_one_is_refused(self, tmp_path):
        root = write_workspace(tmp_path / "ws", defaults=PRICED)
        config, prompts, plan = plan_of(root)
        with pytest.raises(InputError, match=f"^history {tmp_path}: no calls.jsonl here; is it a sweep output "
                                             "directory[?]$"):
            estimate_sweep(plan, config, prompts, tmp_path / "out", concurrency=4, history=[tmp_path])
        with pytest.raises(InputError, match="^concurrency must be at least 1, got 0$"):
            estimate_sweep(plan, config, prompts, tmp_path / "out", concurrency=0)
        assert not (tmp_path / "out").exists()


class TestRendering:
    def test_the_table_has_a_row_per_model_and_role_a_total_and_one_line_per_assumption(self, tmp_path):
        root = write_workspace(tmp_path / "ws", defaults=PRICED)
        config, prompts, plan = plan_of(root)
        dry = estimate_sweep(plan, config, prompts, tmp_path / "out", concurrency=4)
        lines = render_dry_run(dry).splitlines()
        assert lines[0] == f"dry run of {tmp_path / 'out'}: no call made, nothing written (concurrency 4)"
        assert lines[2].split() == ["model", "role", "units", "skip", "run", "calls", "prompt", "tokens", "output",
                                    "tokens", "cost", "USD"]
        assert [line.split()[:5] for line in lines[3:7]] == [
            ["sim/lazy-agent", "agent", "4", "0", "4"], ["sim/echo", "agent", "4", "0", "4"],
            ["sim/judge", "judge", "8", "0", "8"], ["total", "16", "0", "16", "16-120"]]
        assert "history: none (ranges from assumptions)" in lines
        start = lines.index("assumptions:")
        assert [f"  - {a}" for a in dry.assumptions] == lines[start + 1:]
        assert orjson.loads(msgspec.json.encode(dry))["rows"][0]["model"] == "sim/lazy-agent"

