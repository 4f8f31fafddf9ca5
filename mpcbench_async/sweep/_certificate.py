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
- **judge–judge agreement** where several judges ran: quadratic-weighted kappa per two judges
  and axis over the family's runs both scored (for all: the summary's own pairs).

The baselines run at the end of a sweep and are cached across sweeps (``_baselines``);
``summarize`` reads the file they are written to; the rest is computed from the kept-run
entries the summary already holds (O(runs), no second read of the records). ``--no-certificate`` skips the baselines:
the certificate then says so and its verdict is ``unknown``.

Verdict: ``valid`` when every family (and all together) has an oracle ceiling ≥
``min_oracle``, a lazy floor ≤ ``max_lazy`` and at most ``max_vacuous_passes`` vacuous
passes — and some task whose oracle answer a check applies to: a family with none rests
on the judge alone, which no threshold can make valid; ``invalid`` with each failing
figure listed; ``unknown`` without baselines; ``not applicable`` for a sweep without MPCBench
runs (tariff or levels alone). The levels and tariff suites are scored against exact
labels and expected codes rather than checks and a judge: the certificate states them
``not applicable`` with why.
"""

from __future__ import annotations

import itertools
from array import array
from collections import defaultdict
from collections.abc import Iterator, Sequence

from ..stats import weighted_kappa
from ._baselines import BaselineFile
from ._reading import JudgeEntry, Judges, RunEntry, Runs
from ._statistics import JudgePair
from ._summary_types import Certificate, FamilyCertificate, JudgeKappa, Rate, SuiteNote, Thresholds

__all__ = ["Certificate", "FamilyCertificate", "JudgeKappa", "Rate", "SuiteNote", "certificate_of"]


# -- the certificate ------------------------------------------------------------------------------------------


def certificate_of(runs: Runs | Sequence[RunEntry], baselines: BaselineFile | None, judges: list[JudgePair], *,
                   tariff: bool, levels: bool, judgements: Judges | Sequence[JudgeEntry] = ()) -> Certificate:
    """The certificate of a sweep from its kept runs, its baselines file, the summary's judge pairs (for all) and
    the kept judgements (for each family's judge pairs)."""
    cert = Certificate(thresholds=baselines.thresholds if baselines else Thresholds(),
                       baselines="missing" if baselines is None else "skipped" if baselines.skipped else "computed")
    rows: dict[str, FamilyCertificate] = {}
    checked: dict[str, set[str]] = defaultdict(set)  # family -> tasks some run had a check apply to
    seen: dict[str, set[str]] = defaultdict(set)  # family -> tasks
    for family, task, applied, checks_passed, ars_total, ars_n in _ok_runs(runs):
        row = rows.get(family) or rows.setdefault(family, FamilyCertificate(family=family))
        seen[family].add(task)
        if not applied:
            continue
        checked[family].add(task)
        if ars_n:
            high, passed = ars_total / ars_n >= 4, checks_passed == applied
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
    kappas = _family_kappas(judgements)
    for family, row in rows.items():
        row.tasks, row.tasks_without_check = len(seen[family]), len(seen[family] - checked[family])
        row.judge_agreement = kappas.get(family, [])
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
    if families:
        families[-1].judge_agreement = cert.judge_agreement
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


def _ok_runs(runs: Runs | Sequence[RunEntry]) -> Iterator[tuple[str, str, int, int, int, int]]:
    """Per kept ok run: its family, task, checks applied and passed, ARS total and count (from the columns)."""
    if not isinstance(runs, Runs):
        yield from ((r.task_type, r.task_id, r.checks_applied, r.checks_passed, r.ars_total, r.ars_n)
                    for r in runs if r.ok)
        return
    names = runs.names.names
    for ok, type_n, task_n, *counts in zip(runs.ok, runs.type_n, runs.task_n, runs.checks_applied,
                                           runs.checks_passed, runs.ars_total, runs.ars_n, strict=True):
        if ok:
            yield names[type_n], names[task_n], *counts


def _family_kappas(judgements: Judges | Sequence[JudgeEntry]) -> dict[str, list[JudgeKappa]]:
    """Per task family and two judges (in name order), kappa per axis over the runs both scored."""
    def scored() -> Iterator[JudgeEntry]:
        given = judgements.values() if isinstance(judgements, Judges) else judgements
        return (judge for judge in given if judge.ok and judge.verdict == "scored")

    if len({judge.model for judge in scored()}) < 2:
        return {}  # one judge: nothing to agree with (and no grouping of 100k judgements)
    by_run: dict[int, list[JudgeEntry]] = defaultdict(list)
    for judge in scored():
        by_run[judge.run_slot].append(judge)
    scores: dict[tuple[str, str, str], array[float]] = defaultdict(lambda: array("d"))  # ARS a, SGR a, ARS b, SGR b
    for given in by_run.values():
        for a, b in itertools.combinations(sorted(given, key=lambda j: j.model), 2):
            scores[(a.run.task_type, a.model, b.model)].extend((a.ars, a.sgr, b.ars, b.sgr))
    out: dict[str, list[JudgeKappa]] = defaultdict(list)
    for (family, first, second), values in sorted(scores.items()):
        out[family].append(JudgeKappa(judge_a=first, judge_b=second, runs=len(values) // 4,
                                      ars_kappa=_kappa(values[0::4], values[2::4]),
                                      sgr_kappa=_kappa(values[1::4], values[3::4])))
    return out


def _kappa(a: array[float], b: array[float]) -> float | None:
    kappa = weighted_kappa(list(a), list(b))
    return None if kappa is None else round(kappa, 4)


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
