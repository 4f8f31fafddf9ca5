"""Sim baselines for the three-level MPCBench, under the agent baselines' names.

``sim/oracle-agent`` (this variant serves any request carrying the eleven
scheduling tools) works only from what a model sees: the task, the participants
and the tool results. It looks everything up (time, policies, documents,
threads, people, rooms, calendars), reads the requirements from the text — the
window, duration and number of options, the policy the task or a thread names,
that policy's rules from the policy document's numbered sections, deadlines,
banned and required windows from the threads (first statement wins, "Or was
it …?" alternatives ignored) — and then runs this project's oracle over what it
gathered. Where the text leaves something unsaid it follows the system prompt:
only policies named in the task or a thread apply; an unstated window ends the
day at 18:00; an unstated duration is 30 minutes and an unstated count 3.

``sim/lazy-agent``: no lookups; proposes the first N slots of the 15-minute grid
from the start of the window the task states (or of the current time).
``sim/levels-ignore-policy``, ``-comm``, ``-rooms``: the oracle agent blind to one
constraint class, to show which level needs what.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import Any

from ..sim import Reply, register_policy
from ._oracle import OracleSettings, solve
from ._times import format_instant, parse_instant
from ._tools import TOOL_NAMES

__all__: list[str] = []

_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:\d{2})?")
_TIME = r"\d{1,2}(?::\d{2})?\s*(?:[AaPp]\.?[Mm]\.?)?"
_RANGE = re.compile(rf"({_TIME})\s*(?:-|–|—|to|and|until)\s*({_TIME})")
_POLICY = re.compile(r"POLICY_\d+")
_SECTION_REF = re.compile(r"\bSection\s+(\d+)", re.I)
_HEDGE = re.compile(r"^\s*(?:or\b|maybe\b|hmm\b)", re.I)
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b(?!T)")
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _levels_request(request: dict[str, Any]) -> bool:
    names = {t.get("function", {}).get("name") for t in request.get("tools") or []}
    return set(TOOL_NAMES) <= names


class _Conversation:
    """What the model has seen: the prompt and every tool call made so far with its result."""

    def __init__(self, request: dict[str, Any]) -> None:
        messages = request["messages"]
        self.prompt = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
        results = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
        self.calls: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        self.turn = sum(m.get("role") == "assistant" for m in messages)
        for message in messages:
            for call in message.get("tool_calls") or []:
                fn = call.get("function", {})
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                    result = json.loads(results.get(call.get("id")) or "null")
                except (TypeError, ValueError):
                    continue
                self.calls.setdefault(fn.get("name"), []).append((args, result))

    def section(self, name: str) -> str:
        match = re.search(rf"## {name}\n(.*?)(?:\n## |\Z)", self.prompt, re.S)
        return match.group(1).strip() if match else ""

    def results(self, name: str) -> list[Any]:
        return [result for _, result in self.calls.get(name, [])]

    def called(self, name: str, **args: Any) -> bool:
        return any(a == args for a, _ in self.calls.get(name, []))

    @property
    def participants(self) -> list[str]:
        text = self.section("Participants")
        return [p.strip() for p in text.split(",") if p.strip() and p.strip() != "None"]

    @property
    def threads(self) -> list[str]:
        return [r.get("text", "") for r in self.results("read_communication_thread") if isinstance(r, dict)]

    @property
    def documents(self) -> list[str]:
        return [r.get("text", "") for r in self.results("read_policy_document") if isinstance(r, dict)]


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "arguments": json.dumps(args)}


def _person_ids(conv: _Conversation) -> list[str] | None:
    """The participants' person ids, once every name has been looked up (``None`` before)."""
    ids = []
    for person in conv.participants:
        if person.startswith("person_"):
            ids.append(person)
            continue
        found = [r for a, r in conv.calls.get("search_person", []) if a.get("name_query") == person]
        if not found:
            return None
        matches = [m for m in found[0].get("matches", []) if m.get("person_name") == person] or found[0].get(
            "matches", [])
        if matches:
            ids.append(matches[0]["person_id"])
    return ids


