"""What every scenario of ``bench/chaos.py`` shares: its result row, child sweeps, and reading a sweep's books.

Every sweep here is a real ``mpcbench-async sweep`` child process (``python -m mpcbench_async`` or a ``-c``
wrapper that patches one system call first); nothing runs the sweep in the harness's own process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import orjson
from anyio.abc import Process

from mpcbench_async.runtime import iter_jsonl

MAIN = [sys.executable, "-m", "mpcbench_async"]
UNIT_FILES = ("runs.jsonl", "judgements.jsonl")


@dataclass
class Row:
    """One scenario's line of the table: trials tried and held, the worst figure seen, and what broke."""

    scenario: str
    tried: int = 0
    held: int = 0
    worst: str = ""
    failures: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)

    def trial(self, problems: Sequence[str], label: str, count: int = 1) -> None:
        """Count ``count`` trials judged together: they held when ``problems`` is empty (else each problem is
        kept, prefixed with ``label``)."""
        self.tried += count
        self.failures += [f"{label}: {p}" for p in problems]
        self.held += 0 if problems else count


@dataclass
class Child:
    """How one child sweep ended."""

    code: int
    stdout: str
    stderr: str
    killed: bool


def sweep_args(root: Path, out: Path, *extra: str) -> list[str]:
    """``sweep`` over the workspace ``write_workspace`` made at ``root``, into ``out``."""
    return ["sweep", "--config", str(root / "model_config.json"), "--prompts", str(root / "prompt_config.json"),
            "--tasks-dir", str(root / "tasks"), "--data-dir", str(root / "data"), "--scenarios-dir",
            str(root / "scenarios"), "--out", str(out), "--quiet", *extra]


async def run_child(argv: Sequence[str], *, env: dict[str, str] | None = None,
                    watch: Callable[[Process], Awaitable[None]] | None = None) -> Child:
    """Run ``argv`` to its end, its output captured; ``watch(process)`` runs beside it (to kill it, say)."""
    async with await anyio.open_process(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        env={**os.environ, **(env or {})}) as proc:
        chunks: dict[str, list[bytes]] = {"out": [], "err": []}

        async def drain(stream: Any, into: list[bytes]) -> None:
            async for chunk in stream:
                into.append(chunk)

        async with anyio.create_task_group() as tg:
            tg.start_soon(drain, proc.stdout, chunks["out"])
            tg.start_soon(drain, proc.stderr, chunks["err"])
            if watch is not None:
                tg.start_soon(watch, proc)
            code = await proc.wait()
            tg.cancel_scope.cancel()
    return Child(code=code, stdout=b"".join(chunks["out"]).decode("utf-8", "replace"),
                 stderr=b"".join(chunks["err"]).decode("utf-8", "replace"), killed=code == -signal.SIGKILL)


def records(path: Path) -> list[dict[str, Any]]:
    """The whole records of a JSONL file (none if it does not exist); a torn or bad line is left out, quietly."""
    return list(iter_jsonl(path, warn=False)) if path.exists() else []


def ok_keys(out: Path) -> dict[str, Counter[str]]:
    """Per unit file: how many ok records each key has."""
    return {name: Counter(r["key"] for r in records(out / name) if r.get("status") == "ok") for name in UNIT_FILES}


def unit_problems(out: Path, expected: dict[str, int]) -> list[str]:
    """What is wrong with the units of a finished sweep: keys missing (fewer ok keys than ``expected`` per file) or
    done twice (a run recorded ok twice; a judgement twice that the summary does not explain as stale: it judged
    an earlier run of a unit whose record was lost and that was run again), or counts in ``summary.json`` that
    differ from the plan."""
    problems = []
    summary = orjson.loads((out / "summary.json").read_bytes()) if (out / "summary.json").exists() else {}
    allowed = {"runs.jsonl": 0, "judgements.jsonl": summary.get("stale_judgements", 0)}
    for name, counts in ok_keys(out).items():
        extra = sum(n - 1 for n in counts.values())
        if len(counts) != expected[name]:
            problems.append(f"{name}: {len(counts)} ok units, expected {expected[name]}")
        if extra != allowed[name]:
            problems.append(f"{name}: {extra} ok records beyond one per unit, {allowed[name]} of them stale")
    counted = (summary.get("runs"), summary.get("judgements"), summary.get("duplicates_ignored"))
    if counted != (expected["runs.jsonl"], expected["judgements.jsonl"], 0):
        problems.append(f"summary.json counts (runs, judgements, duplicates ignored) {counted}, expected "
                        f"({expected['runs.jsonl']}, {expected['judgements.jsonl']}, 0)")
    return problems


def current_judgements(out: Path) -> set[str]:
    """Judgement keys with an ok record of the latest ok run of their unit (started once that run had finished).

    An older one judged an earlier run of the unit, whose record was lost since: it is stale, and a resume judges
    the run again, also when the damage left that stale record and cut the current one."""
    finished = {r["key"]: r.get("finished_at") or 0.0 for r in records(out / "runs.jsonl") if r.get("status") == "ok"}
    return {j["key"] for j in records(out / "judgements.jsonl") if j.get("status") == "ok"
            and j["run_key"] in finished and (j.get("started_at") or 0.0) >= finished[j["run_key"]]}


def temp_files(out: Path) -> list[str]:
    """Temporary files left in a sweep directory (``.<name>.tmp-<pid>`` of an atomic replace, any ``*.tmp*``)."""
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and ".tmp" in p.name)


def whole_lines(path: Path) -> set[bytes]:
    """The newline-terminated lines of a file (its record lines), to check later that none was lost."""
    if not path.exists():
        return set()
    data = path.read_bytes()
    return set(data[: data.rfind(b"\n") + 1].splitlines())


def lost_lines(before: dict[str, set[bytes]], out: Path) -> list[str]:
    """Files whose whole lines of ``before`` are not all still there."""
    return [f"{name}: {len(lines - whole_lines(out / name))} of its {len(lines)} records lost"
            for name, lines in before.items() if lines - whole_lines(out / name)]


def snapshot(out: Path, names: Sequence[str] = ("runs.jsonl", "judgements.jsonl", "calls.jsonl", "ledger.jsonl")
             ) -> dict[str, set[bytes]]:
    return {name: whole_lines(out / name) for name in names}


def traceback_in(child: Child) -> list[str]:
    return ["a traceback on stderr"] if "Traceback (most recent call last)" in child.stderr else []
