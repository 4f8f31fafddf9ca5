"""The three-level MPCBench oracle: the gold top-N candidates of one instance, deterministically.

The pipeline is the original's, step for step, so that its ``oracle_level*.jsonl``
lines come out identical (candidates, order, ``meta`` and ``explanation_keys``):

1. **grid** — the participants' busy events (their ``calendar_json`` entries;
   at level 3 their names are first resolved to ids through ``people_table``)
   leave common free intervals inside the time window; every slot of the
   meeting's duration starting on the 15-minute grid inside one of them is a
   candidate;
2. **hard constraints**, in order — the policy's rules (``policy_json`` at
   level 1, the oracle-only ``policy_tags`` at levels 2–3): ``work_hours``
   (inside the day's hours, optionally only on some weekdays), ``lunch_block``
   (no overlap with the daily block, optionally on some weekdays),
   ``buffer_min`` (no overlap with any participant's event widened by N
   minutes on both sides), ``ban_dow_time`` (no overlap with a banned window on
   one weekday); then the communication tags: ``deadline`` (start at or before
   it), ``ban_windows`` (no overlap with any), ``required_windows`` (inside at
   least one) — level 2 from ``sources.comm_tags``, level 3 from each thread's
   ``thread_tags``;
3. **room join** (level 3) — each surviving slot × each room whose capacity
   holds every participant and whose bookings leave the slot free;
4. **order and top-N** — start, then end (level 3: the task thread's
   ``sort_spec`` keys, default start, end, room_id; ties by the strings);
   levels 1–2 keep ``num_options``, level 3 always 3. An instance with fewer
   feasible candidates than that is *discarded* (no oracle line), as the
   original's generator resamples it.

Intervals are half-open: a meeting ending when another starts does not overlap it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from ._times import daily_interval, format_instant, overlaps, parse_instant

__all__ = ["CONSTRAINT_TYPES", "GRID_MINUTES", "OracleResult", "OracleSettings", "solve"]

GRID_MINUTES = 15
LEVEL3_OPTIONS = 3
DEFAULT_SORT = ("start", "end", "room_id")
POLICY_RULES = ("work_hours", "lunch_block", "buffer_min", "ban_dow_time")
COMM_TAGS = ("deadline", "ban_windows", "required_windows")
CONSTRAINT_TYPES = (*POLICY_RULES, *COMM_TAGS, "room_capacity", "room_availability")

Candidate = dict[str, str]
Interval = tuple[datetime, datetime]


class OracleSettings(msgspec.Struct, frozen=True, kw_only=True):
    """What the oracle applies; all on by default. Turning a class off gives the baselines that ignore it."""

    policy: bool = True
    comm: bool = True
    rooms: bool = True


class OracleResult(msgspec.Struct, kw_only=True):
    """One instance's oracle outcome: the top-N (empty when discarded) and the counts after each step."""

    instance_id: str
    feasible_candidates: list[Candidate]
    explanation_keys: list[dict[str, str]]
    meta: dict[str, int]
    discarded: bool = False
    all_feasible: int = 0  # candidates left after every step, before top-N

    def line(self) -> dict[str, Any]:
        """The ``oracle_level*.jsonl`` line the original writes for it."""
        return {"instance_id": self.instance_id, "feasible_candidates": self.feasible_candidates,
                "explanation_keys": self.explanation_keys, "meta": self.meta}


