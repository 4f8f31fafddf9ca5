"""Replay verification: do the original's recorded runs come out the same through this project?

``read_policy_document`` had two shapes in the original's history (``{"doc_id", "text", "tags": {}}`` in every
published run, ``{"doc_id", "title", "text"}`` in its latest code): a recorded result of either shape counts as
the same, so runs recorded with either version verify.

The tools answer as the original's did (``ToolOptions.original()``, its bugs
included: they made the recordings) unless told otherwise.

For each line of a recorded results file (``eval_L{N}_…jsonl``: ``instance_id``,
``metrics``, ``pred``, ``gold``, ``trace``) the recorded assistant turns are replayed
as the model's replies through this project's agent loop (``run_levels_agent`` with
a ``ReplaySource``), with this project's tools over today's data, and three things
are compared: every tool result (parsed JSON, paired by ``tool_call_id``), the
``pred`` its parser reads from the final message, and the ``metrics`` its scorer
gives against this project's oracle.

Recorded runs may belong to an *older world*: the original regenerated data after
some runs. A line is from an older world when its instance is gone, its recorded
gold differs from today's oracle, its user prompt differs from the one built
today, or one of its tool results quotes a value today's data does not hold
(a thread text that was since rewritten, say: the result has the shape this
project's tool gives, with a value today's data lacks). A line whose run raised in the
original (``error`` set, no ``trace``) has nothing to replay and is listed as such. Such lines are reported as such —
counted, named, their metrics checked against their own recorded gold — but they
do not decide the verdict: ``ok`` means every line whose world matches reproduced.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from .._exceptions import InputError
from .._prompts import PromptConfig
from ._agent import ReplaySource, agent_prompts, run_levels_agent
from ._answer import candidate_tuples, score
from ._data import LevelSet
from ._oracle import solve
from ._tools import LevelTools, ToolOptions, sanitize

__all__ = ["FileVerdict", "LineVerdict", "read_results", "render_verdicts", "verify_file", "verify_line"]

World = Literal["matches", "older", "missing", "unreplayable"]
_OFFSET = re.compile(r"(?<=\d)(?:Z|[+-]\d{2}:\d{2})$")


class LineVerdict(msgspec.Struct, kw_only=True):
    """One recorded line replayed: how its world stands and what came out the same."""

    line: int
    instance_id: str
    world: World
    why_older: str | None = None
    tool_calls: int = 0
    same_tools: int = 0
    older_calls: int = 0  # tool results that quote a value today's data lacks
    same_pred: bool = False
    same_metrics: bool = False
    differences: list[str] = msgspec.field(default_factory=list)

    @property
    def reproduced(self) -> bool:
        return self.same_tools + self.older_calls == self.tool_calls and self.same_pred and self.same_metrics


class FileVerdict(msgspec.Struct, kw_only=True):
    """One results file: its lines' verdicts and the totals of the table."""

    path: str
    lines: list[LineVerdict]

    @property
    def matching(self) -> list[LineVerdict]:
        return [v for v in self.lines if v.world == "matches"]

    @property
    def ok(self) -> bool:
        return all(v.reproduced and v.older_calls == 0 for v in self.matching)


