"""The three-level MPCBench data, read from where the user has it, and checked.

The data is not shipped (its licence is unstated): ``levels import DIR`` and the
sweep read it from a checkout of the original repository (``generate/output``
inside it) or from a folder of those files:
``world_level{N}_{split}.json``, ``instances_level{N}_{split}.jsonl`` and, when
labelled, ``oracle_level{N}_{split}.jsonl`` (splits: ``test``, ``exp1``, or any
name ``levels generate`` wrote).

The published JSON Schemas (``schema/``) describe an earlier shape than the data
the original's own code reads (``policy_tags``, ``comm_tags``, ``thread_tags``,
columnar ``people_table``); the checks here follow the data and the code, so
that every reference file loads and a broken one gets one message naming the
file and the field. A broken world refuses its whole level; a broken instance is
kept aside with its problem (``LevelSet.invalid``) and becomes a per-instance
failure, never a crash.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from .._exceptions import InputError
from ._oracle import POLICY_RULES, resolve_people
from ._times import parse_instant, zone

__all__ = ["LevelSet", "discover", "find_output_dir", "instance_problems", "load_level_set", "world_problems"]

_RULE_FIELDS = {"buffer_min": ("minutes",), "ban_dow_time": ("day_of_week", "start", "end")}
_FILE = re.compile(r"^world_level([123])_([A-Za-z0-9][A-Za-z0-9_.-]*)\.json$")


class LevelSet(msgspec.Struct, kw_only=True):
    """One level × split: its world, its valid instances (file order), their oracle lines, and the broken ones."""

    level: int
    split: str
    world: dict[str, Any]
    instances: list[dict[str, Any]]
    oracle: dict[str, dict[str, Any]]
    invalid: dict[str, str]  # instance id (or "line N") → the problem
    directory: Path

    @property
    def name(self) -> str:
        return f"L{self.level}_{self.split}"


def find_output_dir(path: str | Path) -> Path:
    """The folder holding the files: ``path`` itself, or ``path/generate/output`` for a checkout."""
    base = Path(path)
    if not base.is_dir():
        raise InputError(f"{base}: not a directory (give a checkout of MPCBench or a folder of its generate/output "
                         "files; 'mpcbench-async levels import DIR' copies them into storage/levels)")
    for candidate in (base, base / "generate" / "output"):
        if any(_FILE.match(p.name) for p in candidate.glob("world_level*_*.json")):
            return candidate
    raise InputError(f"{base}: no world_level{{1,2,3}}_<split>.json here or in generate/output/")


def discover(directory: Path) -> list[tuple[int, str]]:
    """Every (level, split) with a world file, sorted."""
    found = [(int(m.group(1)), m.group(2)) for p in directory.iterdir() if (m := _FILE.match(p.name))]
    return sorted(found, key=lambda ls: (ls[1] != "test", ls[1], ls[0]))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    except ValueError as exc:
        raise InputError(f"{path}: not valid JSON ({exc})") from exc


def _read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except ValueError as exc:
                raise InputError(f"{path}:{number}: not valid JSON ({exc})") from exc


def load_level_set(directory: str | Path, level: int, split: str) -> LevelSet:
    """Load and check one level × split (see the module docstring); ``InputError`` for a broken world or file."""
    base = Path(directory)
    world_path = base / f"world_level{level}_{split}.json"
    world = _read_json(world_path)
    if problems := world_problems(world, level):
        raise InputError(f"{world_path}: {problems[0]}" + (f" (and {len(problems) - 1} more)" if len(problems) > 1
                                                            else ""))
    instances_path = base / f"instances_level{level}_{split}.jsonl"
    if not instances_path.is_file():
        raise InputError(f"{instances_path}: missing (every world needs its instances file)")
    instances: list[dict[str, Any]] = []
    invalid: dict[str, str] = {}
    seen: set[str] = set()
    for number, instance in _read_jsonl(instances_path):
        iid = instance.get("instance_id") if isinstance(instance, dict) else None
        ident = iid if isinstance(iid, str) and iid else f"line {number}"
        problems = instance_problems(instance, world, level)
        if ident in seen:
            problems.insert(0, f"$.instance_id {ident!r} is used twice")
            ident = f"{ident} (line {number})"
        seen.add(ident)
        if problems:
            invalid[ident] = f"{instances_path}:{number}: {problems[0]}"
        else:
            instances.append(instance)
    oracle: dict[str, dict[str, Any]] = {}
    oracle_path = base / f"oracle_level{level}_{split}.jsonl"
    if oracle_path.is_file():
        for number, line in _read_jsonl(oracle_path):
            if not isinstance(line, dict) or not isinstance(line.get("instance_id"), str) or not isinstance(
                    line.get("feasible_candidates"), list):
                raise InputError(f"{oracle_path}:{number}: needs instance_id and a feasible_candidates list")
            oracle[line["instance_id"]] = line
    return LevelSet(level=level, split=split, world=world, instances=instances, oracle=oracle, invalid=invalid,
                    directory=base)


# -- checks ---------------------------------------------------------------------------------------------------------


def _instant_problem(value: Any, tz: str, where: str) -> str | None:
    try:
        parse_instant(value, tz)
    except (ValueError, TypeError):
        return f"{where}: not an ISO-8601 date-time ({value!r})"
    return None


def _events_problems(events: Any, tz: str, where: str) -> list[str]:
    if not isinstance(events, list):
        return [f"{where}: must be a list of busy events"]
    problems = []
    for n, event in enumerate(events):
        if not isinstance(event, dict):
            problems.append(f"{where}[{n}]: must be an object with start and end")
            continue
        for end in ("start", "end"):
            if (p := _instant_problem(event.get(end), tz, f"{where}[{n}].{end}")) is not None:
                problems.append(p)
    return problems


def _event_map_problems(mapping: Any, tz: str, where: str, what: str) -> list[str]:
    """A mapping of ids (people, rooms) to their busy events: each event's instants checked."""
    if not isinstance(mapping, dict):
        return [f"{where}: missing ({what} → busy events)"]
    return [p for ident, events in mapping.items() for p in _events_problems(events, tz, f"{where}.{ident}")]


