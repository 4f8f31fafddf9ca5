"""Fuzzed inputs (tasks, model configs, prompt templates, case ids) either survive a run or are refused at load.

Hypothesis mutates a valid task (or model config) with the fuzz classes of issue 12: bad dates, wrong types
(numbers for strings and back, lists for objects), deep nesting, ``../`` and 1,000-character ids, unicode and
control characters, unknown keys, broken JSON. A file that loads is then used as a sweep uses it: the agent runs
on it through the embedded sim (real HTTP), the deterministic checks read several answers, the judge input is
built and judged; a config that loads serves a real call. Anything else must be an ``InputError`` whose message
names the file — never another exception.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mpcbench_async import InputError, LLMClient, LLMError, load_model_config, load_prompts
from mpcbench_async.mpcbench import build_judge_input, evaluate_task, load_task, run_checks
from mpcbench_async.mpcbench._data import load_scenario_data
from mpcbench_async.records import Message
from mpcbench_async.tariff import load_case
from mpcbench_async.tariff._fixtures import fixture_path
from mpcbench_async.testing import write_workspace
from tests.conftest import REPO
from tests.tariff.conftest import make_case

FUZZ = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

ANSWERS = [
    "",
    "How about Wednesday 2026-03-25 10:00-10:30 or Thursday 2026-03-26 14:00–14:45 with Ana Ruiz (ana@x.io)?",
    "The feature is planned for the week of 2026-04-06; dates may change. I'll follow up by Dec 5.",
    "Bugs closed: 17. Latency down 12%, API calls up 34% (was 20%).",
]

BASES: dict[str, dict[str, Any]] = {
    "planning": {"facts": {"planning": {"participants": ["ana@x.io", "Ana Ruiz"], "duration_minutes": 30,
                                        "window_start": "2026-03-30", "window_end": "2026-04-03"}}},
    "email_reply": {"facts": {"issue_key": "AB-1", "target_date": "2026-04-08"},
                    "data_dependencies": {"jira_issue_key": "AB-1"}},
    "document_generation": {"facts": {"metrics": {"bugs_closed": 17, "latency_change_percent": -12}}},
}

FIELDS = [
    ("task_id",), ("scenario_id",), ("task_type",), ("user_prompt",), ("answer_requirements",),
    ("answer_requirements", 0), ("expected_tool_sequence",), ("expected_tool_sequence", 0),
    ("data_dependencies",), ("data_dependencies", "scenario_id"), ("data_dependencies", "jira_issue_key"),
    ("facts",), ("facts", "planning"), ("facts", "planning", "participants"),
    ("facts", "planning", "participants", 0), ("facts", "planning", "duration_minutes"),
    ("facts", "planning", "window_start"), ("facts", "planning", "window_end"), ("facts", "target_date"),
    ("facts", "issue_key"), ("facts", "metrics"), ("facts", "metrics", "bugs_closed"), ("colour",),
]

BAD_DATES = ["2025-13-01", "2025-02-30", "2026-03-30T25:00", "2026-03-30 and later", "tomorrow", "", "30/03/2026",
             "0001-01-01", "9999-12-31", "2026-03-30T09:00:00+01:00", "20260330", "2026-W14-1", "2026-04-03"]
IDS = ["../../etc/passwd", "a/b", "..", ".hidden", "x\\y", "x" * 1000, "é" * 150, "ok\x00nul", "tab\there",
       "line\nbreak", "sc_a", "sc_b", "日本語のタスク", "🙂" * 60]


class Deep:
    """A placeholder for an array nested ``depth`` levels, written directly as text (json.dumps would recurse)."""

    def __init__(self, depth: int) -> None:
        self.depth = depth


def scalars() -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
                     st.text(max_size=30), st.sampled_from(BAD_DATES), st.sampled_from(IDS))


def plausible() -> st.SearchStrategy[Any]:
    """Values of the right kind for some field, edge values included, so many fuzzed files load and then run."""
    dates = st.dates(min_value=date(2025, 1, 1), max_value=date(2027, 12, 31)).map(date.isoformat)
    words = st.text(min_size=1, max_size=40)
    return st.one_of(dates, st.integers(-5, 1500), words, st.lists(words, max_size=3),
                     st.dictionaries(words, st.floats(-1e6, 1e6), max_size=3), st.sampled_from(IDS))


def values() -> st.SearchStrategy[Any]:
    nested = st.recursive(scalars(), lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                             st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                          max_leaves=8)
    return st.one_of(plausible(), plausible(), nested, st.integers(1, 3000).map(Deep))


def encode(doc: Any) -> bytes:
    """JSON text of ``doc``; ``Deep`` placeholders become real nesting."""
    deep: list[Deep] = []

    def default(value: Any) -> str:
        deep.append(value)
        return f"__deep_{len(deep) - 1}__"

    text = json.dumps(doc, default=default, ensure_ascii=False)
    for index, value in enumerate(deep):
        text = text.replace(f'"__deep_{index}__"', "[" * value.depth + "]" * value.depth)
    return text.encode("utf-8", "surrogatepass")


def put(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    """Set ``doc[path]`` where the containers on the way exist and have the right kind; otherwise leave it."""
    for key in path[:-1]:
        if not ((isinstance(doc, dict) and isinstance(key, str) and key in doc)
                or (isinstance(doc, list) and isinstance(key, int) and key < len(doc))):
            return
        doc = doc[key]
    last = path[-1]
    if (isinstance(doc, dict) and isinstance(last, str)) or (
            isinstance(doc, list) and isinstance(last, int) and last < len(doc)):
        doc[last] = value


@st.composite
def task_files(draw: st.DrawFn) -> tuple[str, bytes]:
    kind = draw(st.sampled_from(sorted(BASES)))
    doc: dict[str, Any] = {"task_id": f"fuzz_{kind}", "scenario_id": "sc_a", "task_type": kind,
                           "user_prompt": "Find the release review details.",
                           "answer_requirements": ["Names the review and its length."],
                           "expected_tool_sequence": [{"tool": "Slack.search_messages", "reason": "find it"}],
                           **json.loads(json.dumps(BASES[kind]))}
    for _ in range(draw(st.integers(1, 2))):
        put(doc, draw(st.sampled_from(FIELDS)), draw(values()))
    raw = encode(doc)
    if draw(st.integers(0, 19)) == 0:  # now and then the bytes themselves are broken
        raw = draw(st.sampled_from([raw[: len(raw) // 2], raw + b"}", b"\xff\xfe" + raw, b"[]", b"null"]))
    return kind, raw


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = write_workspace(tmp_path_factory.mktemp("fuzz"), tasks=0, agent_models=("sim/oracle-agent",))
    prompts = load_prompts(root / "prompt_config.json")
    return root, load_scenario_data(root / "data", "sc_a"), prompts


def _refused_naming(exc: InputError, path: Path) -> None:
    assert str(path) in str(exc), str(exc)


@FUZZ
@given(case=task_files())
def test_a_fuzzed_task_loads_and_runs_or_is_refused_naming_its_file(world, case):
    """A fuzzed task file either survives a run (agent, checks, judge) or is refused with an InputError naming it."""
    root, data, prompts = world
    kind, raw = case
    path = root / "tasks" / kind / "fuzzed.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    try:
        task = load_task(path)
    except InputError as exc:
        event("refused")
        _refused_naming(exc, path)
        return
    event("loaded")
    for answer in ANSWERS:
        assert all(c.status in ("pass", "fail", "n/a") for c in run_checks(task, answer, data))

    async def run() -> None:
        async with LLMClient(load_model_config(root / "model_config.json")) as client:
            evaluation = await evaluate_task(client, task, data, prompts, agent_model="sim/oracle-agent",
                                             judge_models=["sim/judge"], max_turns=4)
        assert evaluation.run.stop_reason in ("final", "max_turns")
        assert ["scored"] == [j.verdict for j in evaluation.judgements]
        assert task.answer_requirements == build_judge_input(evaluation.run, task)["answer_requirements"]

    anyio.run(run)


CONFIG_FIELDS = [
    ("params", "max_tokens"), ("params", "temperature"), ("params", "top_p"), ("params", "stop"), ("params", "seed"),
    ("params", "n"), ("params", "extra"), ("params", "response_format"), ("params",), ("limits", "max_concurrency"),
    ("limits", "rpm"), ("limits", "tpm"), ("limits",), ("retry", "max_attempts"), ("retry", "initial_backoff"),
    ("timeouts", "read_s"), ("prices", "input_per_1m"), ("headers", "X-Team"), ("headers",), ("base_url",),
    ("api_key_env",), ("model",), ("reasoning",), ("transport",), ("breaker", "failures"), ("colour",),
]


@st.composite
def config_files(draw: st.DrawFn) -> bytes:
    entry: dict[str, Any] = {"params": {"max_tokens": 64, "temperature": 0}, "limits": {"max_concurrency": 4},
                             "retry": {"max_attempts": 2, "initial_backoff": 0.01}, "headers": {"X-Team": "eval"}}
    defaults: dict[str, Any] = {"params": {"temperature": 0.2}}
    for _ in range(draw(st.integers(1, 2))):
        target = draw(st.sampled_from([entry, defaults]))
        field = draw(st.sampled_from(CONFIG_FIELDS))
        if len(field) == 2 and not isinstance(target.get(field[0]), dict):
            target[field[0]] = {}
        put(target, field, draw(values()))
    odd_names = st.sampled_from(IDS).map(lambda i: f"sim/echo?{i}")
    name = draw(st.one_of(st.just("sim/echo"), st.just("sim/echo"), odd_names))
    doc = {"agent_models": [name], "judge_models": ["sim/judge"], "defaults": defaults, "models": {name: entry}}
    return encode(doc)


@FUZZ
@given(raw=config_files())
def test_a_fuzzed_model_config_serves_a_call_or_is_refused_naming_its_file(tmp_path_factory, raw):
    """A fuzzed model config either sends a real call (a model error is allowed) or is refused naming the file."""
    path = tmp_path_factory.mktemp("config") / "model_config.json"
    path.write_bytes(raw)
    try:
        config = load_model_config(path)
        model = config.agent_models[0]
        settings_ = config.settings_for(model)
        settings_.fingerprint()
    except InputError as exc:
        event("refused")
        _refused_naming(exc, path)
        return
    event("loaded")
    if settings_.base_url is not None or not model.startswith("sim/echo"):
        return  # would leave the machine (or name another model): loading and keying are what count here
    safe = config.with_overrides(model, {"limits": {"max_concurrency": 4, "rpm": None, "tpm": None},
                                         "retry": {"max_attempts": 1}, "timeouts": {"read_s": 10}})

    async def call() -> None:
        async with LLMClient(safe) as client:
            try:
                result = await client.chat(model, [Message(role="user", content="hello")])
            except LLMError:
                return  # the endpoint refused the params: a unit error at run time, not a crash
            assert result.content is not None

    anyio.run(call)


PIECES = ["{user_prompt}", "{now}", "{timezone}", "{{", "}}", "{", "}", "{user_prompt:>12}", "{user_prompt!r}",
          "{0}", "{}", "{now.year}", "{nope}", "{user_prompt:d}", "text ", "é ", "\n"]


@FUZZ
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=6))
def test_a_fuzzed_prompt_template_renders_or_is_refused_at_load(tmp_path_factory, pieces):
    """A fuzzed agent template either renders with the agent's values or is refused at load naming the file."""
    doc = json.loads((REPO / "prompt_config.json").read_text())
    doc["agent"]["user"] = "".join(pieces)
    path = tmp_path_factory.mktemp("prompts") / "prompt_config.json"
    path.write_text(json.dumps(doc))
    try:
        prompts = load_prompts(path)
    except InputError as exc:
        _refused_naming(exc, path)
        return
    values = {"now": "Tuesday 2026-03-24 11:00", "timezone": "Europe/London", "user_prompt": "Find {slots}.",
              "workday_start": "09:00", "workday_end": "18:00"}
    assert isinstance(prompts.render("agent", "user", **values), str)


