"""Reading a final answer and scoring it as the original does: its parser's quirks, set-based scoring, and every
recorded GPT-4o line's pred and metrics reproduced."""

from __future__ import annotations

import ast
import json
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mpcbench_async._prompts import load_prompts
from mpcbench_async.levels._agent import ReplaySource, run_levels_agent
from mpcbench_async.levels._answer import AnswerError, Metrics, candidate_tuples, parse_answer, score
from mpcbench_async.levels._catalog import instance_index, load_all
from mpcbench_async.levels._verify import verify_line

REPO = Path(__file__).resolve().parents[2]
A = ("2026-01-19T09:00:00+09:00", "2026-01-19T09:30:00+09:00")
B = ("2026-01-19T09:15:00+09:00", "2026-01-19T09:45:00+09:00")
C = ("2026-01-19T09:30:00+09:00", "2026-01-19T10:00:00+09:00")
D = ("2026-01-19T11:00:00+09:00", "2026-01-19T11:30:00+09:00")


def candidates(*pairs: tuple[str, ...], **extra: Any) -> str:
    return json.dumps({"candidates": [{"start": p[0], "end": p[1], **extra} for p in pairs]})


# -- the parser --------------------------------------------------------------------------------------------------------


def test_json_in_a_fence_with_prose_before_and_after_is_read():
    """The system prompt asks for reasoning, then the JSON in a ```json block; text after it is ignored too."""
    content = (f"1. Constraints: 30 minutes, work hours.\n2. Filtering: 09:30 overlaps a meeting.\n\n```json\n"
               f"{candidates(A, B)}\n```\nLet me know if you need anything else.")
    assert [A, B] == parse_answer(content)


def test_a_brace_in_the_prose_before_the_json_spoils_the_answer():
    """The span starts at the first "{" anywhere: a brace in the reasoning makes it undecodable, and so is the whole
    text, so the answer has no candidates (the original's quirk, kept)."""
    content = f"Filtering: {{09:30}} was dropped.\n```json\n{candidates(A, B)}\n```"
    assert [] == parse_answer(content)


def test_trailing_commas_are_removed_on_the_second_try():
    """{"candidates": [{...},],} - the original's fix for a common model mistake."""
    content = (f'```json\n{{"candidates": [{{"start": "{A[0]}", "end": "{A[1]}",}}, {{"start": "{B[0]}", '
               f'"end": "{B[1]}"}},],}}\n```')
    assert [A, B] == parse_answer(content)


def test_two_json_objects_in_one_message_span_first_brace_to_last_and_give_nothing():
    """The span from the first "{" to the last "}" holds both objects: it does not decode (nor with commas fixed,
    nor as the whole text), so the answer has no candidates, as in the original (which returns [] there)."""
    content = f"Draft:\n```json\n{candidates(A)}\n```\nFinal:\n```json\n{candidates(B)}\n```"
    assert [] == parse_answer(content)


@pytest.mark.parametrize("content", [
    json.dumps([{"start": A[0], "end": A[1]}, {"start": B[0], "end": B[1]}]),
    "[1, 2]",
    '"just a string"',
    "42",
], ids=["array-of-candidates", "array-of-numbers", "string", "number"])
def test_json_that_is_not_an_object_is_an_answer_error(content):
    """The original calls .get on it and fails (its loop then asks again); here that is AnswerError."""
    with pytest.raises(AnswerError) as raised:
        parse_answer(content)
    kind = type(json.loads(content)).__name__
    assert f"the answer's JSON is a {kind}, not an object with candidates" == str(raised.value)


def test_an_array_holding_one_object_is_read_through_that_object():
    """[{"candidates": [...]}]: the first-"{"-to-last-"}" span is the inner object, which decodes."""
    assert [A] == parse_answer(f"[{candidates(A)}]")


@pytest.mark.parametrize("content", [
    f'{{"candidates": {{"start": "{A[0]}", "end": "{A[1]}"}}}}',
    '{"candidates": "none fit"}',
    '{"candidates": null}',
    f'{{"options": [{{"start": "{A[0]}", "end": "{A[1]}"}}]}}',
], ids=["object", "string", "null", "no-candidates-key"])
def test_candidates_that_are_not_a_list_give_nothing(content):
    """An object whose "candidates" is missing or not a list is an answer without candidates (no error)."""
    assert [] == parse_answer(content)


