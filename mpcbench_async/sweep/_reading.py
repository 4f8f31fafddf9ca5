"""Which records of a sweep directory count, read once and reduced to a row of packed columns per unit key.

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

Memory. Runs and judgements are kept as packed columns (``Runs``: ~43 bytes a run, ``Judges``: ~33 a judgement;
names as 2-byte numbers of ``Names``, each column widened only if a value needs it), found by the number the
experiment's ``KeyIndex`` gives each unit key; a row view (``RunEntry``, ``JudgeEntry``) is made only when a
caller asks for one. At 100k units the slotted object per unit this replaced, and the dict of key strings it was
keyed by, were ~57 MiB, the summary's peak. Tariff cases and whole records
(``_kept``) stay one object per unit in a ``Table``.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any

import msgspec
import numpy as np

from ..mpcbench import AgentRunRecord, JudgeRecord
from ..runtime import ReadReport, iter_jsonl, key_view
from ..tariff import TariffCaseRecord
from ._errors import ErrorTally
from ._experiment import KeyIndex, experiment_key_index
from ._names import CALLS, JUDGEMENTS, RUNS

__all__ = ["CALLS", "JUDGEMENTS", "RUNS", "CaseEntry", "CaseLine", "Entry", "JudgeEntry", "JudgeLine", "Judges",
           "Names", "Reader", "RunEntry", "RunLine", "Runs", "SCORED", "Table",
           "as_numpy", "made"]



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


# -- the kept entries --------------------------------------------------------------------------------------


class Entry:
    """A unit's kept record reduced to a few slots, for the files kept as a dict (tariff cases, whole records)."""

    __slots__ = ("ok", "retryable", "model", "error_class", "started_at", "finished_at")

    def __init__(self, line: Any, model: str) -> None:
        self.ok = line.status == "ok"
        self.retryable = line.retryable
        self.model = model
        self.error_class = None if self.ok else line.error_class
        self.started_at = getattr(line, "started_at", 0.0)
        self.finished_at = getattr(line, "finished_at", 0.0)

    def made(self, call_started_at: float) -> bool:
        return made(self.started_at, self.finished_at, call_started_at)


def made(started_at: float, finished_at: float, call_started_at: float) -> bool:
    """Whether a call of a unit's key was made by its kept record (unknown times: yes)."""
    if not call_started_at or not started_at:
        return True
    return started_at <= call_started_at <= finished_at


class CaseEntry(Entry):
    __slots__ = ("suite", "case_id", "file", "score", "passed", "scoring")

    def __init__(self, line: CaseLine, names: Names, suite: str, file: str) -> None:
        super().__init__(line, names.names[names[line.model]])  # one string per model name
        self.suite, self.case_id, self.file = suite, line.case_id, file
        self.score = line.score.score if self.ok and line.score else 0.0
        self.passed = bool(self.ok and line.score and line.score.passed)
        self.scoring = line.scoring


class Names(dict[Any, int]):
    """Each distinct model, task, type or error class name once, numbered: a kept row holds numbers, not names.

    ``names[name]`` is its number (a new name gets the next), ``names.names[number]`` the name."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[Any] = []  # str, and None for "no error class"

    def __missing__(self, name: str | None) -> int:
        number = self[name] = len(self.names)
        self.names.append(name)
        return number


class Table:
    """The kept entries of one record file as a mapping of unit key → entry, for files kept as a dict."""

    def __init__(self, make: Callable[[Any], Any], keys: KeyIndex | None) -> None:
        self.make, self.keys = make, keys
        self.entries: dict[str, Any] = {}

    def unit(self, key: str) -> Any:
        """The unit a line's key names (None: not the current experiment's)."""
        return key if self.keys is None or key in self.keys else None

    def held_ok(self, unit: Any) -> bool:
        held = self.entries.get(unit)
        return held is not None and held.ok

    def put(self, unit: Any, line: Any) -> str:
        """Keep ``line`` as the unit's entry; the model its error example is grouped by."""
        entry = self.entries[unit] = self.make(line)
        return entry.model


# The packed tables: one slot per unit key, in the order keys were first read (a dict's order), each field a column.
# Names' numbers, check counts and ARS sums are 2 bytes, trials 4, until a value does not fit (``Packed.write``,
# ``Packed.widen``: ``_WIDER``).
_RUN_COLUMNS = {"ok": "b", "retryable": "b", "model_n": "H", "error_n": "H", "started_at": "d", "finished_at": "d",
                "task_n": "H", "type_n": "H", "trial": "i", "checks_passed": "H", "checks_applied": "H",
                "max_turns": "b", "ars_total": "H", "ars_n": "H"}