@FUZZ
@given(case_id=st.one_of(st.sampled_from(IDS), st.text(max_size=250)))
def test_a_fuzzed_case_id_names_a_fixture_inside_the_directory_or_is_refused(tmp_path_factory, case_id):
    """A tariff case with a fuzzed id loads only when its fixture path stays inside the fixtures directory."""
    root = tmp_path_factory.mktemp("cases")
    path = root / "cases" / "positive" / "c.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(msgspec.json.encode(msgspec.to_builtins(make_case(id=case_id))))
    try:
        case = load_case(path)
    except InputError as exc:
        _refused_naming(exc, path)
        return
    fixtures = root / "fixtures"
    assert fixture_path(fixtures, case.id).resolve().parent == fixtures.resolve()


WORLD_KEYS = ["global_settings", "company", "timeline_events", "sub_scenarios_expanded", "projects", "reference_now"]
SOURCE_KEYS = [("slack", "messages"), ("slack", "users"), ("gmail", "threads"), ("calendar", "events"),
               ("calendar", "calendars"), ("contacts", "contacts"), ("jira", "projects"), ("jira", "issues"),
               ("drive", "files")]


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(world_key=st.sampled_from(WORLD_KEYS), source_key=st.sampled_from(SOURCE_KEYS), value=scalars(),
       in_world=st.booleans())
