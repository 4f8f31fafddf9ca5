"""One sweep per output directory: a second sweep is refused naming the holder; a dead holder's lock is taken over.

The sweeps are real ``mpcbench-async sweep`` child processes against an in-process sim whose gate holds every
request open, so the first sweep is provably mid-run (a request in flight) when the second one starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import orjson
import pytest

from mpcbench_async._exceptions import InputError
from mpcbench_async.runtime import DirLock
from mpcbench_async.sim import SimServer
from mpcbench_async.testing import write_workspace
from tests.sweep.conftest import FAST_RETRY

UNITS = 8  # the workspace's 4 tasks × 2 agent models, all in flight at once (concurrency 32)
RUN = "import sys; from mpcbench_async.cli import main; raise SystemExit(main(sys.argv[1:]))"


def sweep_command(root: Path, out: Path, *extra: str) -> list[str]:
    """A ``sweep`` of the workspace at ``root`` into ``out``, as a child process."""
    return [sys.executable, "-c", RUN, "sweep", "--config", str(root / "model_config.json"),
            "--prompts", str(root / "prompt_config.json"), "--tasks-dir", str(root / "tasks"),
            "--data-dir", str(root / "data"), "--scenarios-dir", str(root / "scenarios"), "--out", str(out),
            "--quiet", *extra]


def refusal(out: Path, pid: int) -> str:
    return (f"error: {out}: another sweep (pid {pid}) is writing to this directory (lock {out.resolve() / '.lock'}); "
            "wait for it to end or pass another --out")


def lines(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


class TestOneSweepPerDirectory:
    async def test_second_sweep_is_refused_and_a_sigkilled_holders_lock_is_taken_over(self, tmp_path):
        """While a sweep holds --out, a second one exits 2 naming its pid and writes nothing; once the holder is
        SIGKILLed, the next sweep takes the lock over and finishes every unit exactly once."""
        held, all_held = set(), anyio.Event()

        async def hold(key: str) -> None:
            held.add(key)
            if len(held) == UNITS:
                all_held.set()
            await anyio.sleep_forever()

        out = tmp_path / "out"
        with anyio.fail_after(120):
            async with SimServer(seed=5, gate=hold) as sim:
                # The default call timeout, so no held request is retried while the sweeps run.
                root = write_workspace(tmp_path / "ws", base_url=sim.base_url, defaults={"retry": FAST_RETRY["retry"]})
                async with await anyio.open_process(sweep_command(root, out)) as holder:
                    try:
                        await all_held.wait()
                        second = await anyio.run_process(sweep_command(root, out), check=False)
                        lock_file = (out / ".lock").read_text()
                    finally:
                        holder.send_signal(signal.SIGKILL)
                    killed = await holder.wait()
                calls_while_held = sim.stats.total_received
                sim.gate = None
                third = await anyio.run_process(sweep_command(root, out), check=False)
        assert (2, b"", refusal(out, holder.pid)) == (second.returncode, second.stdout,
                                                      second.stderr.decode().strip())
        assert (f"{holder.pid}\n", -signal.SIGKILL, UNITS) == (lock_file, killed, calls_while_held)
        assert 0 == third.returncode, third.stderr.decode()
        runs, judgements = lines(out / "runs.jsonl"), lines(out / "judgements.jsonl")
        assert (8, 8, 8, 8) == (len(runs), len({r["key"] for r in runs}),
                                len(judgements), len({j["key"] for j in judgements}))
        assert {"ok"} == {r["status"] for r in runs + judgements}


class TestDirLock:
    def test_lock_is_reentrant_in_one_process_and_released_by_the_last_holder(self, tmp_path):
        """Nested holders in one process share the lock; another process can take it only after the outer exit."""
        probe = [sys.executable, "-c", "import sys; from mpcbench_async.runtime import DirLock\n"
                 "try:\n    DirLock(sys.argv[1]).acquire()\nexcept Exception as exc:\n    print(exc)\n"
                 "else:\n    print('acquired')", str(tmp_path)]
        with DirLock(tmp_path):
            with DirLock(tmp_path):
                pass
            inside = subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip()
        after = subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip()
        expected = (f"{tmp_path}: another sweep (pid {os.getpid()}) is writing to this directory "
                    f"(lock {tmp_path.resolve() / '.lock'}); wait for it to end or pass another ``out``")
        assert (expected, "acquired") == (inside, after)

    def test_abandon_removes_only_what_acquire_made(self, tmp_path):
        """``abandon`` (a sweep whose start failed): a new lock file and the directories acquire created go; an
        existing lock file gets its bytes back (an earlier sweep's pid), existing directories and other files stay;
        the lock is free again. Inside another holder of this process, it only lets go."""
        fresh = DirLock(tmp_path / "a" / "b")
        fresh.acquire()
        fresh.abandon()
        kept = tmp_path / "kept"
        kept.mkdir()
        (kept / ".lock").write_text("99999\n")
        (kept / "notes.txt").write_text("mine")
        earlier = DirLock(kept)
        earlier.acquire()
        earlier.abandon()
        restored = (kept / ".lock").read_text()
        for directory in (kept, tmp_path / "nested"):
            with DirLock(directory):
                inner = DirLock(directory)
                inner.acquire()
                inner.abandon()
                exists_inside = (directory / ".lock").exists()
            again = DirLock(directory)
            again.acquire()
            again.abandon()
            assert exists_inside
        assert (["kept", "nested"], [".lock", "notes.txt"], "99999\n") == (
            sorted(p.name for p in tmp_path.iterdir()), sorted(p.name for p in kept.iterdir()), restored)
        with DirLock(tmp_path / "a"):  # free, and a fresh file
            assert [".lock"] == [p.name for p in (tmp_path / "a").iterdir()]

    def test_a_regular_file_as_the_directory_is_one_user_error(self, tmp_path):
        """``out`` naming a regular file is an InputError naming the setting and the path, not a traceback."""
        path = tmp_path / "file"
        path.write_text("x")
        with pytest.raises(InputError) as caught:
            DirLock(path).acquire()
        assert f"``out`` {path}: cannot create the directory (File exists)" == str(caught.value)
