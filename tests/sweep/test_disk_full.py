"""A sweep whose disk fills up: one ``error:`` line naming the file, no record lost, and a rerun resumes."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpcbench_async.cli import main
from mpcbench_async.runtime import read_jsonl
from mpcbench_async.testing import write_workspace
from tests.runtime.test_jsonl import disk_full_after


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to tell which file a write goes to")
def test_a_full_disk_stops_the_sweep_naming_the_file_and_a_rerun_resumes(tmp_path, monkeypatch, capsys):
    """runs.jsonl takes three records, half of the fourth, then ENOSPC: the sweep exits 2 with the file, the
    reason and what is safe; the three records read back whole, and the rerun runs only what is missing."""
    root = write_workspace(tmp_path / "ws")
    out = tmp_path / "out"
    args = ["sweep", "--config", str(root / "model_config.json"), "--prompts", str(root / "prompt_config.json"),
            "--tasks-dir", str(root / "tasks"), "--data-dir", str(root / "data"), "--scenarios-dir",
            str(root / "scenarios"), "--out", str(out), "--quiet"]
    disk_full_after(3, "runs.jsonl", monkeypatch)
    code = main(args)
    err = capsys.readouterr().err
    assert 2 == code, err
    assert (f"error: {out / 'runs.jsonl'}: disk full (ENOSPC: No space left on device) while appending a record; "
            "every record before it is intact (3 written by this writer); free space and rerun to resume"
            ) in err.splitlines()
    first, report = read_jsonl(out / "runs.jsonl")
    assert (3, False, []) == (len(first), report.torn_tail, report.bad_lines)
    assert (out / "runs.jsonl").read_bytes().endswith(b"\n")
    monkeypatch.undo()
    assert 0 == main(args), capsys.readouterr().err
    runs, report = read_jsonl(out / "runs.jsonl")
    assert (8, [], False) == (len(runs), report.bad_lines, report.torn_tail)  # 4 tasks × 2 agent models
    assert first == runs[:3] and 8 == len({r["key"] for r in runs})  # the first three were not run again


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to tell which file a write goes to")
def test_a_full_disk_under_the_calls_log_stops_the_sweep_and_a_plain_rerun_finishes(tmp_path, monkeypatch, capsys):
    """calls.jsonl takes five call records, then ENOSPC: the sweep stops with exit 2 and one line naming calls.jsonl
    (no unit records the disk's error as its own: before, each became a non-retryable error record, and a plain
    rerun skipped them forever); the rerun on a disk with room runs the rest and exits 0."""
    root = write_workspace(tmp_path / "ws")
    out = tmp_path / "out"
    args = ["sweep", "--config", str(root / "model_config.json"), "--prompts", str(root / "prompt_config.json"),
            "--tasks-dir", str(root / "tasks"), "--data-dir", str(root / "data"), "--scenarios-dir",
            str(root / "scenarios"), "--out", str(out), "--quiet"]
    disk_full_after(5, "calls.jsonl", monkeypatch)
    code = main(args)
    err = capsys.readouterr().err
    assert 2 == code, err
    assert [f"error: {out / 'calls.jsonl'}: disk full (ENOSPC: No space left on device) while appending a record; "
            "every record before it is intact (5 written by this writer); free space and rerun to resume"] == [
        line for line in err.splitlines() if line.startswith("error:")]
    runs, _ = read_jsonl(out / "runs.jsonl")
    assert [] == [r["key"] for r in runs if r["status"] == "error"]
    calls, report = read_jsonl(out / "calls.jsonl")
    assert (5, False) == (len(calls), report.torn_tail)
    monkeypatch.undo()
    assert 0 == main(args), capsys.readouterr().err
    runs, _ = read_jsonl(out / "runs.jsonl")
    judged, _ = read_jsonl(out / "judgements.jsonl")
    assert (8, 8) == (len({r["key"] for r in runs if r["status"] == "ok"}), len({j["key"] for j in judged}))
    assert [] == [r["key"] for r in runs + judged if r["status"] == "error"]