def _next_calls(conv: _Conversation) -> list[dict[str, Any]]:
    """The lookups still missing, all at once (the tools are independent)."""
    calls = [_call(n) for n in ("get_current_time", "list_policy_ids", "list_document_ids", "list_thread_ids")
             if not conv.calls.get(n)]
    if not conv.calls.get("list_rooms"):  # every room big enough: none at levels 1-2, whose worlds have no rooms
        calls.append(_call("list_rooms", min_capacity=len(conv.participants)))
    if calls:
        return calls
    for doc in (conv.results("list_document_ids") or [{}])[0].get("document_ids", []):
        if not conv.called("read_policy_document", doc_id=doc):
            calls.append(_call("read_policy_document", doc_id=doc))
    for thread in (conv.results("list_thread_ids") or [{}])[0].get("thread_ids", []):
        if not conv.called("read_communication_thread", thread_id=thread):
            calls.append(_call("read_communication_thread", thread_id=thread))
    for person in conv.participants:
        if not person.startswith("person_") and not conv.called("search_person", name_query=person):
            calls.append(_call("search_person", name_query=person))
    if calls:
        return calls
    available = set((conv.results("list_policy_ids") or [{}])[0].get("policy_ids", []))
    for policy in sorted(set(_POLICY.findall(" ".join([conv.prompt, *conv.threads]))) & available):
        if not conv.called("get_policy_rules", policy_id=policy):
            calls.append(_call("get_policy_rules", policy_id=policy))
    for pid in _person_ids(conv) or []:
        if not conv.called("get_calendar_events", person_id=pid):
            calls.append(_call("get_calendar_events", person_id=pid))
    for room in (conv.results("list_rooms") or [{}])[0].get("rooms", []):
        if not conv.called("get_room_availability", room_id=room.get("room_id")):
            calls.append(_call("get_room_availability", room_id=room.get("room_id")))
    return calls


# -- reading the text -----------------------------------------------------------------------------------------------


def _clock(text: str, *, bare_afternoon: bool = True) -> str | None:
    """``HH:MM`` of "9", "9:30", "2 PM", "12:00 PM", "13:00"; a bare hour before 7 is read as afternoon."""
    match = re.fullmatch(r"(\d{1,2})(?::(\d{2}))?\s*([AaPp])?\.?(?:[Mm]\.?)?", text.strip())
    if not match:
        return None
    hour, minute, half = int(match.group(1)), int(match.group(2) or 0), (match.group(3) or "").lower()
    if half == "p" and hour < 12:
        hour += 12
    elif half == "a" and hour == 12:
        hour = 0
    elif not half and bare_afternoon and hour < 7 and ":" not in text:
        hour += 12
    return f"{hour:02d}:{minute:02d}" if hour < 24 and minute < 60 else None


def _ranges(sentence: str) -> list[tuple[str, str]]:
    out = []
    for match in _RANGE.finditer(sentence):
        start, end = match.group(1), match.group(2)
        if re.search(r"[AaPp]\.?[Mm]", end) and not re.search(r"[AaPp]\.?[Mm]", start) and ":" not in start:
            start += " " + re.search(r"[AaPp]\.?[Mm]", end).group(0)  # type: ignore[union-attr]  # "9 to 11 AM"
        a, b = _clock(start), _clock(end)
        if a and b:
            out.append((a, b))
    return out


def _sentences(text: str) -> list[str]:
    """The text's sentences, without the hedged alternatives ("Or was it 11 to 12?")."""
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [p for p in parts if p.strip() and not _HEDGE.match(p) and not p.strip().endswith("?")]


def _rules_of_section(body: str) -> list[dict[str, Any]]:
    """The rules one numbered policy section states: its heading line's when that states values, else the first
    statement of each value in its prose."""
    heading = body.split("\n", 1)[0]
    if _ranges(heading) or re.search(r"\d+[- ]?(?:minute|min\b)", heading):
        body = heading
    lowered = body.lower()
    sentences = _sentences(body)
    ranges = [r for s in sentences for r in _ranges(s)]
    if "buffer" in lowered:
        minutes = re.search(r"(\d+)[- ]?(?:minute|min\b)", body)
        return [{"type": "buffer_min", "minutes": int(minutes.group(1))}] if minutes else []
    if "lunch" in lowered and ranges:
        return [{"type": "lunch_block", "start": ranges[0][0], "end": ranges[0][1], "days_of_week": [0, 1, 2, 3, 4]}]
    if re.search(r"restrict|ban|blocked|no meetings on|not allowed", lowered):
        rules = []
        for sentence in sentences:
            days = [d for d, name in enumerate(_DAYS) if name in sentence.lower()]
            spans = _ranges(sentence)
            for day, (start, end) in zip(days, spans, strict=False):
                rules.append({"type": "ban_dow_time", "day_of_week": day, "start": start, "end": end})
        return list({json.dumps(r, sort_keys=True): r for r in rules}.values())
    if re.search(r"work(?:ing)? hours|business hours", lowered) and ranges:
        return [{"type": "work_hours", "start": ranges[0][0], "end": ranges[0][1], "days_of_week": [0, 1, 2, 3, 4]}]
    return []


