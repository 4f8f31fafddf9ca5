"""A sweep directory is one experiment: its fingerprint, the refusal to blend another one, its unit keys.

``manifest.json`` keeps the fingerprint of everything the results depend on
(the same parts the unit keys hash) and the history of invocations. A rerun
whose plan disagrees with the fingerprint where they overlap — a model's
params, a prompt, ``max_turns``, a task's content — is refused with the list of
changes, unless ``--allow-changes`` starts a new experiment in the directory.
New models, tasks or trials only extend the matrix.

``experiment_keys.txt`` lists the unit keys of the current experiment, one a
line; the summary counts only records with those keys, so the records of an
earlier experiment stay on disk but out of the tables. ``experiment_keys.plan``
notes the digest of the last plan whose keys were added (``SweepPlan.digest``)
and the list's size and time then, so a rerun of the same plan on an unchanged
list neither computes nor rewrites 10^5 keys.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import re
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from .._exceptions import InputError
from .._redact import redact  # a key pasted into base_url must not reach manifest.json
from ..llm import ModelConfig
from ..mpcbench import SweepPlan
from ..runtime import atomic_write_bytes, bucketed, find_bucketed, iter_jsonl
from ._records import Experiment, Fingerprint, Invocation, Manifest

__all__ = ["KEYS_FILE", "KeyIndex", "experiment_key_index", "fingerprint_changes", "open_experiment",
           "plan_fingerprint", "read_experiment_keys", "read_manifest", "record_case_keys", "record_experiment_keys",
           "write_manifest"]

log = logging.getLogger(__name__)

KEYS_FILE = "experiment_keys.txt"
PLAN_FILE = "experiment_keys.plan"
MANIFEST_FILE = "manifest.json"
ADOPTED = ("the manifest predates experiment fingerprints: this sweep's settings define the experiment from now on; "
           "records made with other settings stay on disk, out of the summary")


def plan_fingerprint(plan: SweepPlan, config: ModelConfig, *, judge_attempts: int = 3) -> Fingerprint:
    """The fingerprint of ``plan``: built from the parts its unit keys hash, so both agree on what is a change."""
    models = {m: config.settings_for(m).reply_settings() for m in sorted({*plan.agent_models, *plan.judge_models})}
    return Fingerprint(max_turns=plan.max_turns, prompts=plan.prompt_digests,
                       judge_attempts=judge_attempts, models=redact(msgspec.to_builtins(models)),
                       tasks=dict(sorted(plan.task_hashes.items())),
                       task_scenarios={t: plan.tasks[t].scenario_id for t in sorted(plan.tasks)},
                       data=dict(sorted(plan.data_hashes.items())))


def _flat(value: Any, prefix: str) -> dict[str, Any]:
    """Nested settings as ``a.b.c -> leaf`` so a change names the exact parameter."""
    if isinstance(value, dict):
        flat: dict[str, Any] = {}
        for key in sorted(value):
            flat.update(_flat(value[key], f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix: value}


_UNSET = object()


def _show(value: Any) -> str:
    return "(unset)" if value is _UNSET else msgspec.json.encode(value).decode()


def fingerprint_changes(old: Fingerprint, new: Fingerprint) -> list[str]:
    """What ``new`` changes of ``old`` where they overlap, one readable line per change (empty: compatible)."""
    changes = []
    if old.max_turns != new.max_turns:
        changes.append(f"max_turns: {old.max_turns} → {new.max_turns}")
    if old.judge_attempts != new.judge_attempts:
        changes.append(f"judge attempts: {old.judge_attempts} → {new.judge_attempts}")
    for name in sorted(old.prompts.keys() & new.prompts.keys()):
        if old.prompts[name] != new.prompts[name]:
            changes.append(f"{name} prompt: changed (digest {old.prompts[name]} → {new.prompts[name]})")
    for model in sorted(old.models.keys() & new.models.keys()):
        before, after = _flat(old.models[model], ""), _flat(new.models[model], "")
        for field in sorted(before.keys() | after.keys()):
            was, now = before.get(field, _UNSET), after.get(field, _UNSET)
            if was != now:
                changes.append(f"model {model}: {field}: {_show(was)} → {_show(now)}")
    for task_id in sorted(old.tasks.keys() & new.tasks.keys()):
        if old.tasks[task_id] != new.tasks[task_id]:
            changes.append(f"task {task_id}: file content changed")
    for task_id in sorted(old.task_scenarios.keys() & new.task_scenarios.keys()):
        if old.task_scenarios[task_id] != new.task_scenarios[task_id]:
            changes.append(f"task {task_id}: scenario {old.task_scenarios[task_id]} → {new.task_scenarios[task_id]}")
    if None not in (old.tariff_scoring, new.tariff_scoring) and old.tariff_scoring != new.tariff_scoring:
        changes.append(f"tariff scoring: {old.tariff_scoring} → {new.tariff_scoring}")
    for scenario in sorted(old.data.keys() & new.data.keys()):
        if old.data[scenario] != new.data[scenario]:
            changes.append(f"scenario {scenario}: data files changed")
    return changes


def _extend(old: Fingerprint, new: Fingerprint) -> Fingerprint:
    """The fingerprint of both plans together (they agree where they overlap)."""
    return Fingerprint(max_turns=new.max_turns, prompts={**old.prompts, **new.prompts},
                       judge_attempts=new.judge_attempts, models=dict(sorted({**old.models, **new.models}.items())),
                       tasks=dict(sorted({**old.tasks, **new.tasks}.items())),
                       task_scenarios=dict(sorted({**old.task_scenarios, **new.task_scenarios}.items())),
                       data=dict(sorted({**old.data, **new.data}.items())),
                       tariff_scoring=new.tariff_scoring or old.tariff_scoring)


def read_manifest(out_dir: Path) -> Manifest | None:
    """The directory's manifest, or None when there is none; a damaged one is a user error naming the file."""
    path = out_dir / MANIFEST_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    try:
        return msgspec.json.decode(raw, type=Manifest)
    except msgspec.DecodeError as exc:
        raise InputError(f"{path}: not a sweep manifest ({exc}); move it away or pass another ``out``") from exc


