"""The level generator: deterministic, valid by the loaders' checks, labelled by the oracle, readable by rules."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from mpcbench_async._exceptions import InputError
from mpcbench_async.levels._data import discover, instance_problems, load_level_set, world_problems
from mpcbench_async.levels._generate import NAME_POOL, GeneratedSet, generate_level, render_validity, write_generated
from mpcbench_async.levels._oracle import CONSTRAINT_TYPES, POLICY_RULES, solve
from mpcbench_async.levels._times import format_instant, zone

TEN_X = {1: 200, 2: 150, 3: 100}  # ten times the original exp1 sets (20, 15, 10)
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


@pytest.fixture(scope="module")
def ten_x() -> dict[int, GeneratedSet]:
    return {level: generate_level(level, count, seed=11) for level, count in TEN_X.items()}


def files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def assert_labelled(gs: GeneratedSet) -> None:
    """Every instance is valid for its world, and its oracle line is the oracle's, with the full N candidates."""
    assert [] == world_problems(gs.world, gs.level)
    assert len(gs.instances) == len(gs.oracle)
    for instance, line in zip(gs.instances, gs.oracle, strict=True):
        assert [] == instance_problems(instance, gs.world, gs.level)
        result = solve(gs.world, instance)
        assert not result.discarded
        assert result.line() == line
        wanted = 3 if gs.level == 3 else instance["slots"]["num_options"]
        assert wanted == len(line["feasible_candidates"])


# -- determinism -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", [1, 2, 3])
def test_the_same_arguments_write_byte_identical_files(level, tmp_path):
    write_generated(generate_level(level, 25, seed=4), tmp_path / "a")
    write_generated(generate_level(level, 25, seed=4), tmp_path / "b")
    first = files(tmp_path / "a")
    assert sorted(first) == [f"instances_level{level}_gen_s4.jsonl", f"oracle_level{level}_gen_s4.jsonl",
                             f"validity_level{level}_gen_s4.json", f"world_level{level}_gen_s4.json"]
    assert first == files(tmp_path / "b")


@pytest.mark.parametrize("level", [1, 2, 3])
def test_another_seed_gives_another_world_and_other_instances(level):
    one, two = generate_level(level, 10, seed=1), generate_level(level, 10, seed=2)
    assert one.world["sources"] != two.world["sources"]
    assert [i["slots"] for i in one.instances] != [i["slots"] for i in two.instances]
    assert "gen_s1" == one.split
    assert "gen_s2" == two.split


def test_a_larger_count_extends_a_smaller_one():
    """Worlds and instances come from separate streams: asking for more keeps the first ones."""
    small, large = generate_level(2, 10, seed=9), generate_level(2, 30, seed=9)
    assert small.world == large.world
    assert small.instances == large.instances[:10]
    assert small.oracle == large.oracle[:10]


# -- validity at ten times the original sizes --------------------------------------------------------------------------


@pytest.mark.parametrize("level", [1, 2, 3])
def test_ten_times_the_original_sizes_are_valid_and_labelled_by_the_oracle(ten_x, level):
    gs = ten_x[level]
    assert TEN_X[level] == len(gs.instances)
    assert len({i["instance_id"] for i in gs.instances}) == len(gs.instances)
    assert_labelled(gs)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_the_report_counts_draws_discards_and_constraints(ten_x, level):
    gs = ten_x[level]
    report = gs.report
    assert 1.0 == report.solvable
    assert TEN_X[level] == report.instances
    assert report.attempts == report.instances + report.discarded
    assert report.instances == sum(report.candidate_counts.values())
    assert set(CONSTRAINT_TYPES) == set(report.constraint_mix)
    # Each policy has rules of one type, so the policy-rule counts partition the instances.
    assert report.instances == sum(report.constraint_mix[r] for r in POLICY_RULES)
    for name, count in report.binding.items():
        assert 0 <= count <= report.constraint_mix.get(name, report.instances), name
    assert 0 == report.binding["deadline"]  # earliest-first gold: a deadline can only discard (module docstring)
    if level == 2:
        assert all(i["sources"]["comm_tags"] for i in gs.instances)
        assert report.binding["comm"] > 0
    if level == 3:
        assert report.instances == report.constraint_mix["room_capacity"]
        assert report.binding["room_capacity"] > 0
    assert report.binding["policy"] > 0


