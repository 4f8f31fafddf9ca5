"""The three-level oracle: the reference labels exactly, then one hand-built world per constraint type."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mpcbench_async.levels._answer import candidate_tuples, parse_answer, score
from mpcbench_async.levels._data import discover, find_output_dir, instance_problems, load_level_set, world_problems
from mpcbench_async.levels._oracle import OracleSettings, apply_constraints, solve

SEOUL = "Asia/Seoul"
MON, TUE, FRI, SAT = "2026-01-19", "2026-01-20", "2026-01-23", "2026-01-24"


# -- builders in the reference data's shapes ---------------------------------------------------------------------------


def naive(day: str, hhmm: str) -> str:
    """A level-1 instant as the reference writes it: local time, no offset."""
    return f"{day}T{hhmm}:00"


def at(day: str, hhmm: str, offset: str = "+09:00") -> str:
    """An instant with an offset, as the oracle writes candidates (and levels 2-3 write everything)."""
    return f"{day}T{hhmm}:00{offset}"


def slot(day: str, start: str, end: str, room: str | None = None, offset: str = "+09:00") -> dict[str, str]:
    out = {"start": at(day, start, offset), "end": at(day, end, offset)}
    return out if room is None else {**out, "room_id": room}


def event(start: str, end: str, title: str = "Busy") -> dict[str, str]:
    return {"start": start, "end": end, "title": title}


def world(level: int, rules: list[dict[str, Any]], calendar: dict[str, list[dict[str, str]]] | None = None, *,
          tz: str = SEOUL, **sources: Any) -> dict[str, Any]:
    """A world with one policy ``P``: in ``policy_json`` at level 1, in the oracle-only ``policy_tags`` after."""
    where = "policy_json" if level == 1 else "policy_tags"
    return {"world_id": f"world_level{level}_unit", "level": level, "timezone": tz,
            "sources": {"calendar_json": calendar or {}, where: {"P": {"rules": rules}}, **sources}}


def instance(level: int, start: str, end: str, participants: list[str], duration: int, options: int = 1, *,
             sources: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"instance_id": f"instance_level{level}_unit", "level": level, "task_text": "Schedule it.",
                           "slots": {"time_window": {"start": start, "end": end}, "participants": participants,
                                     "duration_min": duration, "num_options": options, "policy_id": "P"},
                           "sources_ref": {"world_id": f"world_level{level}_unit"}}
    if sources is not None:
        out["sources"] = sources
    return out


def all_feasible(w: dict[str, Any], inst: dict[str, Any], expected: list[dict[str, str]]) -> None:
    """Asking for exactly ``len(expected)`` options, the gold is ``expected`` and nothing else is feasible."""
    inst = copy.deepcopy(inst)
    inst["slots"]["num_options"] = len(expected)
    result = solve(w, inst)
    assert expected == result.feasible_candidates
    assert len(expected) == result.all_feasible
    assert not result.discarded


def level2(comm_tags: dict[str, Any], rules: list[dict[str, Any]] | None = None,
           calendar: dict[str, list[dict[str, str]]] | None = None, start: str = "09:00", end: str = "12:00",
           duration: int = 30) -> tuple[dict[str, Any], dict[str, Any]]:
    w = world(2, rules or [], calendar, policy_text="Policy.")
    inst = instance(2, at(MON, start), at(MON, end), ["person_001", "person_002"], duration,
                    sources={"comm_thread_text": "See tags.", "comm_tags": comm_tags})
    return w, inst


# -- the reference labels ----------------------------------------------------------------------------------------------


def test_every_reference_oracle_line_is_reproduced_exactly_and_the_one_discard_is_discarded(upstream: Path):
    """Each level x split of generate/output: the oracle file's lines, in file order, are ``solve(...).line()`` of
    the instances that have one (58 lines), and the one instance without a line (level-2 test E) is discarded."""
    base = find_output_dir(upstream)
    assert [(1, "test"), (2, "test"), (3, "test"), (1, "exp1"), (2, "exp1"), (3, "exp1")] == discover(base)
    per_set: dict[str, int] = {}
    discarded: list[str] = []
    for level, split in discover(base):
        level_set = load_level_set(base, level, split)
        assert {} == level_set.invalid
        recorded = [json.loads(line) for line in (base / f"oracle_level{level}_{split}.jsonl").read_text().splitlines()
                    if line.strip()]
        ours = []
        for inst in level_set.instances:
            result = solve(level_set.world, inst)
            if result.discarded:
                discarded.append(inst["instance_id"])
                assert [] == result.feasible_candidates
            else:
                ours.append(result.line())
        assert recorded == ours
        per_set[level_set.name] = len(ours)
    assert {"L1_test": 4, "L2_test": 4, "L3_test": 5, "L1_exp1": 20, "L2_exp1": 15, "L3_exp1": 10} == per_set
    assert 58 == sum(per_set.values())
    assert ["instance_level2_test_E"] == discarded


def test_the_reference_discard_has_fewer_feasible_candidates_than_asked_for(upstream: Path):
    """instance_level2_test_E: busy calendars leave two 60-minute slots, its ban and required windows one, and it
    asks for three, so the original resampled it (no oracle line)."""
    level_set = load_level_set(find_output_dir(upstream), 2, "test")
    inst = next(i for i in level_set.instances if i["instance_id"] == "instance_level2_test_E")
    result = solve(level_set.world, inst)
    assert result.discarded
    assert {"num_generated": 2, "num_after_constraints": 1, "num_options": 3} == result.meta
    assert 1 == result.all_feasible
    assert "instance_level2_test_E" not in level_set.oracle


# -- step 1: the grid --------------------------------------------------------------------------------------------------


def test_a_window_starting_off_the_grid_gives_its_first_slot_on_the_next_quarter_hour():
    """A window from 09:07: the first slot starts at 09:15 (never 09:07), and slots must end inside the window."""
    w = world(1, [])
    inst = instance(1, naive(MON, "09:07"), naive(MON, "10:00"), ["person_001"], 30)
    all_feasible(w, inst, [slot(MON, "09:15", "09:45"), slot(MON, "09:30", "10:00")])


def test_a_busy_event_ending_off_the_grid_pushes_the_next_slot_to_the_next_quarter_hour():
    """A busy event 09:00-10:05: the first slot after it starts at 10:15."""
    w = world(1, [], {"person_001": [event(naive(MON, "09:00"), naive(MON, "10:05"))]})
    inst = instance(1, naive(MON, "09:00"), naive(MON, "11:00"), ["person_001", "person_002"], 30)
    all_feasible(w, inst, [slot(MON, "10:15", "10:45"), slot(MON, "10:30", "11:00")])


def test_intervals_are_half_open_a_meeting_may_touch_a_busy_event_on_either_side():
    """Busy 10:00-11:00: a 60-minute meeting 09:00-10:00 (ending as it starts) and 11:00-12:00 are both allowed."""
    w = world(1, [], {"person_002": [event(naive(MON, "10:00"), naive(MON, "11:00"))]})
    inst = instance(1, naive(MON, "09:00"), naive(MON, "12:00"), ["person_001", "person_002"], 60)
    all_feasible(w, inst, [slot(MON, "09:00", "10:00"), slot(MON, "11:00", "12:00")])


def test_only_the_participants_calendars_count():
    """A non-participant's busy event inside the window changes nothing."""
    w = world(1, [], {"person_003": [event(naive(MON, "09:00"), naive(MON, "10:00"))]})
    inst = instance(1, naive(MON, "09:00"), naive(MON, "10:00"), ["person_001", "person_002"], 60)
    all_feasible(w, inst, [slot(MON, "09:00", "10:00")])


