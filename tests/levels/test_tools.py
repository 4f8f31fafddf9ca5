"""The eleven tools: every recorded tool result of the world-matching runs, the original's errors and shapes, and
the deliberate differences behind ``ToolOptions``."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mpcbench_async._prompts import load_prompts
from mpcbench_async.levels._agent import agent_prompts
from mpcbench_async.levels._answer import candidate_tuples
from mpcbench_async.levels._catalog import instance_index, load_all
from mpcbench_async.levels._oracle import solve
from mpcbench_async.levels._tools import TOOL_NAMES, LevelTools, ToolOptions, sanitize, tool_schemas

REPO = Path(__file__).resolve().parents[2]


# -- the recorded runs -------------------------------------------------------------------------------------------------


def test_every_tool_call_of_the_world_matching_recorded_runs_gives_the_recorded_result(upstream: Path,
                                                                                       results: list[Path]):
    """A recorded line is from today's world when its recorded gold is today's oracle gold and its user prompt is the
    one built today; for each of those, every tool call of its trace, run through ``LevelTools.call``, gives the
    recorded tool message (as JSON). 255 calls over the six world-matching files."""
    prompts = load_prompts(REPO / "prompt_config.json")
    index = instance_index(load_all(upstream))
    compared: dict[str, int] = {}
    for path in results:
        for raw in path.read_text(encoding="utf-8").splitlines():
            line = json.loads(raw)
            found = index.get(line["instance_id"])
            if found is None:
                continue
            level_set, inst = found
            gold = candidate_tuples(solve(level_set.world, inst).feasible_candidates, level_set.level)
            first = line["trace"][0]
            if [tuple(g) for g in line["gold"]] != gold or first != {
                    "role": "user", "content": agent_prompts(prompts, inst)[1]}:
                continue
            tools = LevelTools(level_set.world, inst)
            recorded = {m["tool_call_id"]: m["content"] for m in line["trace"] if m["role"] == "tool"}
            calls = [c for m in line["trace"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]
            for tool_call in calls:
                ours = tools.call(tool_call["function"]["name"], tool_call["function"]["arguments"])
                assert json.loads(recorded[tool_call["id"]]) == json.loads(ours), (path.name, tool_call)
                compared[path.name] = compared.get(path.name, 0) + 1
    assert {"eval_L1_exp1_gpt-4o_20260202_143441.jsonl": 20, "eval_L1_gpt-4o_20260118_155321.jsonl": 18,
            "eval_L2_exp1_gpt-4o_20260202_154055.jsonl": 20, "eval_L2_gpt-4o_20260118_155356.jsonl": 30,
            "eval_L3_exp1_gpt-4o_20260202_155426.jsonl": 94, "eval_L3_gpt-4o_20260118_155451.jsonl": 73} == compared
    assert 255 == sum(compared.values())


# -- small worlds ------------------------------------------------------------------------------------------------------


def world(tz: str = "Asia/Seoul", **sources: Any) -> dict[str, Any]:
    calendar = {"person_001": [{"start": "2026-01-19T10:00:00", "end": "2026-01-19T11:00:00", "title": "Standup"},
                               {"start": "2026-07-15T10:00:00", "end": "2026-07-15T11:00:00", "title": "Summer"}],
                "person_002": [{"start": "2026-01-19T13:00:00+09:00", "end": "2026-01-19T14:00:00+09:00"}]}
    return {"world_id": "world_unit", "level": 3, "timezone": tz, "world_start": "2026-01-19T00:00:00",
            "sources": {"calendar_json": calendar,
                        "policy_json": {"POLICY_1": {"rules": [{"type": "buffer_min", "minutes": 10}]}},
                        "policy_text": "Meetings need a 10-minute buffer.",
                        "policy_tags": {"POLICY_1": {"rules": [{"type": "buffer_min", "minutes": 10}]}},
                        "people_table": {"primary_key": "person_id", "columns": ["person_id", "person_name"],
                                         "rows": PEOPLE},
                        "rooms_table": {"primary_key": "room_id", "columns": ["room_id", "capacity"], "rows": ROOMS},
                        "room_availability_json": {"room_001": [{"start": "2026-01-19T09:00:00",
                                                                 "end": "2026-01-19T09:30:00", "title": "Booked"}]},
                        **sources}}


PEOPLE = [{"person_id": "person_001", "person_name": "Alice"}, {"person_id": "person_002", "person_name": "Malik"},
          {"person_id": "person_003", "person_name": "Bob"}]
ROOMS = [{"room_id": "room_001", "capacity": 2}, {"room_id": "room_002", "capacity": 4},
         {"room_id": "room_003", "capacity": 8}, {"room_id": "room_004", "capacity": "big"}]


def instance(**sources: Any) -> dict[str, Any]:
    threads = [{"thread_id": "thread_context_001", "thread_text": "Just noise.", "thread_tags": {}},
               {"thread_id": "thread_task_001", "thread_text": "Alice and Bob, 60 minutes, before noon.",
                "thread_tags": {"deadline": "2026-01-19T12:00:00+09:00", "sort_spec": {"keys": ["start"]}}}]
    return {"instance_id": "instance_unit", "level": 3, "task_text": "Schedule it.",
            "slots": {"time_window": {"start": "2026-01-19T09:00:00", "end": "2026-01-19T18:00:00"},
                      "participants": ["Alice", "Bob"], "duration_min": 60, "num_options": 3, "policy_id": "POLICY_1"},
            "sources": {"comm_threads": threads, **sources}}


def call(tools: LevelTools, name: str, arguments: Any = None) -> Any:
    """The decoded tool message content of one call (``arguments`` as a JSON value, or a raw string)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return json.loads(tools.call(name, raw))