def write_manifest(out_dir: Path, manifest: Manifest) -> None:
    """Replace ``manifest.json`` atomically (a kill mid-write leaves the old one)."""
    atomic_write_bytes(out_dir / MANIFEST_FILE, msgspec.json.format(msgspec.json.encode(manifest)) + b"\n",
                       fsync=False)


def _refusal(out_dir: Path, experiment: int, changes: list[str]) -> str:
    """The error for a rerun that would blend two experiments: what changed (the first 20 changes) and what to do."""
    shown = [f"  {line}" for line in changes[:_SHOWN]]
    if len(changes) > _SHOWN:
        shown.append(f"  … and {len(changes) - _SHOWN} more")
    return (f"{out_dir / MANIFEST_FILE}: this directory holds experiment {experiment}, and this sweep changes what "
            "its results depend on:\n" + "\n".join(shown) + "\nPass a new ``out`` to keep the experiments in separate "
            f"directories, or ``allow_changes=True`` to start experiment {experiment + 1} here (the summary then "
            "counts only its units).")


_SHOWN = 20


def open_experiment(out_dir: Path, manifest: Manifest, fingerprint: Fingerprint | None, *,
                    allow_changes: bool) -> tuple[Manifest, bool]:
    """Fit this invocation's ``manifest`` into the directory's experiment; return it and whether a new one began.

    Raises ``InputError`` listing the changes when ``fingerprint`` disagrees
    with the stored one and ``allow_changes`` is false. ``fingerprint`` is None
    for sweeps without an MPCBench plan (tariff suites only).
    """
    old = read_manifest(out_dir)
    new_experiment = old is None
    if old is not None:
        manifest.experiment, manifest.experiments, manifest.history = old.experiment, old.experiments, old.history
        if fingerprint is None:
            fingerprint = old.fingerprint  # a tariff-only sweep leaves the MPCBench experiment as it is
        elif old.fingerprint is None:
            log.warning("manifest.fingerprint_adopted",
                        extra={"manifest": str(out_dir / MANIFEST_FILE), "detail": ADOPTED})
            new_experiment = True  # the experiment is this plan's from now on: its keys only
        else:
            changes = fingerprint_changes(old.fingerprint, fingerprint)
            if changes and not allow_changes:
                raise InputError(_refusal(out_dir, old.experiment, changes))
            if changes:
                manifest.experiments = [*old.experiments, Experiment(id=old.experiment, fingerprint=old.fingerprint)]
                manifest.experiment = old.experiment + 1
                new_experiment = True
            else:
                fingerprint = _extend(old.fingerprint, fingerprint)
    manifest.fingerprint = fingerprint
    manifest.history = [*manifest.history, Invocation(
        command=manifest.command, experiment=manifest.experiment, started_at=manifest.started_at,
        config_hash=manifest.config_hash, prompts_hash=manifest.prompts_hash)]
    return manifest, new_experiment


