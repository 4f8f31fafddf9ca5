"""The sweep summary's reading of deterministic checks: n/a excluded, logs from before ``status`` still read."""

from __future__ import annotations

import orjson

from mpcbench_async.sweep import summarize


def _run(key: str, task_id: str, checks: list[dict]) -> dict:
    return {"key": key, "status": "ok", "model": "m", "task_id": task_id, "task_type": "planning",
            "scenario_id": "s", "trial": 0, "run": {"stop_reason": "final"}, "checks": checks}


def _write(path, records: list[dict]) -> None:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


class TestChecksInSummary:
    def test_pass_rate_excludes_n_a(self, tmp_path):
        """Only checks that applied count: 1 pass, 1 fail and 2 n/a give 1/2."""
        _write(tmp_path / "runs.jsonl", [_run("a", "t1", [
            {"name": "planning.slots_found", "status": "pass", "detail": ""},
            {"name": "planning.slots_free", "status": "fail", "detail": ""},
            {"name": "planning.duration", "status": "n/a", "detail": ""},
            {"name": "planning.participants", "status": "n/a", "detail": ""}])])
        model = summarize(tmp_path).models[0]
        assert (1, 2, 0.5) == (model.checks_passed, model.checks_total, model.check_pass_rate)

    def test_run_with_only_n_a_checks_is_unverified(self, tmp_path):
        """A run whose checks are all n/a is unverified: no pass^k at all, one unverified run, no task checked."""
        _write(tmp_path / "runs.jsonl", [_run("a", "t1", [{"name": "x", "status": "n/a", "detail": ""}])])
        model = summarize(tmp_path).models[0]
        assert (0, 0, None, None, 1, 1, 0) == (model.checks_passed, model.checks_total, model.check_pass_rate,
                                              model.pass_at_k, model.unverified, model.tasks, model.tasks_checked)

    def test_old_logs_with_passed_still_decode(self, tmp_path):
        """Records written before ``status`` existed (``passed: true/false``) count as pass / fail."""
        _write(tmp_path / "runs.jsonl", [
            _run("a", "t1", [{"name": "x", "passed": True, "detail": ""},
                             {"name": "y", "passed": False, "detail": ""}]),
            _run("b", "t2", [{"name": "x", "passed": True, "detail": ""}])])
        model = summarize(tmp_path).models[0]
        assert (2, 3, 0.6667, 0.5) == (model.checks_passed, model.checks_total, model.check_pass_rate, model.pass_at_k)