_JUDGE_COLUMNS = {"ok": "b", "retryable": "b", "model_n": "H", "error_n": "H", "started_at": "d", "finished_at": "d",
                  "agent_n": "H", "type_n": "H", "verdict_n": "b", "ars": "b", "sgr": "b", "run_slot": "i"}
_WIDER = {"H": "i", "i": "q"}  # a column's next type code when a value does not fit it
VERDICTS = ("error", "unscored", "scored")
SCORED = VERDICTS.index("scored")


class Packed:
    """Kept entries as packed columns, one slot per unit key: a mapping of key → a row view made when asked for.

    Why: a slotted object per run and per judgement was ~37 MiB of a 100k-unit summary; these columns are ~40 bytes
    a row. With the experiment's ``KeyIndex`` a key is found by its number (``slot_of``), else in a dict."""

    COLUMNS: dict[str, str] = {}
    KIND = ""  # the kind of key (``run``, ``judge``) this table's lines have: ``slot_of`` spans only those
    ok: array[int]
    retryable: array[int]
    model_n: array[int]  # a number of ``names``, as every ``_n`` column
    error_n: array[int]
    started_at: array[float]
    finished_at: array[float]

    def __init__(self, keys: KeyIndex | None, names: Names, *, located: bool = False) -> None:
        self.keys, self.names = keys, names
        self.columns = {name: array(code) for name, code in self.COLUMNS.items()}
        for name, column in self.columns.items():
            setattr(self, name, column)
        self.appends = [column.append for column in self.columns.values()]
        # Key number − ``base`` → slot, over the numbers of this table's kind of key (4 bytes a key of it, not of
        # every kind); a key of another kind (a library suite's, a line filed in the wrong file) in ``outside``.
        self.base, span = keys.span(self.KIND) if keys is not None else (0, 0)
        self.slot_of = array("i", [-1]) * span if keys is not None else None
        self.outside: dict[int, int] = {}  # key number -> slot, for the numbers ``slot_of`` does not span
        self.numbers = array("i")  # slot -> key number
        self.slots: dict[str, int] = {}  # key -> slot, without an index (small, old directories only)
        self.slot_keys: list[str] = []  # slot -> key, without an index
        self.at: list[Any] | None = [] if located else None  # where each line lies (the viewer's index)

    # -- the mapping ------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.numbers) if self.slot_of is not None else len(self.slots)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.find(key) is not None

    def __iter__(self) -> Iterator[str]:
        if self.keys is None:
            return iter(self.slot_keys)
        return map(self.keys.key, self.numbers)

    def __getitem__(self, key: str) -> Any:
        slot = self.find(key)
        if slot is None:
            raise KeyError(key)
        return self.row(slot)

    def get(self, key: str) -> Any:
        slot = self.find(key)
        return None if slot is None else self.row(slot)

    def values(self) -> Iterator[Any]:
        return (self.row(slot) for slot in range(len(self)))

    def items(self) -> Iterator[tuple[str, Any]]:
        return ((key, self.row(slot)) for slot, key in enumerate(self))

    def find(self, key: str) -> int | None:
        """The slot of ``key``, or None when it has none."""
        if self.slot_of is None:
            return self.slots.get(key)
        number = self.keys.number(key) if self.keys is not None else None
        if number is None:
            return None
        index = number - self.base
        slot = self.slot_of[index] if 0 <= index < len(self.slot_of) else self.outside.get(number, -1)
        return None if slot < 0 else slot

    def key(self, slot: int) -> str:
        return self.slot_keys[slot] if self.keys is None else self.keys.key(self.numbers[slot])

    def row(self, slot: int) -> Any:
        raise NotImplementedError

    def update(self, other: Packed) -> None:
        """Add ``other``'s slots (keys not held here: the viewer's tail), in its order."""
        for slot, key in enumerate(other):
            self.write(self._new_slot(self.unit(key)), tuple(column[slot] for column in other.columns.values()),  # type: ignore[arg-type]
                       new=True)
            if self.at is not None and other.at is not None:
                self.at.append(other.at[slot])

    def drop_positions(self) -> None:
        if self.at is not None:
            self.at = [None] * len(self.at)

    # -- keeping ---------------------------------------------------------------------------------------------

    def unit(self, key: str) -> int | str | None:
        if self.keys is None:
            return key
        return self.keys.number(key)

    def held(self, unit: int | str) -> int:
        if self.slot_of is None:
            return self.slots.get(unit, -1)  # type: ignore[arg-type]
        index = unit - self.base  # type: ignore[operator]
        return self.slot_of[index] if 0 <= index < len(self.slot_of) else self.outside.get(unit, -1)  # type: ignore[arg-type]

    def held_ok(self, unit: int | str) -> bool:
        slot = self.held(unit)
        return slot >= 0 and bool(self.ok[slot])  

    def _new_slot(self, unit: int | str) -> int:
        slot = len(self)
        if self.slot_of is None:
            self.slots[unit] = slot  # type: ignore[index]
            self.slot_keys.append(unit)  # type: ignore[arg-type]
        else:
            index = unit - self.base  # type: ignore[operator]
            if 0 <= index < len(self.slot_of):
                self.slot_of[index] = slot
            else:
                self.outside[unit] = slot  # type: ignore[index]
            self.numbers.append(unit)  # type: ignore[arg-type]
        return slot

    def store(self, unit: int | str, values: tuple[Any, ...], line: Any) -> None:
        """Write a unit's values (in ``COLUMNS`` order) into its slot, a new one at the end if it has none."""
        slot = self.held(unit)
        if slot < 0:
            self.write(self._new_slot(unit), values, new=True)
            if self.at is not None:
                self.at.append(getattr(line, "at", None))
            return
        self.write(slot, values, new=False)
        if self.at is not None:
            self.at[slot] = getattr(line, "at", None)

    def write(self, slot: int, values: tuple[Any, ...], *, new: bool) -> None:
        """Write ``values`` into ``slot`` (``new``: appended as it). A value a column's type cannot hold (a name
        number past 65,535, a trial past 2^31) makes that column one type wider (``_WIDER``), its rows kept: the
        columns are as narrow as the sweep's values allow, never wrong."""
        try:
            if new:
                for append, value in zip(self.appends, values, strict=True):
                    append(value)
            else:
                for column, value in zip(self.columns.values(), values, strict=True):
                    column[slot] = value
        except OverflowError:  # rare: the columns before the one that failed are written already
            for name, value in zip(list(self.columns), values, strict=True):
                try:
                    _put(self.columns[name], slot, value)
                except OverflowError:
                    _put(self.widen(name), slot, value)

    def widen(self, name: str) -> array[Any]:
        """Make column ``name`` one type wider (``_WIDER``), its rows kept: a value did not fit it."""
        narrow = self.columns[name]
        if narrow.typecode not in _WIDER:
            raise OverflowError(f"{name}: a value does not fit a column of type {narrow.typecode!r}")
        wide = self.columns[name] = array(_WIDER[narrow.typecode], narrow)
        setattr(self, name, wide)
        self.appends[list(self.columns).index(name)] = wide.append
        return wide

    def _head(self, line: Any, model: str) -> tuple[Any, ...]:
        ok = line.status == "ok"
        return (ok, line.retryable, self.names[model], self.names[None if ok else line.error_class],
                getattr(line, "started_at", 0.0), getattr(line, "finished_at", 0.0))