def _rule_problems(rules: Any, where: str) -> list[str]:
    if not isinstance(rules, list):
        return [f"{where}: must be a list of rules"]
    problems = []
    for n, rule in enumerate(rules):
        kind = rule.get("type") if isinstance(rule, dict) else None
        if kind not in POLICY_RULES:
            problems.append(f"{where}[{n}].type: {kind!r} is not a rule type ({', '.join(POLICY_RULES)})")
            continue
        needs = _RULE_FIELDS.get(kind, ("start", "end"))
        problems += [f"{where}[{n}].{field}: missing" for field in needs if field not in rule]
        for field in ("start", "end"):
            value = rule.get(field)
            if value is not None and not (isinstance(value, str) and re.fullmatch(r"\d{1,2}:\d{2}", value)):
                problems.append(f"{where}[{n}].{field}: {value!r} is not HH:MM")
    return problems


def world_problems(world: Any, level: int) -> list[str]:
    """What keeps ``world`` from being a level-``level`` world (JSON paths), or ``[]``."""
    if not isinstance(world, dict):
        return ["$: a world must be a JSON object"]
    problems = [f"$.{f}: missing" for f in ("world_id", "level", "timezone", "sources") if f not in world]
    if problems:
        return problems
    if world["level"] != level:
        problems.append(f"$.level: {world['level']!r}, but the file name says level {level}")
    try:
        zone(world["timezone"])
    except (ValueError, TypeError):
        return [*problems, f"$.timezone: {world['timezone']!r} is not an IANA time zone"]
    tz, sources = world["timezone"], world["sources"]
    if not isinstance(sources, dict):
        return [*problems, "$.sources: must be an object"]
    problems += _event_map_problems(sources.get("calendar_json"), tz, "$.sources.calendar_json", "person id")
    policies_at = "policy_json" if level == 1 else "policy_tags"
    policies = sources.get(policies_at)
    if not isinstance(policies, dict) or not policies:
        problems.append(f"$.sources.{policies_at}: missing (policy id → {{rules: [...]}})")
    else:
        for pid, policy in policies.items():
            rules = policy.get("rules") if isinstance(policy, dict) else None
            problems += _rule_problems(rules, f"$.sources.{policies_at}.{pid}.rules")
    if level == 3:
        for table, column in (("people_table", "person_id"), ("rooms_table", "room_id")):
            rows = sources.get(table)
            rows = rows.get("rows") if isinstance(rows, dict) else rows
            if not isinstance(rows, list) or not all(isinstance(r, dict) and column in r for r in rows):
                problems.append(f"$.sources.{table}: missing, or a row without {column}")
        problems += _event_map_problems(sources.get("room_availability_json"), tz,
                                        "$.sources.room_availability_json", "room id")
    return problems


def instance_problems(instance: Any, world: dict[str, Any], level: int) -> list[str]:
    """What keeps ``instance`` from being solved in ``world`` (JSON paths), or ``[]``."""
    if not isinstance(instance, dict):
        return ["$: an instance must be a JSON object"]
    problems = [f"$.{f}: missing" for f in ("instance_id", "level", "slots") if f not in instance]
    if problems:
        return problems
    if instance["level"] != level:
        return [f"$.level: {instance['level']!r}, but the file holds level {level}"]
    tz, slots = world["timezone"], instance["slots"]
    if not isinstance(slots, dict):
        return ["$.slots: must be an object"]
    window = slots.get("time_window")
    if not isinstance(window, dict):
        return ["$.slots.time_window: missing"]
    for end in ("start", "end"):
        if (p := _instant_problem(window.get(end), tz, f"$.slots.time_window.{end}")) is not None:
            problems.append(p)
    people = slots.get("participants")
    if not isinstance(people, list) or not people or not all(isinstance(p, str) for p in people):
        problems.append("$.slots.participants: must be a non-empty list of names or person ids")
    duration = slots.get("duration_min")
    if not isinstance(duration, int) or isinstance(duration, bool) or duration <= 0:
        problems.append(f"$.slots.duration_min: must be a positive number of minutes, got {duration!r}")
    options = slots.get("num_options")
    if level < 3 and (not isinstance(options, int) or isinstance(options, bool) or options < 1):
        problems.append(f"$.slots.num_options: must be at least 1, got {options!r}")
    policy = slots.get("policy_id")
    policies = world["sources"].get("policy_json" if level == 1 else "policy_tags") or {}
    if policy not in policies:
        problems.append(f"$.slots.policy_id: {policy!r} is not a policy of the world ({', '.join(policies)})")
    sources = instance.get("sources") or {}
    if level == 2 and not isinstance(sources.get("comm_tags"), dict):
        problems.append("$.sources.comm_tags: missing (the level-2 deadline / ban / required windows)")
    if level == 3 and not isinstance(sources.get("comm_threads"), list):
        problems.append("$.sources.comm_threads: missing (the level-3 threads)")
    if level == 3 and not problems:
        try:
            resolve_people(world, list(people or []), instance["instance_id"])
        except ValueError as exc:
            problems.append(f"$.slots.participants: {exc}")
    return problems