def test_candidates_without_a_start_or_with_an_empty_end_or_not_objects_are_skipped():
    """Each candidate needs truthy start and end; anything else in the list is dropped, the rest kept in order."""
    content = json.dumps({"candidates": [
        {"end": A[1]}, {"start": A[0], "end": ""}, {"start": "", "end": A[1]}, {"start": None, "end": A[1]},
        "09:00-09:30", [A[0], A[1]], {"start": B[0], "end": B[1]}, {"start": C[0], "end": C[1]},
    ]})
    assert [B, C] == parse_answer(content)


def test_a_null_room_id_gives_a_pair_and_any_other_room_id_a_triple():
    """room_id absent or null: (start, end); present: (start, end, str(room_id)), also when empty or a number."""
    content = json.dumps({"candidates": [
        {"start": A[0], "end": A[1], "room_id": None}, {"start": B[0], "end": B[1]},
        {"start": C[0], "end": C[1], "room_id": "room_002"}, {"start": D[0], "end": D[1], "room_id": 7},
        {"start": A[0], "end": A[1], "room_id": ""},
    ]})
    assert [A, B, (*C, "room_002"), (*D, "7"), (*A, "")] == parse_answer(content)


def test_non_string_values_become_their_python_str():
    """A number or a boolean becomes str() of the decoded value, as the original's str()."""
    content = '{"candidates": [{"start": 1, "end": 2.5}, {"start": true, "end": [1]}]}'
    assert [("1", "2.5"), ("True", "[1]")] == parse_answer(content)


@pytest.mark.parametrize("content", ["", "   ", "No slots fit all the constraints.", "```json\n```", "{not json}"])
def test_no_json_at_all_gives_nothing(content):
    """Prose, blanks, an empty fence or braces that are not JSON: no candidates (the loop asks again)."""
    assert [] == parse_answer(content)


def test_json_null_is_an_answer_error_like_any_other_non_object():
    """The message "null" is JSON that is not an object: AnswerError, as the module docstring says."""
    with pytest.raises(AnswerError):
        parse_answer("null")


# -- against the original's own parser ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def original_parser(upstream: Path) -> Any:
    """OpenAIAgent._parse_response and _parse_candidate, lifted from the original's source (the module itself needs
    the OpenAI client and python-dotenv)."""
    path = upstream / "evaluation" / "agents" / "openai_agent.py"
    source = path.read_text(encoding="utf-8")
    agent = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "OpenAIAgent")
    methods = [textwrap.indent(textwrap.dedent(ast.get_source_segment(source, n) or ""), "    ")
               for n in agent.body if isinstance(n, ast.FunctionDef) and n.name in ("_parse_response",
                                                                                     "_parse_candidate")]
    assert 2 == len(methods)
    text = ("import json\nimport re\nfrom typing import Any, Dict, List, Optional, Tuple, Union\n"
            "Candidate = Union[Tuple[str, str], Tuple[str, str, str]]\n\n\nclass Parser:\n" + "\n".join(methods))
    namespace: dict[str, Any] = {}
    exec(compile(text, str(path), "exec"), namespace)
    return namespace["Parser"]()


PARSER_CASES = [
    f"Reasoning first.\n```json\n{candidates(A, B)}\n```\nThat is all.",
    f'{{"candidates": [{{"start": "{A[0]}", "end": "{A[1]}",}},],}}',
    f"{candidates(A)}\n{candidates(B)}",
    f"[{candidates(A)}]",
    json.dumps([{"start": A[0], "end": A[1]}, {"start": B[0], "end": B[1]}]),
    "[1, 2]",
    '"text"',
    '{"candidates": "none"}',
    '{"candidates": [{"end": "x"}, {"start": "a", "end": ""}, "s", {"start": 1, "end": 2.5, "room_id": 3}]}',
    candidates(A, room_id=None),
    candidates(A, B, room_id="room_001"),
    "No JSON here.",
    "",
    "Thinking {about it} then {\"candidates\": []}",
    '```json\n{"candidates": [{"start": "a", "end": "b"}]\n```',
]


