"""Which records of a sweep directory count, read once and reduced to one small entry per unit key.

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

A run passes as a trial when every check that applied passes and fails when one
does not; a run where no check applied is ``unverified`` — the judge alone cannot
make it a pass (issue 26: judge ARS ≥ 4 gave the oracle pass^1 = 100% with 2 of 8
tasks checked), so it is no trial of pass^k and is counted apart. A task-level
error is a failed trial and an infrastructure error (``retryable``) is no trial at
all. The summary (``_summary``) and the per-run table (``_table``) both read through here: one copy of these rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any

import msgspec

from ..mpcbench import AgentRunRecord, JudgeRecord
from ..runtime import ReadReport, iter_jsonl, key_view
from ..tariff import TariffCaseRecord
from ._errors import ErrorTally
from ._experiment import experiment_key_table
from ._names import CALLS, JUDGEMENTS, RUNS

__all__ = ["CALLS", "JUDGEMENTS", "RUNS", "CaseEntry", "CaseLine", "Entry", "JudgeEntry", "JudgeLine", "Names",
           "Reader", "RunEntry", "RunLine"]



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


class RunLine(key_view(AgentRunRecord), kw_only=True):  # type: ignore[misc, call-arg]  # a dynamic base
    run: _Stop | None = None
    checks: list[_Passed] = []
    error_class: str | None = None
    error_message: str | None = None
    started_at: float = 0.0
    finished_at: float = 0.0


class _Score(msgspec.Struct):
    score: Annotated[int, msgspec.Meta(ge=0, le=5)]  # as the judgement record bounds it


class _Scores(msgspec.Struct):
    answer_requirements_satisfaction: _Score
    source_grounded_reasoning: _Score


class _JudgementView(msgspec.Struct):
    verdict: str
    scores: _Scores | None = None


class JudgeLine(key_view(JudgeRecord), kw_only=True):  # type: ignore[misc, call-arg]  # a dynamic base
    judgement: _JudgementView | None = None
    error_class: str | None = None
    error_message: str | None = None
    started_at: float = 0.0
    finished_at: float = 0.0


class _CaseScore(msgspec.Struct):
    score: float
    passed: bool


class CaseLine(key_view(TariffCaseRecord), kw_only=True):  # type: ignore[misc, call-arg]  # a dynamic base
    score: _CaseScore | None = None
    scoring: str = "project"
    error_class: str | None = None
    error_message: str | None = None


# -- one small entry per kept unit ------------------------------------------------------------------------


class Entry:
    """A unit's kept record, reduced to what the tables need (a few slots, no payload)."""

    __slots__ = ("ok", "retryable", "model", "error_class", "started_at", "finished_at", "at")

    def __init__(self, line: Any, model: str) -> None:
        self.ok = line.status == "ok"
        self.retryable = line.retryable
        self.model = model
        self.error_class = None if self.ok else line.error_class
        self.started_at = getattr(line, "started_at", 0.0)
        self.finished_at = getattr(line, "finished_at", 0.0)
        self.at = getattr(line, "at", None)  # where the line lies, when a view gives it (the viewer's index)

    def made(self, call_started_at: float) -> bool:
        """Whether a call of this unit's key was made by this record (unknown times: yes)."""
        if not call_started_at or not self.started_at:
            return True
        return self.started_at <= call_started_at <= self.finished_at


class RunEntry(Entry):
    __slots__ = ("task_id", "task_type", "trial", "checks_passed", "checks_applied", "max_turns", "ars_total",
                 "ars_n")

    def __init__(self, line: RunLine, names: Names) -> None:
        super().__init__(line, names(line.model))
        self.task_id, self.task_type, self.trial = names(line.task_id), names(line.task_type), line.trial
        applied = [c.outcome for c in line.checks if c.outcome != "n/a"] if self.ok else []
        self.checks_applied, self.checks_passed = len(applied), applied.count("pass")
        self.max_turns = bool(self.ok and line.run and line.run.stop_reason == "max_turns")
        self.ars_total = self.ars_n = 0  # over its kept scored judgements (Reader.judgements adds them)

    @property
    def passed(self) -> bool | None:
        """Whether this run passed as a trial; None when it is no trial: an infrastructure error, or ``unverified``."""
        if not self.ok:
            return None if self.retryable else False
        if self.checks_applied:
            return self.checks_passed == self.checks_applied
        return None

    @property
    def unverified(self) -> bool:
        """An ok run no check applied to: only the judge speaks for it, so it is neither a pass nor a fail."""
        return self.ok and not self.checks_applied


class JudgeEntry(Entry):
    __slots__ = ("agent_model", "task_type", "verdict", "ars", "sgr", "run")

    def __init__(self, line: JudgeLine, names: Names, run: RunEntry) -> None:
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


