"""The validity certificate: how far a sweep's scores can be trusted, per suite and task family (issue 26).

A score is only as good as what produced it: a check the right answer fails, or one a
non-answer passes, makes a pass rate meaningless, and so does a judge that disagrees with
the checks. Each summary therefore carries, per MPCBench task family and over all:

- the **oracle ceiling** and **lazy floor**: ``sim/oracle-agent`` and ``sim/lazy-agent`` run on
  the sweep's own tasks and checked like any run — the share of checked tasks each passes;
- **vacuous passes**: checks that a non-answer (``NON_ANSWERS``, and the task's own prompt
  repeated back) passes;
- **check–judge agreement** over the sweep's kept runs that have both: runs failing a check
  that the judge rated ARS ≥ 4 (mean over judges), and runs passing every check rated < 4;
- **tasks with no check**: no run of them, the sweep's or a baseline's, had a check apply;
- **judge–judge agreement** where several judges ran (the summary's quadratic-weighted kappa).

The baselines run at the end of a sweep (``write_baselines``: a few ms of CPU per task,
through the embedded sim and a client of their own, so none of their calls reach
``calls.jsonl``) and are cached on disk per task, keyed by the task file, the scenario's data,
the agent prompt, ``max_turns`` and the version of the checks and baselines' code — reused
by every sweep of the same tasks. Their results and the thresholds in force (model config
``$.certificate``) are written to ``certificate_baselines.json`` in the sweep directory, which
``summarize`` reads; the rest is computed from the kept-run entries the summary already
holds (O(runs), no second read of the records). ``--no-certificate`` skips the baselines:
the certificate then says so and its verdict is ``unknown``.

Verdict: ``valid`` when every family (and all together) has an oracle ceiling ≥
``min_oracle``, a lazy floor ≤ ``max_lazy`` and at most ``max_vacuous_passes`` vacuous
passes — and some task whose oracle answer a check applies to: a family with none rests
on the judge alone, which no threshold can make valid; ``invalid`` with each failing
figure listed; ``unknown`` without baselines; ``not applicable`` for a sweep without MPCBench
runs (tariff or levels alone).
The levels and tariff suites are scored against exact labels and expected codes rather than
checks and a judge: the certificate states them ``not applicable`` with why.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Literal

import msgspec

from .._exceptions import InputError
from ..llm import LLMClient, ModelConfig
from ..mpcbench import CheckResult, PromptConfig, baselines_version, run_agent, run_checks
from ..runtime import atomic_write_bytes
from ._plan import SweepPlan
from ._reading import RunEntry
from ._statistics import JudgePair

__all__ = ["BASELINES", "NON_ANSWERS", "Certificate", "FamilyCertificate", "Rate", "TaskBaseline", "Thresholds",
           "certificate_of", "default_cache_dir", "read_baselines", "thresholds_from", "write_baselines"]

log = logging.getLogger(__name__)

BASELINES = "certificate_baselines.json"
ORACLE, LAZY = "sim/oracle-agent", "sim/lazy-agent"
# Answers that answer nothing; the task's own prompt, repeated back, is tried too.
NON_ANSWERS = ("", "I don't know.",
               "Sorry, I could not find that information. I will look into it and get back to you.")
Outcome = Literal["pass", "fail", "unverified", "error"]


class Thresholds(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """What a valid certificate needs (model config ``$.certificate``; these are the defaults)."""

    min_oracle: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.95
    max_lazy: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.10
    max_vacuous_passes: Annotated[int, msgspec.Meta(ge=0)] = 0


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


class Rate(msgspec.Struct, kw_only=True):
    passed: int = 0
    of: int = 0
    rate: float | None = None


class FamilyCertificate(msgspec.Struct, kw_only=True):
    """One task family's figures (``family`` "all": every family together)."""

    suite: str = "mpcbench"
    family: str
    tasks: int = 0
    tasks_without_check: int = 0
    oracle: Rate | None = None  # None: no baselines
    lazy: Rate | None = None
    vacuous_passes: int | None = None
    vacuous_checks: int | None = None
    vacuous_examples: list[str] = []  # the first few: "task: check on 'non-answer'"
    compared_runs: int = 0  # kept runs with an applied check and a judge score
    check_fail_judge_high: int = 0  # some check failed, mean ARS ≥ 4
    check_pass_judge_low: int = 0  # every check passed, mean ARS < 4