# -- step 2: policy rules ----------------------------------------------------------------------------------------------


FRI_TO_SAT = (naive(FRI, "17:00"), naive(SAT, "10:00"))
# Busy overnight, so the free time is Friday 17:00-18:30 and Saturday 08:30-10:00.
OVERNIGHT = {"person_001": [event(naive(FRI, "18:30"), naive(SAT, "08:30"))]}


def test_work_hours_keep_slots_fully_inside_the_days_hours_on_every_day_without_days_of_week():
    """work_hours 09:00-18:00: Friday 17:00-17:30 .. 17:30-18:00 and Saturday 09:00-09:30 .. 09:30-10:00."""
    w = world(1, [{"type": "work_hours", "start": "09:00", "end": "18:00"}], OVERNIGHT)
    inst = instance(1, *FRI_TO_SAT, ["person_001"], 30)
    all_feasible(w, inst, [slot(FRI, "17:00", "17:30"), slot(FRI, "17:15", "17:45"), slot(FRI, "17:30", "18:00"),
                           slot(SAT, "09:00", "09:30"), slot(SAT, "09:15", "09:45"), slot(SAT, "09:30", "10:00")])


def test_work_hours_with_days_of_week_drop_the_weekend_day():
    """The same rule with days_of_week [0..4]: the Saturday slots are gone."""
    w = world(1, [{"type": "work_hours", "start": "09:00", "end": "18:00", "days_of_week": [0, 1, 2, 3, 4]}],
              OVERNIGHT)
    inst = instance(1, *FRI_TO_SAT, ["person_001"], 30)
    all_feasible(w, inst, [slot(FRI, "17:00", "17:30"), slot(FRI, "17:15", "17:45"), slot(FRI, "17:30", "18:00")])


