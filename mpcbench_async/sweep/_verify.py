"""``verify``: re-score a finished sweep from its stored records, without any model call.

A sweep directory becomes a verifiable artefact (issue 26). For every ``ok`` run record of
the current experiment the checks are run again on its stored final answer against the
task and data on disk, and the result must equal the stored ``checks`` exactly (name,
status, detail). With ``rejudge`` every ``ok`` judgement's input is rebuilt from its run's
stored log and the task (``build_judge_input`` rendered with today's judge prompt) and its
digest must equal the one stored when the judge was asked (``input_digest``); a judgement of
``sim/judge``, a pure rubric, is scored again in-process and must give the stored scores. Last,
``summary.json`` is rebuilt from the records and must equal the stored one.

Each score that does not reproduce is listed with the reason, as far as the directory can
tell it: the check code changed since the run (its ``checks_version`` differs), the task
file or the scenario's data changed (their hashes in the manifest's fingerprint differ),
the judge prompt changed (its digest differs), or none of these — the record was edited.
A record written before these were stored cannot be confirmed and says so.

Memory: one digest (and with ``sim/judge`` two scores) per run record with ``rejudge``
(the judgements are matched to their runs by key), never the records themselves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from .._exceptions import InputError
from .._prompts import load_prompts
from .._resources import workspace_path
from ..mpcbench import (
    SIM_JUDGE,
    AgentRunRecord,
    CheckResult,
    JudgeRecord,
    build_judge_input,
    checks_version,
    judge_input_digest,
    load_inputs,
    run_checks,
    sim_judge_scores,
    sim_judge_version,
)
from ..runtime import iter_jsonl
from ._experiment import read_experiment_keys, read_manifest
from ._reading import JUDGEMENTS, RUNS
from ._records import Fingerprint
from ._summary import summarize

__all__ = ["Mismatch", "Verification", "verify_sweep"]

SUMMARY = "summary.json"
_MAX_SUMMARY_PATHS = 20  # summary.json differences listed one by one; the rest are counted


class Mismatch(msgspec.Struct, kw_only=True):
    """One stored score that the records do not reproduce: where, what, stored and now, and why."""

    file: str
    key: str
    what: str  # the check's name, "judge input", or a summary.json path
    stored: str
    now: str
    reason: str

    def line(self) -> str:
        return f"{self.file} {self.key}: {self.what}: stored {self.stored}, now {self.now} — {self.reason}"


class Verification(msgspec.Struct, kw_only=True):
    out_dir: str
    runs: int = 0  # ok run records whose checks were run again
    judgements: int = 0  # ok judgements whose input was rebuilt (with rejudge)
    rejudged: bool = False
    summary_checked: bool = False
    mismatches: list[Mismatch] = []

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def report(self) -> str:
        """What was verified, then each score that did not reproduce (one line each)."""
        parts = [f"{self.runs} run record(s): checks"]
        if self.rejudged:
            parts.append(f"{self.judgements} judgement(s): judge inputs")
        if self.summary_checked:
            parts.append(SUMMARY)
        head = f"verified {self.out_dir}: " + "; ".join(parts)
        if self.ok:
            return head + "\nevery stored score is reproduced bit for bit"
        return "\n".join([head, f"{len(self.mismatches)} stored score(s) not reproduced:",
                          *(f"  {m.line()}" for m in self.mismatches)])


def verify_sweep(out_dir: str | Path, *, tasks_dir: str | Path = "tasks", data_dir: str | Path = "data",
                 scenarios_dir: str | Path = "scenarios", scenario_id: str | None = None,
                 prompts: str | Path = "prompt_config.json", rejudge: bool = False) -> Verification:
    """Re-score the sweep in ``out_dir`` from its records (see the module docstring); makes no model call.

    The directories are the sweep's own (``sweep --tasks-dir`` …; a relative one the working directory lacks is the
    shipped benchmark's). Raises ``InputError`` for a directory that is no finished MPCBench sweep."""
    out = Path(out_dir)
    manifest = read_manifest(out)
    if manifest is None or not (out / RUNS).is_file():
        raise InputError(f"{out}: no manifest.json and runs.jsonl here; is it an MPCBench sweep output directory?")
    fingerprint = manifest.fingerprint or Fingerprint(max_turns=0)
    tasks, data, task_hashes, data_hashes = load_inputs(*(workspace_path(d) for d in (tasks_dir, data_dir,
                                                                                       scenarios_dir)),
                                                        scenario_id=scenario_id)
    config = load_prompts(workspace_path(prompts)) if rejudge else None
    keys = read_experiment_keys(out)
    result = Verification(out_dir=str(out), rejudged=rejudge)
    version = checks_version()
    digests: dict[str, str] = {}  # run key -> the digest of its judge input, rebuilt
    rescored: dict[str, tuple[int, int]] = {}  # run key -> sim/judge's (ARS, SGR) of that input, when it judged
    sim_judged = SIM_JUDGE in manifest.judge_models or SIM_JUDGE in fingerprint.models  # any invocation's

    def changed(task_id: str) -> str | None:
        """Why the task's inputs differ from the sweep's (None: they do not)."""
        task = tasks[task_id]
        if fingerprint.tasks.get(task_id, task_hashes[task_id]) != task_hashes[task_id]:
            return f"the task file of {task_id} changed since the sweep"
        scenario = task.scenario_id
        if fingerprint.data.get(scenario, data_hashes[scenario]) != data_hashes[scenario]:
            return f"the data of scenario {scenario} changed since the sweep"
        return None

    for record in iter_jsonl(out / RUNS, type_=AgentRunRecord):
        if record.status != "ok" or record.run is None or (keys is not None and record.key not in keys):
            continue
        result.runs += 1
        task = tasks.get(record.task_id)
        if task is None:
            result.mismatches.append(Mismatch(file=RUNS, key=record.key, what="checks", stored=_checks(record.checks),
                                              now="(no task)", reason=f"task {record.task_id} is not in {tasks_dir}"))
            continue
        now = run_checks(task, record.run.final_answer, data[task.scenario_id])
        if _outcomes(record.checks) != _outcomes(now):
            reason = changed(task.task_id) or _code_reason(record.checks_version, version)
            result.mismatches += [Mismatch(file=RUNS, key=record.key, what=name, stored=stored, now=again,
                                           reason=reason) for name, stored, again in _differences(record.checks, now)]
        if config is not None:
            judge_input = build_judge_input(record.run, task)
            digests[record.key] = judge_input_digest(judge_input, config)
            if sim_judged:
                rescored[record.key] = sim_judge_scores(judge_input)
    if config is not None:
        prompt_now = config.digest("judge", "repair")
        for judged in iter_jsonl(out / JUDGEMENTS, type_=JudgeRecord) if (out / JUDGEMENTS).is_file() else ():
            if judged.status != "ok" or (keys is not None and judged.key not in keys):
                continue
            result.judgements += 1
            rebuilt = digests.get(judged.run_key)
            if rebuilt is not None and rebuilt == judged.input_digest:
                result.mismatches += _rescored(judged, rescored.get(judged.run_key))
                continue
            if rebuilt is None:
                reason, now_text = "its run has no ok record of this experiment to rebuild the input from", "(none)"
            elif not judged.input_digest:
                reason, now_text = "recorded before judge input digests were stored: cannot be confirmed", rebuilt
            elif fingerprint.prompts.get("judge", prompt_now) != prompt_now:
                reason = (f"the judge prompt changed since the sweep (digest {fingerprint.prompts['judge']} → "
                          f"{prompt_now})")
                now_text = rebuilt
            else:
                now_text = rebuilt
                reason = (changed(judged.task_id) if judged.task_id in tasks else None) or (
                    "the judge input rebuilt from the stored run log differs (a record was edited, or how the "
                    "input is built changed since)")
            result.mismatches.append(Mismatch(file=JUDGEMENTS, key=judged.key, what="judge input",
                                              stored=judged.input_digest or "(not stored)", now=now_text,
                                              reason=reason))
    if (out / SUMMARY).is_file():
        result.summary_checked = True
        result.mismatches += _summary_mismatches(out)
    return result