class JudgeKappa(msgspec.Struct, kw_only=True):
    judge_a: str
    judge_b: str
    runs: int
    ars_kappa: float | None
    sgr_kappa: float | None


class SuiteNote(msgspec.Struct, kw_only=True):
    suite: str
    status: str
    why: str


class Certificate(msgspec.Struct, kw_only=True):
    status: Literal["valid", "invalid", "unknown", "not applicable"] = "unknown"  # n/a: no MPCBench run
    baselines: str = "missing"  # computed | skipped (--no-certificate) | missing
    thresholds: Thresholds = msgspec.field(default_factory=Thresholds)
    families: list[FamilyCertificate] = []
    judge_agreement: list[JudgeKappa] = []  # empty: fewer than two judges scored a run
    suites: list[SuiteNote] = []
    problems: list[str] = []


# -- thresholds and the baselines file ---------------------------------------------------------------------


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
    atomic_write_bytes(out_dir / BASELINES, msgspec.json.format(msgspec.json.encode(found)) + b"\n", fsync=False)


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


# -- the certificate ------------------------------------------------------------------------------------------


def certificate_of(runs: Iterable[RunEntry], baselines: BaselineFile | None, judges: list[JudgePair], *,
                   tariff: bool, levels: bool) -> Certificate:
    """The certificate of a sweep from its kept runs, its baselines file and the summary's judge pairs."""
    cert = Certificate(thresholds=baselines.thresholds if baselines else Thresholds(),
                       baselines="missing" if baselines is None else "skipped" if baselines.skipped else "computed")
    rows: dict[str, FamilyCertificate] = {}
    checked: dict[str, set[str]] = defaultdict(set)  # family -> tasks some run had a check apply to
    seen: dict[str, set[str]] = defaultdict(set)  # family -> tasks
    for run in runs:
        if not run.ok:
            continue
        family = run.task_type
        row = rows.setdefault(family, FamilyCertificate(family=family))
        seen[family].add(run.task_id)
        if not run.checks_applied:
            continue
        checked[family].add(run.task_id)
        if run.ars_n:
            high, passed = run.ars_total / run.ars_n >= 4, run.checks_passed == run.checks_applied
            row.compared_runs += 1
            row.check_fail_judge_high += high and not passed
            row.check_pass_judge_low += passed and not high
    if baselines is not None and not baselines.skipped:
        for b in baselines.tasks:
            row = rows.setdefault(b.task_type, FamilyCertificate(family=b.task_type))
            seen[b.task_type].add(b.task_id)
            if {b.oracle, b.lazy} & {"pass", "fail"} or b.vacuous_checks:
                checked[b.task_type].add(b.task_id)
            for rate, outcome in ((_rate(row, "oracle"), b.oracle), (_rate(row, "lazy"), b.lazy)):
                if outcome != "unverified":
                    rate.of += 1
                    rate.passed += outcome == "pass"
            row.vacuous_checks = (row.vacuous_checks or 0) + b.vacuous_checks
            row.vacuous_passes = (row.vacuous_passes or 0) + len(b.vacuous_passes)
            row.vacuous_examples = [*row.vacuous_examples, *(f"{b.task_id}: {p}" for p in b.vacuous_passes)][:3]
    for family, row in rows.items():
        row.tasks, row.tasks_without_check = len(seen[family]), len(seen[family] - checked[family])
    families = [rows[f] for f in sorted(rows)]
    if families:
        families.append(_total(families))
    for row in families:
        for found in (row.oracle, row.lazy):
            if found is not None and found.of:
                found.rate = round(found.passed / found.of, 4)
    cert.families = families
    cert.judge_agreement = [JudgeKappa(judge_a=p.judge_a, judge_b=p.judge_b, runs=p.n, ars_kappa=p.ars.kappa,
                                       sgr_kappa=p.sgr.kappa) for p in judges]
    if tariff:
        cert.suites.append(SuiteNote(suite="tariff", status="not applicable", why=(
            "cases are scored against their expected codes, not by checks and a judge; the pack's oracle ceiling "
            "is tested with the suite (tests/tariff/test_oracle_ceiling.py), not per sweep")))
    if levels:
        cert.suites.append(SuiteNote(suite="levels", status="not applicable", why=(
            "instances are scored (F1, EM) against exact oracle labels computed from the calendar, not by checks "
            "and a judge; see levels_summary.md, and the validity report 'levels generate' writes for a generated "
            "set (validity_level<L>_<split>.json)")))
    cert.problems = _problems(families, cert.thresholds) if cert.baselines == "computed" else []
    if not families:
        cert.status = "not applicable"  # no MPCBench run: the suites' notes say why each other suite has none
    else:
        cert.status = "unknown" if cert.baselines != "computed" else "invalid" if cert.problems else "valid"
    return cert


