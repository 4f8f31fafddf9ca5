"""A sweep's kept runs as Inspect AI eval logs: one log per agent model, one sample per run, trials as epochs.

Built with Inspect's own types and written by its own writer (``inspect_ai.log.write_eval_log``), so what
``read_eval_log`` loads and Inspect View opens is whatever the installed Inspect version defines; nothing
here restates its schema. Each sample holds:

- the messages: the task prompt, then one assistant message per recorded tool call with its tool result,
  then the final answer. The run log keeps each tool call and its result, not each turn's text, so calls
  made in one turn show as consecutive assistant messages;
- the scores: ``checks`` (C when every check that applied passed, I when one failed, N when none applied, as
  the summary counts a trial) and one score per judge axis and judge model (``ars@JUDGE``, ``sgr@JUDGE``),
  0–5, with the judge's justification; an unscored judgement gives no score;
- the model usage of the agent and of each judge, the times (started, completed, total and working), and
  the run's key, scenario, stop reason and rationale as metadata. A failed run carries its error.

Ids are derived from the sweep directory and the model, so exporting twice writes the same logs.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._exceptions import InputError
from ..sweep import KeptRun, kept_records

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.model import ModelUsage

__all__ = ["export_inspect"]

AXES = {"ars": "answer_requirements_satisfaction", "sgr": "source_grounded_reasoning"}
TASK = "mpcbench"


def export_inspect(sweep_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Write one Inspect eval log per agent model of the sweep into ``out_dir``
    (``<first run's start, UTC>_mpcbench_<model>-<hash>.json``, named as Inspect names its logs); their paths."""
    try:
        from inspect_ai.log import write_eval_log
    except ImportError:
        raise InputError("``format=inspect`` needs Inspect AI: pip install 'mpcbench-async[export]'") from None
    sweep_dir, out_dir = Path(sweep_dir), Path(out_dir)
    by_model: dict[str, list[KeptRun]] = defaultdict(list)
    for kept in kept_records(sweep_dir):
        by_model[kept.record.model].append(kept)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for model, runs in sorted(by_model.items()):
        log = _log(sweep_dir, model, runs)
        # Inspect lists a .json log (list_eval_logs, Inspect View) only when its name starts with a time
        stamp = datetime.fromisoformat(log.eval.created).strftime("%Y-%m-%dT%H-%M-%S+00-00")
        path = out_dir / f"{stamp}_{TASK}_{_file_name(model)}.json"
        write_eval_log(log, str(path), format="json")
        written.append(path)
    return written


def _file_name(model: str) -> str:
    """A file-safe, collision-free form of a model name (``sim/judge?x=1`` and ``sim/judge_x_1`` differ)."""
    from ..runtime import safe_name

    return f"{safe_name(model)}-{_digest(model)[:6]}"


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat() if at else ""


def _log(sweep_dir: Path, model: str, runs: list[KeptRun]) -> EvalLog:
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalMetric, EvalResults, EvalScore, EvalSpec, EvalStats

    samples = [_sample(kept) for kept in runs]
    started = min((k.record.started_at for k in runs if k.record.started_at), default=0.0)
    completed = max((k.record.finished_at for k in runs), default=0.0)
    usage: dict[str, ModelUsage] = {}
    for sample in samples:
        for name, used in sample.model_usage.items():
            usage[name] = usage[name] + used if name in usage else used
    values: dict[str, list[float]] = defaultdict(list)
    for sample in samples:
        for name, score in (sample.scores or {}).items():
            if score.value != "N":  # no check applied: no trial, as the summary counts it
                values[name].append(_number(score.value))
    scores = [EvalScore(name=name, scorer=name.split("@", 1)[0], scored_samples=len(vals),
                        unscored_samples=len(samples) - len(vals),
                        metrics={"mean": EvalMetric(name="mean", value=sum(vals) / len(vals))})
              for name, vals in sorted(values.items(), key=lambda item: (item[0] != "checks", item[0]))]
    ident = _digest(str(sweep_dir.resolve()), model)
    epochs = max((k.record.trial for k in runs), default=0) + 1
    created = datetime.fromtimestamp(started or completed, UTC).isoformat()
    return EvalLog(
        status="success",
        eval=EvalSpec(created=created, task=TASK, task_id=ident[:22], run_id=ident[22:44], eval_id=ident[44:],
                      model=model, dataset=EvalDataset(name="mpcbench tasks",
                                                       samples=len({k.record.task_id for k in runs})),
                      config=EvalConfig(epochs=epochs),
                      metadata={"sweep": str(sweep_dir), "exported_by": "mpcbench-async export"}),
        results=EvalResults(total_samples=len(samples), completed_samples=sum(s.error is None for s in samples),
                            scores=scores),
        stats=EvalStats(started_at=_iso(started), completed_at=_iso(completed), model_usage=usage),
        samples=samples)


