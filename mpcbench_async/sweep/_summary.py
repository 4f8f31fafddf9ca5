"""Sweep summaries, rebuilt from the directory's files alone (``mpcbench-async summarize DIR``).

What counts. Only the records of the current experiment's units
(``experiment_keys.txt``; those of earlier experiments are counted in
``other_experiments``). Per unit key, its last ``ok`` record, else its last
error; further ``ok`` lines of a key, and errors written after its ``ok``, are
counted in ``duplicates_ignored``. A judgement counts only if the run it judged
is the run kept: one whose kept run record finished after the judgement started
judged an earlier run of that key (``stale_judgements``), one whose run has no
``ok`` record is ``orphan_judgements``. A line that does not decode as its record
type (every required field present and well typed) is skipped, counted per file
in ``skipped_lines`` and warned about once per file — never trusted.

Per agent model: mean ± standard error of both judge axes (overall and per task
type, per judge), deterministic-check pass rate (passes over checks that
applied: ``n/a`` checks count in neither), pass^k over trials (a run passes when
every check that applied passes — or, for a task without applicable checks, when
its mean answer-requirements score is ≥ 4 — and pass^k is the share of tasks
whose k trials all pass). Infrastructure errors (``retryable``: rate limits,
timeouts, connections; a rerun retries them) are not trials: they are counted in
``infra_errors`` and left out of pass^k; task-level errors count as failed trials.
Tokens and cost: ``spent`` is every call of the plan's units in ``calls.jsonl``
(redone and failed attempts included), ``kept`` the calls made by the kept records
(an agent or judge call inside its kept record's start–finish window). Tariff cases
(``<suite>_<model>.jsonl``) get their own section and their calls never reach the
agent rows. Errors are grouped by class and model with an example and a hint
(``_errors``). Memory: one small entry per unit key, never the records.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from .._exceptions import InputError
from .._numbers import Quantiles
from ..records import LLMCallRecord
from ..runtime import ReadReport, iter_jsonl, key_view
from ..tariff import TariffCaseRecord
from ._errors import ErrorClass, ErrorTally, endpoint_of
from ._experiment import read_experiment_keys, read_manifest
from ._records import AgentRunRecord, JudgeRecord

__all__ = ["AxisStats", "JudgeCalls", "JudgeView", "ModelSummary", "Spend", "Summary", "TariffSummary", "summarize"]

log = logging.getLogger(__name__)

RUNS, JUDGEMENTS, CALLS = "runs.jsonl", "judgements.jsonl", "calls.jsonl"


class AxisStats(msgspec.Struct, kw_only=True):
    n: int = 0
    mean: float | None = None
    stderr: float | None = None


class Spend(msgspec.Struct, kw_only=True):
    """LLM calls and what they cost."""

    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0

    def add(self, call: LLMCallRecord) -> None:
        self.calls += 1
        self.tokens += call.usage.total_tokens
        self.cost_usd += call.cost_usd or 0.0  # None: price unknown


class JudgeView(msgspec.Struct, kw_only=True):
    """One judge's scores of one agent model."""

    judge_model: str
    scored: int = 0
    unscored: int = 0
    errors: int = 0  # task-level errors
    infra_errors: int = 0
    ars: AxisStats = msgspec.field(default_factory=AxisStats)
    sgr: AxisStats = msgspec.field(default_factory=AxisStats)
    by_task_type: dict[str, dict[str, AxisStats]] = {}


class ModelSummary(msgspec.Struct, kw_only=True):
    model: str
    runs: int = 0  # kept run records: ok + errors + infra_errors
    ok: int = 0
    errors: int = 0  # task-level errors: failed trials
    infra_errors: int = 0  # infrastructure errors: not trials, left out of pass^k
    max_turns: int = 0
    checks_passed: int = 0
    checks_total: int = 0  # checks that applied (n/a excluded)
    check_pass_rate: float | None = None
    tasks: int = 0  # tasks with at least one trial (the denominator of pass^k)
    k: int = 0  # the fewest trials of any of those tasks
    pass_at_k: float | None = None
    judges: list[JudgeView] = []
    kept: Spend = msgspec.field(default_factory=Spend)
    spent: Spend = msgspec.field(default_factory=Spend)
    latency_p50_s: float | None = None
    latency_p95_s: float | None = None


class JudgeCalls(msgspec.Struct, kw_only=True):
    model: str
    kept: Spend = msgspec.field(default_factory=Spend)
    spent: Spend = msgspec.field(default_factory=Spend)
    latency_p50_s: float | None = None
    latency_p95_s: float | None = None