# -- errors, as the original's loop writes them ------------------------------------------------------------------------


def test_an_unknown_tool_is_named_in_the_error():
    """The exact message content the original sends for a tool it does not have."""
    assert '{"error": "Unknown tool: nope"}' == LevelTools(world(), instance()).call("nope", "{}")


@pytest.mark.parametrize("arguments, message", [
    ("", "Expecting value: line 1 column 1 (char 0)"),
    ('{"person_id": "person_001",}', "Expecting property name enclosed in double quotes: line 1 column 28 (char 27)"),
    ("person_001", "Expecting value: line 1 column 1 (char 0)"),
])
def test_arguments_that_are_not_json_fail_with_the_decoders_message(arguments, message):
    """json.loads fails before the tool runs: "Tool execution failed: " and the stdlib decoder's own text."""
    with pytest.raises(json.JSONDecodeError) as raised:
        json.loads(arguments)
    assert message == str(raised.value)
    content = LevelTools(world(), instance()).call("get_calendar_events", arguments)
    assert json.dumps({"error": f"Tool execution failed: {message}"}) == content


def test_bad_json_fails_before_the_tool_name_is_looked_at():
    """The original decodes the arguments first, so an unknown tool with bad JSON reports the JSON."""
    content = LevelTools(world(), instance()).call("nope", "")
    assert '{"error": "Tool execution failed: Expecting value: line 1 column 1 (char 0)"}' == content


@pytest.mark.parametrize("arguments, message", [
    ({"person_id": "person_001", "extra": 1},
     "SimulatedAPI.get_calendar_events() got an unexpected keyword argument 'extra'"),
    ({}, "SimulatedAPI.get_calendar_events() missing 1 required positional argument: 'person_id'"),
])
def test_arguments_that_do_not_fit_name_the_originals_method(arguments, message):
    """A TypeError from the call names SimulatedAPI (the class the model saw), never this project's class."""
    assert {"error": f"Tool execution failed: {message}"} == call(LevelTools(world(), instance()),
                                                                   "get_calendar_events", arguments)


@pytest.mark.parametrize("arguments, kind", [("[1]", "list"), ("null", "NoneType"), ('"person_001"', "str")])
def test_arguments_that_are_json_but_not_an_object_are_an_error(arguments, kind):
    """A list, null or string as arguments: the unpacking fails and the error says what it got. (The module prefix
    the original puts before "SimulatedAPI" is pinned by a test further down.)"""
    result = call(LevelTools(world(), instance()), "get_calendar_events", arguments)
    assert ["error"] == list(result)
    assert result["error"].startswith("Tool execution failed: ")
    assert result["error"].endswith(f"SimulatedAPI.get_calendar_events() argument after ** must be a mapping, not "
                                    f"{kind}")


