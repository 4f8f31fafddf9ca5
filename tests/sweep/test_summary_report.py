"""What the summary tells a person: errors by class with an example and what to do, wall time that is never a
made-up 0.0 s, a terminal table that never cuts a name and explains its columns, and summary.md alike."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec

from mpcbench_async.mpcbench import MPCBenchSuite
from mpcbench_async.mpcbench._suite import plan_outcome
from mpcbench_async.report import render_markdown, render_table
from mpcbench_async.runner import Runner
from mpcbench_async.sim import SimServer
from mpcbench_async.sweep import Manifest, summarize
from mpcbench_async.sweep._records import Invocation
from mpcbench_async.testing import write_workspace
from tests.sweep.conftest import plan_of

from .summary_lines import call, case, judgement, run, write

LIMITED = "model 'm' at http://h/v1: HTTP 429: slow down"
RATE_HINT = ("rate limited (HTTP 429): lower the model's limits (rpm, tpm, max_concurrency) in model_config.json, "
             "or rerun the same command to retry these units")


def _errors(tmp_path: Path) -> None:
    """Runs of m: two 429s kept (a third redone ok), one HTTP 400; a judge timeout of j; a tariff HTTP 400 of m;
    a breaker error of m2 whose endpoint only its calls name."""
    write(tmp_path / "runs.jsonl",
          run("run-a", status="error", retryable=True, error_class="RateLimitError", error_message=LIMITED),
          run("run-b", status="error", retryable=True, error_class="RateLimitError", error_message=LIMITED + " (b)"),
          run("run-c", status="error", retryable=True, error_class="RateLimitError", error_message=LIMITED + " (c)"),
          run("run-c"),
          run("run-d", status="error", error_class="PermanentLLMError",
              error_message="model 'm' at http://h/v1: HTTP 400: unknown parameter 'max_tokens'"),
          run("run-e", model="m2", status="error", retryable=True, error_class="CircuitOpenError",
              error_message="circuit open after 5 failures"),
          run("run-f"))
    write(tmp_path / "judgements.jsonl",
          judgement("judge-f", "run-f", judge="j", status="error", retryable=True, error_class="LLMTimeoutError",
                    error_message="model 'j' at http://judge/v1: no reply within 120 s " + "x" * 300))
    write(tmp_path / "tariff_m.jsonl", case("case-1", "c1", status="error", error_class="PermanentLLMError",
                                            error_message="model 'm' at http://h/v1: HTTP 400: bad"))
    write(tmp_path / "calls.jsonl", call("run-e/turn1", model="m2", status="error", tokens=0,
                                         error_message="model 'm2' at http://dead:9/v1: connection refused"))


class TestErrorClasses:
    def test_grouped_by_class_and_model_with_example_endpoint_and_hint(self, tmp_path):
        """Kept errors only (run-c was redone), most frequent first; the example is a kept record's message (run-a's:
        the latest 429 line, run-c's, was redone); m2's endpoint comes from its calls; long examples are cut to 200."""
        _errors(tmp_path)
        groups = [(e.error_class, e.model, e.count, e.retryable, e.files, e.endpoint)
                  for e in summarize(tmp_path).errors]
        assert [("PermanentLLMError", "m", 2, 0, {"runs.jsonl": 1, "tariff_m.jsonl": 1}, "http://h/v1"),
                ("RateLimitError", "m", 2, 2, {"runs.jsonl": 2}, "http://h/v1"),
                ("CircuitOpenError", "m2", 1, 1, {"runs.jsonl": 1}, "http://dead:9/v1"),
                ("LLMTimeoutError", "j", 1, 1, {"judgements.jsonl": 1}, "http://judge/v1")] == groups
        by_class = {e.error_class: e for e in summarize(tmp_path).errors}
        assert (LIMITED, RATE_HINT) == (by_class["RateLimitError"].example, by_class["RateLimitError"].hint)
        assert (200, "…") == (len(by_class["LLMTimeoutError"].example), by_class["LLMTimeoutError"].example[-1])
        assert by_class["CircuitOpenError"].hint.startswith("the model's endpoint failed many calls in a row")

    def test_an_example_is_found_when_the_latest_error_of_its_class_was_redone(self, tmp_path):
        """a and b hit 429; b (the later line) was redone ok: the example is a's message, read in a second pass."""
        write(tmp_path / "runs.jsonl",
              run("run-a", status="error", retryable=True, error_class="RateLimitError", error_message="first"),
              run("run-b", status="error", retryable=True, error_class="RateLimitError", error_message="second"),
              run("run-b"))
        [group] = summarize(tmp_path).errors
        assert (1, "first") == (group.count, group.example)

    def test_unknown_classes_get_a_hint_by_kind(self, tmp_path):
        """A class without its own hint: task-level errors point at the file and --retry-errors, infrastructure
        errors at a rerun."""
        write(tmp_path / "runs.jsonl", run("run-a", status="error", error_class="ToolCrash", error_message="boom"),
              run("run-b", model="n", status="error", retryable=True, error_class="Weird", error_message="w"))
        hints = {e.error_class: e.hint for e in summarize(tmp_path).errors}
        assert {"ToolCrash": "a task-level error: see error_message in runs.jsonl; fix the cause, then rerun with "
                             "``retry_errors=True``",
                "Weird": "an infrastructure error: rerun the same command to retry; details in runs.jsonl"} == hints

    def test_the_terminal_and_markdown_list_them(self, tmp_path):
        """render_table prints each group with its example (a kept record's: here the tariff case's) and hint
        after the table; summary.md has the same in ## Errors."""
        _errors(tmp_path)
        summary = summarize(tmp_path)
        table, markdown = render_table(summary), render_markdown(summary)
        assert ("errors by class and model:\n"
                "  PermanentLLMError × 2: m at http://h/v1 (task-level; runs.jsonl 1, tariff_m.jsonl 1)\n"
                "    e.g. model 'm' at http://h/v1: HTTP 400: bad\n"
                "    what to do: the endpoint rejected the request: check the model name, API key and params in "
                "model_config.json, then rerun with ``retry_errors=True``\n"
                "  RateLimitError × 2: m at http://h/v1 (2 infrastructure, a rerun retries them; runs.jsonl 2)\n"
                f"    e.g. {LIMITED}\n"
                f"    what to do: {RATE_HINT}\n") in table
        assert ("## Errors\n\n| error class | model | endpoint | count | infrastructure | records | example | what to "
                "do |\n|---|---|---|---:|---:|---|---|---|\n"
                "| PermanentLLMError | m | http://h/v1 | 2 | 0 | runs.jsonl 1, "
                "tariff_m.jsonl 1 | model 'm' at http://h/v1: HTTP 400: bad | the endpoint "
                "rejected the request: check the model name, API key and params in model_config.json, then rerun "
                "with ``retry_errors=True`` |\n") in markdown

    def test_none_is_said_too(self, tmp_path):
        write(tmp_path / "runs.jsonl", run("run-a"))
        summary = summarize(tmp_path)
        assert "\nerrors: none\n" in render_table(summary)
        assert "## Errors\n\nNone: every counted record is ok.\n" in render_markdown(summary)