class CaseEntry(Entry):
    __slots__ = ("suite", "case_id", "file", "score", "passed", "scoring")

    def __init__(self, line: CaseLine, names: Names, suite: str, file: str) -> None:
        super().__init__(line, names(line.model))
        self.suite, self.case_id, self.file = suite, line.case_id, file
        self.score = line.score.score if self.ok and line.score else 0.0
        self.passed = bool(self.ok and line.score and line.score.passed)
        self.scoring = line.scoring


class Names(dict[str, str]):
    """One string object per distinct model, task or type name, however many entries hold it."""

    def __call__(self, name: str) -> str:
        return self.setdefault(name, name)


# -- reading ----------------------------------------------------------------------------------------------


class Reader:
    """Streams a directory's record files, keeping each key's final record and counting what it left out."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.keys = experiment_key_table(out_dir)  # each key to itself: the one copy entries are keyed by
        # What was left out of the counts, and why (the summary reports these fields under the same names).
        self.other_experiments = self.duplicates_ignored = self.stale_judgements = self.orphan_judgements = 0
        self.skipped_lines: dict[str, int] = {}  # file -> lines that did not decode as their record type
        self.names = Names()
        # The latest error line per (class, model): the example message, used if that record is the one kept.
        self.examples: dict[tuple[str | None, str], tuple[str, str]] = {}

    def lines(self, name: str, view: type) -> Iterable[Any]:
        """Decodable lines of ``name``; undecodable ones are counted (the reader warns once per file)."""
        report = ReadReport(path=str(self.out_dir / name))
        yield from iter_jsonl(self.out_dir / name, report, type_=view)
        skipped = len(report.bad_lines) + report.torn_tail
        if skipped:
            self.skipped_lines[name] = skipped

    def kept(self, lines: Iterable[Any], make: Callable[[Any], Entry | None], *,
             keys: dict[str, str] | None) -> dict[str, Any]:
        """Each key's final entry: its last ``ok`` line, else its last error (``make`` returns None to drop a line).

        With the experiment's key table, entries are keyed by its string objects, not by the lines' own copies."""
        kept: dict[str, Any] = {}
        for line in lines:
            key = line.key if keys is None else keys.get(line.key)
            if key is None:
                self.other_experiments += 1
                continue
            entry = make(line)
            if entry is None:
                continue
            previous = kept.get(key)
            if previous is not None and previous.ok:
                self.duplicates_ignored += 1
                if not entry.ok:
                    continue
            kept[key] = entry
            if not entry.ok:
                self.examples[(entry.error_class, entry.model)] = (key, line.error_message or "")
        return kept

    def runs(self) -> dict[str, RunEntry]:
        return self.kept(self.lines(RUNS, RunLine), lambda line: RunEntry(line, self.names), keys=self.keys)

    def judgements(self, runs: dict[str, RunEntry]) -> dict[str, JudgeEntry]:
        """The kept judgements of kept ok runs; each scored one adds its ARS to its run (for ``passed``)."""
        def make(line: JudgeLine) -> JudgeEntry | None:
            run = self.judged_run(line, runs)
            return None if run is None else JudgeEntry(line, self.names, run)

        judges: dict[str, JudgeEntry] = self.kept(self.lines(JUDGEMENTS, JudgeLine), make, keys=self.keys)
        for judge in judges.values():
            if judge.verdict == "scored":
                judge.run.ars_total += judge.ars
                judge.run.ars_n += 1
        return judges

    def judged_run(self, line: Any, runs: dict[str, Any]) -> Any:
        """The kept ok run entry a judgement line judged, or None (counted as orphan or stale): only a judgement that
        started after its run's kept record finished judged that record."""
        run = runs.get(line.run_key)
        if run is None or not run.ok:
            self.orphan_judgements += 1
            return None
        if line.started_at and run.finished_at > line.started_at:
            self.stale_judgements += 1  # it judged an earlier run of this key
            return None
        return run

    def cases(self) -> dict[str, CaseEntry]:
        """Kept tariff cases of every ``<suite>_<model>.jsonl`` (the sweep's own files have no ``_``)."""
        keys = self.keys if self.keys is not None and any(k.startswith("case-") for k in self.keys) else None
        cases: dict[str, CaseEntry] = {}
        for path in sorted(self.out_dir.glob("*_*.jsonl")):
            suite = path.name.split("_", 1)[0]
            def make(line: CaseLine, suite: str = suite, name: str = path.name) -> CaseEntry:
                return CaseEntry(line, self.names, suite, name)

            cases.update(self.kept(self.lines(path.name, CaseLine), make, keys=keys))
        return cases

    def example(self, key: str, entry: Entry) -> str | None:
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