def read_results(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The lines of a recorded results file; ``InputError`` naming the file and line for anything else."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError as exc:
            raise InputError(f"{path}:{number}: not valid JSON ({exc})") from exc
        if not isinstance(line, dict) or not isinstance(line.get("instance_id"), str):
            raise InputError(f"{path}:{number}: $.instance_id: missing (not a results line of MPCBench's run_eval)")
        if not isinstance(line.get("trace"), list) and not isinstance(line.get("error"), str):
            raise InputError(f"{path}:{number}: $.trace: missing or not a list (a run without its trace cannot be "
                             "replayed)")
        out.append((number, line))
    if not out:
        raise InputError(f"{path}: no results lines")
    return out


def _leaves(value: Any) -> Iterator[str]:
    """Every value in ``value`` as a string (time offsets dropped); error texts are the tool's words, not data."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k != "error":
                yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    elif value is not None:
        yield _OFFSET.sub("", value) if isinstance(value, str) else json.dumps(value)


def _shape(value: Any, at: str = "") -> Iterator[str]:
    """The key paths of ``value``, list positions left out: what a tool's code decides, whatever the data."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield f"{at}.{k}"
            yield from _shape(v, f"{at}.{k}")
    elif isinstance(value, list):
        for v in value:
            yield from _shape(v, f"{at}[]")


def _from_older_world(recorded: Any, mine: Any, data: set[str]) -> bool:
    """A result this project's tool would have given on another world: shaped the same, quoting a value that
    neither its own result nor today's data holds."""
    return set(_shape(recorded)) == set(_shape(mine)) and bool(set(_leaves(recorded)) - set(_leaves(mine)) - data)


def _tool_calls(trace: Sequence[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """Each recorded tool call's (id, name, arguments), in the order the loop runs them."""
    return [(str(c.get("id")), str(c.get("function", {}).get("name")), str(c.get("function", {}).get("arguments")))
            for m in trace if m.get("role") == "assistant" for c in m.get("tool_calls") or []]


def _tool_messages(trace: Sequence[dict[str, Any]]) -> list[tuple[str, Any]]:
    """Each tool message's (call id, parsed content), in order: paired by position, so a repeated id hides nothing."""
    out = []
    for message in trace:
        if message.get("role") == "tool":
            try:
                content = json.loads(message.get("content") or "null")
            except ValueError:
                content = message.get("content")
            out.append((str(message.get("tool_call_id")), content))
    return out


class _OtherVersion:
    """The original's other code version: ``read_policy_document`` shaped as its latest code shapes it (runs recorded
    with that code match it), or as the recorded runs saw it (when ``head_policy_doc`` is on)."""

    def __init__(self, world: dict[str, Any], instance: dict[str, Any], options: ToolOptions) -> None:
        self.tools = LevelTools(world, instance, msgspec.structs.replace(
            options, head_policy_doc=not options.head_policy_doc))

    def gives(self, call: tuple[str, str, str] | None, recorded: Any) -> bool:
        if call is None or call[1] != "read_policy_document":
            return False
        return bool(json.loads(self.tools.call(call[1], call[2])) == recorded)


async def verify_line(number: int, line: dict[str, Any], found: tuple[LevelSet, dict[str, Any]] | None,
                      prompts: PromptConfig, *, tool_options: ToolOptions | None = None,
                      normalize: bool = False) -> LineVerdict:
    """Replay one recorded line (see the module docstring)."""
    iid = line["instance_id"]
    if not isinstance(line.get("trace"), list):  # the original's run raised: it recorded the error and no trace
        return LineVerdict(line=number, instance_id=iid, world="unreplayable",
                           why_older=f"recorded error without a trace: {line.get('error')}")
    recorded_calls = _tool_messages(line["trace"])
    verdict = LineVerdict(line=number, instance_id=iid, world="missing", tool_calls=len(recorded_calls))
    if found is None:
        verdict.why_older = "instance not in today's data"
        verdict.older_calls = verdict.tool_calls
        return verdict
    level_set, instance = found
    options = tool_options or ToolOptions.original()
    gold = candidate_tuples(solve(level_set.world, instance).feasible_candidates, level_set.level)
    labelled = level_set.oracle.get(iid)  # today's label, when the data has one: the world's, not this oracle's
    today = candidate_tuples(labelled["feasible_candidates"], level_set.level) if labelled else gold
    if today != gold:
        verdict.differences.append(f"this project's oracle differs from today's label: ours {gold} | label {today}")
    recorded_gold = [tuple(g) for g in line.get("gold") or []]
    user = next((m.get("content") for m in line["trace"] if m.get("role") == "user"), None)
    reasons = []
    if line.get("gold") is not None and recorded_gold != today:
        reasons.append("recorded gold differs from today's oracle label")
    if user is not None and user != agent_prompts(prompts, instance)[1]:
        reasons.append("recorded user prompt differs from today's instance")
    run = await run_levels_agent(ReplaySource(line["trace"]), level_set.world, instance, prompts,
                                 tool_options=options)
    ours = _tool_messages(run.trace)
    calls = _tool_calls(line["trace"])
    data_leaves = set(_leaves(sanitize(level_set.world))) | set(_leaves(sanitize(instance)))
    other_version = _OtherVersion(level_set.world, instance, options)
    for position, (call_id, recorded) in enumerate(recorded_calls):
        mine = ours[position][1] if position < len(ours) else None
        call = calls[position] if position < len(calls) else None
        if mine == recorded or other_version.gives(call, recorded):
            verdict.same_tools += 1
        elif _from_older_world(recorded, mine, data_leaves):
            verdict.older_calls += 1
            verdict.differences.append(f"tool call {call_id}: its recorded result quotes data today's world lacks")
        else:
            verdict.differences.append(f"tool call {call_id}: result differs: ours {json.dumps(mine)[:300]} | "
                                       f"recorded {json.dumps(recorded)[:300]}")
    if verdict.older_calls:
        reasons.append(f"{verdict.older_calls} tool result(s) quote data today's world lacks")
    verdict.world = "older" if reasons else "matches"
    verdict.why_older = "; ".join(reasons) or None
    verdict.same_pred = run.pred == line.get("pred")
    if not verdict.same_pred:
        verdict.differences.append(f"pred differs: ours {run.pred} | recorded {line.get('pred')}")
    against = gold if verdict.world == "matches" else recorded_gold
    metrics = msgspec.to_builtins(score(against, [tuple(p) for p in run.pred], normalize=normalize))
    verdict.same_metrics = metrics == line.get("metrics")
    if not verdict.same_metrics:
        verdict.differences.append(f"metrics differ: ours {metrics} | recorded {line.get('metrics')}")
    verdict.same_metrics = verdict.same_metrics and today == gold
    return verdict


async def verify_file(path: Path, index: dict[str, tuple[LevelSet, dict[str, Any]]], prompts: PromptConfig, *,
                      tool_options: ToolOptions | None = None, normalize: bool = False) -> FileVerdict:
    """Replay every line of ``path`` against the instances of ``index`` (instance id → its set and instance)."""
    lines = [await verify_line(number, line, index.get(line["instance_id"]), prompts, tool_options=tool_options,
                               normalize=normalize) for number, line in read_results(path)]
    return FileVerdict(path=str(path), lines=lines)


def render_verdicts(verdicts: Sequence[FileVerdict]) -> str:
    """The per-file table of ``levels verify`` and, under it, every difference, named."""
    rows = ["| file | lines | world matches | older world | not replayed | same tool results | same pred | "
            "same metrics |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for v in verdicts:
        match = v.matching
        calls = sum(line.tool_calls for line in match)
        unreplayable = sum(line.world == "unreplayable" for line in v.lines)
        rows.append(f"| {Path(v.path).name} | {len(v.lines)} | {len(match)} | "
                    f"{len(v.lines) - len(match) - unreplayable} | {unreplayable} | "
                    f"{sum(line.same_tools for line in match)}/{calls} | {sum(line.same_pred for line in match)}/"
                    f"{len(match)} | {sum(line.same_metrics for line in match)}/{len(match)} |")
    notes = []
    for v in verdicts:
        for line in v.lines:
            name = f"{Path(v.path).name}:{line.line} {line.instance_id}"
            if line.world == "unreplayable":
                notes.append(f"not replayed {name}: {line.why_older}")
            elif line.world != "matches":
                notes.append(f"older world  {name}: {line.why_older} ({line.older_calls} of {line.tool_calls} tool "
                             f"calls from the older world; pred {'same' if line.same_pred else 'differs'}, metrics vs "
                             f"its recorded gold {'same' if line.same_metrics else 'differ'})")
                notes.extend(f"  differs    {name}: {d}" for d in line.differences if "lacks" not in d)
            elif not line.reproduced:
                notes.extend(f"MISMATCH     {name}: {d}" for d in line.differences)
        if v.lines and not v.matching:
            notes.append(f"nothing verified in {Path(v.path).name}: no line's world matches today's data")
    return "\n".join(rows + ([""] + notes if notes else []))
