"""A sweep's kept units as OpenTelemetry GenAI traces, in one OTLP JSON file (an ``ExportTraceServiceRequest``).

One trace per unit, with ids derived from the unit's key (exporting twice gives the same ids):

- an agent run: the root span ``invoke_agent MODEL`` (``gen_ai.operation.name=invoke_agent``) over the run's
  time, with its usage, stop reason and checks; a child ``chat MODEL`` span (kind CLIENT) per recorded model
  call of the run (``calls.jsonl``, the calls its kept record made) over the call's queueing, retries and last
  attempt; and an ``execute_tool NAME`` span per tool call. The run log keeps no time per tool call, so those
  spans sit at the end of the run with no duration (``mpcbench.tool.timed = false``) and ``mpcbench.tool.step``
  gives their order;
- a judgement: the span ``chat JUDGE`` (``gen_ai.operation.name=chat``) with its usage and one
  ``gen_ai.evaluation.result`` event per scored axis (``gen_ai.evaluation.name``, ``.score.value``,
  ``.explanation``), linked to the run's root span, with its calls as children.

Names and attributes follow the OpenTelemetry GenAI semantic conventions (``gen_ai.*``); what they do not
cover is under ``mpcbench.*``. The JSON is OTLP/JSON as an OTLP receiver reads it: camelCase fields, enums as
numbers, 64-bit integers as strings and trace and span ids as hex strings (OTLP/JSON's one departure from
protobuf's JSON mapping, which would write them base64).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson

from .. import __version__
from ..records import LLMCallRecord
from ..runtime import atomic_write_bytes, iter_jsonl
from ..sweep import CALLS, KeptRun, kept_records

__all__ = ["export_otel", "otel_request"]

INTERNAL, CLIENT = 1, 3  # Span.SpanKind
STATUS_ERROR = 2  # Status.StatusCode
AXES = ("answer_requirements_satisfaction", "source_grounded_reasoning")


def export_otel(sweep_dir: str | Path, out_file: str | Path) -> int:
    """Write the sweep's traces to ``out_file`` (OTLP JSON); the number of traces (units) written."""
    request = otel_request(sweep_dir)
    atomic_write_bytes(out_file, orjson.dumps(request) + b"\n")
    return len({span["traceId"] for span in request["resourceSpans"][0]["scopeSpans"][0]["spans"]})


def otel_request(sweep_dir: str | Path) -> dict[str, Any]:
    """The sweep's kept units as one ``ExportTraceServiceRequest`` in OTLP/JSON form (see the module's docstring)."""
    sweep_dir = Path(sweep_dir)
    kept = kept_records(sweep_dir)
    calls = _calls(sweep_dir, {k.record.key for k in kept} | {j.key for k in kept for j in k.judgements})
    spans: list[dict[str, Any]] = []
    for run in kept:
        spans.extend(_run_spans(run, calls))
    resource = {"attributes": _attributes({"service.name": "mpcbench-async", "mpcbench.sweep": str(sweep_dir)})}
    scope = {"name": "mpcbench_async.export", "version": __version__}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": scope, "spans": spans}]}]}


def _calls(sweep_dir: Path, keys: set[str]) -> dict[str, list[LLMCallRecord]]:
    """The recorded model calls of each unit key (a call's key is its unit's, then ``/turnN`` or ``/tryN``)."""
    found: dict[str, list[LLMCallRecord]] = defaultdict(list)
    if (sweep_dir / CALLS).exists():
        for call in iter_jsonl(sweep_dir / CALLS, type_=LLMCallRecord):
            unit = call.key.split("/", 1)[0]
            if unit in keys:
                found[unit].append(call)
    return found


def _id(*parts: str, size: int) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:2 * size]


def _ns(at: float) -> str:
    return str(int(at * 1e9))


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def _attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in values.items() if value is not None]


def _span(trace: str, span: str, parent: str | None, name: str, kind: int, start: float, end: float,
          attributes: dict[str, Any], *, error: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"traceId": trace, "spanId": span, "name": name, "kind": kind,
                           "startTimeUnixNano": _ns(start), "endTimeUnixNano": _ns(max(start, end)),
                           "attributes": _attributes(attributes), **extra}
    if parent:
        out["parentSpanId"] = parent
    if error:
        out["status"] = {"code": STATUS_ERROR, "message": error}
    return out


def _unit_made(record: Any, call: LLMCallRecord) -> bool:
    """Whether the kept record made this call (an earlier, superseded attempt of the unit made the others)."""
    if not call.started_at or not record.started_at:
        return True
    return record.started_at <= call.started_at <= record.finished_at