# -- results -----------------------------------------------------------------------------------------------------------


def test_calendar_events_of_an_unknown_person_are_empty():
    """Not an error: the person id echoed and no events."""
    assert {"person_id": "person_999", "events": []} == call(LevelTools(world(), instance()), "get_calendar_events",
                                                             {"person_id": "person_999"})


def test_naive_event_times_get_the_zones_offset_and_explicit_offsets_are_kept():
    """Asia/Seoul: a naive time gets +09:00 (summer and winter alike); one with an offset is left alone."""
    tools = LevelTools(world(), instance())
    assert {"person_id": "person_001", "events": [
        {"start": "2026-01-19T10:00:00+09:00", "end": "2026-01-19T11:00:00+09:00", "title": "Standup"},
        {"start": "2026-07-15T10:00:00+09:00", "end": "2026-07-15T11:00:00+09:00", "title": "Summer"},
    ]} == call(tools, "get_calendar_events", {"person_id": "person_001"})
    assert {"person_id": "person_002", "events": [
        {"start": "2026-01-19T13:00:00+09:00", "end": "2026-01-19T14:00:00+09:00"},
    ]} == call(tools, "get_calendar_events", {"person_id": "person_002"})


@pytest.mark.parametrize("options, january, july", [
    (None, "-05:00", "-04:00"),
    (ToolOptions.original(), "-05:00", "-05:00"),
])
def test_a_daylight_saving_zone_stamps_each_dates_offset_unless_the_original_is_asked_for(options, january, july):
    """America/New_York: by default a July event gets EDT (-04:00); the original stamps every date with the offset
    of 2026-01-01 (-05:00)."""
    events = call(LevelTools(world("America/New_York"), instance(), options), "get_calendar_events",
                  {"person_id": "person_001"})["events"]
    assert [f"2026-01-19T10:00:00{january}", f"2026-07-15T10:00:00{july}"] == [e["start"] for e in events]


def test_current_time_is_the_window_start_with_the_offset():
    """get_current_time: the instance's window start (stamped) and the zone name."""
    assert {"current_time": "2026-01-19T09:00:00+09:00", "timezone": "Asia/Seoul"} == call(
        LevelTools(world(), instance()), "get_current_time")


def test_read_policy_document_has_the_recorded_shape_by_default_and_the_latest_codes_with_head_policy_doc():
    """Default: {"doc_id", "text", "tags": {}} as every recorded tool message; head_policy_doc: the latest code's
    {"doc_id", "title", "text"}. Key order included (the model sees the JSON text)."""
    args = '{"doc_id": "primary_policy_doc"}'
    assert ('{"doc_id": "primary_policy_doc", "text": "Meetings need a 10-minute buffer.", "tags": {}}'
            == LevelTools(world(), instance()).call("read_policy_document", args))
    assert ('{"doc_id": "primary_policy_doc", "title": "Company Policy Document", "text": "Meetings need a 10-minute '
            'buffer."}' == LevelTools(world(), instance(), ToolOptions(head_policy_doc=True)).call(
                "read_policy_document", args))
    assert {"doc_id": "other", "error": "Document 'other' not found."} == call(
        LevelTools(world(), instance()), "read_policy_document", {"doc_id": "other"})


def test_a_list_shaped_people_table_works_by_default_and_fails_as_the_original_did():
    """The published schema's plain-list table: found by default; the original's error with ToolOptions.original()."""
    w = world(people_table=copy.deepcopy(PEOPLE), rooms_table=copy.deepcopy(ROOMS))
    assert {"matches": [PEOPLE[0], PEOPLE[1]]} == call(LevelTools(w, instance()), "search_person",
                                                       {"name_query": "ALI"})
    assert {"rooms": ROOMS[1:3]} == call(LevelTools(w, instance()), "list_rooms", {"min_capacity": 3})
    original = LevelTools(w, instance(), ToolOptions.original())
    failed = '{"error": "Tool execution failed: \'list\' object has no attribute \'get\'"}'
    assert failed == original.call("search_person", '{"name_query": "ali"}')
    assert failed == original.call("list_rooms", "{}")


