"""The verification pipeline: propose → gate → critique → revise, up to ``max_iters``.

A proposer (a model through the ``LLMClient``: live, or fixtures replayed by
``_fixtures.FixtureTransport``; or a recorder around it) answers the request
with a dossier; the deterministic gates check it; rejection reasons go back as
critique and the proposer revises. The result records every iteration
with its gate results, the final dossier, its citations and levers, and the
status: ``accepted``, or ``refused`` with the proposer's category — or
``verification_failed`` when no proposal passed within ``max_iters``. An
accepted result also records its ``duty_status``: ``verified`` (the stated
duty matches the pack's line for the code), ``unverified`` (the pack has no line
for the code: no penalty, no critique) or ``not_stated``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import msgspec
import orjson

from .._prompts import PromptConfig
from .._replies import ReplyParseError, extract_json_object
from ..llm import LLMClient
from ..records import Message, Usage
from ._cases import Case
from ._dossier import Dossier, build_bundle
from ._gates import GateResult, run_gates
from ._pack import Pack
from ._records import DutyStatus, Iteration, VerificationResult

if TYPE_CHECKING:
    from ._scoring import ScoringMode

__all__ = ["DutyStatus", "Iteration", "LLMProposer", "Proposer", "VerificationResult", "call_key", "parse_call_key",
           "verify"]

_DUTY_STATUS: dict[str, DutyStatus] = {"pass": "verified", "unverified": "unverified", "n/a": "not_stated"}


class Proposer(Protocol):
    async def propose(self, case_id: str, messages: list[Message], iteration: int) -> str: ...


KEY_PREFIX = "tariff"


def call_key(case_id: str, iteration: int, prefix: str = KEY_PREFIX) -> str:
    """The key of a case's proposer call at ``iteration`` (0-based), ``tariff/<case_id>/iter<N>``; fixtures use it."""
    return f"{prefix}/{case_id}/iter{iteration}"


def parse_call_key(key: str, prefix: str = KEY_PREFIX) -> tuple[str, int] | None:
    """``(case_id, iteration)`` of a ``call_key``, or ``None`` for any other key."""
    head, _, last = key.rpartition("/iter")
    case_id = head.removeprefix(f"{prefix}/")
    if case_id == head or not case_id or not last.isdecimal() or not last.isascii():
        return None
    return case_id, int(last)


class LLMProposer:
    """Ask a model through the client: live, record (inside ``RecordingProposer``) and fixture mode."""

    def __init__(self, client: LLMClient, model: str, *, key_prefix: str = KEY_PREFIX) -> None:
        self.client = client
        self.model = model
        self.key_prefix = key_prefix
        self.usage = Usage()

    async def propose(self, case_id: str, messages: list[Message], iteration: int) -> str:
        result = await self.client.chat(self.model, messages, key=call_key(case_id, iteration, self.key_prefix))
        self.usage = self.usage + result.usage
        return result.content or ""


def _parse(reply: str) -> tuple[Dossier | None, list[str]]:
    try:
        raw = extract_json_object(reply)
    except ReplyParseError as exc:
        return None, [str(exc)]
    try:
        return msgspec.convert(raw, Dossier), []
    except msgspec.ValidationError as exc:
        return None, [f"the dossier does not match the schema: {exc}"]


def _duty_status(gates: list[GateResult]) -> DutyStatus | None:
    """What the duty gate could say about the accepted dossier's stated duty."""
    return next((_DUTY_STATUS.get(g.status) for g in gates if g.gate == "duty"), None)


async def verify(case: Case, proposer: Proposer, pack: Pack, prompts: PromptConfig, *,
                 scoring: ScoringMode = "project") -> VerificationResult:
    """Run the propose/gate/revise loop for one case.

    ``scoring="original"`` gives the proposer the evidence as the original harness does — every chapter note of the
    pack unless the case names candidate chapters — and reads missing evidence as it does: the chosen code's
    chapter has no notes in that evidence (``_gates.run_gates``)."""
    request = case.input
    bundle = build_bundle(pack, request.input, request.evidence, request.options.candidate_chapters,
                          limit=None if scoring == "original" else 14)
    bundle_json = orjson.dumps([msgspec.to_builtins(item) for item in bundle], option=orjson.OPT_INDENT_2).decode()
    # the importing country and programme, where the case names them: the duty the answer states depends on them
    terms = {"import_country": case.import_country, "trade_programme": case.trade_programme}
    shown = {"input": request.input, "evidence": request.evidence, **{k: v for k, v in terms.items() if v}}
    values = {"request_json": orjson.dumps(shown, option=orjson.OPT_INDENT_2).decode(),
              "evidence_bundle_json": bundle_json}
    messages = [Message(role="system", content=prompts.render("tariff_proposer", "system", **values)),
                Message(role="user", content=prompts.render("tariff_proposer", "user", **values))]
    max_iters = request.options.max_iters
    iterations: list[Iteration] = []
    for number in range(max_iters):
        reply = await proposer.propose(case.id, messages, number)
        dossier, problems = _parse(reply)
        gates = run_gates(dossier, problems, pack, bundle, request.input, request.evidence,
                          country=case.import_country, programme=case.trade_programme,
                          missing_evidence="bundle" if scoring == "original" else "request")
        last = number == max_iters - 1
        blocking = [g for g in gates if not g.passed and (g.critical or not last)]
        reasons = [f"[{g.gate}] {r}" for g in blocking for r in g.reasons]
        iterations.append(Iteration(number=number + 1, reply=reply, dossier=dossier, gates=gates,
                                    rejection_reasons=reasons))
        if not blocking and dossier is not None:
            accepted = dossier.decision == "accept"
            return VerificationResult(
                case_id=case.id, status="accepted" if accepted else "refused",
                refusal_category=None if accepted else dossier.refusal_category, iterations=iterations,
                final_dossier=dossier, citations=dossier.citations(), levers=dossier.levers,
                critical_gates_passed=True,
                gri_violation=any(g.gate == "gri_sequence" and not g.passed for g in gates),
                duty_status=_duty_status(gates) if accepted else None)
        messages = [*messages, Message(role="assistant", content=reply),
                    Message(role="user", content=prompts.render("tariff_critique", "user",
                                                                reasons="\n".join(f"- {r}" for r in reasons)))]
    return VerificationResult(case_id=case.id, status="refused", refusal_category="verification_failed",
                              iterations=iterations,
                              final_dossier=iterations[-1].dossier if iterations else None)
