"""Exit codes describe the plan, whatever earlier runs did; failures are visible in the log, the summary and stderr.

Every sweep here is a real ``mpcbench-async`` child process against an in-process sim whose faults the test
switches: first every request is refused with HTTP 400 (a permanent error), then the endpoint is fixed.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import anyio
import orjson

from mpcbench_async.cli import main
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.sim import FaultSpec, SimServer
from mpcbench_async.testing import write_workspace
from tests.conftest import REPO

CLI = "import sys; from mpcbench_async.cli import main; raise SystemExit(main(sys.argv[1:]))"
REFUSED = FaultSpec(fault="400", fail_first=1_000_000)
TARIFF_CASES = ["positive/tariff_pos_01_cotton_crew_tshirt.json", "positive/tariff_pos_02_denim_jeans.json",
                "positive/tariff_pos_03_mesh_running_shoe.json"]


async def cli(*args: str) -> tuple[int, str, str]:
    proc = await anyio.run_process([sys.executable, "-c", CLI, *args], check=False)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def sweep_args(root: Path, out: Path, *extra: str) -> list[str]:
    return ["sweep", "--config", str(root / "model_config.json"), "--prompts", str(root / "prompt_config.json"),
            "--tasks-dir", str(root / "tasks"), "--data-dir", str(root / "data"),
            "--scenarios-dir", str(root / "scenarios"), "--out", str(out), "--quiet", *extra]


def tariff_suite(tmp_path: Path, base_url: str) -> tuple[Path, list[str]]:
    """Three shipped cases as a suite, and the arguments of ``sweep --suite tariff`` over it."""
    suite = tmp_path / "suite"
    for name in TARIFF_CASES:
        target = suite / "cases" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "storage" / "benchmarks" / "tariff" / "cases" / name, target)
    config = tmp_path / "model_config.json"
    config.write_bytes(orjson.dumps({"tariff_models": ["sim/tariff"], "defaults": {
        "base_url": base_url, "retry": {"initial_backoff": 0.01, "max_backoff": 0.05}}}))
    return suite, ["sweep", "--suite", "tariff", "--tariff-path", str(suite),
                   "--pack", str(REPO / "storage" / "packs" / "tariff"), "--config", str(config),
                   "--prompts", str(REPO / "prompt_config.json"), "--out", str(tmp_path / "out"), "--quiet"]


class TestSweepExitCodes:
    async def test_errors_exit_1_on_every_rerun_until_fixed_and_retried(self, workspace, tmp_path):
        """Every agent call refused: exit 1, with each failed unit at --log-level info (model, key, class,
        message), the error class in the printed summary and one line saying what is missing. The same
        command again runs nothing and still exits 1; with the endpoint fixed a plain rerun keeps the task-level
        errors (exit 1) and --retry-errors redoes them: exit 0."""
        out = tmp_path / "out"
        async with SimServer(seed=41, defaults=REFUSED) as sim:
            root = workspace(sim.base_url)
            first = await cli("--log-level", "info", *sweep_args(root, out))
            received = sim.stats.total_received
            again = await cli(*sweep_args(root, out))
            assert received == sim.stats.total_received  # task-level errors are kept, not retried
            sim.defaults = FaultSpec()
            kept = await cli(*sweep_args(root, out))
            retried = await cli(*sweep_args(root, out, "--retry-errors"))
        assert (1, 1, 1, 0) == (first[0], again[0], kept[0], retried[0]), first[2]
        failed = [line for line in first[2].splitlines() if "unit.failed" in line]
        assert 8 == len(failed)  # 4 tasks × 2 agent models; their judges never ran
        assert all("error_class=PermanentLLMError" in line and "kind=agent_run" in line and "key=run-" in line
                   and "simulated bad request" in line for line in failed), failed
        assert {"model=sim/echo", "model=sim/lazy-agent"} == {
            part for line in failed for part in line.split() if part.startswith("model=")}
        assert "PermanentLLMError" in first[1]
        missing = ("16 of 16 unit(s) have no ok result: 8 ended in an error, 8 did not run (their agent run failed). "
                   "Infrastructure errors are retried by rerunning the same command; fix other errors, then rerun "
                   "with --retry-errors")
        assert [missing, missing] == [first[2].splitlines()[-1], again[2].splitlines()[-1]]
        assert "have no ok result" not in retried[2]

    async def test_tariff_suite_alone_exits_1_when_its_cases_error(self, tmp_path):
        """`sweep --suite tariff` with every case failing exits 1 and prints the summary with the error class; so
        does the rerun; after the fix --retry-errors exits 0 with every case ok."""
        async with SimServer(seed=42, defaults=REFUSED) as sim:
            _, args = tariff_suite(tmp_path, sim.base_url)
            first = await cli(*args)
            again = await cli(*args)
            sim.defaults = FaultSpec()
            retried = await cli(*args, "--retry-errors")
        assert (1, 1, 0) == (first[0], again[0], retried[0]), first[2]
        assert "PermanentLLMError" in first[1]
        assert first[2].splitlines()[-1].startswith("3 of 3 unit(s) have no ok result: 3 ended in an error.")
        records, _ = read_jsonl(tmp_path / "out" / "tariff_sim_tariff.jsonl")
        assert ["error"] * 3 + ["ok"] * 3 == [r["status"] for r in records]  # the rerun kept the errors

    def test_help_documents_the_exit_codes(self, capsys):
        """`--help` of the program and of `sweep` end with the exit codes."""
        for argv in (["--help"], ["sweep", "--help"]):
            try:
                main(argv)
            except SystemExit:
                pass
            text = capsys.readouterr().out
            assert "exit codes:\n  0    every unit asked for has an ok result" in text
            assert "\n  130  interrupted (Ctrl-C, SIGTERM)" in text


class TestRetriesShow:
    async def test_the_progress_line_shows_a_retry_as_it_starts(self, tmp_path):
        """Every agent model answering its first request of each call with HTTP 500: the sweep's progress line
        (stderr, not a terminal: plain lines) shows the retry at once — model, attempt, the sim's message —
        where it used to retry silently; the sweep then succeeds (exit 0)."""
        async with SimServer(seed=45, defaults=FaultSpec(fault="500", fail_first=1)) as sim:
            root = write_workspace(tmp_path / "ws", base_url=sim.base_url, tasks=1, agent_models=("sim/echo",),
                                   judge_models=(), defaults={"retry": {"initial_backoff": 0.01,
                                                                        "max_backoff": 0.02}})
            args = [a for a in sweep_args(root, tmp_path / "out") if a != "--quiet"]
            code, _, err = await cli(*args, "--no-certificate")
        assert 0 == code, err
        shown = [line.split(" | retrying ", 1)[1] for line in err.splitlines() if " | retrying " in line]
        assert shown, err
        assert shown[0].startswith("sim/echo: attempt 1/8 failed (ServerError: …")
        assert "HTTP 500: simulated: internal server error); next try in " in shown[0]


class TestOtherCommands:
    async def test_judge_without_a_parsable_judgement_says_so_and_exits_1(self, workspace, tmp_path, capsys):
        """`judge` with a model that never replies with scores (sim/echo): exit 1 and, on stderr, the
        UnparsableJudgement class with the last reply's problem (it used to print "unscored" and exit 0)."""
        judge_input = tmp_path / "t0_judge_input.json"
        judge_input.write_bytes(orjson.dumps({"task_id": "t0", "final_answer": "a", "answer_requirements": ["r"],
                                              "tool_trace": [], "agent_model": "m", "scenario_id": "sc_a"}))
        async with SimServer(seed=46) as sim:
            root = workspace(sim.base_url)
            code = await anyio.to_thread.run_sync(main, [
                "judge", "--input", str(judge_input), "--model", "sim/echo",
                "--config", str(root / "model_config.json"), "--prompts", str(root / "prompt_config.json")])
        out, err = capsys.readouterr()
        assert 1 == code
        assert "t0 agent=m judge=sim/echo: unscored cost_usd=0.0000 -> " in out
        assert ("judge failed: UnparsableJudgement: judge sim/echo gave no parsable judgement in 3 tries; the last "
                "reply: the reply is not a JSON object (unexpected character, expected a JSON value: line 1 column "
                "1 (char 0))") in err.splitlines()

    async def test_run_task_says_why_the_run_failed(self, workspace, tmp_path, capsys):
        """`run-task` whose model call is refused prints stop=error and, on stderr, the error class and message;
        exit 1."""
        async with SimServer(seed=43, defaults=REFUSED) as sim:
            root = workspace(sim.base_url)
            code = await anyio.to_thread.run_sync(main, [
                "run-task", "--task", str(root / "tasks" / "planning" / "t0.json"), "--agent-model", "sim/echo",
                "--config", str(root / "model_config.json"), "--prompts", str(root / "prompt_config.json"),
                "--data-dir", str(root / "data"), "--scenarios-dir", str(root / "scenarios"),
                "--logs-dir", str(tmp_path / "logs")])
        out, err = capsys.readouterr()
        assert 1 == code
        assert "t0 sim/echo: stop=error" in out
        [line] = [line for line in err.splitlines() if line.startswith("run failed: ")]
        assert line.startswith(f"run failed: PermanentLLMError: model 'sim/echo' at {sim.base_url}")
        assert "simulated bad request" in line

    async def test_tariff_run_lists_its_error_classes_and_exits_1(self, tmp_path, capsys):
        """`tariff run --mode live` whose calls are refused: exit 1, and after the report the error classes with
        a count and one example message."""
        async with SimServer(seed=44, defaults=REFUSED) as sim:
            suite, _ = tariff_suite(tmp_path, sim.base_url)
            code = await anyio.to_thread.run_sync(main, [
                "tariff", "run", "--path", str(suite), "--pack", str(REPO / "storage" / "packs" / "tariff"),
                "--mode", "live", "--model", "sim/tariff", "--config", str(tmp_path / "model_config.json"),
                "--prompts", str(REPO / "prompt_config.json"), "--out", str(tmp_path / "reports")])
        out = capsys.readouterr().out.splitlines()
        assert 1 == code
        start = out.index("errors by class:")
        assert [f"  PermanentLLMError × 3, e.g. tariff_pos_01_cotton_crew_tshirt: model 'sim/tariff' at "
                f"{sim.base_url}/chat/completions: HTTP 400: simulated bad request",
                "    what to do: the endpoint rejected the request: check the model name, API key and params in "
                "model_config.json, then rerun with --retry-errors"] == out[start + 1:start + 3]
