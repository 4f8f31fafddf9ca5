"""The viewer's index: exactly the runs the summary counts, each read back by its offset, cached until files change."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import orjson

from mpcbench_async.mpcbench import AgentRunRecord
from mpcbench_async.sweep import kept_runs, summarize
from mpcbench_async.view import open_index
from tests.view.conftest import ERROR_KEY, INFRA_KEY, NEWER_ANSWER


def _digests(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir()) if p.is_file()}


class TestRows:
    def test_one_row_per_kept_run_with_the_sweeps_fields(self, sweep_dir):
        """The rows are kept_runs' rows: same keys, models, tasks, trials, statuses, checks and judge scores."""
        index = open_index(sweep_dir)
        rows = {r["key"]: r for r in index.runs()}
        expected = kept_runs(sweep_dir)
        assert 18 == len(expected) == len(rows) == index.count()
        for want in expected:
            got = rows[want.key]
            assert (want.agent_model, want.task_id, want.task_type, want.trial, want.status, want.infra_error,
                    want.checks_passed, want.checks_total, want.passed) == (
                got["model"], got["task"], got["family"], got["trial"], got["status"], bool(got["infra_error"]),
                got["checks_passed"], got["checks_total"], None if got["passed"] is None else bool(got["passed"]))
            assert want.scores == orjson.loads(got["scores"])

    def test_axes_are_the_mean_over_judges(self, sweep_dir):
        index = open_index(sweep_dir)
        for want in kept_runs(sweep_dir):
            got = index.run(want.key)
            ars = [s[0] for s in want.scores.values() if s[0] is not None]
            assert (sum(ars) / len(ars) if ars else None) == got["ars"]

    def test_each_row_reads_back_its_kept_record_by_offset(self, sweep_dir):
        """The line at a row's offset is that key's kept record: the newer ok line of a re-run key, not the first."""
        index = open_index(sweep_dir)
        for row in index.runs():
            record = index.record(row)
            assert isinstance(record, AgentRunRecord)
            assert (row["key"], row["status"]) == (record.key, record.status)
        echo_t0 = index.runs("model = 'sim/echo' AND task = 't0' AND trial = 0")[0]
        assert NEWER_ANSWER == index.record(echo_t0).run.final_answer

    def test_error_rows_keep_their_kind(self, sweep_dir):
        index = open_index(sweep_dir)
        assert ("error", 0, 0) == tuple(index.run(ERROR_KEY)[c] for c in ("status", "infra_error", "passed"))
        assert ("error", 1, None) == tuple(index.run(INFRA_KEY)[c] for c in ("status", "infra_error", "passed"))

    def test_judgements_are_the_kept_ones_of_the_run(self, sweep_dir):
        """One kept judgement per judge, the scores the table shows."""
        index = open_index(sweep_dir)
        row = index.runs("model = 'sim/oracle-agent'")[0]
        judged = index.judgements(row)
        assert ["sim/judge", "sim/judge?latency_ms=1"] == [j.judge_model for j in judged]
        scores = orjson.loads(row["scores"])
        for j in judged:
            assert j.run_key == row["key"]
            s = j.judgement.scores
            ars, sgr = s.answer_requirements_satisfaction.score, s.source_grounded_reasoning.score
            assert scores[j.judge_model] == [ars, sgr]

    def test_the_summary_is_the_sweeps(self, sweep_dir):
        assert summarize(sweep_dir) == open_index(sweep_dir).summary


class TestCache:
    def test_built_once_then_reused_while_files_are_unchanged(self, sweep_dir):
        first = open_index(sweep_dir)
        assert (True, True) == (first.rebuilt, first.on_disk)
        assert (sweep_dir / ".view" / "index.sqlite").is_file()
        first.close()
        again = open_index(sweep_dir)
        assert (False, 18) == (again.rebuilt, again.count())

    def test_rebuilt_when_a_file_changes(self, sweep_dir):
        """An appended run (a resumed sweep) is in the next index."""
        open_index(sweep_dir).close()
        runs = sweep_dir / "runs.jsonl"
        last = orjson.loads(runs.read_bytes().splitlines()[0])
        with runs.open("ab") as fh:
            fh.write(orjson.dumps({**last, "key": "run-f000000000000001", "trial": 9}) + b"\n")
        index = open_index(sweep_dir)
        assert (True, 19) == (index.rebuilt, index.count())
        assert 9 == index.run("run-f000000000000001")["trial"]

    def test_rebuilt_when_only_the_modification_time_changes(self, sweep_dir):
        open_index(sweep_dir).close()
        path = sweep_dir / "judgements.jsonl"
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        assert open_index(sweep_dir).rebuilt

    def test_an_unwritable_directory_gets_an_index_in_memory(self, sweep_dir):
        """``.view`` cannot be made (here: a file is in the way), so the index lives in memory."""
        (sweep_dir / ".view").write_text("not a directory")
        index = open_index(sweep_dir)
        assert (True, False, 18) == (index.rebuilt, index.on_disk, index.count())

    def test_the_sweeps_files_are_never_modified(self, sweep_dir):
        before = _digests(sweep_dir)
        index = open_index(sweep_dir)
        for row in index.runs():
            index.record(row)
            index.judgements(row)
        assert before == _digests(sweep_dir)
        assert [".view"] == [p.name for p in sweep_dir.iterdir() if p.is_dir()]


class TestOddDirectories:
    def test_an_index_from_another_version_is_rebuilt(self, sweep_dir):
        """A cached index whose stored summary no longer decodes (another viewer version) is built again."""
        import sqlite3

        open_index(sweep_dir).close()
        db = sqlite3.connect(sweep_dir / ".view" / "index.sqlite")
        db.execute("UPDATE meta SET value = ? WHERE name = 'summary'", (b'{"models": "not a list"}',))
        db.commit()
        db.close()
        index = open_index(sweep_dir)
        assert (True, 18) == (index.rebuilt, index.count())

    def test_a_sweep_without_runs(self, tmp_path):
        """A directory with only a manifest (a tariff-only sweep) has an empty index and a summary."""
        (tmp_path / "manifest.json").write_text('{"command": "x", "config_hash": "", "prompts_hash": "", '
                                                '"versions": {}, "started_at": "2026-11-23T00:00:00+00:00"}')
        index = open_index(tmp_path)
        assert (0, []) == (index.count(), index.summary.models)

    def test_a_run_file_rewritten_under_an_open_index_is_not_misread(self, sweep_dir):
        """Lines moved since the build: the run reads as missing (the page says so), never as another record."""
        index = open_index(sweep_dir)
        runs = sweep_dir / "runs.jsonl"
        runs.write_bytes(b"\n" * 7 + runs.read_bytes())
        assert [None] * 18 == [index.record(row) for row in index.runs()]