async def test_a_dead_endpoint_in_a_real_sweep_is_named_with_what_to_do(tmp_path: Path):
    """A 404 model: five HTTP 404s (task-level) then three fast failures of its open breaker (infrastructure),
    each group with the sim's endpoint; its row has 8 runs, 5 errors, 3 infra errors and pass^k 0/5."""
    dead = "sim/echo?fault=404&fail_first=999"
    async with SimServer(seed=5) as sim:
        root = write_workspace(tmp_path / "ws", base_url=sim.base_url, tasks=8, agent_models=("sim/lazy-agent", dead))
        config, prompts, plan = plan_of(root)
        async with Runner(config, out_dir=tmp_path / "out", concurrency=1) as runner:
            await runner.run(MPCBenchSuite(plan, prompts))
    summary = summarize(tmp_path / "out")
    row = next(m for m in summary.models if m.model == dead)
    assert (8, 5, 3, 5, 0.0) == (row.runs, row.errors, row.infra_errors, row.tasks, row.pass_at_k)
    groups = [(e.error_class, e.model, e.count, e.retryable, e.endpoint) for e in summary.errors]
    endpoint = f"{sim.base_url}/chat/completions"
    assert [("PermanentLLMError", dead, 5, 0, endpoint), ("CircuitOpenError", dead, 3, 3, endpoint)] == groups
    assert f"  CircuitOpenError × 3: {dead} at {endpoint} (3 infrastructure, a rerun retries them; " in \
        render_table(summary)