def record_experiment_keys(out_dir: Path, plan: SweepPlan, *, new_experiment: bool) -> None:
    """Add ``plan``'s unit keys to the experiment's key list (replace it when a new experiment began).

    Keys of our own shape (``<kind>-`` + 16 hex digits) are held as 8-byte integers per kind, sorted and written
    in chunks: at 100k units a set of 200k key strings and a formatted line per key were ~45 MiB at once, the
    high-water mark of a fresh sweep's start."""
    digest = plan.digest()
    if not new_experiment and _plan_note(out_dir) == _note(out_dir, digest):
        return  # this plan's keys were added, and the list has not changed since
    keys = _PackedKeys()
    for unit in plan.agent_units():
        keys.add(unit.key)
        for key in plan.judge_keys(unit.key):
            keys.add(key)
    if not new_experiment:
        for key in _key_words(out_dir) or ():
            keys.add(key)
    atomic_write_bytes(out_dir / KEYS_FILE, keys.lines(), fsync=False)
    atomic_write_bytes(out_dir / PLAN_FILE, _note(out_dir, digest).encode(), fsync=False)


class _PackedKeys:
    """A set of unit keys: ``run-``/``judge-``/``case-`` + 16 hex digits as integers per kind, any other as itself."""

    __slots__ = ("packed", "others")

    def __init__(self) -> None:
        self.packed: dict[str, array[int]] = {}
        self.others: set[str] = set()

    def add(self, key: str) -> None:
        kind, _, digits = key.partition("-")
        if len(digits) == 16 and kind in _KINDS and _HEX.fullmatch(digits):
            self.packed.setdefault(kind, array("Q")).append(int(digits, 16))
        else:
            self.others.add(key)

    def lines(self) -> bytearray:
        """Every key once, sorted as strings, one a line (our fixed-width lowercase hex sorts as its integer)."""
        sources: list[Iterator[str]] = [iter(sorted(self.others))]
        sources += [_formatted(kind, np.unique(np.frombuffer(values, dtype=np.uint64)))
                    for kind, values in sorted(self.packed.items())]
        merged, out = heapq.merge(*sources), bytearray()
        while chunk := list(itertools.islice(merged, _CHUNK)):
            out += ("\n".join(chunk) + "\n").encode()
        return out


def _formatted(kind: str, values: np.ndarray) -> Iterator[str]:
    for start in range(0, len(values), _CHUNK):
        yield from (f"{kind}-{value:016x}" for value in values[start:start + _CHUNK].tolist())


_CHUNK = 8192
_KINDS = ("run", "judge", "case")
_HEX = re.compile(r"[0-9a-f]{16}")


def _note(out_dir: Path, digest: str) -> str:
    """What ``experiment_keys.plan`` says once ``digest``'s keys are in the list as it is now."""
    stat = (out_dir / KEYS_FILE).stat() if (out_dir / KEYS_FILE).exists() else None
    return f"{digest} {stat.st_size if stat else -1} {stat.st_mtime_ns if stat else -1}\n"