class TariffSummary(msgspec.Struct, kw_only=True):
    """One tariff-pipeline suite run by one model in the sweep (errored cases score 0, as in its report)."""

    suite: str
    model: str
    cases: int = 0
    passed: int = 0
    pass_rate: float | None = None
    average_score: float | None = None
    errors: int = 0
    infra_errors: int = 0
    kept: Spend = msgspec.field(default_factory=Spend)  # calls of cases with a kept record
    spent: Spend = msgspec.field(default_factory=Spend)


class Summary(msgspec.Struct, kw_only=True):
    out_dir: str
    models: list[ModelSummary]
    judge_calls: list[JudgeCalls] = []
    tariff: list[TariffSummary] = []
    errors: list[ErrorClass] = []
    runs: int = 0
    judgements: int = 0
    tariff_cases: int = 0
    calls: int = 0  # calls of the plan's units, redone attempts included
    directory_calls: Spend = msgspec.field(default_factory=Spend)  # every call in calls.jsonl
    other_experiments: int = 0  # records of earlier experiments in the directory, not counted
    duplicates_ignored: int = 0
    stale_judgements: int = 0
    orphan_judgements: int = 0
    skipped_lines: dict[str, int] = {}  # file -> lines that did not decode as their record type
    wall_s: float | None = None  # summed over the invocations that finished; None when unknown
    last_wall_s: float | None = None
    invocations: int = 0
    unfinished_invocations: int = 0  # killed: no finish time, not in wall_s


# -- what the summary reads of each line (payloads are skipped unparsed) -------------------------------------


class _Stop(msgspec.Struct):
    stop_reason: str = ""


class _Passed(msgspec.Struct):
    """A check's outcome: ``status`` (pass | fail | n/a), or ``passed`` in logs written before ``status`` existed."""

    status: str | None = None
    passed: bool = False

    @property
    def outcome(self) -> str:
        return self.status or ("pass" if self.passed else "fail")


class _RunLine(key_view(AgentRunRecord), kw_only=True):  # type: ignore[misc, call-arg]  # a dynamic base
    run: _Stop | None = None
    checks: list[_Passed] = []
    error_class: str | None = None
    error_message: str | None = None
    started_at: float = 0.0
    finished_at: float = 0.0


class _Score(msgspec.Struct):
    score: int


class _Scores(msgspec.Struct):
    answer_requirements_satisfaction: _Score
    source_grounded_reasoning: _Score


class _JudgementView(msgspec.Struct):
    verdict: str
    scores: _Scores | None = None


class _JudgeLine(key_view(JudgeRecord), kw_only=True):  # type: ignore[misc, call-arg]  # a dynamic base
    judgement: _JudgementView | None = None
    error_class: str | None = None
    error_message: str | None = None
    started_at: float = 0.0
    finished_at: float = 0.0


class _CaseScore(msgspec.Struct):
    score: float
    passed: bool


class _CaseLine(key_view(TariffCaseRecord), kw_only=True):  # type: ignore[misc, call-arg]  # a dynamic base
    score: _CaseScore | None = None
    error_class: str | None = None
    error_message: str | None = None


# -- one small entry per kept unit ------------------------------------------------------------------------


class _Unit:
    """A unit's kept record, reduced to what the tables need (a few slots, no payload)."""

    __slots__ = ("ok", "retryable", "model", "error_class", "started_at", "finished_at")

    def __init__(self, line: Any, model: str) -> None:
        self.ok = line.status == "ok"
        self.retryable = line.retryable
        self.model = model
        self.error_class = None if self.ok else line.error_class
        self.started_at = getattr(line, "started_at", 0.0)
        self.finished_at = getattr(line, "finished_at", 0.0)

    def made(self, call_started_at: float) -> bool:
        """Whether a call of this unit's key was made by this record (unknown times: yes)."""
        if not call_started_at or not self.started_at:
            return True
        return self.started_at <= call_started_at <= self.finished_at


class _Run(_Unit):
    __slots__ = ("task_id", "checks_passed", "checks_applied", "max_turns", "ars_total", "ars_n")

    def __init__(self, line: _RunLine, names: _Names) -> None:
        super().__init__(line, names(line.model))
        self.task_id = names(line.task_id)
        applied = [c.outcome for c in line.checks if c.outcome != "n/a"] if self.ok else []
        self.checks_applied, self.checks_passed = len(applied), applied.count("pass")
        self.max_turns = bool(self.ok and line.run and line.run.stop_reason == "max_turns")
        self.ars_total = self.ars_n = 0


