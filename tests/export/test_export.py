"""``export``: a shipped sweep (the sim on the package's own tasks) read back by Inspect AI's reader and by the
OpenTelemetry protobuf types, every figure compared with the sweep's own records."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from mpcbench_async.cli import main

pytest.importorskip("inspect_ai", reason="the export extra (inspect-ai) is a dev extra")
pytest.importorskip("opentelemetry.proto", reason="opentelemetry-proto is a dev extra")

from google.protobuf.json_format import Parse  # noqa: E402
from inspect_ai.log import list_eval_logs, read_eval_log  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402


def lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_inspect_reads_every_run_with_its_messages_scores_usage_and_times(shipped, tmp_path, capsys):
    assert 0 == main(["export", str(shipped), "--format", "inspect", "--out", str(tmp_path)])
    assert f"export: 2 Inspect log(s) in {tmp_path}" in capsys.readouterr().out
    runs, judgements = lines(shipped / "runs.jsonl"), lines(shipped / "judgements.jsonl")
    judged = {j["run_key"]: j for j in judgements}
    listed = list_eval_logs(str(tmp_path))  # what Inspect View lists: .json logs named by Inspect's convention
    assert sorted(tmp_path.glob("*.json")) == sorted(Path(info.name.removeprefix("file://")) for info in listed)
    logs = {log.eval.model: log for log in map(read_eval_log, map(str, sorted(tmp_path.glob("*.json"))))}
    assert {"sim/lazy-agent", "sim/oracle-agent"} == set(logs)
    tool_calls_seen = 0
    for model, log in logs.items():
        mine = {r["key"]: r for r in runs if r["model"] == model}
        assert ("success", len(mine), "mpcbench") == (log.status, len(log.samples), log.eval.task)
        for sample in log.samples:
            record = mine[sample.metadata["key"]]
            run, judge = record["run"], judged[record["key"]]["judgement"]
            calls = run["raw_tool_calls"]
            assert (record["task_id"], record["trial"] + 1, run["user_prompt"]) == (sample.id, sample.epoch,
                                                                                   sample.input)
            assert ["user", *["assistant", "tool"] * len(calls), "assistant"] == [m.role for m in sample.messages]
            assert [c["tool_name"] for c in calls] == [m.tool_calls[0].function for m in sample.messages[1:-1:2]]
            assert [c["arguments"] for c in calls] == [m.tool_calls[0].arguments for m in sample.messages[1:-1:2]]
            assert [orjson.dumps(c["result"]).decode() for c in calls] == [m.text for m in sample.messages[2:-1:2]]
            assert run["final_answer"] == sample.messages[-1].text == sample.output.completion \
                == sample.scores["ars@sim/judge"].answer  # Inspect View's answer column
            tool_calls_seen += len(calls)
            scores = judge["scores"]
            assert (scores["answer_requirements_satisfaction"]["score"], scores["source_grounded_reasoning"]["score"],
                    scores["source_grounded_reasoning"]["justification"]) == (
                sample.scores["ars@sim/judge"].value, sample.scores["sgr@sim/judge"].value,
                sample.scores["sgr@sim/judge"].explanation)
            applied = [c["status"] for c in record["checks"] if c["status"] != "n/a"]
            assert ("N" if not applied else "C" if set(applied) == {"pass"} else "I") == sample.scores["checks"].value
            agent, judge_usage = sample.model_usage[model], sample.model_usage["sim/judge"]
            assert (run["usage"]["prompt_tokens"], run["usage"]["completion_tokens"], judge["usage"]["total_tokens"]) \
                == (agent.input_tokens, agent.output_tokens, judge_usage.total_tokens)
            assert pytest.approx(record["finished_at"] - record["started_at"]) == sample.total_time
            assert pytest.approx(run["timings"]["total_s"]) == sample.working_time
        ars = [judged[k]["judgement"]["scores"]["answer_requirements_satisfaction"]["score"] for k in mine]
        means = {s.name: s.metrics["mean"].value for s in log.results.scores}
        assert pytest.approx(sum(ars) / len(ars)) == means["ars@sim/judge"]
    assert tool_calls_seen > 0  # the oracle called tools: the tool messages above were compared


def otel(path: Path) -> ExportTraceServiceRequest:
    """The file parsed by protobuf's JSON reader; OTLP/JSON writes ids in hex where protobuf's mapping has base64."""
    def rebased(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: base64.b64encode(bytes.fromhex(v)).decode() if k in ("traceId", "spanId", "parentSpanId")
                    else rebased(v) for k, v in node.items()}
        return [rebased(v) for v in node] if isinstance(node, list) else node

    return Parse(orjson.dumps(rebased(orjson.loads(path.read_bytes()))), ExportTraceServiceRequest())


def attributes(span: Any) -> dict[str, Any]:
    return {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in span.attributes}


def test_otel_writes_one_trace_per_unit_with_genai_spans(shipped, tmp_path, capsys):
    out = tmp_path / "traces.json"
    assert 0 == main(["export", str(shipped), "--format", "otel", "--out", str(out)])
    runs, judgements, calls = (lines(shipped / name) for name in ("runs.jsonl", "judgements.jsonl", "calls.jsonl"))
    assert f"export: {len(runs) + len(judgements)} trace(s) in {out}" in capsys.readouterr().out
    request = otel(out)
    assert 1 == len(request.resource_spans)
    spans = request.resource_spans[0].scope_spans[0].spans
    traces: dict[bytes, list[Any]] = {}
    for span in spans:
        assert (16, 8) == (len(span.trace_id), len(span.span_id))
        traces.setdefault(span.trace_id, []).append(span)
    assert len(runs) + len(judgements) == len(traces)
    assert len(calls) == sum(span.name.startswith("chat ") and span.parent_span_id != b"" for span in spans)
    by_key = {attributes(s)["mpcbench.run.key"]: s for s in spans if s.name.startswith("invoke_agent ")}
    for record in runs:
        root = by_key[record["key"]]
        children = [s for s in traces[root.trace_id] if s.parent_span_id == root.span_id]
        tools = [attributes(s)["gen_ai.tool.name"] for s in children if s.name.startswith("execute_tool ")]
        assert [c["tool_name"] for c in record["run"]["raw_tool_calls"]] == tools
        assert sum(c["key"].startswith(record["key"] + "/") for c in calls) == \
            sum(s.name == f"chat {record['model']}" for s in children)
        assert (record["model"], record["run"]["usage"]["prompt_tokens"], int(record["finished_at"] * 1e9)) == (
            attributes(root)["gen_ai.request.model"], attributes(root)["gen_ai.usage.input_tokens"],
            root.end_time_unix_nano)
    for judgement in judgements:
        span = next(s for s in spans if s.parent_span_id == b"" and attributes(s).get("mpcbench.judge.key")
                    == judgement["key"])
        assert [(by_key[judgement["run_key"]].trace_id, by_key[judgement["run_key"]].span_id)] == [
            (link.trace_id, link.span_id) for link in span.links]
        scores = judgement["judgement"]["scores"]
        assert [(axis, float(scores[axis]["score"])) for axis in scores] == [
            (attributes(e)["gen_ai.evaluation.name"], attributes(e)["gen_ai.evaluation.score.value"])
            for e in span.events]
    again = tmp_path / "again.json"
    assert 0 == main(["export", str(shipped), "--format", "otel", "--out", str(again)])
    assert out.read_bytes() == again.read_bytes()  # ids and times come from the records: the same file twice


def test_bad_input_is_one_line_and_exit_2(shipped, tmp_path, capsys, monkeypatch):
    with pytest.raises(SystemExit) as exited:  # an argparse error: usage, then the one line
        main(["export", str(tmp_path), "--format", "otel"])
    assert 2 == exited.value.code
    assert f"{tmp_path}: no runs.jsonl or manifest.json here; is it a sweep output directory?" in \
        capsys.readouterr().err
    assert 2 == main(["export", str(shipped), "--format", "otel", "--out", str(tmp_path)])
    assert f"error: --out {tmp_path}: {tmp_path} is a directory, not a file" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # as without the export extra
    assert 2 == main(["export", str(shipped), "--format", "inspect", "--out", str(tmp_path / "logs")])
    assert "error: --format inspect needs Inspect AI: pip install 'mpcbench-async[export]'" in \
        capsys.readouterr().err