def _policy_rules(conv: _Conversation, mentioned: str) -> list[dict[str, Any]]:
    """The rules of the policies the task or a thread names: structured ones, else their document sections."""
    rules = [r for result in conv.results("get_policy_rules") for r in result.get("rules", [])]
    if rules:
        return rules
    sections = {int(n) for n in re.findall(r"POLICY_(\d+)", mentioned)}
    sections |= {int(n) for n in _SECTION_REF.findall(" ".join(conv.threads))}
    for doc in conv.documents:
        for number, body in re.findall(r"(?ms)^\s*Section\s+(\d+)\b(.*?)(?=^\s*Section\s+\d+\b|\Z)", doc):
            if int(number) in sections:
                rules += _rules_of_section(body)
    return rules


def _anchor(text: str, day: datetime, tz: str) -> str:
    return format_instant(day.replace(hour=int(text[:2]), minute=int(text[3:]), second=0, microsecond=0), tz)


def _comm_tags(conv: _Conversation, day: datetime, tz: str) -> dict[str, Any]:
    """Deadline, banned and required windows the threads state (first deadline wins)."""
    tags: dict[str, Any] = {}
    for text in conv.threads:
        for sentence in _sentences(text):
            lowered = sentence.lower()
            iso = _ISO.findall(sentence)
            date = _DATE.search(sentence)
            on = day if date is None else datetime.fromisoformat(date.group(1)).replace(tzinfo=day.tzinfo)
            sentence = _DATE.sub(" ", _ISO.sub(" ", sentence))
            if re.search(r"deadline|\bbefore\b|\bby\b|no later than", lowered) and "deadline" not in tags and not (
                    re.search(r"window|between", lowered)):
                clock = next((c for t in re.findall(_TIME, sentence) if (c := _clock(t)) and re.search(r"\d", t)),
                             None) if not iso else None
                if iso:
                    tags["deadline"] = iso[0]
                elif clock:
                    tags["deadline"] = _anchor(clock, on, tz)
            spans = [(a, b) for a, b in zip(iso[::2], iso[1::2], strict=False)] or [
                (_anchor(a, on, tz), _anchor(b, on, tz)) for a, b in _ranges(sentence)]
            if not spans:
                continue
            if re.search(r"block|off limits|unavailable|not available|avoid|can't meet|cannot meet|reserved|banned",
                         lowered):
                tags.setdefault("ban_windows", []).extend({"start": a, "end": b} for a, b in spans)
            elif re.search(r"within|between|window|inside|has to be|must be in|only", lowered):
                tags.setdefault("required_windows", []).extend({"start": a, "end": b} for a, b in spans)
    return tags


def _requirements(conv: _Conversation) -> dict[str, Any]:
    """Window, duration and count from the task, else the threads, else the defaults."""
    text = " ".join([conv.section("Task"), *conv.threads])
    now = (conv.results("get_current_time") or [{}])[0]
    tz = now.get("timezone") or "UTC"
    iso = _ISO.findall(text)
    if len(iso) >= 2:
        start, end = parse_instant(iso[0], tz), parse_instant(iso[1], tz)
    else:
        start = parse_instant(now.get("current_time") or "2026-01-19T09:00:00", tz)
        end = start.replace(hour=18, minute=0, second=0)
    minutes = re.search(r"(\d+)[- ]?minutes?\b", text)
    hours = re.search(r"\b(\d+|an?|one|full)[- ]hours?\b", text, re.I)
    duration = int(minutes.group(1)) if minutes else 60 * (int(hours.group(1)) if hours and hours.group(
        1).isdigit() else 1) if hours else 30
    count = re.search(r"\b(?:provide|propose|give|find|need|return)\s+(\d+)\b", text, re.I) or re.search(
        r"\b(\d+)\s+(?:feasible\s+)?(?:options|candidates|slots)\b", text, re.I)
    return {"tz": tz, "start": start, "end": end, "duration": duration, "count": int(count.group(1)) if count else 3}