# Busy overnight, so the free time is Monday 11:00-14:00 and Tuesday 11:00-14:00.
MON_TUE_MIDDAYS = {"person_001": [event(naive(MON, "14:00"), naive(TUE, "11:00"))]}


def test_lunch_block_removes_every_slot_overlapping_it_on_every_day():
    """lunch_block 12:00-13:00, 60 minutes: 11:00-12:00 and 13:00-14:00 touch it and stay, on both days."""
    w = world(1, [{"type": "lunch_block", "start": "12:00", "end": "13:00"}], MON_TUE_MIDDAYS)
    inst = instance(1, naive(MON, "11:00"), naive(TUE, "14:00"), ["person_001"], 60)
    all_feasible(w, inst, [slot(MON, "11:00", "12:00"), slot(MON, "13:00", "14:00"),
                           slot(TUE, "11:00", "12:00"), slot(TUE, "13:00", "14:00")])


def test_lunch_block_with_days_of_week_applies_only_on_those_days():
    """lunch_block on Tuesdays only: all nine Monday slots stay, Tuesday keeps the two that miss lunch."""
    w = world(1, [{"type": "lunch_block", "start": "12:00", "end": "13:00", "days_of_week": [1]}], MON_TUE_MIDDAYS)
    inst = instance(1, naive(MON, "11:00"), naive(TUE, "14:00"), ["person_001"], 60)
    monday = [slot(MON, f"{h:02d}:{m:02d}", f"{h + 1:02d}:{m:02d}") for h in (11, 12) for m in (0, 15, 30, 45)]
    all_feasible(w, inst, [*monday, slot(MON, "13:00", "14:00"),
                           slot(TUE, "11:00", "12:00"), slot(TUE, "13:00", "14:00")])


def test_buffer_min_widens_every_participant_event_on_both_sides():
    """buffer_min 15 around busy 10:00-11:00 (so 09:45-11:15 is out), and around a busy 12:40-13:00 that lies
    outside the window but still reaches into it (12:25): 09:30-10:00, 11:00-11:30 and 12:00-12:30 are dropped."""
    calendar = {"person_001": [event(naive(MON, "10:00"), naive(MON, "11:00"))],
                "person_002": [event(naive(MON, "12:40"), naive(MON, "13:00"))],
                "person_003": [event(naive(MON, "09:00"), naive(MON, "09:05"))]}  # not a participant
    w = world(1, [{"type": "buffer_min", "minutes": 15}], calendar)
    inst = instance(1, naive(MON, "09:00"), naive(MON, "12:30"), ["person_001", "person_002"], 30)
    all_feasible(w, inst, [slot(MON, "09:00", "09:30"), slot(MON, "09:15", "09:45"), slot(MON, "11:15", "11:45"),
                           slot(MON, "11:30", "12:00"), slot(MON, "11:45", "12:15")])


def test_ban_dow_time_applies_only_on_its_weekday():
    """ban_dow_time Monday 09:00-12:00: Monday keeps only 12:00-12:30; the same hours on Tuesday all stay."""
    w = world(1, [{"type": "ban_dow_time", "day_of_week": 0, "start": "09:00", "end": "12:00"}],
              {"person_001": [event(naive(MON, "12:30"), naive(TUE, "11:00"))]})
    inst = instance(1, naive(MON, "11:00"), naive(TUE, "12:30"), ["person_001"], 30)
    all_feasible(w, inst, [slot(MON, "12:00", "12:30"), slot(TUE, "11:00", "11:30"), slot(TUE, "11:15", "11:45"),
                           slot(TUE, "11:30", "12:00"), slot(TUE, "11:45", "12:15"), slot(TUE, "12:00", "12:30")])


# -- step 2: communication tags (level 2) ------------------------------------------------------------------------------


def test_a_deadline_keeps_slots_starting_at_or_before_it():
    """deadline 10:00, 60 minutes: starts 09:00 .. 10:00 inclusive (10:00-11:00 ends after it and still counts)."""
    w, inst = level2({"deadline": at(MON, "10:00")}, duration=60)
    all_feasible(w, inst, [slot(MON, "09:00", "10:00"), slot(MON, "09:15", "10:15"), slot(MON, "09:30", "10:30"),
                           slot(MON, "09:45", "10:45"), slot(MON, "10:00", "11:00")])