class _Judge(_Unit):
    __slots__ = ("agent_model", "task_type", "verdict", "ars", "sgr", "run")

    def __init__(self, line: _JudgeLine, names: _Names, run: _Run) -> None:
        super().__init__(line, names(line.judge_model))
        self.agent_model, self.task_type, self.run = names(line.agent_model), names(line.task_type), run
        judgement = line.judgement
        self.verdict, self.ars, self.sgr = "error", 0, 0
        if self.ok and judgement is not None:
            if judgement.verdict == "unscored" or judgement.scores is None:
                self.verdict = "unscored"
            else:
                self.verdict = "scored"
                self.ars = judgement.scores.answer_requirements_satisfaction.score
                self.sgr = judgement.scores.source_grounded_reasoning.score


class _Case(_Unit):
    __slots__ = ("suite", "case_id", "file", "score", "passed")

    def __init__(self, line: _CaseLine, names: _Names, suite: str, file: str) -> None:
        super().__init__(line, names(line.model))
        self.suite, self.case_id, self.file = suite, line.case_id, file
        self.score = line.score.score if self.ok and line.score else 0.0
        self.passed = bool(self.ok and line.score and line.score.passed)


class _Names(dict[str, str]):
    """One string object per distinct model, task or type name, however many entries hold it."""

    def __call__(self, name: str) -> str:
        return self.setdefault(name, name)


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


# -- reading ----------------------------------------------------------------------------------------------


class _Reader:
    """Streams a directory's record files, keeping each key's final record and counting what it left out."""

    def __init__(self, out_dir: Path, summary: Summary) -> None:
        self.out_dir, self.summary = out_dir, summary
        self.keys = read_experiment_keys(out_dir)
        self.names = _Names()
        # The latest error line per (class, model): the example message, used if that record is the one kept.
        self.examples: dict[tuple[str | None, str], tuple[str, str]] = {}

    def lines(self, name: str, view: type) -> Iterable[Any]:
        """Decodable lines of ``name``; undecodable ones are counted (the reader warns once per file)."""
        report = ReadReport(path=str(self.out_dir / name))
        yield from iter_jsonl(self.out_dir / name, report, type_=view)
        skipped = len(report.bad_lines) + report.torn_tail
        if skipped:
            self.summary.skipped_lines[name] = skipped

    def kept(self, lines: Iterable[Any], make: Callable[[Any], _Unit | None], *,
             keys: set[str] | None) -> dict[str, Any]:
        """Each key's final entry: its last ``ok`` line, else its last error (``make`` returns None to drop a line)."""
        kept: dict[str, Any] = {}
        for line in lines:
            if keys is not None and line.key not in keys:
                self.summary.other_experiments += 1
                continue
            entry = make(line)
            if entry is None:
                continue
            previous = kept.get(line.key)
            if previous is not None and previous.ok:
                self.summary.duplicates_ignored += 1
                if not entry.ok:
                    continue
            kept[line.key] = entry
            if not entry.ok:
                self.examples[(entry.error_class, entry.model)] = (line.key, line.error_message or "")
        return kept

    def runs(self) -> dict[str, _Run]:
        return self.kept(self.lines(RUNS, _RunLine), lambda line: _Run(line, self.names), keys=self.keys)

    def judgements(self, runs: dict[str, _Run]) -> dict[str, _Judge]:
        def make(line: _JudgeLine) -> _Judge | None:
            run = runs.get(line.run_key)
            if run is None or not run.ok:
                self.summary.orphan_judgements += 1
                return None
            if line.started_at and run.finished_at > line.started_at:
                self.summary.stale_judgements += 1  # it judged an earlier run of this key
                return None
            return _Judge(line, self.names, run)

        return self.kept(self.lines(JUDGEMENTS, _JudgeLine), make, keys=self.keys)

    def cases(self) -> dict[str, _Case]:
        """Kept tariff cases of every ``<suite>_<model>.jsonl`` (the sweep's own files have no ``_``)."""
        keys = self.keys if self.keys is not None and any(k.startswith("case-") for k in self.keys) else None
        cases: dict[str, _Case] = {}
        for path in sorted(self.out_dir.glob("*_*.jsonl")):
            suite = path.name.split("_", 1)[0]
            def make(line: _CaseLine, suite: str = suite, name: str = path.name) -> _Case:
                return _Case(line, self.names, suite, name)

            cases.update(self.kept(self.lines(path.name, _CaseLine), make, keys=keys))
        return cases

    def example(self, key: str, entry: _Unit) -> str | None:
        """The example message of ``entry``'s group if it is this kept record's."""
        found = self.examples.get((entry.error_class, entry.model))
        return found[1] if found is not None and found[0] == key else None

    def fill_examples(self, tally: ErrorTally, tables: dict[str, tuple[type, dict[str, Any]]]) -> None:
        """Examples for the groups whose latest error line was later redone: read their files once more.

        Rare (a unit that failed last in its group, then succeeded on a rerun), so
        no message is held per unit during the first pass.
        """
        for name in sorted(tally.files_without_example()):
            view, table = tables[name]
            for line in iter_jsonl(self.out_dir / name, type_=view, warn=False):
                entry = table.get(line.key)
                if line.status == "error" and entry is not None and not entry.ok and \
                        entry.error_class == line.error_class:
                    tally.offer(entry.error_class, entry.model, line.error_message)