def _number(value: Any) -> float:
    return float(value == "C") if isinstance(value, str) else float(value)


def _sample(kept: KeptRun) -> EvalSample:
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ModelOutput
    from inspect_ai.tool import ToolCall, ToolCallError

    record, run = kept.record, kept.record.run
    prompt = run.user_prompt if run else ""
    messages: list[Any] = [ChatMessageUser(content=prompt)]
    for i, call in enumerate(run.raw_tool_calls if run else []):
        call_id = f"call_{i + 1}"
        arguments = call.arguments if isinstance(call.arguments, dict) else {"raw": call.arguments}
        messages.append(ChatMessageAssistant(content="", model=record.model, tool_calls=[
            ToolCall(id=call_id, function=call.tool_name, arguments=arguments)]))
        error = call.result.get("error") if isinstance(call.result, dict) else None
        messages.append(ChatMessageTool(content=_text(call.result), tool_call_id=call_id, function=call.tool_name,
                                        error=ToolCallError("unknown", str(error)) if error else None))
    output = ModelOutput.from_content(record.model, run.final_answer if run else "",
                                      stop_reason="max_tokens" if run and run.stop_reason == "max_turns" else "stop")
    if run is not None:
        messages.append(output.choices[0].message)
        output.usage = _usage(run.usage, run.cost_usd)
    usage = {record.model: output.usage} if output.usage else {}
    for judge in kept.judgements:
        if judge.judgement is not None:
            used = _usage(judge.judgement.usage, judge.judgement.cost_usd)
            usage[judge.judge_model] = usage[judge.judge_model] + used if judge.judge_model in usage else used
    error = None
    if record.status == "error":
        error = EvalError(message=f"{record.error_class}: {record.error_message}", traceback="", traceback_ansi="")
    total = record.finished_at - record.started_at if record.started_at else None
    return EvalSample(
        id=record.task_id, epoch=record.trial + 1, input=prompt, target="", messages=messages, output=output,
        scores=_scores(kept), model_usage=usage, error=error, started_at=_iso(record.started_at) or None,
        completed_at=_iso(record.finished_at) or None, total_time=total,
        working_time=run.timings.total_s if run else None,
        metadata={"key": record.key, "scenario_id": record.scenario_id, "task_type": record.task_type,
                  "trial": record.trial, "stop_reason": run.stop_reason if run else "error",
                  "turns": run.turns if run else 0, "rationale": run.rationale if run else ""})


def _scores(kept: KeptRun) -> dict[str, Any]:
    from inspect_ai.scorer import Score

    run = kept.record.run
    answer = run.final_answer if run else None  # what Inspect View shows in its answer column
    checks = kept.record.checks
    applied = [c for c in checks if c.status != "n/a"]
    value = "N" if not applied else "C" if all(c.status == "pass" for c in applied) else "I"
    explained = "; ".join(f"{c.name}: {c.status} ({c.detail})" for c in checks) or "no check applies to this task"
    scores = {"checks": Score(value=value, answer=answer, explanation=explained)} if kept.record.status == "ok" else {}
    for judge in kept.judgements:
        judgement = judge.judgement
        if judgement is None or judgement.scores is None or judgement.verdict != "scored":
            continue
        for short, axis in AXES.items():
            score = getattr(judgement.scores, axis)
            scores[f"{short}@{judge.judge_model}"] = Score(value=score.score, answer=answer,
                                                           explanation=score.justification)
    return scores


def _usage(usage: Any, cost: float | None) -> ModelUsage:
    from inspect_ai.model import ModelUsage

    return ModelUsage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens,
                      total_tokens=usage.total_tokens, total_cost=cost)


def _text(result: Any) -> str:
    import orjson

    return result if isinstance(result, str) else orjson.dumps(result).decode()
