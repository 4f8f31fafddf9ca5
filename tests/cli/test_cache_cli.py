"""``mpcbench-async cache stats|prune`` as a user runs them: output, exit codes, one-line errors."""

from __future__ import annotations

import subprocess
import sys

import anyio
import orjson
import pytest

from mpcbench_async.llm import ResponseCache, WireCompletion


def cli(*args: str, cwd=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mpcbench_async", "cache", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=60)


@pytest.fixture
def filled(tmp_path):
    """A cache directory with 3 replies of sim/echo and 1 of sim/judge."""

    async def fill() -> None:
        with ResponseCache(tmp_path / "responses.sqlite3") as cache:
            for i, model in enumerate(["sim/echo", "sim/echo", "sim/echo", "sim/judge"]):
                await cache.put(f"digest{i}", model, WireCompletion(choices=[]))

    anyio.run(fill)
    return tmp_path


def test_stats_show_entries_and_models(filled):
    proc = cli("stats", str(filled))
    assert 0 == proc.returncode, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"{filled / 'responses.sqlite3'}: 4 entries, ")
    assert ["model", "entries", "hits", "oldest"] == lines[1].split()[:4]
    assert [["sim/echo", "3", "0"], ["sim/judge", "1", "0"]] == [line.split()[:3] for line in lines[2:]]
    data = orjson.loads(cli("stats", str(filled / "responses.sqlite3"), "--json").stdout)
    assert (4, [("sim/echo", 3), ("sim/judge", 1)]) == (data["entries"],
                                                        [(m["model"], m["entries"]) for m in data["models"]])


def test_prune_by_model_then_by_age(filled):
    proc = cli("prune", str(filled), "--model", "sim/judge")
    assert (0, f"{filled / 'responses.sqlite3'}: deleted 1 entries; 3 left") == (
        proc.returncode, proc.stdout.split(", ")[0].strip())
    assert "deleted 0 entries; 3 left" in cli("prune", str(filled), "--older-than", "1d").stdout
    assert "deleted 3 entries; 0 left" in cli("prune", str(filled), "--all").stdout


@pytest.mark.parametrize(("args", "message"), [
    (["prune", "{dir}"], "error: cache prune: give --older-than and/or --model, or --all to delete every entry"),
    (["stats", "{dir}/missing"], "error: {dir}/missing/responses.sqlite3: no response cache here (nothing cached yet, "
                                 "or pass the cache's location)"),
    (["stats", "{dir}/bad.sqlite3"], "error: {dir}/bad.sqlite3: not a usable response cache (file is not a "
                                     "database); delete it or pass another cache file"),
])
def test_user_errors_are_one_line_and_exit_2(filled, args, message):
    (filled / "bad.sqlite3").write_bytes(b"not a database" * 200)
    proc = cli(*(a.format(dir=filled) for a in args))
    assert (2, [message.format(dir=filled)]) == (proc.returncode, proc.stderr.splitlines())


def test_a_bad_age_is_a_usage_error(filled):
    proc = cli("prune", str(filled), "--older-than", "soon")
    assert 2 == proc.returncode
    assert ("mpcbench-async cache prune: error: argument --older-than: expected a duration like 30d, 12h, 45m or "
            "90s, got 'soon'") == proc.stderr.splitlines()[-1]


def test_the_default_location_is_in_the_working_directory(tmp_path):
    proc = cli("stats", cwd=tmp_path)
    assert (2, "error: .mpcbench_cache/responses.sqlite3: no response cache here (nothing cached yet, or pass the "
               "cache's location)") == (proc.returncode, proc.stderr.strip())