def _answer(conv: _Conversation, settings: OracleSettings) -> Reply:
    need = _requirements(conv)
    tz, start = need["tz"], need["start"]
    ids = _person_ids(conv) or []
    rooms = conv.results("list_rooms")
    level = 3 if rooms and rooms[0].get("rooms") else 2
    mentioned = " ".join([conv.section("Task"), *conv.threads])
    calendar = {r["person_id"]: r.get("events", []) for r in conv.results("get_calendar_events")}
    world: dict[str, Any] = {"timezone": tz, "sources": {
        "calendar_json": calendar, "policy_tags": {"P": {"rules": _policy_rules(conv, mentioned)}}}}
    tags = _comm_tags(conv, start, tz)
    instance: dict[str, Any] = {"instance_id": "sim", "level": level, "slots": {
        "time_window": {"start": format_instant(start, tz), "end": format_instant(need["end"], tz)},
        "participants": ids, "duration_min": need["duration"], "num_options": need["count"], "policy_id": "P"}}
    if level == 3:
        world["sources"]["rooms_table"] = {"rows": rooms[0]["rooms"]}
        world["sources"]["room_availability_json"] = {r["room_id"]: r.get("events", [])
                                                      for r in conv.results("get_room_availability")}
        world["sources"]["people_table"] = {"rows": []}
        instance["sources"] = {"comm_threads": [{"thread_id": "t", "thread_tags": tags}]}
    else:
        instance["sources"] = {"comm_tags": tags}
    result = solve(world, instance, settings)
    candidates = result.feasible_candidates if not result.discarded else _best_effort(world, instance, settings)
    return Reply(content="Constraints read from the sources; slots on the 15-minute grid that pass all of them, "
                 "earliest first.\n```json\n" + json.dumps({"candidates": candidates}) + "\n```")


def _best_effort(world: dict[str, Any], instance: dict[str, Any], settings: OracleSettings) -> list[dict[str, str]]:
    """Fewer feasible slots than asked for (levels 1-2): propose the earliest one rather than nothing."""
    instance = {**instance, "slots": {**instance["slots"], "num_options": 1}}
    few = solve(world, instance, settings)
    return few.feasible_candidates


def _oracle_agent(request: dict[str, Any], settings: OracleSettings) -> Reply:
    conv = _Conversation(request)
    calls = _next_calls(conv) if conv.turn < 10 else []
    return Reply(tool_calls=calls) if calls else _answer(conv, settings)


@register_policy("oracle-agent", when=_levels_request)
def oracle_agent(request: dict[str, Any]) -> Reply:
    return _oracle_agent(request, OracleSettings())


@register_policy("levels-ignore-policy")
def ignore_policy(request: dict[str, Any]) -> Reply:
    return _oracle_agent(request, OracleSettings(policy=False))


@register_policy("levels-ignore-comm")
def ignore_comm(request: dict[str, Any]) -> Reply:
    return _oracle_agent(request, OracleSettings(comm=False))


@register_policy("levels-ignore-rooms")
def ignore_rooms(request: dict[str, Any]) -> Reply:
    return _oracle_agent(request, OracleSettings(rooms=False))


@register_policy("lazy-agent", when=_levels_request)
def lazy_agent(request: dict[str, Any]) -> Reply:
    """The first N grid slots from the window's start, without a lookup (one ``get_current_time`` if no window)."""
    conv = _Conversation(request)
    task = conv.section("Task")
    if len(_ISO.findall(task)) < 2 and not conv.calls.get("get_current_time"):
        return Reply(tool_calls=[_call("get_current_time")])
    need = _requirements(conv)
    step, length = timedelta(minutes=15), timedelta(minutes=need["duration"])
    first = need["start"].replace(minute=need["start"].minute // 15 * 15, second=0, microsecond=0)
    room = {"room_id": "room_001"} if re.search(r"\b(?:room|space)", task, re.I) else {}
    slots = [{"start": format_instant(first + n * step, need["tz"]),
              "end": format_instant(first + n * step + length, need["tz"]), **room} for n in range(need["count"])]
    return Reply(content="```json\n" + json.dumps({"candidates": slots}) + "\n```")