def solve(world: dict[str, Any], instance: dict[str, Any], settings: OracleSettings | None = None) -> OracleResult:
    """The oracle's result for ``instance`` of ``world`` (both as loaded; ``ValueError`` naming what is missing)."""
    settings = settings or OracleSettings()
    level = int(instance["level"])
    tz = world.get("timezone", "Asia/Seoul")
    iid = instance.get("instance_id", "unknown")
    slots = instance["slots"]
    people = slots["participants"]
    person_ids = resolve_people(world, people, iid) if level == 3 else list(people)
    window = (parse_instant(slots["time_window"]["start"], tz), parse_instant(slots["time_window"]["end"], tz))
    busy = busy_intervals(world["sources"]["calendar_json"], person_ids, tz)
    base = grid_candidates(free_intervals(busy, *window), int(slots["duration_min"]), window, tz)
    filtered = apply_constraints(level, world, instance, person_ids, base, settings) if (
        settings.policy or settings.comm) else base
    meta = {"num_generated": len(base), "num_after_constraints": len(filtered)}
    if level == 3:
        joined = join_rooms(world, filtered, len(person_ids), tz, iid) if settings.rooms else filtered
        meta["num_after_room_join"] = len(joined)
        options = LEVEL3_OPTIONS
        ordered = sort_by_spec(joined, sort_spec(instance), tz)
    else:
        options = int(slots["num_options"])
        ordered = sorted(filtered, key=lambda c: (parse_instant(c["start"], tz), parse_instant(c["end"], tz),
                                                  c["start"]))
    meta["num_options"] = options
    discarded = len(ordered) < options
    return OracleResult(instance_id=iid, feasible_candidates=[] if discarded else ordered[:options],
                        explanation_keys=explanation_keys(level, instance, person_ids), meta=meta,
                        discarded=discarded, all_feasible=len(ordered))


# -- step 1: the grid ---------------------------------------------------------------------------------------------


def busy_intervals(calendar: dict[str, Any], person_ids: Sequence[str], tz: str) -> list[Interval]:
    """Every busy event of the participants (one without a calendar has none)."""
    return [(parse_instant(e["start"], tz), parse_instant(e["end"], tz))
            for pid in person_ids for e in calendar.get(pid, [])]


def free_intervals(busy: list[Interval], start: datetime, end: datetime) -> list[Interval]:
    """The gaps the busy intervals leave inside ``start``–``end``, in order."""
    free: list[Interval] = []
    cursor = start
    for busy_start, busy_end in sorted(busy, key=lambda b: b[0]):
        if busy_end <= start:
            continue
        if busy_start >= end:
            break
        clamped_start, clamped_end = max(busy_start, start), min(busy_end, end)
        if cursor < clamped_start:
            free.append((cursor, clamped_start))
        cursor = max(cursor, clamped_end)
    if cursor < end:
        free.append((cursor, end))
    return free