def _rescored(judged: JudgeRecord, now: tuple[int, int] | None) -> list[Mismatch]:
    """A ``sim/judge`` judgement whose stored scores differ from the rubric's on the same input, with why."""
    judgement = judged.judgement
    if judged.judge_model != SIM_JUDGE or now is None or judgement is None or judgement.scores is None:
        return []
    stored = (judgement.scores.answer_requirements_satisfaction.score, judgement.scores.source_grounded_reasoning.score)
    if stored == now:
        return []
    version = sim_judge_version()
    if not judged.rubric_version:
        reason = "recorded before rubric versions were stored: sim/judge's rubric may have changed since"
    elif judged.rubric_version != version:
        reason = f"sim/judge's rubric changed since (version {judged.rubric_version} → {version})"
    else:
        reason = "same rubric and judge input: the stored scores were edited"
    return [Mismatch(file=JUDGEMENTS, key=judged.key, what="sim/judge scores",
                     stored=f"ARS {stored[0]}, SGR {stored[1]}", now=f"ARS {now[0]}, SGR {now[1]}", reason=reason)]


def _outcomes(checks: list[CheckResult]) -> list[tuple[str, str, str]]:
    """A check list as (name, status, detail); a record from before ``status`` existed gives its pass/fail."""
    return [(c.name, c.status or ("pass" if c.legacy_passed else "fail"), c.detail) for c in checks]


