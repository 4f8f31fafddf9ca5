"""The agent tool loop and the judge, driven by the scripted sim over real HTTP."""

from __future__ import annotations

import dataclasses
from datetime import datetime, time
from zoneinfo import ZoneInfo

import msgspec
import orjson
import pytest

from mpcbench_async._exceptions import InputError
from mpcbench_async._prompts import PromptTemplate
from mpcbench_async.mpcbench import (
    ScenarioData,
    Task,
    agent_messages,
    build_judge_input,
    load_prompts,
    run_agent,
    run_judge,
)
from tests.conftest import REPO

PROMPTS = load_prompts(REPO / "prompt_config.json")
TZ = ZoneInfo("Asia/Kolkata")
DATA = ScenarioData(
    scenario_id="sc_t", world_state={}, tz=TZ, reference_now=datetime(2025, 8, 19, 11, 40, tzinfo=TZ),
    workday_start=time(10), workday_end=time(19),
    sources={
        "slack": {"channels": [{"id": "C1", "name": "payouts"}],
                  "users": [{"id": "U1", "name": "Asha Rao", "email": "asha@q.io"}],
                  "messages": [{"id": "m1", "channel_id": "C1", "user_id": "U1",
                                "text": "Instant settlement launch review next week, 45 minutes",
                                "timestamp": "2025-08-18T12:00:00+05:30"}]},
        "gmail": {"threads": []}, "calendar": {"calendars": [], "events": []},
        "contacts": {"contacts": [{"id": "c1", "name": "Asha Rao", "email": "asha@q.io"}]},
        "jira": {"projects": [], "issues": []}, "drive": {"files": []},
    },
)


TASK_A = Task(task_id="a", scenario_id="sc_t", task_type="planning", user_prompt="Plan the review.",
              answer_requirements=[])
TASK_B = Task(task_id="b", scenario_id="sc_t", task_type="planning", user_prompt="Find a slot.",
              answer_requirements=[])


def task_with_script(steps: list[dict]) -> Task:
    return Task(task_id="t1", scenario_id="sc_t", task_type="planning", answer_requirements=["Proposes a slot."],
                user_prompt="Find a slot. SIM_SCRIPT: " + orjson.dumps(steps).decode())


async def agent(make_client, steps, **kw):
    return await run_agent(make_client("native"), "sim/scripted", task_with_script(steps), DATA, PROMPTS,
                           key="k", **kw)