def _wall(out_dir: Path, summary: Summary) -> None:
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


def summarize(out_dir: str | Path) -> Summary:
    """Build the summary of a sweep directory from its files, streaming each once (see the module docstring)."""
    out_dir = Path(out_dir)
    summary = Summary(out_dir=str(out_dir), models=[], skipped_lines={})
    reader = _Reader(out_dir, summary)
    runs = reader.runs()
    judges = reader.judgements(runs)
    cases = reader.cases()
    tally = ErrorTally()
    views = _judge_rows(judges, tally, reader)  # also adds each run's ARS, which pass^k needs
    models = _model_rows(runs, views, tally, reader)
    tariff = _tariff_rows(cases, tally, reader)
    reader.fill_examples(tally, {RUNS: (_RunLine, runs), JUDGEMENTS: (_JudgeLine, judges),
                                 **{case.file: (_CaseLine, cases) for case in cases.values()}})
    judge_calls, endpoints = _calls(reader, runs, judges, cases, models, tariff, summary)
    summary.models = sorted(models.values(), key=lambda m: m.model)
    summary.judge_calls = sorted(judge_calls.values(), key=lambda j: j.model)
    summary.tariff = sorted(tariff.values(), key=lambda t: (t.suite, t.model))
    summary.errors = tally.groups(endpoints)
    summary.runs, summary.judgements, summary.tariff_cases = len(runs), len(judges), len(cases)
    _wall(out_dir, summary)
    return summary


def _judge_rows(judges: dict[str, _Judge], tally: ErrorTally, reader: _Reader) -> dict[tuple[str, str], JudgeView]:
    """One view per (agent model, judge model): verdict counts and both axes, overall and per task type."""
    views: dict[tuple[str, str], JudgeView] = {}
    moments: dict[tuple[str, str, str], tuple[_Moments, _Moments]] = {}
    for key, judge in judges.items():
        view = views.setdefault((judge.agent_model, judge.model), JudgeView(judge_model=judge.model))
        if not judge.ok:
            if judge.retryable:
                view.infra_errors += 1
            else:
                view.errors += 1
            tally.add(judge.error_class, judge.model, retryable=judge.retryable, file=JUDGEMENTS,
                      message=reader.example(key, judge))
        elif judge.verdict == "scored":
            view.scored += 1
            for task_type in ("*", judge.task_type):
                ars, sgr = moments.setdefault((judge.agent_model, judge.model, task_type), (_Moments(), _Moments()))
                ars.add(judge.ars)
                sgr.add(judge.sgr)
            judge.run.ars_total += judge.ars
            judge.run.ars_n += 1
        else:
            view.unscored += 1
    for (agent, judge_model, task_type), (ars, sgr) in sorted(moments.items()):
        view = views[(agent, judge_model)]
        if task_type == "*":
            view.ars, view.sgr = ars.stats(), sgr.stats()
        else:
            view.by_task_type[task_type] = {"ars": ars.stats(), "sgr": sgr.stats()}
    return views