def _call_spans(trace: str, parent: str, record: Any, calls: list[LLMCallRecord]) -> list[dict[str, Any]]:
    spans = []
    for call in calls:
        if not _unit_made(record, call):
            continue
        end = call.started_at + call.queued_s + call.retry_wait_s + call.latency_s
        error = f"{call.error_class}: {call.error_message}" if call.status == "error" else None
        spans.append(_span(trace, _id(call.key, call.call_id or "", str(call.started_at), size=8), parent,
                           f"chat {call.model}", CLIENT, call.started_at, end, {
                               "gen_ai.operation.name": "chat", "gen_ai.request.model": call.model,
                               "gen_ai.response.id": call.response_id,
                               "gen_ai.usage.input_tokens": call.usage.prompt_tokens,
                               "gen_ai.usage.output_tokens": call.usage.completion_tokens,
                               "error.type": call.error_class, "mpcbench.call.key": call.key,
                               "mpcbench.call.attempts": call.attempts, "mpcbench.call.cached": call.cached,
                               "mpcbench.call.cost_usd": call.cost_usd}, error=error))
    return spans


def _run_spans(kept: KeptRun, calls: dict[str, list[LLMCallRecord]]) -> list[dict[str, Any]]:
    record, run = kept.record, kept.record.run
    trace, root = _id(record.key, size=16), _id(record.key, "root", size=8)
    applied = [c.status for c in record.checks if c.status != "n/a"]
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "mpcbench", "gen_ai.request.model": record.model,
        "mpcbench.run.key": record.key, "mpcbench.task.id": record.task_id, "mpcbench.task.type": record.task_type,
        "mpcbench.scenario.id": record.scenario_id, "mpcbench.trial": record.trial,
        "mpcbench.checks.applied": len(applied), "mpcbench.checks.passed": applied.count("pass")}
    if run is not None:
        attributes.update({"gen_ai.usage.input_tokens": run.usage.prompt_tokens,
                           "gen_ai.usage.output_tokens": run.usage.completion_tokens,
                           "mpcbench.stop_reason": run.stop_reason, "mpcbench.turns": run.turns,
                           "mpcbench.cost_usd": run.cost_usd, "mpcbench.tools_s": run.timings.tools_s})
    error = f"{record.error_class}: {record.error_message}" if record.status == "error" else None
    spans = [_span(trace, root, None, f"invoke_agent {record.model}", INTERNAL, record.started_at,
                   record.finished_at, {**attributes, "error.type": record.error_class}, error=error)]
    spans += _call_spans(trace, root, record, calls.get(record.key, []))
    for step, call in enumerate(run.raw_tool_calls if run else [], start=1):
        failed = call.timed_out or (isinstance(call.result, dict) and "error" in call.result)
        spans.append(_span(trace, _id(record.key, "tool", str(step), size=8), root, f"execute_tool {call.tool_name}",
                           INTERNAL, record.finished_at, record.finished_at, {
                               "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.tool_name,
                               "gen_ai.tool.call.id": f"call_{step}", "mpcbench.tool.step": step,
                               "mpcbench.tool.timed": False, "mpcbench.tool.result_bytes": call.result_bytes},
                           error="tool call failed" if failed else None))
    for judge in kept.judgements:
        spans += _judge_spans(judge, trace, root, calls)
    return spans


def _judge_spans(judge: Any, run_trace: str, run_root: str,
                 calls: dict[str, list[LLMCallRecord]]) -> list[dict[str, Any]]:
    trace, root = _id(judge.key, size=16), _id(judge.key, "root", size=8)
    judgement = judge.judgement
    attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": judge.judge_model,
                                  "mpcbench.judge.key": judge.key, "mpcbench.run.key": judge.run_key,
                                  "mpcbench.agent.model": judge.agent_model, "mpcbench.task.id": judge.task_id,
                                  "mpcbench.trial": judge.trial}
    events = []
    if judgement is not None:
        attributes.update({"gen_ai.usage.input_tokens": judgement.usage.prompt_tokens,
                           "gen_ai.usage.output_tokens": judgement.usage.completion_tokens,
                           "mpcbench.judge.verdict": judgement.verdict, "mpcbench.judge.attempts": judgement.attempts})
        for axis in AXES if judgement.scores is not None and judgement.verdict == "scored" else ():
            score = getattr(judgement.scores, axis)
            events.append({"timeUnixNano": _ns(judge.finished_at), "name": "gen_ai.evaluation.result",
                           "attributes": _attributes({"gen_ai.evaluation.name": axis,
                                                      "gen_ai.evaluation.score.value": float(score.score),
                                                      "gen_ai.evaluation.explanation": score.justification})})
    error = f"{judge.error_class}: {judge.error_message}" if judge.status == "error" else None
    link = {"traceId": run_trace, "spanId": run_root}
    spans = [_span(trace, root, None, f"chat {judge.judge_model}", CLIENT, judge.started_at, judge.finished_at,
                   attributes, error=error, events=events, links=[link])]
    return spans + _call_spans(trace, root, judge, calls.get(judge.key, []))