class TestAgentLoop:
    async def test_tool_calls_then_final_answer(self, make_client):
        """Parallel tool calls run in order, their results are logged, and the JSON final answer is extracted."""
        steps = [{"tool_calls": [{"name": "Slack_search_messages", "arguments": {"query": "launch review"}},
                                 {"name": "GoogleContacts_SearchContactsByName", "arguments": {"name": "Asha"}}]},
                 {"content": 'Here it is:\n```json\n{"final_answer": "Tue 10:00-10:45", "rationale": "slack"}\n```'}]
        run = await agent(make_client, steps)
        assert ("final", 2, "Tue 10:00-10:45", "slack", "json") == (
            run.stop_reason, run.turns, run.final_answer, run.rationale, run.final_answer_format)
        assert ['Step 1: Slack.search_messages({"query":"launch review"})',
                'Step 2: GoogleContacts.SearchContactsByName({"name":"Asha"})'] == run.tool_trace_steps
        assert "Asha Rao" == run.raw_tool_calls[0].result["messages"][0]["author"]
        assert [{"name": "Asha Rao", "email": "asha@q.io"}] == run.raw_tool_calls[1].result["contacts"]
        assert run.usage.total_tokens > 0

    async def test_bad_arguments_and_unknown_tools_do_not_end_the_run(self, make_client):
        """Invalid arguments, broken JSON and unknown tools come back as errors in the log; the run goes on."""
        steps = [{"tool_calls": [{"name": "Slack_search_messages", "arguments": {"query": 7}},
                                 {"name": "Teleport_now", "arguments": {}},
                                 {"name": "Gmail_GetThread", "arguments": "{not json"}]},
                 {"content": '{"final_answer": "done", "rationale": "r"}'}]
        run = await agent(make_client, steps)
        assert "final" == run.stop_reason
        assert [
            {"error": "invalid arguments for Slack.search_messages: Expected `str`, got `int` - at `$.query`"},
            {"error": "unknown tool 'Teleport_now'; available tools: Slack_search_messages, "
                      "GoogleContacts_SearchContactsByName, GoogleCalendar_FindTimeSlotsWhenEveryoneIsFree, "
                      "GoogleCalendar_ListEvents, Gmail_SearchThreads, Gmail_GetThread, GoogleDrive_gdrive_search, "
                      "GoogleDrive_gdrive_read_file, Jira_SearchIssuesWithJql"},
        ] == [c.result for c in run.raw_tool_calls[:2]]
        assert "{not json" == run.raw_tool_calls[2].arguments
        assert run.raw_tool_calls[2].result["error"].startswith("invalid arguments for Gmail.GetThread: not a JSON")

    async def test_oversized_arguments_are_refused_to_the_model_and_logged_bounded(self, make_client):
        """1 MB of arguments is not run: the model gets an error naming the cap, the run goes on, and the log keeps
        a marked head (the record is a few KB, not the 20 MB it was)."""
        query = "\x01" * 1_000_000  # 6 bytes each once escaped: the worst case for the log
        sent = orjson.dumps({"query": query}).decode()  # the arguments as the model sends them, 6 MB
        size = len(sent)
        steps = [{"tool_calls": [{"name": "Slack_search_messages", "arguments": {"query": query}},
                                 {"name": "Slack_search_messages", "arguments": {"query": "launch review"}}]},
                 {"content": '{"final_answer": "done", "rationale": "r"}'}]
        run = await agent(make_client, steps)
        big, small = run.raw_tool_calls
        assert ("final", {"error": f"the arguments of Slack.search_messages are {size:,} bytes; at most 16,384 are "
                                   "accepted, so the call was not run. Call it again with shorter arguments (a "
                                   "shorter query, fewer names)"}) == (run.stop_reason, big.result)
        assert (True, size, False, 0) == (big.arguments_truncated, big.arguments_bytes, small.arguments_truncated,
                                          small.arguments_bytes)
        assert big.arguments == (sent[:200] + f"… [truncated: {size:,} bytes of arguments, over the 16,384-byte "
                                 "limit; the call was not run]")
        assert {"query": "launch review"} == small.arguments and "Asha Rao" in orjson.dumps(small.result).decode()
        logged = msgspec.structs.replace(run, user_prompt="")  # the test's prompt carries the script itself
        assert len(msgspec.json.encode(logged)) < 8_000

    async def test_arguments_at_the_cap_are_run(self, make_client):
        """Arguments of exactly 16 KiB are within the cap: the tool runs and the log keeps them whole."""
        query = "launch review " + "x" * (16 * 1024 - len('{"query":"launch review "}'))
        steps = [{"tool_calls": [{"name": "Slack_search_messages", "arguments": {"query": query}}]},
                 {"content": '{"final_answer": "done", "rationale": "r"}'}]
        run = await agent(make_client, steps)
        assert 16 * 1024 == len(orjson.dumps(run.raw_tool_calls[0].arguments))
        assert ({"query": query}, False) == (run.raw_tool_calls[0].arguments, run.raw_tool_calls[0].arguments_truncated)
        assert "error" not in run.raw_tool_calls[0].result

    async def test_non_json_final_answer_is_kept_as_text(self, make_client):
        """A prose final answer does not end the run badly: it is kept verbatim and marked as text."""
        run = await agent(make_client, [{"content": "Tuesday at 10 works."}])
        assert ("final", "Tuesday at 10 works.", "", "text") == (
            run.stop_reason, run.final_answer, run.rationale, run.final_answer_format)

    async def test_max_turns_stops_a_looping_model(self, make_client):
        """A model that never stops calling tools is cut off at max_turns."""
        steps = [{"tool_calls": [{"name": "Slack_search_messages", "arguments": {"query": "x"}}]}]
        run = await agent(make_client, steps, max_turns=3)
        assert ("max_turns", 3, 3, "none") == (run.stop_reason, run.turns, len(run.raw_tool_calls),
                                                run.final_answer_format)

    async def test_model_failure_is_recorded_as_error(self, make_client):
        """A model call that fails for good ends the run with stop_reason error and the message."""
        client = make_client("native")
        run = await run_agent(client, "sim/scripted?fault=401&fail_first=9", task_with_script([]), DATA, PROMPTS,
                              key="k")
        assert "error" == run.stop_reason
        assert run.error.endswith("HTTP 401: simulated: invalid API key provided")

    async def test_system_prompt_carries_the_reference_now(self, make_client, monkeypatch):
        """The agent is told the scenario's now and time zone, not the wall clock."""
        client = make_client("native")
        seen = []
        real = client.chat

        async def spy(model, messages, tools=None, **kw):
            seen.append(messages[0].content)
            return await real(model, messages, tools, **kw)

        monkeypatch.setattr(client, "chat", spy)
        await run_agent(client, "sim/scripted", task_with_script([{"content": "{}"}]), DATA, PROMPTS, key="k")
        assert "Current date and time: Tuesday 2025-08-19 11:40 (Asia/Kolkata, UTC+05:30)." in seen[0]