@pytest.mark.parametrize("content", PARSER_CASES)
def test_parse_answer_agrees_with_the_originals_parser(original_parser, content, capsys):
    """Differential: the same candidates where the original returns some; AnswerError where it raises."""
    try:
        expected: Any = original_parser._parse_response(content)
    except Exception as exc:  # the original's loop catches anything and asks again
        expected = type(exc)
    capsys.readouterr()  # the original prints why it skipped a candidate
    if isinstance(expected, list):
        assert expected == parse_answer(content)
    else:
        assert AttributeError is expected
        with pytest.raises(AnswerError):
            parse_answer(content)


# -- scoring -----------------------------------------------------------------------------------------------------------


def metrics(f1: float, precision: float, recall: float, exact: bool) -> Metrics:
    return Metrics(f1=f1, precision=precision, recall=recall, exact_match=exact)


def test_duplicates_count_once():
    """Set semantics: [a, a] against [a] is a perfect answer."""
    assert metrics(1.0, 1.0, 1.0, True) == score([A], [A, A])
    assert metrics(1.0, 1.0, 1.0, True) == score([A, A], [A])


def test_order_does_not_matter():
    """The same candidates in another order are an exact match."""
    assert metrics(1.0, 1.0, 1.0, True) == score([A, B, C], [C, A, B])


def test_empty_against_empty_is_perfect():
    """No gold and no prediction (a discarded instance answered with nothing) scores 1 on everything."""
    assert metrics(1.0, 1.0, 1.0, True) == score([], [])


def test_no_prediction_against_a_gold_scores_zero_and_a_prediction_against_no_gold_too():
    """One side empty and the other not: all zeros, no exact match (no division by zero)."""
    assert metrics(0.0, 0.0, 0.0, False) == score([A, B], [])
    assert metrics(0.0, 0.0, 0.0, False) == score([], [A])


def test_partial_overlap_gives_the_exact_fractions():
    """Gold a, b, c; predicted a, b and a wrong d: precision 2/3, recall 2/3, F1 2/3; a subset: precision 1."""
    assert metrics(2 / 3, 2 / 3, 2 / 3, False) == score([A, B, C], [A, B, D])
    assert metrics(0.8, 1.0, 2 / 3, False) == score([A, B, C], [A, B])
    assert metrics(2 * (0.5 * 1.0) / 1.5, 0.5, 1.0, False) == score([A], [A, D])


def test_a_pair_never_matches_a_triple():
    """A level-3 gold (with rooms) against the same times without rooms, and the other way round."""
    assert metrics(0.0, 0.0, 0.0, False) == score([(*A, "room_001")], [A])
    assert metrics(0.0, 0.0, 0.0, False) == score([A], [(*A, "room_001")])
    assert metrics(0.0, 0.0, 0.0, False) == score([(*A, "room_001")], [(*A, "room_002")])


def test_the_same_instant_in_another_offset_differs_by_default_and_matches_when_normalised():
    """"+09:00" and the same instant in "Z" are different strings to the original's scorer; normalize compares
    instants."""
    gold = [A, (*B, "room_001")]
    utc = [("2026-01-19T00:00:00Z", "2026-01-19T00:30:00Z"),
           ("2026-01-19T00:15:00+00:00", "2026-01-19T00:45:00+00:00", "room_001")]
    assert metrics(0.0, 0.0, 0.0, False) == score(gold, utc)
    assert metrics(1.0, 1.0, 1.0, True) == score(gold, utc, normalize=True)