def _put(column: array[Any], slot: int, value: Any) -> None:
    if len(column) == slot:
        column.append(value)
    else:
        column[slot] = value


def as_numpy(column: array[Any]) -> np.ndarray:
    """A packed column as a numpy array over the same memory, of its own type (columns widen: ``Packed.write``)."""
    return np.frombuffer(column, dtype=column.typecode)


class Runs(Packed):
    """The kept agent runs (``RunLine``), a ``RunEntry`` view per key when asked for."""

    COLUMNS = _RUN_COLUMNS
    KIND = "run"
    task_n: array[int]
    type_n: array[int]
    trial: array[int]
    checks_passed: array[int]
    checks_applied: array[int]
    max_turns: array[int]
    ars_total: array[int]
    ars_n: array[int]

    def put(self, unit: int | str, line: RunLine) -> str:
        names = self.names
        ok = line.status == "ok"
        applied = [c.outcome for c in line.checks if c.outcome != "n/a"] if ok else []
        self.store(unit, (*self._head(line, line.model), names[line.task_id], names[line.task_type],
                          line.trial, applied.count("pass"), len(applied),
                          bool(ok and line.run and line.run.stop_reason == "max_turns"), 0, 0), line)
        return line.model

    def row(self, slot: int) -> RunEntry:
        return RunEntry(self, slot)

    def key_order(self) -> np.ndarray:
        """Per slot, a number that sorts as its key does (the key numbers when all are ``run-`` + hex)."""
        numbers = np.frombuffer(self.numbers, dtype=np.int32)
        if self.keys is not None and list(self.keys.packed)[:1] == ["run"] and \
                (not len(numbers) or int(numbers.max()) < len(self.keys.packed["run"][0])):
            return numbers  # one kind of fixed-width lowercase hex: its integer order is its string order
        keys = list(self)
        order = np.empty(len(keys), dtype=np.int64)
        order[sorted(range(len(keys)), key=keys.__getitem__)] = np.arange(len(keys))
        return order