def test_ban_windows_remove_every_slot_overlapping_any_of_them():
    """ban_windows 09:30-10:00 and 11:00-11:15: slots touching them stay."""
    w, inst = level2({"ban_windows": [{"start": at(MON, "09:30"), "end": at(MON, "10:00")},
                                      {"start": at(MON, "11:00"), "end": at(MON, "11:15")}]})
    all_feasible(w, inst, [slot(MON, "09:00", "09:30"), slot(MON, "10:00", "10:30"), slot(MON, "10:15", "10:45"),
                           slot(MON, "10:30", "11:00"), slot(MON, "11:15", "11:45"), slot(MON, "11:30", "12:00")])


def test_required_windows_keep_slots_fully_inside_one_of_them():
    """required_windows 09:00-10:00 and 11:00-11:45: a slot must fit inside one (10:45-11:15 straddles: out)."""
    w, inst = level2({"required_windows": [{"start": at(MON, "09:00"), "end": at(MON, "10:00")},
                                           {"start": at(MON, "11:00"), "end": at(MON, "11:45")}]})
    all_feasible(w, inst, [slot(MON, "09:00", "09:30"), slot(MON, "09:15", "09:45"), slot(MON, "09:30", "10:00"),
                           slot(MON, "11:00", "11:30"), slot(MON, "11:15", "11:45")])


def test_policy_rules_apply_before_the_comm_tags_and_meta_counts_each_step():
    """A lunch rule and a deadline together: meta counts the grid, then what survives both."""
    w, inst = level2({"deadline": at(MON, "12:00")}, [{"type": "lunch_block", "start": "12:00", "end": "13:00"}],
                     end="14:00", duration=60)
    inst["slots"]["num_options"] = 2
    result = solve(w, inst)
    assert [slot(MON, "09:00", "10:00"), slot(MON, "09:15", "10:15")] == result.feasible_candidates
    assert {"num_generated": 17, "num_after_constraints": 9, "num_options": 2} == result.meta
    assert 9 == result.all_feasible
    assert [{"source": "calendar_json", "key": "person_001"}, {"source": "calendar_json", "key": "person_002"},
            {"source": "policy_tags", "key": "P"}, {"source": "comm_tags", "key": "comm_tags"},
            {"source": "slots", "key": "time_window"}] == result.explanation_keys


# -- step 3 and 4: people, rooms and order (level 3) -------------------------------------------------------------------


PEOPLE_ROWS = [{"person_id": "person_001", "person_name": "Alice", "team": "Engineering"},
               {"person_id": "person_002", "person_name": "Bob", "team": "Product"},
               {"person_id": "person_003", "person_name": "Charlie", "team": "Design"}]


