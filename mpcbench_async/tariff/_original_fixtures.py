"""The original harness's fixtures, converted to the project's: ``mpcbench-async tariff convert-fixtures``.

The original records its model's answers once per chapter or case type (``fixture_ch85.json``,
``fixture_negative.json`` …), each a ``proposals`` list of dossiers in its own shape and a ``critics`` list of
critiques, and picks one per case (``_default_fixture_resolver`` in its ``benchmarks/runner.py``): a
missing-evidence refusal case takes ``fixture_missing_evidence.json``, a no-savings case
``fixture_no_savings.json``, then the first ``chapter_NN`` tag's fixture (64 → ``fixture_positive.json``), then
the case type's. ``resolve_fixture`` makes the same choice; ``convert_suite`` writes each case's project fixture
(``<case_id>.json``, one reply per iteration of the case) with every proposal converted by
``convert_proposal``:

- a proposal whose critique lists ``missing``, ``conflicts`` or ``unsupported`` points, or that names no baseline
  code, is a refusal — with the category the original reads from those rejection markers (``insufficient_info``
  for missing points or no code, ``ambiguous`` for conflicts and unsupported claims) and the questions it asks;
- otherwise it accepts its baseline code and duty; its GRI trace becomes the GRI steps (every step, in order, with
  its citations — ``source_id`` is the evidence id), the proposal's own citations joining the step it applied;
- an optimized duty below the baseline is one lever to the optimized code and duty, whose steps are the
  proposal's classification-changing mutations (``expected_effect: hts_change``; else its chosen mutation); the
  optimized rationale is the dossier's ``savings_note``; what-if candidates are kept (without a code: the
  original gives a heading shift in words).

The original's citations name ids of its own pack (``GRI.1``, ``HTS.8544``): replay them with that pack
(``--pack`` pointing at the original ``packs_tariff``), which loads as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from .._exceptions import InputError
from ..records import load_json_file
from ..runtime import atomic_write_bytes
from ._cases import Case
from ._fixtures import fixture_path

__all__ = ["ConversionSummary", "convert_proposal", "convert_suite", "resolve_fixture"]

_BY_TAG = {"chapter_64": "fixture_positive.json", "chapter_73": "fixture_ch73.json",
           "chapter_84": "fixture_ch84.json", "chapter_85": "fixture_ch85.json"}
_BY_TYPE = {"positive": "fixture_positive.json", "negative": "fixture_negative.json",
            "adversarial": "fixture_positive.json", "no_savings": "fixture_no_savings.json",
            "savings_possible": "fixture_positive.json"}


class _Original(msgspec.Struct):
    """An original fixture file: the proposals and critiques it replays (other recorded fields are not needed)."""

    proposals: list[dict[str, Any]]
    critics: list[dict[str, Any]] = []


class ConversionSummary(msgspec.Struct, kw_only=True):
    """What ``convert_suite`` wrote: the project fixture of each case, by the original fixture it came from."""

    written: dict[str, list[str]]
    unresolved: list[str]


def resolve_fixture(case: Case, fixtures_dir: Path) -> Path | None:
    """The original fixture the original harness replays for ``case`` (``None`` when it has none)."""
    picks = []
    if case.expected.expected_refusal_category == "missing_evidence":
        picks.append("fixture_missing_evidence.json")
    if case.case_type == "no_savings":
        picks.append("fixture_no_savings.json")
    picks += [_BY_TAG[tag] for tag in case.notes.tags if tag in _BY_TAG]
    picks += [_BY_TYPE[case.case_type]] if case.case_type in _BY_TYPE else []
    return next((fixtures_dir / name for name in picks if (fixtures_dir / name).is_file()), None)


def _rate(summary: dict[str, Any]) -> float | None:
    total = (summary.get("duty_breakdown") or {}).get("total_rate_pct")
    value = total if total is not None else summary.get("duty_rate_pct")
    return None if value is None else float(value)


def _refusal(category: str, reason: str, questions: list[str]) -> dict[str, Any]:
    return {"decision": "refuse", "refusal_category": category, "refusal_reason": reason, "questions": questions}


def _gri_steps(proposal: dict[str, Any]) -> list[dict[str, Any]]:
    trace = proposal.get("gri_trace") or {}
    applied_rule = trace.get("final_step_used")
    steps = []
    for step in trace.get("steps") or []:
        citations = [{"evidence_id": c["source_id"], "quote": c["quote"]} for c in step.get("citations") or []
                     if c.get("source_id") and c.get("quote")]
        if step.get("step") == applied_rule:
            extra = [*(proposal.get("citations") or []),
                     *((proposal.get("essential_character") or {}).get("citations") or [])]
            citations += [{"evidence_id": c["source_id"], "quote": c["quote"]} for c in extra
                          if c.get("source_id") and c.get("quote")]
        steps.append({"rule": str(step.get("step", "")), "conclusion": str(step.get("reasoning", "")),
                      "citations": citations})
    return steps


def _lever(proposal: dict[str, Any], code: str, base: float | None) -> dict[str, Any] | None:
    optimized = proposal.get("optimized") or {}
    new = _rate(optimized)
    if new is None or base is None or new >= base:
        return None
    mutations = proposal.get("mutations") or []
    steps = [m["change"] for m in mutations if m.get("expected_effect") == "hts_change" and m.get("change")]
    chosen = proposal.get("chosen_mutation") or proposal.get("best_option_id")
    steps = steps or [m["change"] for m in mutations if m.get("id") == chosen and m.get("change")]
    return {"id": str(chosen or "optimized"), "description": str(optimized.get("rationale") or ""),
            "steps": steps or [str(optimized.get("rationale") or "apply the optimized classification")],
            "new_hts": str(optimized.get("hts_code") or code), "new_duty_pct": new}


def convert_proposal(proposal: dict[str, Any], critic: dict[str, Any] | None = None) -> dict[str, Any]:
    """One original proposal (with its critique) as a project dossier (see the module docstring)."""
    critic = critic or {}
    questions = [str(q) for q in [*(proposal.get("questions_for_user") or []),
                                  *(critic.get("revised_questions_for_user") or [])]]
    baseline = proposal.get("baseline") or {}
    code = baseline.get("hts_code")
    if critic.get("missing") or not code:
        reason = "; ".join(critic.get("missing") or []) or str(baseline.get("rationale") or "no code")
        return _refusal("insufficient_info", reason, questions)
    if critic.get("conflicts") or critic.get("unsupported"):
        return _refusal("ambiguous", "; ".join([*critic.get("conflicts", []), *critic.get("unsupported", [])]),
                        questions)
    base = _rate(baseline)
    optimized = proposal.get("optimized") or {}
    dossier: dict[str, Any] = {
        "decision": "accept", "questions": questions, "gri_steps": _gri_steps(proposal), "hts_code": str(code),
        "baseline_duty_pct": base, "savings_note": str(optimized.get("rationale") or ""),
        "what_if": [{"change": str(w.get("change", ""))} for w in proposal.get("what_if_candidates") or []],
    }
    lever = _lever(proposal, str(code), base)
    if lever is not None:
        dossier |= {"levers": [lever], "optimized_duty_pct": lever["new_duty_pct"]}
    elif _rate(optimized) is not None:
        dossier["optimized_duty_pct"] = _rate(optimized)
    return dossier


def convert_suite(cases: Sequence[Case], original_dir: Path, out_dir: Path) -> ConversionSummary:
    """Write ``out_dir/<case_id>.json`` for every case the original resolver finds a fixture for: the converted
    proposals in order, the last repeated up to the case's ``max_iters`` (the original replays it on every
    iteration)."""
    if not original_dir.is_dir():
        raise InputError(f"{original_dir}: original fixtures directory not found")
    originals: dict[Path, _Original] = {}
    written: dict[str, list[str]] = {}
    unresolved = []
    for case in cases:
        source = resolve_fixture(case, original_dir)
        if source is None:
            unresolved.append(case.id)
            continue
        original = originals.get(source) or originals.setdefault(source, load_json_file(source, _Original))
        if not original.proposals:
            raise InputError(f"{source}: has no proposals to replay")
        replies = []
        for i in range(max(len(original.proposals), case.input.options.max_iters)):
            proposal = original.proposals[min(i, len(original.proposals) - 1)]
            critic = original.critics[min(i, len(original.critics) - 1)] if original.critics else None
            replies.append(msgspec.json.encode(convert_proposal(proposal, critic)).decode())
        fixture = {"case_id": case.id, "model": f"original:{source.name}", "replies": replies}
        atomic_write_bytes(fixture_path(out_dir, case.id), msgspec.json.format(msgspec.json.encode(fixture)) + b"\n",
                           fsync=False)
        written.setdefault(source.name, []).append(case.id)
    return ConversionSummary(written=written, unresolved=unresolved)