def test_fuzzed_data_kinds_load_and_run_or_are_refused(tmp_path_factory, world_key, source_key, value, in_world):
    """A scalar where the data has an object or array loads (read as empty) and a planning task runs on it."""
    root = write_workspace(tmp_path_factory.mktemp("data"), tasks=0, agent_models=("sim/oracle-agent",))
    data_dir = root / "data"
    name, key = ("world_state", world_key) if in_world else source_key
    path = data_dir / f"sc_a_{name}.json"
    path.write_bytes(encode(json.loads(path.read_text()) | {key: value}))
    try:
        data = load_scenario_data(data_dir, "sc_a")
    except InputError as exc:
        _refused_naming(exc, path)
        return
    task_path = root / "tasks" / "planning" / "t.json"
    task_path.parent.mkdir(parents=True)
    task_path.write_text(json.dumps({"task_id": "t", "scenario_id": "sc_a", "user_prompt": "Meet Ana next week.",
                                     "answer_requirements": ["Slots."], **BASES["planning"]}))
    task = load_task(task_path)
    for answer in ANSWERS:
        run_checks(task, answer, data)

    async def run() -> None:
        async with LLMClient(load_model_config(root / "model_config.json")) as client:
            evaluation = await evaluate_task(client, task, data, load_prompts(root / "prompt_config.json"),
                                             agent_model="sim/oracle-agent", judge_models=["sim/judge"], max_turns=4)
        assert "error" != evaluation.run.stop_reason

    anyio.run(run)