def _manifest(path: Path, *spans: tuple[str, str | None]) -> None:
    history = [Invocation(command="c", experiment=1, started_at=s, finished_at=f) for s, f in spans]
    manifest = Manifest(command="c", config_hash="", prompts_hash="", versions={}, started_at=spans[-1][0],
                        finished_at=spans[-1][1], history=history)
    (path / "manifest.json").write_bytes(msgspec.json.encode(manifest))


class TestWallTime:
    def test_summed_over_invocations_and_an_unfinished_one_is_said(self, tmp_path):
        """10 s, a killed invocation, then a 0.04 s resume: 10.04 s over 3 invocations, latest < 0.1 s."""
        _manifest(tmp_path, ("2026-01-01T00:00:00+00:00", "2026-01-01T00:00:10+00:00"),
                  ("2026-01-01T01:00:00+00:00", None),
                  ("2026-01-01T02:00:00+00:00", "2026-01-01T02:00:00.040000+00:00"))
        summary = summarize(tmp_path)
        assert (10.04, 0.04, 3, 1) == (summary.wall_s, summary.last_wall_s, summary.invocations,
                                       summary.unfinished_invocations)
        assert ("wall time 10.0 s over 3 invocations (latest < 0.1 s); 1 invocation(s) stopped without a finish "
                "time, not counted") in render_table(summary)

    def test_a_corrupt_manifest_leaves_wall_time_unknown(self, tmp_path):
        """An undecodable manifest.json does not stop the summary; the wall time is unknown, never 0.0 s."""
        (tmp_path / "manifest.json").write_text("{not json")
        write(tmp_path / "runs.jsonl", run("run-a"))
        summary = summarize(tmp_path)
        assert (1, None, 0) == (summary.runs, summary.wall_s, summary.invocations)
        table = render_table(summary)
        assert "wall time unknown (no readable manifest.json)" in table
        assert "0.0 s" not in table

    def test_summarize_command_with_a_corrupt_manifest_exits_0(self, tmp_path):
        """``mpcbench-async summarize`` on a directory whose manifest is damaged writes and prints the summary,
        says the wall time is unknown, warns naming manifest.json, and leaves no temporary file."""
        (tmp_path / "manifest.json").write_text("{not json")
        write(tmp_path / "runs.jsonl", run("run-a"))
        done = subprocess.run([sys.executable, "-m", "mpcbench_async", "summarize", str(tmp_path)],
                              capture_output=True, text=True)
        assert 0 == done.returncode, done.stderr
        assert "wall time unknown (no readable manifest.json)" in done.stdout
        assert "manifest.json" in done.stderr
        assert ["manifest.json", "runs.jsonl", "summary.inputs.json", "summary.json", "summary.md"] == sorted(
            p.name for p in tmp_path.iterdir())

    def test_no_finished_invocation_is_unknown(self, tmp_path):
        _manifest(tmp_path, ("2026-01-01T00:00:00+00:00", None))
        assert "wall time unknown (no invocation has recorded its finish)" in render_table(summarize(tmp_path))


