"""Sweep summaries, rebuilt from the directory's files alone (``mpcbench-async summarize DIR``).

What counts is decided in ``_reading`` (the kept record of each unit key, stale
and orphan judgements, records of earlier experiments, undecodable lines).

Per agent model: mean ± standard error of both judge axes (overall and per task
type, per judge), deterministic-check pass rate (passes over checks that
applied: ``n/a`` checks count in neither), pass^k over trials (a run passes when
every check that applied passes, and pass^k is the share of tasks whose k trials
all pass). A run no check applied to is ``unverified``: counted apart
(``unverified``), never a pass nor a trial of pass^k, and ``tasks_checked`` says how
many of a model's tasks had a verified trial at all. Infrastructure errors (``retryable``: rate limits,
timeouts, connections; a rerun retries them) are not trials: they are counted in
``infra_errors`` and left out of pass^k; task-level errors count as failed trials.
The validity certificate (``_certificate``: oracle ceiling and lazy floor from the
baselines file the sweep wrote, vacuous passes, check–judge and judge–judge
agreement) is built from the same kept entries. The statistics over tasks, trials
and judges (bootstrap intervals, pass^k for k = 1, 2, 4, … and the most trials,
paired differences, judge agreement) come from the per-run table
(``_statistics``). Tokens and cost: ``spent`` is every call of the plan's units in
``calls.jsonl`` (redone and failed attempts included) and every *unsettled* call of
them — an intent in ``ledger.jsonl`` no call record settles: sent, and its reply
never recorded because the process was killed — at its worst case; ``kept`` the
calls made by the kept records (an agent or judge call inside its kept record's
start–finish window). Tariff cases (``<suite>_<model>.jsonl``) get their own section and their
calls never reach the agent rows. Errors are grouped by class and model with an
example and a hint (``_errors``). Memory: packed columns, a slot per unit key (``_reading.Runs``, ``Judges``;
the statistics read those columns, in the runs' order: ``_statistics.statistics_of``), never an object per unit.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from .._exceptions import InputError
from .._numbers import Quantiles
from ..labels import Calibration, LabelledRun, calibrate, read_labels
from ..llm import LEDGER, SettledCalls, unsettled_calls
from ..records import LLMCallRecord
from ._baselines import read_baselines
from ._certificate import certificate_of
from ._data_warnings import read_data_warnings
from ._errors import ErrorTally, endpoint_of
from ._experiment import read_manifest
from ._levels_records import kept_levels_records
from ._reading import (
    CALLS,
    JUDGEMENTS,
    RUNS,
    SCORED,
    CaseEntry,
    CaseLine,
    JudgeLine,
    Judges,
    Reader,
    RunLine,
    Runs,
    made,
)
from ._statistics import statistics_of
from ._summary_types import AxisStats, JudgeCalls, JudgeView, ModelSummary, Spend, Summary, TariffSummary

__all__ = ["AxisStats", "JudgeCalls", "JudgeView", "ModelSummary", "Spend", "Summary", "TariffSummary", "summarize",
           "summary_of", "wall_time"]

log = logging.getLogger(__name__)


# -- statistics in constant memory ------------------------------------------------------------------------


class _Moments:
    """Count, sum and sum of squares: a mean and its standard error without keeping the values."""

    __slots__ = ("n", "total", "squares")

    def __init__(self) -> None:
        self.n, self.total, self.squares = 0, 0.0, 0.0

    def add(self, value: float) -> None:
        self.n += 1
        self.total += value
        self.squares += value * value

    def stats(self) -> AxisStats:
        if not self.n:
            return AxisStats()
        mean = self.total / self.n
        variance = max(0.0, (self.squares - self.n * mean * mean) / (self.n - 1)) if self.n > 1 else 0.0
        return AxisStats(n=self.n, mean=round(mean, 3), stderr=round(math.sqrt(variance / self.n), 3))


def wall_time(out_dir: Path, summary: Summary) -> None:
    """Wall time from the manifest's invocations; unknown (None) when the manifest is missing or unreadable."""
    try:
        manifest = read_manifest(out_dir)
    except InputError as exc:
        log.warning("%s; wall time unknown", exc)
        return
    if manifest is None:
        return
    spans = [(i.started_at, i.finished_at) for i in manifest.history] or [(manifest.started_at, manifest.finished_at)]
    done = []
    for started, finished in spans:
        try:
            done.append((datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds()
                        if finished else None)
        except (TypeError, ValueError):
            done.append(None)
    finished_spans = [s for s in done if s is not None]
    summary.invocations = len(done)
    summary.unfinished_invocations = len(done) - len(finished_spans)
    summary.wall_s = round(sum(finished_spans), 3) if finished_spans else None
    summary.last_wall_s = round(done[-1], 3) if done[-1] is not None else None


def summarize(out_dir: str | Path, *, pass_k: Sequence[int] | None = None) -> Summary:
    """Build the summary of a sweep directory from its files, streaming each once (see the module docstring).

    ``pass_k``: the ks of pass^k over tasks (default: 1, 2, 4, 8, … and the most trials of a task)."""
    reader = Reader(Path(out_dir))
    runs = reader.runs()
    return summary_of(reader, runs, reader.judgements(runs), pass_k=pass_k)


def summary_of(reader: Reader, runs: Runs, judges: Judges, *,
               pass_k: Sequence[int] | None = None) -> Summary:
    """``summarize`` after its read of runs and judgements (``reader.runs`` / ``reader.judgements``), for a caller
    that shares that one read of a large sweep (the viewer's index); the rest is read here."""
    out_dir = reader.out_dir
    summary = Summary(out_dir=str(out_dir), models=[], skipped_lines={})
    cases = reader.cases()
    tally = ErrorTally()
    views = _judge_rows(judges, tally, reader)
    models = _model_rows(runs, views, tally, reader)
    tariff = _tariff_rows(cases, tally, reader)
    _levels_errors(reader, tally)
    reader.fill_examples(tally, {RUNS: (RunLine, runs), JUDGEMENTS: (JudgeLine, judges),
                                 **{case.file: (CaseLine, cases) for case in cases.values()}})
    judge_calls, endpoints = _calls(reader, runs, judges, cases, models, tariff, summary)
    stats = statistics_of(runs, judges, pass_k=pass_k)  # from the reader's columns: no copy per run
    for model, row in models.items():
        row.stats = stats.models.get(model, row.stats)
    summary.paired = stats.paired
    summary.judge_agreement = stats.judge_agreement
    summary.judge_spread = stats.judge_spread
    summary.certificate = certificate_of(runs, read_baselines(out_dir), stats.judge_agreement,
                                         tariff=bool(tariff), levels=(out_dir / "levels.jsonl").is_file(),
                                         judgements=judges)
    summary.models = sorted(models.values(), key=lambda m: m.model)
    summary.judge_calls = sorted(judge_calls.values(), key=lambda j: j.model)
    summary.tariff = sorted(tariff.values(), key=lambda t: (t.suite, t.model))
    summary.errors = tally.groups(endpoints)
    summary.runs, summary.judgements, summary.tariff_cases = len(runs), len(judges), len(cases)
    for name in ("other_experiments", "duplicates_ignored", "stale_judgements", "orphan_judgements", "skipped_lines"):
        setattr(summary, name, getattr(reader, name))
    wall_time(out_dir, summary)
    summary.warnings = read_data_warnings(out_dir)
    if (calibration := calibration_of(out_dir, runs, judges)) is not None:
        summary.calibration = calibration
    return summary


def calibration_of(out_dir: Path, runs: Runs, judges: Judges) -> Calibration | None:
    """The judges' and checks' agreement with the people's labels of ``out_dir`` (None: it has no labels file)."""
    labels = read_labels(out_dir)
    if not (labels.lines or labels.problems):
        return None
    labelled = {key: runs[key] for key, _ in labels.latest if key in runs}
    scores: dict[int, dict[str, list[float | None]]] = {run.slot: {} for run in labelled.values()}
    for judge in judges.values():
        if judge.ok and judge.run_slot in scores:
            scores[judge.run_slot][judge.model] = [judge.ars, judge.sgr] if judge.verdict == "scored" else [None, None]
    return calibrate((LabelledRun(key=key, passed=run.passed, scores=scores[run.slot])
                      for key, run in labelled.items()), labels, runs)


def _judge_rows(judges: Judges, tally: ErrorTally, reader: Reader) -> dict[tuple[str, str], JudgeView]:
    """One view per (agent model, judge model): verdict counts and both axes, overall and per task type."""
    views: dict[tuple[str, str], JudgeView] = {}
    moments: dict[tuple[str, str, str], tuple[_Moments, _Moments]] = {}
    names = judges.names.names
    for slot, (ok, agent_n, model_n, verdict, type_n, ars_score, sgr_score) in enumerate(zip(  # columns: no object
            judges.ok, judges.agent_n, judges.model_n, judges.verdict_n, judges.type_n, judges.ars, judges.sgr,
            strict=True)):
        agent, model = names[agent_n], names[model_n]
        view = views.get((agent, model))
        if view is None:
            view = views[(agent, model)] = JudgeView(judge_model=model)
        if not ok:
            judge = judges.row(slot)
            if judge.retryable:
                view.infra_errors += 1
            else:
                view.errors += 1
            tally.add(judge.error_class, model, retryable=judge.retryable, file=JUDGEMENTS,
                      message=reader.example(judges.key(slot), judge))
        elif verdict == SCORED:
            view.scored += 1
            for task_type in ("*", names[type_n]):
                pair = moments.get((agent, model, task_type))
                if pair is None:
                    pair = moments[(agent, model, task_type)] = (_Moments(), _Moments())
                pair[0].add(ars_score)
                pair[1].add(sgr_score)
        else:
            view.unscored += 1
    for (agent, judge_model, task_type), (ars, sgr) in sorted(moments.items()):
        view = views[(agent, judge_model)]
        if task_type == "*":
            view.ars, view.sgr = ars.stats(), sgr.stats()
        else:
            view.by_task_type[task_type] = {"ars": ars.stats(), "sgr": sgr.stats()}
    return views


def _model_rows(runs: Runs, views: dict[tuple[str, str], JudgeView], tally: ErrorTally,
                reader: Reader) -> dict[str, ModelSummary]:
    """One row per agent model: outcomes, checks and pass^k of its kept runs, with its judges' views."""
    models: dict[str, ModelSummary] = {}
    # (model, task) -> [verified trials, passed, unverified runs]
    trials: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    names = runs.names.names
    for slot, (ok, model_n, task_n, max_turns, applied, passed) in enumerate(zip(  # the columns: no object per run
            runs.ok, runs.model_n, runs.task_n, runs.max_turns, runs.checks_applied, runs.checks_passed, strict=True)):
        model = names[model_n]
        row = models.get(model)
        if row is None:
            row = models[model] = ModelSummary(model=model)
        row.runs += 1
        if not ok:
            run = runs.row(slot)
            tally.add(run.error_class, model, retryable=run.retryable, file=RUNS,
                      message=reader.example(runs.key(slot), run))
            if run.retryable:
                row.infra_errors += 1  # not a trial: the task was never really tried
                continue
            row.errors += 1
            trials[(model, names[task_n])][0] += 1
            continue
        row.ok += 1
        row.max_turns += max_turns
        row.checks_total += applied
        row.checks_passed += passed
        counts = trials[(model, names[task_n])]
        if not applied:  # unverified: no check applied
            row.unverified += 1
            counts[2] += 1
            continue
        counts[0] += 1
        counts[1] += passed == applied
    for (model, _), view in sorted(views.items()):
        models.setdefault(model, ModelSummary(model=model)).judges.append(view)
    for model, row in models.items():
        if row.checks_total:
            row.check_pass_rate = round(row.checks_passed / row.checks_total, 4)
        per_task = [counts for (m, _), counts in trials.items() if m == model]
        checked = [(n, passed) for n, passed, _ in per_task if n]
        row.tasks, row.tasks_checked = len(per_task), len(checked)
        if checked:
            row.k = min(n for n, _ in checked)
            row.pass_at_k = round(sum(passed == n for n, passed in checked) / len(checked), 4)
    return models


class _LevelsLine(msgspec.Struct, kw_only=True):
    """What the summary reads of a levels record: how it ended (its scores are the levels table's)."""

    key: str
    status: str
    model: str
    retryable: bool = False
    error_class: str | None = None
    error_message: str | None = None


def _levels_errors(reader: Reader, tally: ErrorTally) -> None:
    """The levels suite's kept error records (``levels.jsonl``: per key its first ok record, else its last) in the
    error groups, so a levels sweep says why its units failed like every other suite."""
    for line in kept_levels_records(reader.out_dir, _LevelsLine):
        if line.status == "error":
            tally.add(line.error_class, line.model, retryable=line.retryable, file="levels.jsonl",
                      message=line.error_message)


def _tariff_rows(cases: dict[str, CaseEntry], tally: ErrorTally,
                 reader: Reader) -> dict[tuple[str, str], TariffSummary]:
    rows: dict[tuple[str, str], TariffSummary] = {}
    totals: dict[tuple[str, str], float] = defaultdict(float)
    for key, case in cases.items():
        row = rows.setdefault((case.suite, case.model), TariffSummary(suite=case.suite, model=case.model,
                                                                      scoring=case.scoring))
        row.cases += 1
        row.passed += case.passed
        totals[(case.suite, case.model)] += case.score
        if not case.ok:
            row.infra_errors += case.retryable
            row.errors += not case.retryable
            tally.add(case.error_class, case.model, retryable=case.retryable, file=case.file,
                      message=reader.example(key, case))
    for group, row in rows.items():
        row.pass_rate = round(row.passed / row.cases, 4)
        row.average_score = round(totals[group] / row.cases, 4)
    return rows


_RECENT_UNITS = 512  # units whose call rows ``_calls`` keeps at once: more than a sweep has in flight at c=64 or 128


def _calls(reader: Reader, runs: Runs, judges: Judges, cases: dict[str, CaseEntry],
           models: dict[str, ModelSummary], tariff: dict[tuple[str, str], TariffSummary],
           summary: Summary) -> tuple[dict[str, JudgeCalls], dict[str, str]]:
    """Attribute every call in ``calls.jsonl``: agent rows, judge rows, tariff rows (spent, and kept when its
    unit's kept record made it); also the endpoint each model's failed calls name."""
    latencies: dict[tuple[str, str], Quantiles] = defaultdict(Quantiles)
    judge_calls: dict[str, JudgeCalls] = {}
    endpoints: dict[str, str] = {}
    case_of = {(c.model, c.case_id): c for c in cases.values()}
    keys = reader.keys
    settled = SettledCalls()

    # The rows of the units whose calls were read last, by unit: (model, row). A unit's calls are spread over the
    # lines of the units in flight with it, so the last ``_RECENT_UNITS`` units' rows are kept, not only the last
    # one's; emptied when full, it holds the same few hundred rows however many units the sweep has.
    recent: dict[str, tuple[str, Any]] = {}

    def row_of(model: str, key: str) -> tuple[ModelSummary | JudgeCalls | TariffSummary, tuple[float, float] | None,
                                              str] | None:
        """The row a call of ``model`` with call key ``key`` counts in, its unit's kept record's start and finish
        (None: no kept record) and its role."""
        unit, _, rest = key.partition("/")
        if unit == "tariff":
            return _row_of(model, unit, rest)  # its case is named in ``rest``
        held = recent.get(unit)
        if held is not None and held[0] == model:
            return held[1]
        found = _row_of(model, unit, rest)
        if len(recent) >= _RECENT_UNITS:
            recent.clear()
        recent[unit] = model, found
        return found

    def _row_of(model: str, unit: str, rest: str) -> tuple[ModelSummary | JudgeCalls | TariffSummary,
                                                          tuple[float, float] | None, str] | None:
        if unit.startswith(("run-", "judge-")):
            agent = unit.startswith("run-")
            table = runs if agent else judges
            slot = table.find(unit)
            if slot is None and keys is not None and unit not in keys:
                return None  # a call of an earlier experiment
            target: ModelSummary | JudgeCalls
            if agent:
                target = models.setdefault(model, ModelSummary(model=model))
            else:
                target = judge_calls.setdefault(model, JudgeCalls(model=model))
            times = None if slot is None else (table.started_at[slot], table.finished_at[slot])
            return target, times, "agent" if agent else "judge"
        if unit == "tariff":
            case = case_of.get((model, rest.split("/", 1)[0]))
            if case is None:
                return None  # a case with no record here (killed before it finished): in directory_calls only
            return tariff[(case.suite, case.model)], (case.started_at, case.finished_at), "tariff"
        return None

    for call in reader.lines(CALLS, LLMCallRecord):
        summary.directory_calls.add(call)
        settled.add(call.call_id)
        if call.status != "ok" and call.model not in endpoints and call.error_message:
            endpoint = endpoint_of(call.error_message)
            if endpoint:
                endpoints[call.model] = endpoint
        found = row_of(call.model, call.key)
        if found is None:
            continue
        target, times, role = found
        summary.calls += 1
        target.spent.add(call)
        if times is not None and made(*times, call.started_at):
            target.kept.add(call)
        if call.status == "ok":
            latencies[(role, call.model)].add(call.latency_s)
    for intent in unsettled_calls(reader.out_dir / LEDGER, settled):  # sent, reply never recorded
        summary.directory_calls.add_unsettled(intent)
        found = row_of(intent.model, intent.key)
        if found is not None:
            found[0].spent.add_unsettled(intent)
    rows: list[ModelSummary | JudgeCalls] = [*models.values(), *judge_calls.values()]
    for row in rows:
        role = "agent" if isinstance(row, ModelSummary) else "judge"
        row.latency_p50_s = latencies[(role, row.model)].quantile(0.5)
        row.latency_p95_s = latencies[(role, row.model)].quantile(0.95)
    spenders: list[ModelSummary | JudgeCalls | TariffSummary] = [*rows, *tariff.values()]
    for spend in [*(s for spender in spenders for s in (spender.kept, spender.spent)), summary.directory_calls]:
        spend.round_sums()
    return judge_calls, endpoints