def grid_candidates(free: list[Interval], duration_min: int, window: Interval, tz: str) -> list[Candidate]:
    """Slots of ``duration_min`` starting on the 15-minute grid, inside one free interval and the window.

    The grid is local (``:00``, ``:15``, …) but steps and durations are real time, in UTC: across a daylight-saving
    change a 60-minute meeting still lasts 60 minutes and no slot starts at a local time that does not exist. (The
    original added them in wall-clock time; in zones without such changes, every reference world, both agree.)
    """
    duration, step = timedelta(minutes=duration_min), timedelta(minutes=GRID_MINUTES)
    window_start, window_end = window
    floor = window_start.replace(minute=window_start.minute // GRID_MINUTES * GRID_MINUTES, second=0, microsecond=0)
    out: list[Candidate] = []
    for free_start, free_end in free:
        start = max(free_start, floor, key=lambda t: t.timestamp())
        if start.minute % GRID_MINUTES or start.second:
            up = GRID_MINUTES - start.minute % GRID_MINUTES
            start = start.replace(second=0, microsecond=0) + timedelta(minutes=up)
        start = start.astimezone(UTC)
        while start < free_end:
            end = start + duration
            if end <= free_end and start >= window_start and end <= window_end:
                out.append({"start": format_instant(start, tz), "end": format_instant(end, tz)})
            start += step
    return out


# -- step 2: hard constraints -------------------------------------------------------------------------------------


def policy_rules(level: int, world: dict[str, Any], policy_id: str) -> list[dict[str, Any]]:
    """The rules of ``policy_id``: ``policy_json`` at level 1, the oracle-only ``policy_tags`` at levels 2–3."""
    where = "policy_json" if level == 1 else "policy_tags"
    policies = world["sources"].get(where)
    if not isinstance(policies, dict) or policy_id not in policies:
        raise ValueError(f"policy {policy_id!r} is not in the world's sources.{where}")
    return list(policies[policy_id]["rules"])


def comm_constraints(level: int, instance: dict[str, Any]) -> list[dict[str, Any]]:
    """The communication tags that constrain ``instance``: one dict at level 2, one per tagged thread at level 3."""
    sources = instance.get("sources") or {}
    if level == 2:
        if "comm_tags" not in sources:
            raise ValueError("a level-2 instance needs sources.comm_tags")
        return [sources["comm_tags"]]
    if level == 3:
        return [t["thread_tags"] for t in sources.get("comm_threads", []) if "thread_tags" in t]
    return []


def apply_constraints(level: int, world: dict[str, Any], instance: dict[str, Any], person_ids: Sequence[str],
                      candidates: list[Candidate], settings: OracleSettings | None = None) -> list[Candidate]:
    """``candidates`` that pass every policy rule, then every communication tag, in that order."""
    settings = settings or OracleSettings()
    tz = world.get("timezone", "Asia/Seoul")
    filtered = candidates
    if settings.policy:
        for rule in policy_rules(level, world, instance["slots"]["policy_id"]):
            filtered = _rule_filter(rule, world, person_ids, tz)(filtered)
    if settings.comm:
        for tags in comm_constraints(level, instance):
            for name in COMM_TAGS:
                if name in tags and (name == "deadline" or isinstance(tags[name], list)):
                    filtered = _tag_filter(name, tags[name], tz)(filtered)
                elif name in tags and level == 2:
                    raise ValueError(f"comm_tags.{name} must be a list")
    return filtered


Filter = Callable[[list[Candidate]], list[Candidate]]


def _keep(candidates: list[Candidate], tz: str, ok: Callable[[datetime, datetime], bool]) -> list[Candidate]:
    kept = []
    for c in candidates:
        if ok(parse_instant(c["start"], tz), parse_instant(c["end"], tz)):
            kept.append(c)
    return kept


def _rule_filter(rule: dict[str, Any], world: dict[str, Any], person_ids: Sequence[str], tz: str) -> Filter:
    kind = rule.get("type")
    days = rule.get("days_of_week")
    if kind == "work_hours":
        def in_hours(s: datetime, e: datetime) -> bool:
            if days is not None and s.weekday() not in days:
                return False
            ws, we = daily_interval(s, rule["start"], rule["end"], tz)
            return s >= ws and e <= we
        return lambda cs: _keep(cs, tz, in_hours)
    if kind == "lunch_block":
        def off_lunch(s: datetime, e: datetime) -> bool:
            return (days is not None and s.weekday() not in days) or not overlaps(
                s, e, *daily_interval(s, rule["start"], rule["end"], tz))
        return lambda cs: _keep(cs, tz, off_lunch)
    if kind == "buffer_min":
        pad = timedelta(minutes=rule["minutes"])
        widened = [(s - pad, e + pad) for s, e in busy_intervals(world["sources"]["calendar_json"], person_ids, tz)]
        return lambda cs: _keep(cs, tz, lambda s, e: not any(overlaps(s, e, bs, be) for bs, be in widened))
    if kind == "ban_dow_time":
        def not_banned(s: datetime, e: datetime) -> bool:
            return s.weekday() != rule["day_of_week"] or not overlaps(
                s, e, *daily_interval(s, rule["start"], rule["end"], tz))
        return lambda cs: _keep(cs, tz, not_banned)
    raise ValueError(f"unknown policy rule type {kind!r} (known: {', '.join(POLICY_RULES)})")


def _tag_filter(name: str, value: Any, tz: str) -> Filter:
    if name == "deadline":
        deadline = parse_instant(value, tz)
        return lambda cs: _keep(cs, tz, lambda s, e: s <= deadline)
    windows = [(parse_instant(w["start"], tz), parse_instant(w["end"], tz)) for w in value]
    if name == "ban_windows":
        return lambda cs: _keep(cs, tz, lambda s, e: not any(overlaps(s, e, ws, we) for ws, we in windows))
    return lambda cs: _keep(cs, tz, lambda s, e: any(s >= ws and e <= we for ws, we in windows))


# -- step 3: people and rooms (level 3) ---------------------------------------------------------------------------


def table_rows(table: Any) -> list[dict[str, Any]]:
    """The rows of a table given as ``{"columns", "rows"}`` (the data) or as a plain list (the schema)."""
    if isinstance(table, dict) and "rows" in table:
        return [r for r in table["rows"] if isinstance(r, dict)]
    return [r for r in table if isinstance(r, dict)] if isinstance(table, list) else []


def resolve_people(world: dict[str, Any], names: Sequence[str], instance_id: str) -> list[str]:
    """Participants' person ids: ``person_…`` as given, names through ``people_table``."""
    table = world["sources"].get("people_table")
    if table is None:
        raise ValueError("a level-3 world needs sources.people_table")
    by_name = {r["person_name"]: r["person_id"] for r in table_rows(table) if "person_name" in r and "person_id" in r}
    ids = []
    for name in names:
        if name.startswith("person_"):
            ids.append(name)
        elif name in by_name:
            ids.append(by_name[name])
        else:
            raise ValueError(f"participant {name!r} of {instance_id} is not in people_table")
    return ids


def rooms_with_capacity(world: dict[str, Any], minimum: int) -> list[str]:
    """Room ids, in table order, whose capacity is at least ``minimum``."""
    table = world["sources"].get("rooms_table")
    if table is None:
        raise ValueError("a level-3 world needs sources.rooms_table")
    ids = []
    for row in table_rows(table):
        if "room_id" not in row:
            continue
        try:
            capacity = int(row["capacity"])
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"room {row['room_id']!r} has no valid capacity") from None
        if capacity >= minimum:
            ids.append(row["room_id"])
    return ids


