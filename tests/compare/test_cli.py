"""``mpcbench-async compare`` as a user runs it: outputs, exit codes for CI, one-line errors for bad input."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from mpcbench_async.cli import main

from .reports import write_reports
from .sweeps import sweep_a, sweep_b

SUMMARY = "2 regression(s), 2 improvement(s), 2 new failure(s)"


def compare(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``mpcbench-async compare ARGS`` in this process (``cli.main``, what the console script calls): its exit code,
    stdout and stderr. A child process only adds an interpreter start-up; ``in_a_process`` runs one."""
    argv = ["compare", *map(str, args)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def in_a_process(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mpcbench_async", "compare", *map(str, args)], capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(autouse=True)
def _logging(restored_logging: None) -> None:
    """``cli.main`` configures logging: put it back after each test."""


@pytest.fixture
def dirs(tmp_path):
    return sweep_a(tmp_path / "A"), sweep_b(tmp_path / "B")


class TestExitCodes:
    def test_fail_on_regression_exits_1_and_names_each(self, dirs):
        """Every regression and new failure is printed on stderr, after the counts; the Markdown is on stdout (the
        one run in a child process: the exit code CI sees)."""
        proc = in_a_process(*dirs, "--fail-on-regression")
        assert 1 == proc.returncode
        assert [SUMMARY,
                "regression: `m` / `t1` ARS: 4.50 → 2.50 (-2.00; 95% CI [-2.00, -2.00] excludes 0)",
                "regression: `m` / `t4` checks: 100.0% → 50.0% (-50.0 pp; checks passed → failed, no CI)",
                "new failure: `m` / `t3`: ok → error (1 of 1 trial(s) in B ended in an error)",
                "new failure: `m` / `t4`: passed → failed (1 of 1 trial(s) in B failed)"] == proc.stderr.splitlines()
        assert proc.stdout.startswith("# Sweep comparison\n")

    def test_without_the_flag_exit_0(self, dirs):
        proc = compare(*dirs)
        assert (0, [SUMMARY]) == (proc.returncode, proc.stderr.splitlines())

    def test_no_regression_exits_0_with_the_flag(self, dirs):
        """B against itself: nothing changed, so the gate passes."""
        proc = compare(dirs[1], dirs[1], "--fail-on-regression")
        assert (0, ["0 regression(s), 0 improvement(s), 0 new failure(s)"]) == (
            proc.returncode, proc.stderr.splitlines())

    def test_tariff_reports(self, tmp_path):
        """Two tariff reports: the regressed case and the new failure, exit 1 with the flag."""
        proc = compare(*write_reports(tmp_path), "--fail-on-regression")
        assert (1, ["1 regression(s), 1 improvement(s), 1 new failure(s)",
                    "regression: `m` / `s` / `b` score: 1.00 → 0.00 (-1.00; Δ ≤ −0.05)",
                    "new failure: `m` / `s` / `b`: passed → error (no reply within 60 s)"]) == (
            proc.returncode, proc.stderr.splitlines())
        assert proc.stdout.startswith("# Benchmark comparison\n")


class TestOutputs:
    def test_out_writes_markdown_and_json(self, dirs, tmp_path):
        """--out FILE.md writes FILE.md and FILE.json; stdout still has the Markdown, identical to the file."""
        proc = compare(*dirs, "--out", tmp_path / "reports" / "diff.md")
        base = tmp_path / "reports" / "diff"
        assert (0, f"compare -> {base}.md and {base}.json") == (proc.returncode, proc.stderr.splitlines()[0])
        assert proc.stdout == (tmp_path / "reports" / "diff.md").read_text()
        data = orjson.loads((tmp_path / "reports" / "diff.json").read_bytes())
        assert ("sweeps", ["t1", "t4"], ["m2"]) == (data["kind"], [f["task"] for f in data["regressions"]],
                                                    data["models_only_in_b"])

    def test_json_prints_the_json(self, dirs):
        proc = compare(*dirs, "--json", "--min-delta", "3")
        data = orjson.loads(proc.stdout)
        assert (0, 3.0, [("t2", "ars")]) == (proc.returncode, data["min_delta"],
                                             [(f["task"], f["metric"]) for f in data["improvements"]])


class TestBadInput:
    def run_error(self, *args: str | Path) -> str:
        proc = compare(*args)
        assert (2, "") == (proc.returncode, proc.stdout)
        assert "Traceback" not in proc.stderr
        return proc.stderr

    def test_a_sweep_and_a_report_are_not_compared(self, dirs, tmp_path):
        report, _ = write_reports(tmp_path)
        assert (f"error: cannot compare {dirs[0]} (a sweep directory) with {report} (a tariff report): give two "
                "sweep directories or two tariff reports\n") == self.run_error(dirs[0], report)

    def test_missing_path(self, dirs, tmp_path):
        assert f"error: {tmp_path / 'nope'}: no such file or directory\n" == self.run_error(dirs[0], tmp_path / "nope")

    def test_a_directory_that_is_not_a_sweep(self, dirs, tmp_path):
        (tmp_path / "empty").mkdir()
        assert (f"error: {tmp_path / 'empty'}: not a sweep directory (it has no runs.jsonl, levels.jsonl or "
                "manifest.json)\n") == self.run_error(tmp_path / "empty", dirs[1])

    def test_a_sweep_file_instead_of_its_directory(self, dirs):
        runs = dirs[0] / "runs.jsonl"
        assert f"error: {runs}: a file of a sweep; to compare sweeps, give the directory {dirs[0]}\n" == \
            self.run_error(runs, dirs[1])

    def test_a_json_file_that_is_not_a_report(self, tmp_path):
        (tmp_path / "x.json").write_text('{"suite": "s"}')
        report, _ = write_reports(tmp_path)
        assert (f"error: {tmp_path / 'x.json'}: not a benchmark report (Object missing required field `mode`)\n"
                == self.run_error(tmp_path / "x.json", report))

    def test_a_sweep_without_runs(self, dirs, tmp_path):
        (tmp_path / "new").mkdir()
        (tmp_path / "new" / "runs.jsonl").write_bytes(b"")
        assert (f"error: {tmp_path / 'new'}: nothing to compare (runs.jsonl holds no agent run of the current "
                "experiment, there is no tariff report and no levels.jsonl)\n") == self.run_error(dirs[0],
                                                                                       tmp_path / "new")

    def test_a_confidence_out_of_range(self, dirs):
        stderr = self.run_error(*dirs, "--confidence", "1.5")
        assert stderr.endswith("compare: error: argument --confidence: must be between 0 and 1 (e.g. 0.95), "
                               "got 1.5\n")