def _checks(checks: list[CheckResult]) -> str:
    return ", ".join(f"{name} {status}" for name, status, _ in _outcomes(checks)) or "(none)"


def _differences(stored: list[CheckResult], now: list[CheckResult]) -> list[tuple[str, str, str]]:
    """(check name, stored, now) for each check whose status or detail differs, or that only one side has."""
    before = {name: (status, detail) for name, status, detail in _outcomes(stored)}
    after = {name: (status, detail) for name, status, detail in _outcomes(now)}
    out = []
    for name in dict.fromkeys([*before, *after]):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if old is not None and new is not None and old[0] == new[0]:
            out.append((name, f"{old[0]} ({old[1]!r})", f"{new[0]} ({new[1]!r})"))  # same status, other detail
        else:
            out.append((name, old[0] if old else "(absent)", new[0] if new else "(absent)"))
    return out


def _code_reason(stored: str, now: str) -> str:
    if not stored:
        return "recorded before check versions were stored: the check code may have changed since"
    if stored != now:
        return f"the check code changed since the run (checks version {stored} → {now})"
    return "same check code, task and data: the stored result was edited"


def _summary_mismatches(out: Path) -> list[Mismatch]:
    """Each path where summary.json differs from the summary rebuilt from the records (the first few, then a count)."""
    try:
        stored = msgspec.json.decode((out / SUMMARY).read_bytes())
    except msgspec.DecodeError as exc:
        return [Mismatch(file=SUMMARY, key="-", what="$", stored="(unreadable)", now="(rebuilt)",
                         reason=f"summary.json does not decode: {exc}")]
    if not isinstance(stored, dict):
        stored = {}
    # The ks of pass^k it reports (``summarize --pass-k`` may have named others than the default).
    ks = sorted({k for m in stored.get("models") or [] if isinstance(m, dict)
                 for p in (m.get("stats") or {}).get("pass_hat_k") or [] if isinstance(p, dict)
                 if isinstance(k := p.get("k"), int)})
    now = msgspec.to_builtins(summarize(out, pass_k=ks or None))
    stored.pop("out_dir", None), now.pop("out_dir", None)  # the same directory, however its path was written
    paths = list(_diff(stored, now, "$"))
    reason = "summary.json differs from the summary rebuilt from the records (it was edited, or written before them)"
    found = [Mismatch(file=SUMMARY, key="-", what=path, stored=_short(a), now=_short(b), reason=reason)
             for path, a, b in paths[:_MAX_SUMMARY_PATHS]]
    if len(paths) > _MAX_SUMMARY_PATHS:
        found.append(Mismatch(file=SUMMARY, key="-", what=f"{len(paths) - _MAX_SUMMARY_PATHS} more path(s)",
                              stored="…", now="…", reason=reason))
    return found


def _diff(a: Any, b: Any, path: str) -> Any:
    """(path, a, b) for every leaf where two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in dict.fromkeys([*a, *b]):
            yield from _diff(a.get(key), b.get(key), f"{path}.{key}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _diff(x, y, f"{path}[{i}]")
    elif a != b or type(a) is not type(b):
        yield path, a, b


def _short(value: Any) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 80 else text[:77] + "…"