def _plan_note(out_dir: Path) -> str | None:
    try:
        return (out_dir / PLAN_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def record_case_keys(out_dir: Path, results_file: str, current: set[str]) -> None:
    """Make ``current`` the tariff case keys of one ``<suite>_<model>.jsonl`` in the experiment's key list.

    A tariff suite × model counts the cases of its latest invocation: keys of that file's earlier records
    (other model settings, prompts or case content) leave the list, so the summary never blends them in.
    Directories without a key list (written before experiments were kept apart) are left as they are.
    """
    keys = read_experiment_keys(out_dir)
    if keys is None:
        if (out_dir / "runs.jsonl").exists():
            return
        keys = set()
    earlier = {line.key for line in iter_jsonl(out_dir / results_file, type_=_Keyed, warn=False)}
    keys = (keys - earlier) | current
    atomic_write_bytes(out_dir / KEYS_FILE, "".join(f"{key}\n" for key in sorted(keys)).encode(), fsync=False)


class _Keyed(msgspec.Struct):
    key: str


# Our keys are ``<kind>-`` + 16 hex digits (records.unit_key); a library suite may key its units otherwise, so a
# key is only required to be one short word of the characters keys and file-safe ids are made of.
_KEY = re.compile(r"[A-Za-z0-9_.:/-]{1,200}")


def read_experiment_keys(out_dir: Path) -> set[str] | None:
    """The current experiment's unit keys, or None for directories written before experiments were kept apart.

    A list that is not one unit key a line is a user error naming the file. It is not rebuilt silently: it
    holds the keys of every invocation of the experiment, more than this sweep's plan can tell.
    """
    words = _key_words(out_dir)
    return None if words is None else set(words)


def experiment_key_index(out_dir: Path) -> KeyIndex | None:
    """The current experiment's unit keys as a ``KeyIndex`` (None: no list), for a reader that keeps a row per key."""
    text = _key_text(out_dir)
    return None if text is None else KeyIndex(_words(out_dir / KEYS_FILE, text))


class KeyIndex:
    """A set of unit keys, each with its number (0 … ``len`` − 1), held without a string per key.

    Why: the reader keeps a row per unit key; a dict of 200k key strings was 20 MiB of a 100k-unit summary. Keys of
    our own shape (``run-``/``judge-``/``case-`` + 16 lowercase hex digits) are sorted 8-byte integers per kind
    (found by bisection: exact, no hash to collide); any other key (a library suite's) is in a dict."""

    __slots__ = ("packed", "others", "other_keys", "size")

    def __init__(self, keys: Iterable[str]) -> None:
        found = _PackedKeys()
        for key in keys:
            found.add(key)
        # kind -> its sorted values, the number of the first, the shift to a value's bucket, where each bucket starts
        self.packed: dict[str, tuple[array[int], int, int, array[int]]] = {}
        self.size = 0
        for kind in _KINDS:
            if kind in found.packed:
                values = np.unique(np.frombuffer(found.packed[kind], dtype=np.uint64))
                packed, shift, starts = bucketed(values)  # ~0.7 µs a key: a third of a 100k summary's reading
                self.packed[kind] = (packed, self.size, shift, starts)
                self.size += len(values)
        self.other_keys = sorted(found.others)
        self.others = {key: self.size + n for n, key in enumerate(self.other_keys)}
        self.size += len(self.other_keys)

    def __len__(self) -> int:
        return self.size

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.number(key) is not None

    def number(self, key: str) -> int | None:
        """The key's number, or None when it is not in the set."""
        kind, _, digits = key.partition("-")
        found = self.packed.get(kind)
        # 16 lowercase hex digits (ASCII letters and digits, no capital, no "0x": the rest ``int`` refuses).
        if found is None or len(digits) != 16 or not (digits.isascii() and digits.isalnum()) or \
                not (digits.islower() or digits.isdigit()) or digits[1] == "x":
            return self.others.get(key)
        try:
            value = int(digits, 16)
        except ValueError:
            return self.others.get(key)
        values, offset, shift, starts = found
        position = find_bucketed(values, shift, starts, value)
        return None if position is None else offset + position

    def span(self, kind: str) -> tuple[int, int]:
        """The first number of ``kind``'s keys of our own shape and how many there are (they are numbered in a row)."""
        found = self.packed.get(kind)
        return (0, 0) if found is None else (found[1], len(found[0]))

    def key(self, number: int) -> str:
        """The key numbered ``number``."""
        for kind, (values, offset, _, _) in self.packed.items():
            position = number - offset
            if 0 <= position < len(values):
                return f"{kind}-{values[position]:016x}"
        return self.other_keys[number - self.size + len(self.other_keys)]

    def has_kind(self, kind: str) -> bool:
        """Whether some key starts with ``kind`` + ``-``."""
        return kind in self.packed or any(key.startswith(f"{kind}-") for key in self.others)


def _key_words(out_dir: Path) -> list[str] | None:
    """The words of the key list, each checked to be a unit key; None when there is no list."""
    text = _key_text(out_dir)
    return None if text is None else list(_words(out_dir / KEYS_FILE, text))


def _key_text(out_dir: Path) -> str | None:
    """The key list's text; None when there is no list."""
    path = out_dir / KEYS_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    try:
        return raw.decode()
    except UnicodeDecodeError:
        raise InputError(_damaged(path, "not UTF-8 text")) from None


def _words(path: Path, text: str) -> Iterator[str]:
    """The words of the list's text, each checked to be a unit key, one at a time (no list of 200k strings)."""
    for number, line in enumerate(_lines(text), 1):
        words = line.split()  # one key a line is what we write; any whitespace between keys is read
        for key in words:
            if not _KEY.fullmatch(key):
                raise InputError(_damaged(path, f"line {number} holds {key[:40]!r}, not a unit key"))
        yield from words


def _lines(text: str) -> Iterator[str]:
    """``text.splitlines()`` one line at a time (the list is built only for text with rarer line breaks)."""
    if _RARE_BREAKS.search(text):
        yield from text.splitlines()
        return
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


_RARE_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _damaged(path: Path, what: str) -> str:
    return (f"{path}: not a list of unit keys ({what}). It names the units of this directory's current experiment; "
            "move it away and rerun to rebuild it from this sweep's units (records of other units in the directory "
            "then stay out of the summary), or pass another ``out``")