def test_search_person_matches_case_insensitive_substrings_of_the_columnar_table():
    """"ali" finds Alice and Malik; an empty query finds everyone; no match is an empty list."""
    tools = LevelTools(world(), instance())
    assert {"matches": [PEOPLE[0], PEOPLE[1]]} == call(tools, "search_person", {"name_query": "ali"})
    assert {"matches": PEOPLE} == call(tools, "search_person", {"name_query": ""})
    assert {"matches": []} == call(tools, "search_person", {"name_query": "zed"})


@pytest.mark.parametrize("arguments, rooms", [
    ({}, ROOMS[:3]),
    ({"min_capacity": 4}, ROOMS[1:3]),
    ({"min_capacity": 5}, ROOMS[2:3]),
    ({"min_capacity": 9}, []),
])
def test_list_rooms_filters_by_minimum_capacity(arguments, rooms):
    """Capacity at least min_capacity (default 0); a room whose capacity is not a number is never listed."""
    assert {"rooms": rooms} == call(LevelTools(world(), instance()), "list_rooms", arguments)


def test_room_availability_is_stamped_like_calendars():
    """Bookings with the zone's offset; an unknown room has none."""
    tools = LevelTools(world(), instance())
    assert {"room_id": "room_001", "events": [{"start": "2026-01-19T09:00:00+09:00",
                                               "end": "2026-01-19T09:30:00+09:00", "title": "Booked"}]} == call(
        tools, "get_room_availability", {"room_id": "room_001"})
    assert {"room_id": "room_009", "events": []} == call(tools, "get_room_availability", {"room_id": "room_009"})


def test_policy_tools_read_the_structured_policies():
    """list_policy_ids and get_policy_rules read policy_json (never the oracle-only policy_tags)."""
    tools = LevelTools(world(), instance())
    assert {"policy_ids": ["POLICY_1"]} == call(tools, "list_policy_ids")
    assert {"policy_id": "POLICY_1", "rules": [{"type": "buffer_min", "minutes": 10}]} == call(
        tools, "get_policy_rules", {"policy_id": "POLICY_1"})
    assert {"policy_id": "POLICY_9", "rules": []} == call(tools, "get_policy_rules", {"policy_id": "POLICY_9"})


# -- the oracle-only tags never reach the agent ------------------------------------------------------------------------


def test_sanitize_removes_every_tags_key_at_any_depth_and_leaves_its_input_alone():
    """policy_tags, comm_tags, thread_tags and a bare "tags" go, however deep (inside lists too); the input is not
    mutated and the output shares nothing mutable with it."""
    data = {"sources": {"policy_tags": {"P": {}}, "comm_tags": {"deadline": "x"}, "policy_text": "kept",
                        "comm_threads": [{"thread_id": "t", "thread_tags": {"deadline": "x"},
                                          "nested": [{"tags": ["a"], "keep": [1, {"tags": 2, "deep": "yes"}]}]}]},
            "tags": {"top": True}, "level": 3}
    before = copy.deepcopy(data)
    clean = sanitize(data)
    assert {"sources": {"policy_text": "kept",
                        "comm_threads": [{"thread_id": "t", "nested": [{"keep": [1, {"deep": "yes"}]}]}]},
            "level": 3} == clean
    assert before == data
    clean["sources"]["comm_threads"][0]["nested"][0]["keep"].append("more")
    assert before == data


def test_read_communication_thread_never_returns_the_thread_tags():
    """A thread with a deadline and a sort_spec in its thread_tags: the agent gets its text and tags {}."""
    tools = LevelTools(world(), instance())
    assert {"thread_ids": ["thread_context_001", "thread_task_001"]} == call(tools, "list_thread_ids")
    assert {"thread_id": "thread_task_001", "text": "Alice and Bob, 60 minutes, before noon.", "tags": {}} == call(
        tools, "read_communication_thread", {"thread_id": "thread_task_001"})
    assert {"thread_id": "thread_nope", "text": "", "tags": {}} == call(tools, "read_communication_thread",
                                                                        {"thread_id": "thread_nope"})