class TestTable:
    def test_long_names_are_never_cut_and_columns_fit_them(self, tmp_path):
        """Two 38-character names that share their first 30 characters appear whole, and the columns line up."""
        a, b = "provider/very-long-model-name-v1-alpha", "provider/very-long-model-name-v1-gamma"
        write(tmp_path / "runs.jsonl", run("run-a", model=a), run("run-b", model=b))
        write(tmp_path / "judgements.jsonl", judgement("judge-a", "run-a", model=a, judge="judges/rubric-judge-2025"),
              judgement("judge-b", "run-b", model=b, judge="judges/rubric-judge-2025"))
        lines = render_table(summarize(tmp_path)).splitlines()
        assert lines[2].startswith(f"{a} judges/rubric-judge-2025 ")
        assert lines[3].startswith(f"{b} judges/rubric-judge-2025 ")
        assert lines[0].index("ARS") + 3 == lines[2].index("4.00 ± 0.00") + len("4.00 ± 0.00")

    def test_names_over_forty_characters_get_an_alias_and_a_legend(self, tmp_path):
        long = "org/" + "x" * 40 + "-instruct"
        write(tmp_path / "runs.jsonl", run("run-a", model=long), run("run-b", model="short"))
        table = render_table(summarize(tmp_path))
        assert ["#1", "–"] == table.splitlines()[2].split()[:2]
        assert f"\nmodels: #1 = {long}\n" in table

    def test_the_legend_explains_every_column(self, tmp_path):
        write(tmp_path / "runs.jsonl", run("run-a"))
        table = " ".join(render_table(summarize(tmp_path)).split())
        for phrase in ("ARS = answer-requirements satisfaction", "SGR = source-grounded reasoning",
                       "checks = deterministic checks passed (n/a excluded)",
                       "pass^k = share of checked tasks whose k trials all passed",
                       "unver = unverified runs: no check applied", "err = task-level errors",
                       "infra = infrastructure errors", "unsc = judgements left unscored",
                       "tokens, cost $ = kept/spent", "p50, p95 = agent call latency"):
            assert phrase in table

    def test_kept_and_spent_tokens_and_what_was_left_out(self, tmp_path):
        """The row shows kept/spent tokens compactly; the footer lists every kind of record left out."""
        (tmp_path / "experiment_keys.txt").write_text("run-a\nrun-b\njudge-a\n")
        write(tmp_path / "runs.jsonl", run("run-a", started=1, finished=2), run("run-a", started=5, finished=6),
              run("run-old"), b'{"key": "run-b"}')
        write(tmp_path / "judgements.jsonl", judgement("judge-a", "run-a", started=3, finished=4))
        write(tmp_path / "calls.jsonl", call("run-a/turn1", tokens=12_000, started=1.5),
              call("run-a/turn1", tokens=12_000, started=5.5))
        table = render_table(summarize(tmp_path))
        assert "12.0k/24.0k" in table.splitlines()[2]
        assert table.endswith(
            "  1 duplicate record(s) of units already kept are not counted (the last ok record of a unit counts)\n"
            "  1 stale judgement(s) are not counted (they judged an earlier run of a unit that was run again)\n"
            "  1 record(s) of earlier experiments in this directory are not counted (see manifest.json)\n"
            "  1 line(s) that do not decode as records are not counted (runs.jsonl 1)")

    def test_tariff_has_its_own_section(self, tmp_path):
        write(tmp_path / "tariff_sim_tariff.jsonl", case("case-1", "c1", model="sim/tariff"),
              case("case-2", "c2", model="sim/tariff", score=0.3, passed=False))
        summary = summarize(tmp_path)
        assert ("tariff suites (an errored case is a failure scoring 0):\n"
                "suite  model      cases passed pass rate avg score err infra tokens kept/spent cost $ kept/spent\n"
                "------------------------------------------------------------------------------------------------\n"
                "tariff sim/tariff     2      1       50%     0.650   0     0               0/0     0.0000/0.0000\n"
                ) in render_table(summary)
        assert ("| tariff | sim/tariff | 2 | 1 | 50% | 0.650 | 0 | 0 | 0 | 0 | 0.0000 | 0.0000 |"
                in render_markdown(summary))


async def test_a_judge_that_never_replies_with_scores_is_an_error_class(tmp_path: Path):
    """A judge (sim/echo) that answers every try with no judgement JSON: each judgement is an UnparsableJudgement
    error — in the terminal summary and summary.md, with the last reply's problem and what to do — and the sweep
    is incomplete (the CLI exits 1), where an "unscored" ok record used to give a clean result."""
    async with SimServer(seed=5) as sim:
        root = write_workspace(tmp_path / "ws", base_url=sim.base_url, tasks=2, agent_models=("sim/lazy-agent",),
                               judge_models=("sim/echo",))
        config, prompts, plan = plan_of(root)
        async with Runner(config, out_dir=tmp_path / "out", concurrency=1) as runner:
            await runner.run(MPCBenchSuite(plan, prompts, judge_attempts=2))
    summary = summarize(tmp_path / "out")
    problem = "the reply is not a JSON object (unexpected character, expected a JSON value: line 1 column 1 (char 0))"
    example = f"judge sim/echo gave no parsable judgement in 2 tries; the last reply: {problem}"
    hint = ("the judge never replied with the scores its prompt asks for (the last reply's problem is in the "
            "example): check the judge model and the judge prompts of prompt_config.json, then rerun with "
            "``retry_errors=True``")
    assert ("errors by class and model:\n"
            "  UnparsableJudgement × 2: sim/echo (task-level; judgements.jsonl 2)\n"
            f"    e.g. {example}\n"
            f"    what to do: {hint}\n") in render_table(summary)
    assert (f"| UnparsableJudgement | sim/echo | – | 2 | 0 | judgements.jsonl 2 | {example} | {hint} |\n"
            in render_markdown(summary))
    outcome = plan_outcome(tmp_path / "out", plan)
    assert (False, 2) == (outcome.complete, outcome.failed)