def columnar(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    return {"primary_key": key, "columns": list(rows[0]), "rows": rows}


def world3(rooms: list[dict[str, Any]], bookings: dict[str, list[dict[str, str]]] | None = None,
           calendar: dict[str, list[dict[str, str]]] | None = None, *, people: Any = None) -> dict[str, Any]:
    return world(3, [], calendar, policy_text="Policy.",
                 people_table=columnar(PEOPLE_ROWS, "person_id") if people is None else people,
                 rooms_table=columnar(rooms, "room_id"), room_availability_json=bookings or {})


def instance3(start: str, end: str, participants: list[str], duration: int, *, sort_keys: list[str] | None = None,
              options: int = 3) -> dict[str, Any]:
    threads: list[dict[str, Any]] = [{"thread_id": "thread_context_001", "thread_text": "Hello.", "thread_tags": {}}]
    if sort_keys is not None:
        threads.append({"thread_id": "thread_task_001", "thread_text": "Schedule it.",
                        "thread_tags": {"sort_spec": {"keys": sort_keys}}})
    return instance(3, at(MON, start), at(MON, end), participants, duration, options,
                    sources={"comm_threads": threads})


def room(room_id: str, capacity: int) -> dict[str, Any]:
    return {"room_id": room_id, "capacity": capacity, "floor": "1"}


@pytest.mark.parametrize("people", [columnar(PEOPLE_ROWS, "person_id"), PEOPLE_ROWS], ids=["columnar", "list"])
def test_level_three_participant_names_are_resolved_through_the_people_table(people):
    """Alice (busy 09:00-10:00) and Bob (busy 10:30-11:00) by name, in either table shape: their calendars count."""
    calendar = {"person_001": [event(at(MON, "09:00"), at(MON, "10:00"))],
                "person_002": [event(at(MON, "10:30"), at(MON, "11:00"))]}
    w = world3([room("room_001", 10)], calendar=calendar, people=people)
    result = solve(w, instance3("09:00", "13:00", ["Alice", "Bob"], 60))
    assert [slot(MON, "11:00", "12:00", "room_001"), slot(MON, "11:15", "12:15", "room_001"),
            slot(MON, "11:30", "12:30", "room_001")] == result.feasible_candidates
    assert 5 == result.all_feasible
    assert [{"source": "calendar_json", "key": "person_001"}, {"source": "calendar_json", "key": "person_002"},
            {"source": "policy_tags", "key": "P"}, {"source": "comm_threads", "key": "thread_context_001"},
            {"source": "people_table", "key": "people_table"}, {"source": "rooms_table", "key": "rooms_table"},
            {"source": "room_availability_json", "key": "room_availability_json"},
            {"source": "slots", "key": "time_window"}] == result.explanation_keys


def test_level_three_an_unknown_participant_name_is_a_value_error_naming_it():
    """A name that is not in people_table (and not a person_... id) stops the oracle with a message."""
    w = world3([room("room_001", 10)])
    with pytest.raises(ValueError) as raised:
        solve(w, instance3("09:00", "13:00", ["Alice", "Zed"], 60))
    assert "participant 'Zed' of instance_level3_unit is not in people_table" == str(raised.value)


def test_level_three_rooms_need_a_capacity_of_at_least_the_number_of_participants():
    """Three participants: a room for 2 is out, rooms for exactly 3 and for 4 are in (candidate-major order)."""
    w = world3([room("room_001", 2), room("room_002", 3), room("room_003", 4)])
    result = solve(w, instance3("09:00", "10:15", ["Alice", "Bob", "Charlie"], 60))
    assert [slot(MON, "09:00", "10:00", "room_002"), slot(MON, "09:00", "10:00", "room_003"),
            slot(MON, "09:15", "10:15", "room_002")] == result.feasible_candidates
    assert {"num_generated": 2, "num_after_constraints": 2, "num_after_room_join": 4, "num_options": 3} == result.meta


def test_level_three_a_booked_room_is_out_for_slots_overlapping_its_booking():
    """room_001 booked 09:00-09:30: only 09:30-10:30 (touching the booking) can use it."""
    w = world3([room("room_001", 5), room("room_002", 5)],
               {"room_001": [event(at(MON, "09:00"), at(MON, "09:30"), "Booked")]})
    result = solve(w, instance3("09:00", "10:30", ["Alice", "Bob"], 60))
    assert [slot(MON, "09:00", "10:00", "room_002"), slot(MON, "09:15", "10:15", "room_002"),
            slot(MON, "09:30", "10:30", "room_001")] == result.feasible_candidates
    assert 4 == result.all_feasible


@pytest.mark.parametrize("keys, expected", [
    (None, [("09:00", "10:00", "room_002"), ("09:00", "10:00", "room_010"), ("09:15", "10:15", "room_002")]),
    (["start", "end"], [("09:00", "10:00", "room_002"), ("09:00", "10:00", "room_010"),
                        ("09:15", "10:15", "room_002")]),
    (["room_id", "start"], [("09:00", "10:00", "room_002"), ("09:15", "10:15", "room_002"),
                            ("09:00", "10:00", "room_010")]),
    (["end"], [("09:00", "10:00", "room_002"), ("09:00", "10:00", "room_010"), ("09:15", "10:15", "room_002")]),
], ids=["default", "start-end", "room-first", "end-only"])
def test_level_three_orders_by_the_task_threads_sort_spec_with_ties_broken_by_room_id(keys, expected):
    """Rooms listed room_010 before room_002: equal sort keys are broken by the room string, not table order."""
    w = world3([room("room_010", 5), room("room_002", 5)])
    result = solve(w, instance3("09:00", "10:15", ["Alice", "Bob"], 60, sort_keys=keys))
    assert [slot(MON, s, e, r) for s, e, r in expected] == result.feasible_candidates


@pytest.mark.parametrize("asked", [1, 5])
def test_level_three_always_returns_three_options_whatever_num_options_says(asked):
    """slots.num_options 1 or 5 with 4 feasible (slot, room) pairs: three options, meta num_options 3."""
    w = world3([room("room_001", 5), room("room_002", 5)])
    result = solve(w, instance3("09:00", "10:15", ["Alice", "Bob"], 60, options=asked))
    assert [slot(MON, "09:00", "10:00", "room_001"), slot(MON, "09:00", "10:00", "room_002"),
            slot(MON, "09:15", "10:15", "room_001")] == result.feasible_candidates
    assert 3 == result.meta["num_options"]
    assert not result.discarded


def test_level_three_fewer_than_three_pairs_is_a_discard():
    """One slot x two rooms: discarded, no candidates, the counts still reported."""
    w = world3([room("room_001", 5), room("room_002", 5)])
    result = solve(w, instance3("09:00", "10:00", ["Alice", "Bob"], 60))
    assert result.discarded
    assert [] == result.feasible_candidates
    assert [] == result.line()["feasible_candidates"]
    assert 2 == result.all_feasible
    assert {"num_generated": 1, "num_after_constraints": 1, "num_after_room_join": 2, "num_options": 3} == result.meta


def test_levels_one_and_two_discard_when_fewer_than_num_options_are_feasible():
    """Two feasible slots but three asked: discarded; with two asked, both are the gold."""
    w = world(1, [])
    inst = instance(1, naive(MON, "09:00"), naive(MON, "10:00"), ["person_001"], 45, 3)
    result = solve(w, inst)
    assert result.discarded
    assert [] == result.feasible_candidates
    assert 2 == result.all_feasible
    inst["slots"]["num_options"] = 2
    assert [slot(MON, "09:00", "09:45"), slot(MON, "09:15", "10:00")] == solve(w, inst).feasible_candidates


# -- rule-breaking answers are caught ----------------------------------------------------------------------------------

# One Monday, 08:00-19:00, 30 minutes, three people; person_001 busy 10:00-10:30, person_002 busy 14:00-15:00.
# Policy: work hours 09:00-18:00, lunch 12:00-13:00, a 15-minute buffer, no meetings Monday 15:45-16:15.
# Thread: start no later than 17:15, never 11:00-11:30, only inside 08:30-12:30, 13:00-16:30 or 17:00-18:00.
STRICT_RULES: list[dict[str, Any]] = [{"type": "work_hours", "start": "09:00", "end": "18:00"},
                {"type": "lunch_block", "start": "12:00", "end": "13:00"},
                {"type": "buffer_min", "minutes": 15},
                {"type": "ban_dow_time", "day_of_week": 0, "start": "15:45", "end": "16:15"}]
STRICT_TAGS: dict[str, Any] = {"deadline": at(MON, "17:15"),
               "ban_windows": [{"start": at(MON, "11:00"), "end": at(MON, "11:30")}],
               "required_windows": [{"start": at(MON, "08:30"), "end": at(MON, "12:30")},
                                    {"start": at(MON, "13:00"), "end": at(MON, "16:30")},
                                    {"start": at(MON, "17:00"), "end": at(MON, "18:00")}]}
STRICT_GOLD = [("09:00", "09:30"), ("09:15", "09:45"), ("11:30", "12:00"), ("13:00", "13:30"), ("13:15", "13:45"),
               ("15:15", "15:45"), ("17:00", "17:30"), ("17:15", "17:45")]
# (what it breaks, start, end, the one rule or tag that rejects it; None when the grid itself rejects it)
RULE_BREAKERS = [
    ("before work hours", "08:30", "09:00", "work_hours"),
    ("overlapping the start of lunch", "11:45", "12:15", "lunch_block"),
    ("inside lunch", "12:00", "12:30", "lunch_block"),
    ("in the buffer before person_001's event", "09:30", "10:00", "buffer_min"),
    ("in the buffer after person_001's event", "10:30", "11:00", "buffer_min"),
    ("in the buffer before person_002's event", "13:30", "14:00", "buffer_min"),
    ("in the buffer after person_002's event", "15:00", "15:30", "buffer_min"),
    ("on the banned Monday hour", "15:30", "16:00", "ban_dow_time"),
    ("inside the banned Monday hour", "16:00", "16:30", "ban_dow_time"),
    ("after the deadline", "17:30", "18:00", "deadline"),
    ("overlapping the start of the ban window", "10:45", "11:15", "ban_windows"),
    ("overlapping the end of the ban window", "11:15", "11:45", "ban_windows"),
    ("straddling the end of a required window", "16:15", "16:45", "required_windows"),
    ("between the required windows", "16:30", "17:00", "required_windows"),
    ("straddling the start of a required window", "16:45", "17:15", "required_windows"),
    ("overlapping person_001's busy event", "10:00", "10:30", None),
    ("overlapping person_002's busy event", "14:15", "14:45", None),
    ("45 minutes instead of 30", "09:00", "09:45", None),
    ("15 minutes instead of 30", "13:00", "13:15", None),
    ("off the 15-minute grid", "09:05", "09:35", None),
]


def strict_case() -> tuple[dict[str, Any], dict[str, Any]]:
    calendar = {"person_001": [event(at(MON, "10:00"), at(MON, "10:30"))],
                "person_002": [event(at(MON, "14:00"), at(MON, "15:00"))]}
    w = world(2, copy.deepcopy(STRICT_RULES), calendar, policy_text="Policy.")
    tags = copy.deepcopy(STRICT_TAGS)
    inst = instance(2, at(MON, "08:00"), at(MON, "19:00"), ["person_001", "person_002", "person_003"], 30,
                    len(STRICT_GOLD), sources={"comm_thread_text": "See tags.", "comm_tags": tags})
    return w, inst


def answer(pairs: list[tuple[str, str]]) -> str:
    """A final message as a model writes one: reasoning, then the JSON in a fence."""
    body = json.dumps({"candidates": [{"start": at(MON, s), "end": at(MON, e)} for s, e in pairs]}, indent=2)
    return f"Constraints considered; here are the options.\n```json\n{body}\n```"


def test_the_strict_world_has_exactly_the_expected_gold_and_the_gold_scores_one():
    """The world of the rule-breaking answers: eight feasible slots, all of them the gold, and the gold scores 1."""
    w, inst = strict_case()
    result = solve(w, inst)
    assert [slot(MON, s, e) for s, e in STRICT_GOLD] == result.feasible_candidates
    assert len(STRICT_GOLD) == result.all_feasible
    gold = candidate_tuples(result.feasible_candidates, 2)
    metrics = score(gold, parse_answer(answer(STRICT_GOLD)))
    assert (1.0, 1.0, 1.0, True) == (metrics.f1, metrics.precision, metrics.recall, metrics.exact_match)


def test_twenty_rule_breaking_answers_are_all_caught():
    """Each answer is the gold with its last option swapped for one that breaks one rule: 20 of 20 score
    exact_match False (7 of 8 right: precision = recall = 7/8)."""
    w, inst = strict_case()
    gold = candidate_tuples(solve(w, inst).feasible_candidates, 2)
    assert 20 == len({(s, e) for _, s, e, _ in RULE_BREAKERS})
    caught = []
    for what, start, end, _ in RULE_BREAKERS:
        metrics = score(gold, parse_answer(answer([*STRICT_GOLD[:-1], (start, end)])))
        assert (7 / 8, 7 / 8, False) == (metrics.precision, metrics.recall, metrics.exact_match), what
        caught.append(what)
    assert 20 == len(caught)


def without(w: dict[str, Any], inst: dict[str, Any], rule: str) -> None:
    """Drop one policy rule type (from policy_tags) or one communication tag, in place."""
    if rule in STRICT_TAGS:
        del inst["sources"]["comm_tags"][rule]
    else:
        w["sources"]["policy_tags"]["P"]["rules"] = [r for r in STRICT_RULES if r["type"] != rule]


def on_the_grid(w: dict[str, Any], inst: dict[str, Any]) -> list[dict[str, str]]:
    """Every slot of the free-time grid, before any rule or tag."""
    off = OracleSettings(policy=False, comm=False)
    inst = copy.deepcopy(inst)
    inst["slots"]["num_options"] = solve(w, inst, off).all_feasible
    return solve(w, inst, off).feasible_candidates


@pytest.mark.parametrize("what, start, end, rule", RULE_BREAKERS, ids=[b[0] for b in RULE_BREAKERS])
def test_each_rule_breaking_answer_breaks_exactly_the_rule_it_names(what, start, end, rule):
    """The fixture is honest: the named rule alone rejects the option (without it, the option passes every other
    rule and tag and is on the grid). An option overlapping a busy event is off the grid and rejected by the buffer
    only (the buffer widens that very event); a wrong duration or an off-grid start passes every rule and tag and is
    off the grid."""
    w, inst = strict_case()
    people = inst["slots"]["participants"]
    option = [slot(MON, start, end)]
    on_grid = option[0] in on_the_grid(w, inst)
    if rule is None:
        assert not on_grid
        if "busy" in what:
            assert [] == apply_constraints(2, w, inst, people, option)
            without(w, inst, "buffer_min")
        assert option == apply_constraints(2, w, inst, people, option)
        return
    assert on_grid
    assert [] == apply_constraints(2, w, inst, people, option)
    without(w, inst, rule)
    assert option == apply_constraints(2, w, inst, people, option)


# -- time zones --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("day, offset", [("2026-03-09", "-04:00"), ("2026-03-06", "-05:00")])
def test_a_daylight_saving_zone_writes_each_dates_own_offset(day, offset):
    """America/New_York, naive level-1 times: Monday 2026-03-09 (after the spring change) is EDT, Friday 03-06 EST."""
    w = world(1, [{"type": "work_hours", "start": "09:00", "end": "18:00"}],
              {"person_001": [event(naive(day, "09:00"), naive(day, "09:30"))]}, tz="America/New_York")
    inst = instance(1, naive(day, "08:00"), naive(day, "10:30"), ["person_001"], 30)
    all_feasible(w, inst, [slot(day, "09:30", "10:00", offset=offset), slot(day, "09:45", "10:15", offset=offset),
                           slot(day, "10:00", "10:30", offset=offset)])


@pytest.mark.parametrize("day, start, end", [("2026-03-08", "00:30", "04:00"), ("2026-11-01", "00:30", "03:00")],
                         ids=["spring-forward", "fall-back"])
def test_a_window_across_a_dst_change_gives_only_slots_of_the_meetings_real_duration(day, start, end):
    """America/New_York, a Sunday night across a change: every 60-minute candidate lasts 60 real minutes and no two
    candidates are the same interval."""
    w = world(1, [], tz="America/New_York")
    inst = instance(1, naive(day, start), naive(day, end), ["person_001"], 60)
    inst["slots"]["num_options"] = solve(w, inst).all_feasible
    candidates = solve(w, inst).feasible_candidates
    spans = [(datetime.fromisoformat(c["start"]), datetime.fromisoformat(c["end"])) for c in candidates]
    assert [timedelta(minutes=60)] * len(spans) == [e - s for s, e in spans]
    assert len(spans) == len(set(spans))


def test_the_hand_built_worlds_and_instances_pass_the_loaders_checks():
    """The fixtures above are in the reference data's shape: the loader's checks find nothing wrong with them."""
    built = [(1, world(1, [{"type": "work_hours", "start": "09:00", "end": "18:00"}], OVERNIGHT),
              instance(1, *FRI_TO_SAT, ["person_001"], 30)),
             (2, *level2({"deadline": at(MON, "10:00")})), (2, *strict_case()),
             (3, world3([room("room_001", 5)]), instance3("09:00", "10:00", ["Alice", "Bob"], 60, sort_keys=["start"])),
             (3, world3([room("room_001", 5)], people=PEOPLE_ROWS), instance3("09:00", "10:00", ["Alice"], 60))]
    for level, w, inst in built:
        assert ([], []) == (world_problems(w, level), instance_problems(inst, w, level))


# -- errors ------------------------------------------------------------------------------------------------------------


def test_an_unknown_policy_rule_type_is_a_value_error_naming_it():
    """A rule type the oracle does not know stops it (it never silently ignores a rule)."""
    w = world(1, [{"type": "no_fridays"}])
    with pytest.raises(ValueError) as raised:
        solve(w, instance(1, naive(MON, "09:00"), naive(MON, "10:00"), ["person_001"], 30))
    assert "unknown policy rule type 'no_fridays' (known: work_hours, lunch_block, buffer_min, ban_dow_time)" == str(
        raised.value)


@pytest.mark.parametrize("sources", [None, {"comm_thread_text": "No tags here."}], ids=["no-sources", "no-tags"])
def test_a_level_two_instance_without_comm_tags_is_a_value_error(sources):
    """Level 2 reads its communication constraints from sources.comm_tags only; without it there is no gold."""
    w = world(2, [], policy_text="Policy.")
    inst = instance(2, at(MON, "09:00"), at(MON, "10:00"), ["person_001"], 30, sources=sources)
    with pytest.raises(ValueError) as raised:
        solve(w, inst)
    assert "a level-2 instance needs sources.comm_tags" == str(raised.value)
    assert [slot(MON, "09:00", "09:30")] == solve(w, inst, OracleSettings(comm=False)).feasible_candidates


def test_a_policy_id_missing_from_the_world_is_a_value_error_naming_the_source():
    """Level 1 reads policy_json; a policy_id it lacks is named with where it was looked for."""
    w = world(1, [])
    inst = instance(1, naive(MON, "09:00"), naive(MON, "10:00"), ["person_001"], 30)
    inst["slots"]["policy_id"] = "POLICY_9"
    with pytest.raises(ValueError) as raised:
        solve(w, inst)
    assert "policy 'POLICY_9' is not in the world's sources.policy_json" == str(raised.value)