def test_the_tools_hold_sanitised_copies():
    """Neither the world nor the instance given to LevelTools keeps any tags key inside the tools, and neither is
    changed."""
    w, inst = world(), instance()
    before = copy.deepcopy((w, inst))
    tools = LevelTools(w, inst)
    assert "tags" not in json.dumps([tools.world, tools.instance])
    assert before == (w, inst)


@pytest.mark.parametrize("where", ["instance", "world"])
def test_list_thread_ids_falls_back_to_primary_thread_when_only_comm_thread_text_exists(where):
    """Level 2's single text thread (in the instance's or the world's sources) is "primary_thread"."""
    text = "The deadline is Monday 2 PM."
    inst = {"instance_id": "i", "level": 2, "slots": {}, "sources": {"comm_thread_text": text, "comm_tags": {}}}
    w = world()
    if where == "world":
        inst["sources"] = {}
        w["sources"]["comm_thread_text"] = text
    tools = LevelTools(w, inst)
    assert {"thread_ids": ["primary_thread"]} == call(tools, "list_thread_ids")
    assert {"thread_id": "primary_thread", "text": text, "tags": {}} == call(
        tools, "read_communication_thread", {"thread_id": "primary_thread"})


def test_no_threads_and_no_text_is_an_empty_list():
    """Neither threads nor a thread text anywhere: no thread ids (not an error)."""
    assert {"thread_ids": []} == call(LevelTools(world(), {"slots": {}}), "list_thread_ids")


# -- schemas -----------------------------------------------------------------------------------------------------------


def test_tool_schemas_are_the_eleven_tools_in_order_and_a_fresh_copy_each_time():
    """11 function tools in TOOL_NAMES order; mutating one result leaves the next call's untouched."""
    schemas = tool_schemas()
    assert ("get_current_time", "get_calendar_events", "list_policy_ids", "get_policy_rules", "list_document_ids",
            "read_policy_document", "list_thread_ids", "read_communication_thread", "search_person", "list_rooms",
            "get_room_availability") == TOOL_NAMES
    assert list(TOOL_NAMES) == [s["function"]["name"] for s in schemas]
    assert {"function"} == {s["type"] for s in schemas}
    fresh = tool_schemas()
    schemas[0]["function"]["name"] = "changed"
    schemas[1]["function"]["parameters"]["required"].append("extra")
    schemas.pop()
    assert fresh == tool_schemas()
    assert 11 == len(tool_schemas())


# -- against the original's own code -----------------------------------------------------------------------------------


def load_original(upstream: Path, module: str, relative: str) -> ModuleType:
    """An original module by file, under its own name (so its messages name it as in the original's runs)."""
    spec = importlib.util.spec_from_file_location(module, upstream / relative)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


@pytest.fixture(scope="module")
def original(upstream: Path) -> tuple[ModuleType, ModuleType]:
    """The original's ``evaluation.tools`` and ``evaluation.sanitizer`` (both import nothing outside the stdlib)."""
    return (load_original(upstream, "evaluation.tools", "evaluation/tools.py"),
            load_original(upstream, "evaluation.sanitizer", "evaluation/sanitizer.py"))


def original_call(original: tuple[ModuleType, ModuleType], w: dict[str, Any], inst: dict[str, Any], name: str,
                  arguments: str) -> str:
    """What the original's agent loop writes as the tool message for one call (run_eval sanitises first)."""
    tools, sanitizer = original
    api = tools.SimulatedAPI(sanitizer.sanitize_world(w), sanitizer.sanitize_instance(inst))
    try:
        result = api.execute_tool(name, json.loads(arguments))
    except Exception as exc:
        result = {"error": f"Tool execution failed: {exc!s}"}
    return json.dumps(result, ensure_ascii=False)


