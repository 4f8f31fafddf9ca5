"""An unknown price stays unknown in run logs and judgements (issue 15): `run-task`, `judge` and `run-and-judge`
write ``cost_usd: null`` and print ``unknown`` for a model with no known price, never $0; a priced model's cost is
the sum of its calls at its prices, and a free sim model's is 0.

The sim serves the unpriced names ``acme-echo`` and ``acme-judge`` with the policies of ``sim/echo`` and
``sim/judge`` (registered in the test process, where the sim runs): their replies are real, their price unknown.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import orjson
import pytest

from mpcbench_async.cli import main
from mpcbench_async.mpcbench import Judgement, RunLog
from mpcbench_async.records import add_cost, decode_json
from mpcbench_async.sim import SimServer
from mpcbench_async.sim._registry import POLICIES, get_policy
from mpcbench_async.testing import write_workspace
from tests.sweep.conftest import FAST_RETRY

PRICES = {"input_per_1m": 1.0, "output_per_1m": 2.0}


@pytest.fixture
def aliases(monkeypatch):
    """``acme-echo`` and ``acme-judge``: the sim's echo and judge policies under names the price table lacks."""
    for alias, policy in (("acme-echo", "sim/echo"), ("acme-judge", "sim/judge")):
        monkeypatch.setitem(POLICIES, alias, get_policy(policy))


def workspace(root: Path, base_url: str) -> Path:
    """The test workspace; ``acme-*`` models need no key, ``acme-priced`` (echo again) has ``PRICES``."""
    write_workspace(root, base_url=base_url, defaults=FAST_RETRY, agent_models=("acme-echo",),
                    judge_models=("acme-judge",))
    config = orjson.loads((root / "model_config.json").read_bytes())
    config["models"] = {"acme-echo": {"api_key_env": None}, "acme-judge": {"api_key_env": None},
                        "acme-priced": {"api_key_env": None, "model": "acme-echo", "prices": PRICES}}
    (root / "model_config.json").write_bytes(orjson.dumps(config))
    return root


def common(root: Path, logs: Path) -> list[str]:
    return ["--config", str(root / "model_config.json"), "--prompts", str(root / "prompt_config.json"),
            "--logs-dir", str(logs)]


def data(root: Path) -> list[str]:
    return ["--data-dir", str(root / "data"), "--scenarios-dir", str(root / "scenarios")]


def priced(run: dict) -> float:
    """What ``run``'s tokens cost at ``PRICES``."""
    prompt, completion = run["usage"]["prompt_tokens"], run["usage"]["completion_tokens"]
    return (prompt * PRICES["input_per_1m"] + completion * PRICES["output_per_1m"]) / 1e6


async def cli(*args: str) -> int:
    return await anyio.to_thread.run_sync(main, list(args))


