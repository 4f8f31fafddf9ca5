"""The eleven tools of the three-level MPCBench, as the original's agent sees them.

The agent gets every tool at every level (the original offers one fixed list, so a
level-1 agent may call ``search_person`` and get nothing back): time, calendars,
structured policies (level 1), policy documents and communication threads
(levels 2–3), the people directory and rooms (level 3). They read a *sanitised*
copy of the world and instance (``sanitize``): every key naming oracle-only tags
(``policy_tags``, ``comm_tags``, ``thread_tags``, …) is gone, so the answers are in
the text only.

Results are the original's, observably: the same JSON for the same call, checked
against every tool message of its recorded runs (``levels verify``). Its errors
too: an unknown tool gives ``{"error": "Unknown tool: NAME"}``, arguments that are
not JSON or do not fit give ``{"error": "Tool execution failed: …"}``, and the
content sent to the model is ``json.dumps(result, ensure_ascii=False)``.

Deliberate differences, each with a ``ToolOptions`` flag that restores the original:

- ``dst_offsets`` (default on): a naive time gets the offset of its own date, written
  right; the original stamps every time with the zone's offset on 2026-01-01, so
  summer times in a daylight-saving zone were an hour off, and wrote a negative
  half-hour offset one hour too far (St John's -03:30 as -04:30). Same in whole-hour
  zones without DST (all the reference worlds).
- ``list_tables`` (default on): ``search_person`` and ``list_rooms`` also read a
  table given as a plain list of rows (the published schema's shape); the original
  failed there with ``'list' object has no attribute 'get'``.

One shape follows the recorded runs rather than the original's latest code:
``read_policy_document`` returns ``{"doc_id", "text", "tags": {}}`` as in every
recorded tool message; the latest code returns ``{"doc_id", "title", "text"}``
instead (``head_policy_doc=True`` gives that).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import msgspec

from ._oracle import table_rows
from ._times import zone

__all__ = ["TOOL_NAMES", "LevelTools", "ToolOptions", "sanitize", "tool_schemas"]


class ToolOptions(msgspec.Struct, frozen=True, kw_only=True):
    """Deliberate differences from the original (see the module docstring); ``original()`` turns them all off."""

    dst_offsets: bool = True
    list_tables: bool = True
    head_policy_doc: bool = False

    @classmethod
    def original(cls) -> ToolOptions:
        """The original's behaviour, its bugs included (what ``levels verify`` replays with by default)."""
        return cls(dst_offsets=False, list_tables=False)


def sanitize(data: Any) -> Any:
    """A deep copy of ``data`` without any key containing ``tags`` (the original drops ``*_tags``; a bare ``tags``
    key made it stop with an assertion, here it is dropped too)."""
    if isinstance(data, dict):
        return {k: sanitize(v) for k, v in data.items() if "tags" not in k.lower()}
    if isinstance(data, list):
        return [sanitize(v) for v in data]
    return copy.copy(data)


def _fn(name: str, description: str, properties: dict[str, Any] | None = None,
        required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties or {}, "required": required or []}}}


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


_SCHEMAS: list[dict[str, Any]] = [
    _fn("get_current_time", "Get the current time for this evaluation context."),
    _fn("get_calendar_events", "Get calendar events (busy intervals) for a person by person_id.",
        {"person_id": _string("Person identifier (e.g., 'person_001')")}, ["person_id"]),
    _fn("list_policy_ids", "List available structured policy rule IDs (Level 1 only). Use this to discover which "
        "policy_id values are available before calling get_policy_rules."),
    _fn("get_policy_rules", "Get policy rules for a given policy ID (Level 1 only). Returns machine-readable policy "
        "rules. You MUST obtain the ID via list_policy_ids first.",
        {"policy_id": _string("Policy identifier (e.g., 'POLICY_1')")}, ["policy_id"]),
    _fn("list_document_ids", "List available policy document IDs (Level 2/3 only). Use this to discover which doc_id "
        "values are available before calling read_policy_document."),
    _fn("read_policy_document", "Read policy document text (Level 2/3 only). Returns the policy text document. You "
        "MUST obtain the ID via list_document_ids first.",
        {"doc_id": _string("Document identifier (obtained from list_document_ids)")}, ["doc_id"]),
    _fn("list_thread_ids", "List available communication thread IDs (Level 2/3 only). Use this to discover which "
        "thread_id values are available before calling read_communication_thread."),
    _fn("read_communication_thread", "Read a communication thread by thread_id (Level 2/3 only). Returns thread text "
        "and metadata. You MUST obtain the ID via list_thread_ids first.",
        {"thread_id": _string("Thread identifier (obtained from list_thread_ids)")}, ["thread_id"]),
    _fn("search_person", "Search for a person by name (Level 3 only). Returns matching person records with person_id "
        "and person_name.", {"name_query": _string("Name or partial name to search for")}, ["name_query"]),
    _fn("list_rooms", "List rooms filtered by minimum capacity (Level 3 only). Returns room records with room_id, "
        "capacity, and other metadata.",
        {"min_capacity": {"type": "integer", "description": "Minimum room capacity (default: 0)", "default": 0}}),
    _fn("get_room_availability", "Get room availability (busy intervals) for a room by room_id (Level 3 only). You "
        "MUST obtain the ID via list_rooms first.", {"room_id": _string("Room identifier (e.g., 'room_001')")},
        ["room_id"]),
]
TOOL_NAMES = tuple(s["function"]["name"] for s in _SCHEMAS)