ORIGINAL_CALLS = [
    ("get_current_time", "{}"), ("get_calendar_events", '{"person_id": "person_001"}'),
    ("get_calendar_events", '{"person_id": "person_002"}'), ("get_calendar_events", '{"person_id": "person_404"}'),
    ("list_policy_ids", "{}"), ("get_policy_rules", '{"policy_id": "POLICY_1"}'),
    ("get_policy_rules", '{"policy_id": "nope"}'), ("list_document_ids", "{}"),
    ("read_policy_document", '{"doc_id": "primary_policy_doc"}'), ("read_policy_document", '{"doc_id": "x"}'),
    ("list_thread_ids", "{}"), ("read_communication_thread", '{"thread_id": "thread_task_001"}'),
    ("read_communication_thread", '{"thread_id": "primary_thread"}'), ("search_person", '{"name_query": "ali"}'),
    ("search_person", '{"name_query": "Bob"}'), ("list_rooms", "{}"), ("list_rooms", '{"min_capacity": 4}'),
    ("get_room_availability", '{"room_id": "room_001"}'), ("get_room_availability", '{"room_id": "room_404"}'),
    ("nope", "{}"), ("get_calendar_events", ""), ("get_calendar_events", "{}"),
    ("get_calendar_events", '{"person_id": "person_001", "extra": 1}'), ("list_rooms", '{"min_capacity": "3"}'),
]
AS_IT_WAS = ToolOptions(dst_offsets=False, list_tables=False, head_policy_doc=True)


@pytest.mark.parametrize("tz", ["Asia/Seoul", "America/New_York", "UTC"])
def test_with_every_difference_turned_off_each_call_gives_the_originals_message(original, tz):
    """Differential: the original's SimulatedAPI (latest code) and LevelTools with dst_offsets and list_tables off
    and head_policy_doc on give the same message content for every call, errors included, character for
    character."""
    w, inst = world(tz), instance()
    for name, arguments in ORIGINAL_CALLS:
        assert original_call(original, w, inst, name, arguments) == LevelTools(w, inst, AS_IT_WAS).call(
            name, arguments), (name, arguments)


def test_a_dict_shaped_policy_text_and_a_list_people_table_match_the_original(original):
    """The other shapes the original reads: documents by id (and its not-found message), a list-shaped table's
    error."""
    w = world(policy_text={"doc_a": {"title": "A", "text": "Alpha."}}, people_table=copy.deepcopy(PEOPLE))
    for name, arguments in [("list_document_ids", "{}"), ("read_policy_document", '{"doc_id": "doc_a"}'),
                            ("read_policy_document", '{"doc_id": "doc_b"}'), ("search_person", '{"name_query": "a"}')]:
        assert original_call(original, w, instance(), name, arguments) == LevelTools(w, instance(), AS_IT_WAS).call(
            name, arguments), (name, arguments)


def test_the_tool_schemas_are_the_originals(original):
    """tool_schemas() is the original's get_tool_definitions(), exactly."""
    assert original[0].SimulatedAPI.get_tool_definitions() == tool_schemas()


def test_arguments_that_are_a_json_list_give_the_originals_exact_message(original):
    """The original's loop, its module named as in its runs, against LevelTools for a JSON list as arguments."""
    w, inst = world(), instance()
    expected = original_call(original, w, inst, "get_calendar_events", "[1]")
    assert "evaluation.tools.SimulatedAPI.get_calendar_events() argument after ** must be a mapping" in expected
    assert expected == LevelTools(w, inst, AS_IT_WAS).call("get_calendar_events", "[1]")


def test_the_original_options_stamp_a_negative_half_hour_zone_as_the_original_did(original):
    """America/St_Johns with every difference turned off: the original's calendar message, character for character."""
    w, inst = world("America/St_Johns"), instance()
    expected = original_call(original, w, inst, "get_calendar_events", '{"person_id": "person_001"}')
    assert "2026-01-19T10:00:00-04:30" in expected
    assert expected == LevelTools(w, inst, AS_IT_WAS).call("get_calendar_events", '{"person_id": "person_001"}')


def test_an_argument_named_like_the_class_is_echoed_as_sent():
    """Only the method's own name is given the original's class: an argument called ``LevelTools.x`` stays so."""
    result = call(LevelTools(world(), instance()), "get_current_time", json.dumps({"LevelTools.x": 1}))
    assert {"error": "Tool execution failed: SimulatedAPI.get_current_time() got an unexpected keyword argument "
                     "'LevelTools.x'"} == result