def test_normalize_accepts_omitted_seconds_but_keeps_rooms_and_non_instants_exact():
    """"T09:00+09:00" is 09:00:00; a different room still differs; text that is not an instant stays as it is."""
    assert metrics(0.0, 0.0, 0.0, False) == score([A], [("2026-01-19T09:00+09:00", "2026-01-19T09:30+09:00")])
    assert metrics(1.0, 1.0, 1.0, True) == score([A], [("2026-01-19T09:00+09:00", "2026-01-19T09:30+09:00")],
                                                  normalize=True)
    assert metrics(0.0, 0.0, 0.0, False) == score([(*A, "room_001")], [(*A, "room_002")], normalize=True)
    assert metrics(1.0, 1.0, 1.0, True) == score([("soon", "later")], [("soon", "later")], normalize=True)


def test_candidate_tuples_are_pairs_at_levels_one_and_two_and_triples_at_level_three():
    """Oracle candidates become the tuples the scorer compares; a room_id is ignored below level 3."""
    gold = [{"start": A[0], "end": A[1], "room_id": "room_001"}]
    assert [A] == candidate_tuples(gold, 1) == candidate_tuples(gold, 2)
    assert [(*A, "room_001")] == candidate_tuples(gold, 3)


# -- the recorded runs -------------------------------------------------------------------------------------------------


def recorded_lines(results: list[Path]) -> list[tuple[str, int, dict[str, Any]]]:
    return [(path.name, number, json.loads(raw)) for path in results
            for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if raw.strip()]


def test_every_recorded_final_message_parses_to_the_recorded_pred_and_scores_the_recorded_metrics(results):
    """All 54 lines of the 11 files: the last assistant message with content and no tool calls, through parse_answer,
    is the recorded pred; scored against the recorded gold it gives the recorded metrics."""
    lines = recorded_lines(results)
    assert 11 == len(results)
    assert 54 == len(lines)
    for name, number, line in lines:
        finals = [m for m in line["trace"] if m["role"] == "assistant" and m.get("content") and not m.get("tool_calls")]
        pred = [list(c) for c in parse_answer(finals[-1]["content"])]
        assert line["pred"] == pred, (name, number)
        scored = score([tuple(g) for g in line["gold"]], [tuple(p) for p in line["pred"]])
        assert line["metrics"] == msgspec.to_builtins(scored), (name, number)


async def test_every_recorded_line_replays_through_the_agent_loop_to_its_pred(upstream, results):
    """The recorded assistant turns replayed through run_levels_agent (today's tools over today's data) give the
    recorded pred on all 54 lines: 53 end on a final answer, one (level-2 exp1 001 of the 143539 run, whose final
    messages never held candidates) runs out of its 15 turns with []. verify_line agrees on pred and metrics."""
    prompts = load_prompts(REPO / "prompt_config.json")
    index = instance_index(load_all(upstream))
    endings: Counter[str] = Counter()
    for name, number, line in recorded_lines(results):
        level_set, inst = index[line["instance_id"]]
        run = await run_levels_agent(ReplaySource(line["trace"]), level_set.world, inst, prompts)
        assert line["pred"] == run.pred, (name, number)
        endings[run.stop_reason] += 1
        if run.stop_reason == "max_turns":
            assert ("eval_L2_exp1_gpt-4o_20260202_143539.jsonl", "instance_level2_exp1_001", [], 15) == (
                name, line["instance_id"], run.pred, run.turns)
        verdict = await verify_line(number, line, (level_set, inst), prompts)
        assert (True, True) == (verdict.same_pred, verdict.same_metrics), (name, number, verdict.differences)
    assert {"final": 53, "max_turns": 1} == endings


@pytest.mark.parametrize("content", ['Draft: {"candidates": [], "id": ' + "9" * 4301 + "}",
                                     'x {"d": ' + "[" * 5000 + "]" * 5000 + "}"], ids=["huge-integer", "deep-nesting"])
def test_json_the_decoder_refuses_for_its_limits_is_no_answer_never_a_crash(content):
    """An integer over Python's digit limit or nesting past the recursion limit: no candidates (the original's loop
    asks again), not an exception out of the agent loop."""
    assert [] == parse_answer(content)


def test_a_whole_message_the_decoder_refuses_for_its_limits_is_an_answer_error():
    """Without braces the whole text is decoded; a refusal there is an AnswerError, as it made the original ask
    again."""
    with pytest.raises(AnswerError):
        parse_answer("9" * 4301)