class Judges(Packed):
    """The kept judgements (``JudgeLine``) of ``runs``' kept ok runs, a ``JudgeEntry`` view per key when asked for."""

    COLUMNS = _JUDGE_COLUMNS
    KIND = "judge"
    agent_n: array[int]
    type_n: array[int]
    verdict_n: array[int]  # a number of ``VERDICTS``
    ars: array[int]
    sgr: array[int]
    run_slot: array[int]

    def __init__(self, keys: KeyIndex | None, names: Names, runs: Runs, *, located: bool = False) -> None:
        super().__init__(keys, names, located=located)
        self.runs = runs
        self.run_slot_of: int = -1  # the run the line being kept judged (``Reader.judgements`` sets it)

    def put(self, unit: int | str, line: JudgeLine) -> str:
        judgement, verdict, ars, sgr = line.judgement, 0, 0, 0
        if line.status == "ok" and judgement is not None:
            if judgement.verdict == "unscored" or judgement.scores is None:
                verdict = 1
            else:
                verdict = SCORED
                ars = judgement.scores.answer_requirements_satisfaction.score
                sgr = judgement.scores.source_grounded_reasoning.score
        self.store(unit, (*self._head(line, line.judge_model), self.names[line.agent_model],
                          self.names[line.task_type], verdict, ars, sgr, self.run_slot_of), line)
        return line.judge_model

    def row(self, slot: int) -> JudgeEntry:
        return JudgeEntry(self, slot)


class _Column:
    """A field of a row view: the row's value in one column of its table; a ``Names`` number read as its name, a
    flag as a bool, when ``as_`` says so."""

    def __init__(self, column: str, as_: Callable[[Any, Any], Any] | None = None) -> None:
        self.column, self.as_ = column, as_

    def __get__(self, view: Any, owner: Any = None) -> Any:
        value = getattr(view.table, self.column)[view.slot]
        return value if self.as_ is None else self.as_(view.table, value)


def _name(table: Packed, number: int) -> Any:
    return table.names.names[number]


def _flag(table: Packed, value: int) -> bool:
    return bool(value)


class _View:
    """One kept row of a packed table, made when asked for (never held per unit)."""

    __slots__ = ("table", "slot")

    def __init__(self, table: Any, slot: int) -> None:
        self.table, self.slot = table, slot

    ok = _Column("ok", _flag)
    retryable = _Column("retryable", _flag)
    model = _Column("model_n", _name)
    error_class = _Column("error_n", _name)
    started_at = _Column("started_at")
    finished_at = _Column("finished_at")

    @property
    def at(self) -> Any:
        return None if self.table.at is None else self.table.at[self.slot]

    def made(self, call_started_at: float) -> bool:
        return made(self.table.started_at[self.slot], self.table.finished_at[self.slot], call_started_at)


class RunEntry(_View):
    """A kept run: its key's row of ``Runs``. ``ars_total``: the ARS sum over its kept scored judgements
    (``Reader.judgements`` adds them), ``ars_n`` their count."""

    __slots__ = ()
    task_id = _Column("task_n", _name)
    task_type = _Column("type_n", _name)
    trial = _Column("trial")
    checks_passed = _Column("checks_passed")
    checks_applied = _Column("checks_applied")
    max_turns = _Column("max_turns", _flag)
    ars_total = _Column("ars_total")
    ars_n = _Column("ars_n")

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