def test_the_participants_and_options_vary_as_documented(ten_x):
    sizes = {level: {len(i["slots"]["participants"]) for i in ten_x[level].instances} for level in TEN_X}
    assert {1: {2}, 2: {3}, 3: {3, 4, 5, 6}} == sizes
    assert {1, 2, 3, 4, 5} == {i["slots"]["num_options"] for i in ten_x[2].instances}
    assert {3} == {i["slots"]["num_options"] for i in ten_x[3].instances}
    assert {15, 30, 60} == {i["slots"]["duration_min"] for i in ten_x[1].instances}
    assert {"POLICY_1", "POLICY_2", "POLICY_3", "POLICY_4"} == {i["slots"]["policy_id"] for i in ten_x[3].instances}


def test_level_one_writes_naive_local_times_and_later_levels_offsets(ten_x):
    level1 = ten_x[1].world["sources"]["calendar_json"]["person_001"][0]["start"]
    level2 = ten_x[2].world["sources"]["calendar_json"]["person_001"][0]["start"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:00", level1)
    assert level2.endswith("+09:00")
    assert ten_x[1].instances[0]["slots"]["time_window"]["start"].count("+") == 0


def test_no_directory_name_contains_another():
    """The people search matches substrings, so "Eve" beside "Steven" would make a join ambiguous."""
    lowered = [n.lower() for n in NAME_POOL]
    assert [] == [(a, b) for a in lowered for b in lowered if a != b and a in b]


# -- files -------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", [1, 2, 3])
def test_written_sets_load_back_unchanged(ten_x, level, tmp_path):
    gs = ten_x[level]
    paths = write_generated(gs, tmp_path / "out")
    assert [p.name for p in paths] == [f"world_level{level}_gen_s11.json", f"instances_level{level}_gen_s11.jsonl",
                                       f"oracle_level{level}_gen_s11.jsonl", f"validity_level{level}_gen_s11.json"]
    assert [(level, "gen_s11")] == discover(tmp_path / "out")
    loaded = load_level_set(tmp_path / "out", level, "gen_s11")
    assert {} == loaded.invalid
    assert gs.world == loaded.world
    assert gs.instances == loaded.instances
    assert {line["instance_id"]: line for line in gs.oracle} == loaded.oracle
    for instance in loaded.instances[:20]:
        assert solve(loaded.world, instance).line() == loaded.oracle[instance["instance_id"]]
    assert [] == [p.name for p in (tmp_path / "out").iterdir() if p.name.endswith(".tmp")]


def test_writing_over_an_existing_set_is_refused_and_changes_nothing(tmp_path):
    gs = generate_level(1, 5, seed=3)
    write_generated(gs, tmp_path)
    before = files(tmp_path)
    with pytest.raises(InputError, match="refusing to overwrite"):
        write_generated(generate_level(1, 7, seed=3), tmp_path)
    assert before == files(tmp_path)


def test_one_existing_file_of_the_set_is_enough_to_refuse(tmp_path):
    (tmp_path / "validity_level2_mine.json").write_text("{}")
    with pytest.raises(InputError, match="validity_level2_mine.json"):
        write_generated(generate_level(2, 3, seed=3, split="mine"), tmp_path)
    assert ["validity_level2_mine.json"] == [p.name for p in tmp_path.iterdir()]


@pytest.mark.parametrize("kwargs, message", [
    ({"level": 4, "count": 1}, "level must be"),
    ({"level": 1, "count": 0}, "count must be"),
    ({"level": 1, "count": 1, "split": "../x"}, "split"),
    ({"level": 1, "count": 1, "timezone": "Mars/Olympus"}, "timezone"),
    ({"level": 1, "count": 1, "start_date": "19/01/2026"}, "start_date"),
])
def test_bad_arguments_are_input_errors(kwargs, message):
    with pytest.raises(InputError, match=message):
        generate_level(seed=1, **kwargs)


def test_the_validity_table_has_one_section_per_level(ten_x):
    text = render_validity([ten_x[3].report, ten_x[1].report])
    assert text.index("### Level 1 · gen_s11") < text.index("### Level 3 · gen_s11")
    assert "| room_capacity | 100 (100%) |" in text
    assert "| deadline |" not in text.split("### Level 3")[0]  # a level-1 set has no communication tags


# -- time zones --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", [1, 2, 3])
def test_a_daylight_saving_zone_works(level):
    """America/New_York the week after the change to EDT: every instant of levels 2–3 is written at -04:00."""
    gs = generate_level(level, 15, seed=5, timezone="America/New_York", start_date="2026-03-09")
    assert_labelled(gs)
    assert "America/New_York" == gs.world["timezone"]
    candidates = [c["start"] for line in gs.oracle for c in line["feasible_candidates"]]
    assert all(c.endswith("-04:00") for c in candidates)
    event = gs.world["sources"]["calendar_json"]["person_001"][0]["start"]
    assert event.startswith("2026-03-")
    assert event.endswith("-04:00") if level > 1 else "-" not in event[10:]


def test_a_week_across_the_change_keeps_each_dates_own_offset():
    """Thursday 2026-03-05 to Wednesday 03-11 spans the switch (Sunday 03-08): both offsets, each on its own dates."""
    gs = generate_level(2, 40, seed=6, timezone="America/New_York", start_date="2026-03-05")
    assert_labelled(gs)
    starts = [i["slots"]["time_window"]["start"] for i in gs.instances]
    assert {s[:10] for s in starts} <= {"2026-03-05", "2026-03-06", "2026-03-09", "2026-03-10", "2026-03-11"}
    for start in starts:
        assert start.endswith("-05:00" if start[:10] < "2026-03-08" else "-04:00")


# -- the texts state everything, in the documented templates -----------------------------------------------------------


def read_policy_text(text: str) -> dict[str, dict[str, Any]]:
    """A rule-based reader of the policy document (module docstring templates), section k → POLICY_k."""
    policies: dict[str, dict[str, Any]] = {}
    for k, policy_id, body in re.findall(r"^Section (\d): [^(\n]+ \((POLICY_\d)\) — (.+)$", text, re.M):
        assert policy_id == f"POLICY_{k}"
        rules: list[dict[str, Any]] = []
        if m := re.fullmatch(r"Meetings must start and end between (\d\d:\d\d) and (\d\d:\d\d) on weekdays\.", body):
            rules.append({"type": "work_hours", "start": m[1], "end": m[2], "days_of_week": [0, 1, 2, 3, 4]})
        elif m := re.fullmatch(r"No meetings from (\d\d:\d\d) to (\d\d:\d\d) on weekdays\.", body):
            rules.append({"type": "lunch_block", "start": m[1], "end": m[2], "days_of_week": [0, 1, 2, 3, 4]})
        elif m := re.fullmatch(r"Leave at least (\d+) minutes between the meeting and any other event of each "
                               r"participant\.", body):
            rules.append({"type": "buffer_min", "minutes": int(m[1])})
        else:
            for day, start, end in re.findall(r"No meetings on (\w+) from (\d\d:\d\d) to (\d\d:\d\d)\.", body):
                rules.append({"type": "ban_dow_time", "day_of_week": WEEKDAYS.index(day), "start": start, "end": end})
        policies[policy_id] = {"rules": rules}
    return policies


@pytest.mark.parametrize("level", [2, 3])
def test_the_policy_text_states_every_rule_exactly(ten_x, level):
    world = ten_x[level].world
    assert world["sources"]["policy_tags"] == read_policy_text(world["sources"]["policy_text"])


@pytest.mark.parametrize("seed", range(5))
def test_policy_texts_of_other_seeds_read_back_too(seed):
    world = generate_level(3, 1, seed=seed).world
    assert world["sources"]["policy_tags"] == read_policy_text(world["sources"]["policy_text"])


def read_thread(text: str, tz: str) -> tuple[int, dict[str, Any]]:
    """A rule-based reader of the level-2 thread: (the policy section it names, the tags it states)."""
    def at(day: str, hhmm: str) -> str:
        return format_instant(datetime.fromisoformat(f"{day}T{hhmm}:00").replace(tzinfo=zone(tz)), tz)

    def windows(day: str, listed: str) -> list[dict[str, str]]:
        return [{"start": at(day, s), "end": at(day, e)} for s, e in re.findall(r"(\d\d:\d\d)-(\d\d:\d\d)", listed)]

    tags: dict[str, Any] = {}
    if m := re.search(r"Deadline: the meeting must start no later than (\d\d:\d\d) on (\d{4}-\d\d-\d\d)\.", text):
        tags["deadline"] = at(m[2], m[1])
    if m := re.search(r"Blocked: the meeting must not overlap any of these times on (\S+): ([\d:, -]+)\.", text):
        tags["ban_windows"] = windows(m[1], m[2])
    if m := re.search(r"Required: the meeting must fit entirely inside one of these times on (\S+): ([\d:, -]+)\.",
                      text):
        tags["required_windows"] = windows(m[1], m[2])
    section = re.search(r"Per company policy, Section (\d) \(([^)]+)\) applies to this meeting\.", text)
    assert section is not None, text
    assert f"All times are local ({tz})." in text
    return int(section[1]), tags


@pytest.mark.parametrize("timezone, start_date", [("Asia/Seoul", "2026-01-19"), ("America/New_York", "2026-03-09")])
def test_the_level_two_thread_names_the_policy_section_and_states_the_tags(ten_x, timezone, start_date):
    gs = ten_x[2] if timezone == "Asia/Seoul" else generate_level(2, 30, seed=8, timezone=timezone,
                                                                   start_date=start_date)
    for instance in gs.instances:
        section, tags = read_thread(instance["sources"]["comm_thread_text"], timezone)
        assert instance["slots"]["policy_id"] == f"POLICY_{section}"
        assert instance["sources"]["comm_tags"] == tags


def test_the_level_three_task_thread_states_the_slots(ten_x):
    pattern = re.compile(
        r"Participants: (?P<names>[^.]+)\. Time window: (?P<start>\S+) to (?P<end>\S+)\. Duration: (?P<minutes>\d+) "
        r"minutes\. We must follow organizational rules (?P<policy>POLICY_\d) \(Section (?P<k>\d) of the meeting "
        r"policy document\)\. Please provide 3 options.*Sort order: earliest start, then earliest end, then smallest "
        r"room_id\.")
    for instance in ten_x[3].instances:
        threads = instance["sources"]["comm_threads"]
        assert 2 == len(threads)
        task = [t for t in threads if t["thread_tags"]]
        assert [{"sort_spec": {"keys": ["start", "end", "room_id"]}}] == [t["thread_tags"] for t in task]
        m = pattern.search(task[0]["thread_text"])
        assert m is not None
        slots = instance["slots"]
        assert slots["participants"] == m["names"].split(", ")
        assert slots["time_window"] == {"start": m["start"], "end": m["end"]}
        assert slots["duration_min"] == int(m["minutes"])
        assert slots["policy_id"] == m["policy"] == f"POLICY_{m['k']}"
