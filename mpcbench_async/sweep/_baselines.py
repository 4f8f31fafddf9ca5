"""The certificate's baselines: the sim agents and non-answers run on a sweep's own tasks, cached across sweeps.

Why apart from the certificate: this part runs at the end of a sweep (it needs the plan's
tasks and data and calls the embedded sim), while the certificate itself is computed by
every ``summarize`` from the file this part writes. Per task: ``sim/oracle-agent`` and
``sim/lazy-agent`` run and checked like any run (``pass``, ``fail``, ``unverified`` when no
check applied, ``error``), and the checks run on ``NON_ANSWERS`` and the task's own prompt
repeated back (a pass there is a vacuous pass). Through a client of their own, so none of
their calls reach ``calls.jsonl``; a few ms of CPU per task. Each task's result is cached in
``cache_dir`` under a key over the task file, the scenario's data, the agent prompt,
``max_turns`` and ``mpcbench.baselines_version()`` (the checks' and baselines' source), so a
sweep of the same tasks reuses it and any change reruns it. The results and the thresholds
in force (model config ``$.certificate``) go to ``certificate_baselines.json`` in the sweep
directory.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import msgspec

from .._exceptions import InputError
from .._prompts import PromptConfig
from ..llm import LLMClient, ModelConfig
from ..mpcbench import CheckResult, SweepPlan, baselines_version, run_agent, run_checks
from ..runtime import atomic_write_bytes
from ._summary_types import Thresholds

__all__ = ["BASELINES", "NON_ANSWERS", "BaselineFile", "TaskBaseline", "Thresholds", "default_cache_dir",
           "read_baselines", "thresholds_from", "write_baselines"]

log = logging.getLogger(__name__)

BASELINES = "certificate_baselines.json"
ORACLE, LAZY = "sim/oracle-agent", "sim/lazy-agent"
# Answers that answer nothing; the task's own prompt, repeated back, is tried too.
NON_ANSWERS = ("", "I don't know.",
               "Sorry, I could not find that information. I will look into it and get back to you.")
Outcome = Literal["pass", "fail", "unverified", "error"]


class TaskBaseline(msgspec.Struct, kw_only=True):
    """The baselines on one task: each agent's outcome, and the checks the non-answers passed."""

    task_id: str
    task_type: str
    oracle: Outcome
    lazy: Outcome
    vacuous_checks: int = 0  # checks that applied to a non-answer
    vacuous_passes: list[str] = []  # "check on 'non-answer'" for each one passed


class BaselineFile(msgspec.Struct, kw_only=True):
    """``certificate_baselines.json``: the baselines of the sweep's tasks and the thresholds in force."""

    thresholds: Thresholds = msgspec.field(default_factory=Thresholds)
    skipped: bool = False  # --no-certificate
    version: str = ""
    tasks: list[TaskBaseline] = []


def thresholds_from(config: ModelConfig) -> Thresholds:
    """The model config's ``$.certificate`` thresholds; a bad one is an ``InputError`` naming the file and field."""
    try:
        return msgspec.convert(config.certificate, Thresholds)
    except msgspec.ValidationError as exc:
        raise InputError(f"{config.source}: $.certificate: {exc}") from None


def default_cache_dir() -> Path:
    """Where baselines are cached across sweeps: ``$XDG_CACHE_HOME/mpcbench-async/certificate`` (``~/.cache``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mpcbench-async" / "certificate"


def read_baselines(out_dir: Path) -> BaselineFile | None:
    """The sweep's baselines file, or None when it has none (or it does not decode: warned, not trusted)."""
    path = out_dir / BASELINES
    try:
        return msgspec.json.decode(path.read_bytes(), type=BaselineFile)
    except FileNotFoundError:
        return None
    except (OSError, msgspec.DecodeError) as exc:
        log.warning("%s: unreadable (%s); the certificate has no baselines", path, exc)
        return None