def tool_schemas() -> list[dict[str, Any]]:
    """The tool definitions sent with every request, in the original's order (a fresh copy)."""
    return copy.deepcopy(_SCHEMAS)


class _CallError(Exception):
    """Arguments that do not fit the tool: the text after ``Tool execution failed:``."""


class LevelTools:
    """The tools over one sanitised world and instance; ``call`` runs one model tool call into its message content."""

    def __init__(self, world: dict[str, Any], instance: dict[str, Any], options: ToolOptions | None = None) -> None:
        self.world, self.instance, self.options = sanitize(world), sanitize(instance), options or ToolOptions()
        self.tz = self.world.get("timezone", "Asia/Seoul")
        self._tools: dict[str, Callable[..., dict[str, Any]]] = {
            "get_current_time": self.get_current_time, "get_calendar_events": self.get_calendar_events,
            "list_policy_ids": self.list_policy_ids, "get_policy_rules": self.get_policy_rules,
            "list_document_ids": self.list_document_ids, "read_policy_document": self.read_policy_document,
            "list_thread_ids": self.list_thread_ids, "read_communication_thread": self.read_communication_thread,
            "search_person": self.search_person, "list_rooms": self.list_rooms,
            "get_room_availability": self.get_room_availability,
        }

    def call(self, name: str, arguments: str) -> str:
        """The tool message content for a call with JSON ``arguments``, as the original's loop writes it."""
        try:
            args = json.loads(arguments)
            result = self.execute(name, args)
        except Exception as exc:  # the original's loop turns any failure into this result
            result = {"error": f"Tool execution failed: {exc}"}
        return json.dumps(result, ensure_ascii=False)

    def execute(self, name: str, args: Any) -> dict[str, Any]:
        """The result of tool ``name`` with decoded ``args``; errors come back as ``{"error": ...}``."""
        tool = self._tools.get(name)
        if tool is None:
            return {"error": f"Unknown tool: {name}"}
        try:
            if not isinstance(args, dict):
                raise _CallError(f"evaluation.tools.SimulatedAPI.{name}() argument after ** must be a mapping, not "
                                 f"{type(args).__name__}")
            return tool(**args)
        except Exception as exc:  # a TypeError names the method: the original's class, as the model saw it
            text = str(exc)
            if text.startswith(f"LevelTools.{name}("):
                text = "SimulatedAPI." + text.removeprefix("LevelTools.")
            return {"error": f"Tool execution failed: {text}"}

    # -- helpers ----------------------------------------------------------------------------------------------------
    @property
    def _sources(self) -> dict[str, Any]:
        sources = self.world.get("sources", {})
        return sources if isinstance(sources, dict) else {}

    def _stamp(self, text: Any) -> Any:
        """A time string with the zone's offset appended when it has none (the original's ``_inject_timezone``)."""
        if not isinstance(text, str) or not text or text.endswith("Z"):
            return text
        if len(text) >= 6 and text[-6] in "+-" and ":" in text[-6:]:
            return text
        tz = zone(self.tz)
        at = datetime(2026, 1, 1, tzinfo=tz)
        if self.options.dst_offsets:
            try:
                at = datetime.fromisoformat(text).replace(tzinfo=tz)
            except ValueError:
                pass
        offset = at.utcoffset()
        if not offset:
            return text
        seconds = int(offset.total_seconds())
        sign = "+" if seconds >= 0 else "-"
        if not self.options.dst_offsets:  # the original's arithmetic: -03:30 came out as -04:30
            return f"{text}{sign}{abs(seconds // 3600):02d}:{abs(seconds % 3600 // 60):02d}"
        return f"{text}{sign}{abs(seconds) // 3600:02d}:{abs(seconds) % 3600 // 60:02d}"

    def _events(self, events: Any) -> list[Any]:
        out = []
        for event in events if isinstance(events, list) else []:
            if isinstance(event, dict):
                event = dict(event)
                for end in ("start", "end"):
                    if end in event:
                        event[end] = self._stamp(event[end])
            out.append(event)
        return out

    def _threads(self) -> list[Any]:
        threads = (self.instance.get("sources") or {}).get("comm_threads", [])
        return threads or self._sources.get("comm_threads", [])

    def _thread_text(self) -> Any:
        return (self.instance.get("sources") or {}).get("comm_thread_text", "") or self._sources.get(
            "comm_thread_text", "")

    def _rows(self, table_name: str) -> list[dict[str, Any]] | None:
        table = self._sources.get(table_name, {})
        if isinstance(table, list) and not self.options.list_tables:
            raise _CallError("'list' object has no attribute 'get'")
        rows = table.get("rows", []) if isinstance(table, dict) else table_rows(table)
        return rows if isinstance(rows, list) else None

    # -- the tools ----------------------------------------------------------------------------------------------------
    def get_current_time(self) -> dict[str, Any]:
        window = (self.instance.get("slots") or {}).get("time_window") or {}
        now = window.get("start") or self.world.get("world_start")
        return {"current_time": (self._stamp(now) if now else now) or "", "timezone": self.tz}

    def get_calendar_events(self, person_id: str) -> dict[str, Any]:
        return {"person_id": person_id, "events": self._events(self._sources.get("calendar_json", {}).get(person_id))}

    def list_policy_ids(self) -> dict[str, Any]:
        policies = self._sources.get("policy_json", {})
        return {"policy_ids": list(policies) if isinstance(policies, dict) else []}

    def get_policy_rules(self, policy_id: str) -> dict[str, Any]:
        rules = self._sources.get("policy_json", {}).get(policy_id, {}).get("rules", [])
        return {"policy_id": policy_id, "rules": rules if isinstance(rules, list) else []}

    def list_document_ids(self) -> dict[str, Any]:
        text = self._sources.get("policy_text", {})
        if isinstance(text, dict):
            return {"document_ids": list(text)}
        return {"document_ids": ["primary_policy_doc"] if isinstance(text, str) and text else []}

    def read_policy_document(self, doc_id: str) -> dict[str, Any]:
        text = self._sources.get("policy_text", {})
        if isinstance(text, dict):
            doc = text.get(doc_id, {})
            if not doc:
                return {"doc_id": doc_id, "error": f"Document '{doc_id}' not found. Use list_document_ids() to see "
                        "available documents."}
            return self._document(doc_id, doc.get("title", ""), doc.get("text", ""))
        if isinstance(text, str) and doc_id == "primary_policy_doc":
            return self._document(doc_id, "Company Policy Document", text)
        return {"doc_id": doc_id, "error": f"Document '{doc_id}' not found."}

    def _document(self, doc_id: str, title: str, text: str) -> dict[str, Any]:
        if self.options.head_policy_doc:
            return {"doc_id": doc_id, "title": title, "text": text}
        return {"doc_id": doc_id, "text": text, "tags": {}}

    def list_thread_ids(self) -> dict[str, Any]:
        threads = self._threads()
        if isinstance(threads, list):
            ids = [t["thread_id"] for t in threads if isinstance(t, dict) and t.get("thread_id")]
            if ids:
                return {"thread_ids": ids}
        text = self._thread_text()
        return {"thread_ids": ["primary_thread"] if isinstance(text, str) and text else []}

    def read_communication_thread(self, thread_id: str) -> dict[str, Any]:
        threads = self._threads()
        for thread in threads if isinstance(threads, list) else []:
            if isinstance(thread, dict) and thread.get("thread_id") == thread_id:
                return {"thread_id": thread_id, "text": thread.get("thread_text", thread.get("text", "")), "tags": {}}
        if thread_id == "primary_thread":
            text = self._thread_text()
            if isinstance(text, str) and text:
                return {"thread_id": thread_id, "text": text, "tags": {}}
        return {"thread_id": thread_id, "text": "", "tags": {}}

    def search_person(self, name_query: str) -> dict[str, Any]:
        rows = self._rows("people_table")
        if rows is None:
            return {"matches": []}
        query = name_query.lower()
        return {"matches": [r for r in rows if query in r.get("person_name", "").lower()]}

    def list_rooms(self, min_capacity: int = 0) -> dict[str, Any]:
        rows = self._rows("rooms_table")
        if rows is None:
            return {"rooms": []}
        return {"rooms": [r for r in rows if isinstance(r.get("capacity", 0), (int, float))
                          and r.get("capacity", 0) >= min_capacity]}

    def get_room_availability(self, room_id: str) -> dict[str, Any]:
        rooms = self._sources.get("room_availability_json", {})
        return {"room_id": room_id, "events": self._events(rooms.get(room_id))}