class JudgeEntry(_View):
    """A kept judgement: its key's row of ``Judges``; ``run_slot`` is the slot of the run it judged."""

    __slots__ = ()
    agent_model = _Column("agent_n", _name)
    task_type = _Column("type_n", _name)
    verdict = _Column("verdict_n", lambda table, number: VERDICTS[number])
    ars = _Column("ars")
    sgr = _Column("sgr")
    run_slot = _Column("run_slot")

    @property
    def run(self) -> RunEntry:
        return self.table.runs.row(self.run_slot)


# -- reading ----------------------------------------------------------------------------------------------


class Reader:
    """Streams a directory's record files, keeping each key's final record and counting what it left out."""

    located = False  # whether kept rows keep where each line lies (``line.at``: the viewer's reader)

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.keys = experiment_key_index(out_dir)  # the current experiment's unit keys, numbered
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

    def kept(self, lines: Iterable[Any], table: Any, *, admit: Callable[[Any], bool] | None = None) -> None:
        """Keep each key's final line in ``table`` (a ``Table`` or ``Packed``): its last ``ok`` line, else its last
        error. ``admit`` says whether a line of the current experiment counts at all (judgements: of a kept run)."""
        unit_of, held_ok, put = table.unit, table.held_ok, table.put
        for line in lines:
            unit = unit_of(line.key)
            if unit is None:
                self.other_experiments += 1
                continue
            if admit is not None and not admit(line):
                continue
            ok = line.status == "ok"
            if held_ok(unit):
                self.duplicates_ignored += 1
                if not ok:
                    continue
            model = put(unit, line)
            if not ok:
                self.examples[(line.error_class, model)] = (line.key, line.error_message or "")

    def runs(self) -> Runs:
        runs = Runs(self.keys, self.names, located=self.located)
        self.kept(self.lines(RUNS, RunLine), runs)
        return runs

    def judgements(self, runs: Runs) -> Judges:
        """The kept judgements of kept ok runs; each scored one adds its ARS to its run (for ``passed``)."""
        judges = Judges(self.keys, self.names, runs, located=self.located)
        finished, ok = runs.finished_at, runs.ok

        def admit(line: JudgeLine) -> bool:
            slot = runs.find(line.run_key)
            judges.run_slot_of = -1 if slot is None else slot
            return self.judged(line, slot is not None and bool(ok[slot]), finished[slot] if slot is not None else 0.0)

        self.kept(self.lines(JUDGEMENTS, JudgeLine), judges, admit=admit)
        total, count = runs.ars_total, runs.ars_n
        for verdict, ars, run in zip(judges.verdict_n, judges.ars, judges.run_slot, strict=True):
            if verdict == SCORED:
                try:
                    total[run] += ars
                except OverflowError:  # past 65,535 (13,108 judges' fives): the column widens
                    total = runs.widen("ars_total")
                    total[run] += ars
                try:
                    count[run] += 1
                except OverflowError:
                    count = runs.widen("ars_n")
                    count[run] += 1
        return judges

    def judged(self, line: Any, run_ok: bool, run_finished_at: float) -> bool:
        """Whether a judgement line judged its run's kept record, else counted as orphan (the run has no kept ok
        record) or stale: only a judgement that started after its run's kept record finished judged that record."""
        if not run_ok:
            self.orphan_judgements += 1
            return False
        if line.started_at and run_finished_at > line.started_at:
            self.stale_judgements += 1  # it judged an earlier run of this key
            return False
        return True

    def cases(self) -> dict[str, CaseEntry]:
        """Kept tariff cases of every ``<suite>_<model>.jsonl`` (the sweep's own files have no ``_``)."""
        keys = self.keys if self.keys is not None and self.keys.has_kind("case") else None
        cases: dict[str, CaseEntry] = {}
        for path in sorted(self.out_dir.glob("*_*.jsonl")):
            suite = path.name.split("_", 1)[0]
            def make(line: CaseLine, suite: str = suite, name: str = path.name) -> CaseEntry:
                return CaseEntry(line, self.names, suite, name)

            table = Table(make, keys)
            self.kept(self.lines(path.name, CaseLine), table)
            cases.update(table.entries)
        return cases

    def example(self, key: str, entry: Any) -> str | None:
        """The example message of ``entry``'s group if it is this kept record's."""
        found = self.examples.get((entry.error_class, entry.model))
        return found[1] if found is not None and found[0] == key else None

    def fill_examples(self, tally: ErrorTally, tables: dict[str, tuple[type, Any]]) -> None:
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