def _rate(row: FamilyCertificate, which: str) -> Rate:
    rate: Rate | None = getattr(row, which)
    if rate is None:
        rate = Rate()
        setattr(row, which, rate)
    return rate


def _total(families: list[FamilyCertificate]) -> FamilyCertificate:
    total = FamilyCertificate(family="all")
    for row in families:
        for name in ("tasks", "tasks_without_check", "compared_runs", "check_fail_judge_high",
                     "check_pass_judge_low"):
            setattr(total, name, getattr(total, name) + getattr(row, name))
        for which in ("oracle", "lazy"):
            rate = getattr(row, which)
            if rate is not None:
                into = _rate(total, which)
                into.passed, into.of = into.passed + rate.passed, into.of + rate.of
        if row.vacuous_checks is not None:
            total.vacuous_checks = (total.vacuous_checks or 0) + row.vacuous_checks
            total.vacuous_passes = (total.vacuous_passes or 0) + (row.vacuous_passes or 0)
            total.vacuous_examples = [*total.vacuous_examples, *row.vacuous_examples][:3]
    return total


def _problems(families: list[FamilyCertificate], limits: Thresholds) -> list[str]:
    """Each figure outside its threshold, named with its family: the reasons a certificate is invalid."""
    problems = []
    for row in families:
        where = f"mpcbench {row.family}"
        if row.oracle is not None and not row.oracle.of:
            problems.append(f"{where}: no check applies to the oracle's answer on any of its {row.tasks} task(s), so "
                            "its scores rest on the judge alone")
        if row.oracle is not None and row.oracle.rate is not None and row.oracle.rate < limits.min_oracle:
            problems.append(f"{where}: oracle ceiling {_pct(row.oracle.rate)} ({row.oracle.passed} of "
                            f"{row.oracle.of} checked tasks) is below {_pct(limits.min_oracle)}")
        if row.lazy is not None and row.lazy.rate is not None and row.lazy.rate > limits.max_lazy:
            problems.append(f"{where}: lazy floor {_pct(row.lazy.rate)} ({row.lazy.passed} of {row.lazy.of} "
                            f"checked tasks) is above {_pct(limits.max_lazy)}")
        if (row.vacuous_passes or 0) > limits.max_vacuous_passes:
            problems.append(f"{where}: non-answers pass {row.vacuous_passes} check(s) (at most "
                            f"{limits.max_vacuous_passes} allowed), e.g. {'; '.join(row.vacuous_examples)}")
    return problems


def _pct(value: float) -> str:
    return f"{100 * value:.0f}%" if value * 100 == round(value * 100) else f"{100 * value:.1f}%"