def test_opening_messages_are_rendered_once_per_task_and_template_and_follow_an_edited_template():
    """Every trial of a task opens with the same two texts (kept with the data after the first rendering), in
    new ``Message`` objects each time; a template edited in place, or another task's prompt, renders anew."""
    data = dataclasses.replace(DATA)  # nothing derived yet
    prompts = load_prompts(REPO / "prompt_config.json")
    first, second = agent_messages(TASK_A, data, prompts), agent_messages(TASK_A, data, prompts)
    assert [("system", first[0].content), ("user", "Plan the review.")] == [(m.role, m.content) for m in second]
    assert (first[0].content, "Plan the review.") == data.derived("agent_texts", dict)[
        ("Plan the review.", prompts.agent.system, "{user_prompt}")]
    assert "Current date and time: Tuesday 2025-08-19 11:40 (Asia/Kolkata, UTC+05:30)." in first[0].content
    assert first[0] is not second[0] and first[1] is not second[1]
    assert "Find a slot." == agent_messages(TASK_B, data, prompts)[1].content
    prompts.agent.user = "Task: {user_prompt} ({timezone})"  # a template edited in place
    assert "Task: Plan the review. (Asia/Kolkata)" == agent_messages(TASK_A, data, prompts)[1].content
    prompts.agent = None
    with pytest.raises(InputError, match=r"\$\.agent is missing"):
        agent_messages(TASK_A, data, prompts)


class TestJudge:
    async def test_malformed_replies_are_retried_then_unscored(self, make_client):
        """A judge that never returns valid scores is recorded unscored after its attempts, never as 0, with the
        error class that makes the sweep count it as an error."""
        run = await agent(make_client, [{"content": '{"final_answer": "a", "rationale": "b"}'}])
        judge_input = build_judge_input(run, task_with_script([]))
        script = orjson.dumps([{"content": '{"answer_requirements_satisfaction": {"score": 9, "justification": "x"}}'}])
        prompts = msgspec.structs.replace(PROMPTS, judge=PromptTemplate(
            system="SIM_SCRIPT: " + script.decode().replace("{", "{{").replace("}", "}}"), user=PROMPTS.judge.user))
        judgement = await run_judge(make_client("native"), "sim/scripted", judge_input, prompts,
                                    agent_model="sim/scripted", scenario_id="sc_t", max_attempts=2, key="j")
        assert ("unscored", None, 2) == (judgement.verdict, judgement.scores, judgement.attempts)
        assert judgement.problems[0].startswith("invalid judge output: Expected `int` <= 5")
        assert ("UnparsableJudgement", f"judge sim/scripted gave no parsable judgement in 2 tries; the last reply: "
                f"{judgement.problems[-1]}") == (judgement.error_class, judgement.error)

    async def test_sim_judge_scores_lazy_agent_low(self, make_client):
        """sim/judge gives an ungrounded answer with no tool calls a grounding score of at most 1."""
        client = make_client("native")
        task = Task(task_id="t2", scenario_id="sc_t", task_type="email_reply", user_prompt="When does X ship?",
                    answer_requirements=["States the release window from Jira."])
        run = await run_agent(client, "sim/lazy-agent", task, DATA, PROMPTS, key="lazy")
        judgement = await run_judge(client, "sim/judge", build_judge_input(run, task), PROMPTS,
                                    agent_model="sim/lazy-agent", scenario_id="sc_t", key="jl")
        assert ("final", "scored") == (run.stop_reason, judgement.verdict)
        assert judgement.scores.source_grounded_reasoning.score <= 1


@pytest.mark.parametrize("answer", ["", "   "])
def test_empty_answer_scores_zero_with_sim_rubric(answer):
    """The sim rubric gives an empty answer 0 on both axes."""
    from mpcbench_async.mpcbench._sim._judge_policy import judge_scores

    scores = judge_scores({"final_answer": answer, "tool_trace": [], "answer_requirements": ["x"]})
    assert (0, 0) == (scores["answer_requirements_satisfaction"]["score"], scores["source_grounded_reasoning"]["score"])