async def write_baselines(out_dir: Path, plan: SweepPlan, prompts: PromptConfig, thresholds: Thresholds, *,
                          skip: bool = False, cache_dir: Path | None = None, keep: Iterable[str] = ()) -> None:
    """Run (or take from the cache) the baselines on every task of ``plan`` and write ``BASELINES``.

    ``keep``: the experiment's other tasks (run by earlier invocations into the directory), whose baselines in
    the file written then stay — the certificate covers every task the summary counts."""
    found = BaselineFile(thresholds=thresholds, skipped=skip, version=baselines_version())
    if not skip:
        found.tasks = await _baselines(plan, prompts, cache_dir or default_cache_dir())
        earlier = read_baselines(out_dir)
        kept = set(keep) - set(plan.tasks)
        if earlier is not None and kept:
            found.tasks = sorted([*found.tasks, *(b for b in earlier.tasks if b.task_id in kept)],
                                 key=lambda b: b.task_id)
    data = msgspec.json.format(msgspec.json.encode(found)) + b"\n"
    try:
        if (out_dir / BASELINES).read_bytes() == data:
            return  # as they were: left untouched, so a resume with nothing to do can keep its summary
    except OSError:
        pass
    atomic_write_bytes(out_dir / BASELINES, data, fsync=False)


async def _baselines(plan: SweepPlan, prompts: PromptConfig, cache_dir: Path) -> list[TaskBaseline]:
    found: list[TaskBaseline] = []
    missing: list[tuple[str, Path]] = []
    tasks, data = plan.task_hashes, plan.data_hashes
    for task_id in sorted(plan.tasks):
        task = plan.tasks[task_id]
        key = hashlib.sha256("\0".join([tasks[task_id], data[task.scenario_id], prompts.digest("agent"),
                                        str(plan.max_turns), baselines_version()]).encode()).hexdigest()[:32]
        path = cache_dir / f"{key}.json"
        try:
            found.append(msgspec.json.decode(path.read_bytes(), type=TaskBaseline))
        except (OSError, msgspec.DecodeError):
            missing.append((task_id, path))
    if missing:
        async with LLMClient() as client:  # its own client: the baselines' calls are no part of the sweep's records
            for task_id, path in missing:
                baseline = await _baseline(client, plan, task_id, prompts)
                found.append(baseline)
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    atomic_write_bytes(path, msgspec.json.encode(baseline), fsync=False)
                except OSError as exc:  # a cache is an optimisation: a read-only home only costs a rerun
                    log.warning("%s: cannot cache the certificate's baselines (%s)", path, exc.strerror)
    return sorted(found, key=lambda b: b.task_id)


async def _baseline(client: LLMClient, plan: SweepPlan, task_id: str, prompts: PromptConfig) -> TaskBaseline:
    task, data = plan.tasks[task_id], plan.data[plan.tasks[task_id].scenario_id]
    outcomes: list[Outcome] = []
    for agent in (ORACLE, LAZY):
        run = await run_agent(client, agent, task, data, prompts, max_turns=plan.max_turns,
                              key=f"certificate/{agent}/{task_id}")
        outcomes.append("error" if run.stop_reason == "error" else _outcome(run_checks(task, run.final_answer, data)))
    baseline = TaskBaseline(task_id=task_id, task_type=task.task_type or "", oracle=outcomes[0], lazy=outcomes[1])
    for answer in (*NON_ANSWERS, task.user_prompt):
        for check in run_checks(task, answer, data):
            baseline.vacuous_checks += check.status in ("pass", "fail")
            if check.status == "pass":
                shown = answer if len(answer) <= 40 else answer[:37] + "…"
                baseline.vacuous_passes.append(f"{check.name} on {shown!r}")
    return baseline


def _outcome(checks: list[CheckResult]) -> Outcome:
    applied = [c.status for c in checks if c.status in ("pass", "fail")]
    if not applied:
        return "unverified"
    return "pass" if all(s == "pass" for s in applied) else "fail"