class TestRunAndJudgeCost:
    async def test_run_task_and_judge_record_and_print_unknown_cost(self, aliases, tmp_path, capsys):
        """run-task with acme-echo: its log has cost_usd null and the line says cost_usd=unknown; judge-input reads
        that log; judge with acme-judge: null and unknown again. sim/echo and sim/judge cost 0.0000; acme-priced
        costs its tokens at its prices."""
        logs = tmp_path / "logs"
        async with SimServer(seed=61) as sim:
            root = workspace(tmp_path / "ws", sim.base_url)
            task = str(root / "tasks" / "planning" / "t0.json")
            codes = [await cli("run-task", "--task", task, "--agent-model", model, *common(root, logs), *data(root))
                     for model in ("acme-echo", "sim/echo", "acme-priced")]
            out = capsys.readouterr().out.splitlines()
            unpriced_log = logs / "t0__agent-acme-echo_run.json"
            codes.append(await cli("judge-input", "--log", str(unpriced_log), "--task", task))
            judge_input = unpriced_log.with_name("t0__agent-acme-echo_judge_input.json")
            for judge in ("acme-judge", "sim/judge"):
                codes.append(await cli("judge", "--input", str(judge_input), "--model", judge,
                                       *common(root, logs)))
        assert [0] * 6 == codes
        runs = {model: orjson.loads((logs / f"t0__agent-{model}_run.json").read_bytes())
                for model in ("acme-echo", "sim_echo", "acme-priced")}
        assert (None, 0.0) == (runs["acme-echo"]["cost_usd"], runs["sim_echo"]["cost_usd"])
        assert runs["acme-priced"]["cost_usd"] == pytest.approx(priced(runs["acme-priced"]))
        assert runs["acme-priced"]["cost_usd"] > 0
        assert [line.split(" -> ")[0].rsplit(" ", 1)[1] for line in out] == [
            "cost_usd=unknown", "cost_usd=0.0000", f"cost_usd={runs['acme-priced']['cost_usd']:.4f}"]
        judged = {judge: orjson.loads((logs / f"t0__agent-acme-echo__judge-{judge}_judge_result.json").read_bytes())
                  for judge in ("acme-judge", "sim_judge")}
        assert ("scored", None) == (judged["acme-judge"]["verdict"], judged["acme-judge"]["cost_usd"])
        assert ("scored", 0.0) == (judged["sim_judge"]["verdict"], judged["sim_judge"]["cost_usd"])
        judge_lines = capsys.readouterr().out.splitlines()
        assert [" cost_usd=unknown ->" in judge_lines[-2], " cost_usd=0.0000 ->" in judge_lines[-1]] == [True, True]

    async def test_run_and_judge_prints_unknown_for_the_unpriced(self, aliases, tmp_path, capsys):
        """run-and-judge, agents acme-echo and acme-priced, judge acme-judge: the run $ column says unknown for the
        unpriced agent and the priced agent's cost for the other; judge $ is unknown on both rows; the files agree."""
        logs = tmp_path / "logs"
        async with SimServer(seed=62) as sim:
            root = workspace(tmp_path / "ws", sim.base_url)
            code = await cli("run-and-judge", "--task", str(root / "tasks" / "planning" / "t0.json"),
                             "--agent-models", "acme-echo,acme-priced", *common(root, logs), *data(root))
        out = capsys.readouterr().out.splitlines()
        assert 0 == code
        priced_run = orjson.loads((logs / "t0__agent-acme-priced_run.json").read_bytes())
        assert out[1].split()[-4:] == ["run", "$", "judge", "$"]
        assert [line.split()[-2:] for line in out[2:]] == [
            ["unknown", "unknown"], [f"{priced_run['cost_usd']:.4f}", "unknown"]]
        assert None is orjson.loads((logs / "t0__agent-acme-echo_run.json").read_bytes())["cost_usd"]
        assert [None, None] == [orjson.loads(p.read_bytes())["cost_usd"]
                                for p in sorted(logs.glob("*_judge_result.json"))]


class TestCostRecords:
    def test_one_unpriced_call_makes_the_total_unknown(self):
        """add_cost: a sum of known costs; None once either side is unknown, whatever comes after."""
        total = 0.0
        for cost in (0.25, None, 0.5):
            total = add_cost(total, cost)
        assert (add_cost(0.25, 0.5), add_cost(None, 0.5), add_cost(0.5, None), total) == (0.75, None, None, None)

    @pytest.mark.parametrize(("stored", "decoded"), [(b"0.0125", 0.0125), (b"null", None), (None, 0.0)])
    def test_old_and_new_records_decode(self, stored, decoded):
        """A run log or judgement written before (a float, or no field at all) or after (null) still decodes."""
        field = b"" if stored is None else b', "cost_usd": ' + stored
        run = (b'{"task_id": "t0", "task_type": "planning", "user_prompt": "p", "tool_trace_steps": [], '
               b'"raw_tool_calls": [], "final_answer": "a", "rationale": "", "scenario_id": "s", "model": "m", '
               b'"stop_reason": "final", "usage": {}, "timings": {"total_s": 1.0, "model_s": 0.5, "tools_s": 0.1}'
               + field + b"}")
        judgement = (b'{"task_id": "t0", "scenario_id": "s", "agent_model": "m", "judge_model": "j", '
                     b'"verdict": "unscored"' + field + b"}")
        assert decoded == decode_json(run, RunLog, source="run").cost_usd
        assert decoded == decode_json(judgement, Judgement, source="judgement").cost_usd