def join_rooms(world: dict[str, Any], candidates: list[Candidate], people: int, tz: str,
               instance_id: str) -> list[Candidate]:
    """Each candidate × each room big enough for ``people`` and free then (candidate-major, rooms in table order)."""
    availability = world["sources"].get("room_availability_json")
    if availability is None:
        raise ValueError(f"a level-3 world needs sources.room_availability_json ({instance_id})")
    rooms = rooms_with_capacity(world, people)
    booked = {room: [(parse_instant(e["start"], tz), parse_instant(e["end"], tz)) for e in availability.get(room, [])]
              for room in rooms}
    out: list[Candidate] = []
    for c in candidates:
        s, e = parse_instant(c["start"], tz), parse_instant(c["end"], tz)
        out.extend({"start": c["start"], "end": c["end"], "room_id": room} for room in rooms
                   if not any(overlaps(s, e, bs, be) for bs, be in booked[room]))
    return out


# -- step 4: order --------------------------------------------------------------------------------------------------


def sort_spec(instance: dict[str, Any]) -> list[str]:
    """The sort keys of the task thread's ``sort_spec`` (the first thread that has one), else start, end, room_id."""
    for thread in (instance.get("sources") or {}).get("comm_threads", []):
        spec = (thread.get("thread_tags") or {}).get("sort_spec")
        if isinstance(spec, dict) and "keys" in spec:
            return list(spec["keys"])
    return list(DEFAULT_SORT)


def sort_by_spec(candidates: list[Candidate], keys: Sequence[str], tz: str) -> list[Candidate]:
    """Sorted by ``keys`` (start/end as instants, others as strings), ties broken by start, end and room strings."""
    def key(c: Candidate) -> tuple[Any, ...]:
        parts = [parse_instant(c[k], tz) if k in ("start", "end") else c.get(k, "") for k in keys]
        return (*parts, c.get("start", ""), c.get("end", ""), c.get("room_id", ""))
    return sorted(candidates, key=key)


def explanation_keys(level: int, instance: dict[str, Any], person_ids: Sequence[str]) -> list[dict[str, str]]:
    """Which records the gold depends on, as the original lists them."""
    keys = [{"source": "calendar_json", "key": pid} for pid in person_ids]
    policy_id = instance["slots"]["policy_id"]
    if level == 1:
        keys.append({"source": "policy_json", "key": policy_id})
    else:
        keys.append({"source": "policy_tags", "key": policy_id})
    if level == 2:
        keys.append({"source": "comm_tags", "key": "comm_tags"})
    if level == 3:
        keys += [{"source": "comm_threads", "key": t["thread_id"]}
                 for t in (instance.get("sources") or {}).get("comm_threads", [])
                 if "thread_id" in t and "thread_tags" in t]
        keys += [{"source": s, "key": s} for s in ("people_table", "rooms_table", "room_availability_json")]
    keys.append({"source": "slots", "key": "time_window"})
    return keys