def _model_rows(runs: dict[str, _Run], views: dict[tuple[str, str], JudgeView], tally: ErrorTally,
                reader: _Reader) -> dict[str, ModelSummary]:
    """One row per agent model: outcomes, checks and pass^k of its kept runs, with its judges' views."""
    models: dict[str, ModelSummary] = {}
    trials: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])  # (model, task) -> [trials, passed]
    for key, run in runs.items():
        row = models.setdefault(run.model, ModelSummary(model=run.model))
        row.runs += 1
        if not run.ok:
            tally.add(run.error_class, run.model, retryable=run.retryable, file=RUNS, message=reader.example(key, run))
            if run.retryable:
                row.infra_errors += 1  # not a trial: the task was never really tried
                continue
            row.errors += 1
            trials[(run.model, run.task_id)][0] += 1
            continue
        row.ok += 1
        row.max_turns += run.max_turns
        row.checks_total += run.checks_applied
        row.checks_passed += run.checks_passed
        if run.checks_applied:
            passed = run.checks_passed == run.checks_applied
        else:
            passed = run.ars_n > 0 and run.ars_total / run.ars_n >= 4
        counts = trials[(run.model, run.task_id)]
        counts[0] += 1
        counts[1] += passed
    for (model, _), view in sorted(views.items()):
        models.setdefault(model, ModelSummary(model=model)).judges.append(view)
    for model, row in models.items():
        if row.checks_total:
            row.check_pass_rate = round(row.checks_passed / row.checks_total, 4)
        per_task = [counts for (m, _), counts in trials.items() if m == model]
        if per_task:
            row.tasks, row.k = len(per_task), min(n for n, _ in per_task)
            row.pass_at_k = round(sum(passed == n for n, passed in per_task) / len(per_task), 4)
    return models


def _tariff_rows(cases: dict[str, _Case], tally: ErrorTally, reader: _Reader) -> dict[tuple[str, str], TariffSummary]:
    rows: dict[tuple[str, str], TariffSummary] = {}
    totals: dict[tuple[str, str], float] = defaultdict(float)
    for key, case in cases.items():
        row = rows.setdefault((case.suite, case.model), TariffSummary(suite=case.suite, model=case.model))
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


def _calls(reader: _Reader, runs: dict[str, _Run], judges: dict[str, _Judge], cases: dict[str, _Case],
           models: dict[str, ModelSummary], tariff: dict[tuple[str, str], TariffSummary],
           summary: Summary) -> tuple[dict[str, JudgeCalls], dict[str, str]]:
    """Attribute every call in ``calls.jsonl``: agent rows, judge rows, tariff rows (spent, and kept when its
    unit's kept record made it); also the endpoint each model's failed calls name."""
    latencies: dict[tuple[str, str], Quantiles] = defaultdict(Quantiles)
    judge_calls: dict[str, JudgeCalls] = {}
    endpoints: dict[str, str] = {}
    case_of = {(c.model, c.case_id): c for c in cases.values()}
    keys = reader.keys
    target: ModelSummary | JudgeCalls | TariffSummary  # the row a call is counted in
    for call in reader.lines(CALLS, LLMCallRecord):
        summary.directory_calls.add(call)
        if call.status != "ok" and call.model not in endpoints and call.error_message:
            endpoint = endpoint_of(call.error_message)
            if endpoint:
                endpoints[call.model] = endpoint
        unit, _, rest = call.key.partition("/")
        if unit.startswith(("run-", "judge-")):
            if keys is not None and unit not in keys:
                continue  # a call of an earlier experiment
            agent = unit.startswith("run-")
            if agent:
                target = models.setdefault(call.model, ModelSummary(model=call.model))
            else:
                target = judge_calls.setdefault(call.model, JudgeCalls(model=call.model))
            entry: _Unit | None = (runs if agent else judges).get(unit)
            role = "agent" if agent else "judge"
        elif unit == "tariff":
            case = case_of.get((call.model, rest.split("/", 1)[0]))
            if case is None:
                continue  # a case with no record here (killed before it finished): in directory_calls only
            target, entry, role = tariff[(case.suite, case.model)], case, "tariff"
        else:
            continue
        summary.calls += 1
        target.spent.add(call)
        if entry is not None and entry.made(call.started_at):
            target.kept.add(call)
        if call.status == "ok":
            latencies[(role, call.model)].add(call.latency_s)
    rows: list[ModelSummary | JudgeCalls] = [*models.values(), *judge_calls.values()]
    for row in rows:
        role = "agent" if isinstance(row, ModelSummary) else "judge"
        row.latency_p50_s = latencies[(role, row.model)].quantile(0.5)
        row.latency_p95_s = latencies[(role, row.model)].quantile(0.95)
    spenders: list[ModelSummary | JudgeCalls | TariffSummary] = [*rows, *tariff.values()]
    for spender in spenders:
        spender.kept.cost_usd = round(spender.kept.cost_usd, 6)
        spender.spent.cost_usd = round(spender.spent.cost_usd, 6)
    summary.directory_calls.cost_usd = round(summary.directory_calls.cost_usd, 6)
    return judge_calls, endpoints
