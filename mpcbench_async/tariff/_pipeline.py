"""The verification pipeline: propose → gate → critique → revise, up to ``max_iters``.

A proposer (an LLM, a fixture replay, or a recorder around an LLM) answers the
request with a dossier; the deterministic gates check it; rejection reasons go
back as critique and the proposer revises. The result records every iteration
with its gate results, the final dossier, its citations and levers, and the
status: ``accepted``, or ``refused`` with the proposer's category — or
``verification_failed`` when no proposal passed within ``max_iters``. An
accepted result also records its ``duty_status``: ``verified`` (the stated
duty matches the pack's line for the code), ``unverified`` (the pack has no line
for the code: no penalty, no critique) or ``not_stated``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Protocol

import msgspec
import orjson

from .._exceptions import InputError
from .._prompts import PromptConfig
from .._replies import ReplyParseError, extract_json_object
from .._validate import id_problem
from ..llm import LLMClient
from ..records import Message, Usage
from ..runtime import atomic_write_bytes
from ._cases import Case
from ._dossier import Citation, Dossier, Lever, build_bundle
from ._gates import GateResult, run_gates
from ._pack import Pack

__all__ = ["DutyStatus", "FixtureProposer", "Iteration", "LLMProposer", "Proposer", "RecordingProposer",
           "VerificationResult", "fixture_path", "verify"]

DutyStatus = Literal["verified", "unverified", "not_stated"]
_DUTY_STATUS: dict[str, DutyStatus] = {"pass": "verified", "unverified": "unverified", "n/a": "not_stated"}


class Proposer(Protocol):
    async def propose(self, case_id: str, messages: list[Message], iteration: int) -> str: ...


class LLMProposer:
    """Ask a configured model (live mode)."""

    def __init__(self, client: LLMClient, model: str, *, key_prefix: str = "tariff") -> None:
        self.client = client
        self.model = model
        self.key_prefix = key_prefix
        self.usage = Usage()

    async def propose(self, case_id: str, messages: list[Message], iteration: int) -> str:
        result = await self.client.chat(self.model, messages, key=f"{self.key_prefix}/{case_id}/iter{iteration}")
        self.usage = self.usage + result.usage
        return result.content or ""


class _Fixture(msgspec.Struct, kw_only=True):
    case_id: str
    model: str
    replies: list[str]


def fixture_path(fixtures_dir: Path, case_id: str) -> Path:
    """``fixtures_dir/<case_id>.json``; refused when the id is no safe file name or the path leaves the directory.

    Case ids are checked when cases load; this is the second line of defence for
    proposers given ids from elsewhere (and for a fixture that is a symlink out).
    """
    path = fixtures_dir / f"{case_id}.json"
    problem = id_problem(case_id)
    if problem is None and not path.resolve().is_relative_to(fixtures_dir.resolve()):
        problem = "resolves outside the fixtures directory"
    if problem is not None:
        raise InputError(f"{fixtures_dir}: case id {case_id[:80]!r} cannot name a fixture file: {problem}")
    return path


class FixtureProposer:
    """Replay the recorded replies of ``fixtures/<case_id>.json`` (fixture mode: offline, deterministic)."""

    def __init__(self, fixtures_dir: str | Path) -> None:
        self.fixtures_dir = Path(fixtures_dir)

    async def propose(self, case_id: str, messages: list[Message], iteration: int) -> str:
        path = fixture_path(self.fixtures_dir, case_id)
        try:
            fixture = msgspec.json.decode(path.read_bytes(), type=_Fixture)
        except FileNotFoundError as exc:
            raise InputError(f"{path}: no fixture for case {case_id!r}; record one with --mode record") from exc
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise InputError(f"{path}: invalid fixture ({exc})") from exc
        except RecursionError as exc:
            raise InputError(f"{path}: invalid fixture (nested too deeply to read)") from exc
        if iteration >= len(fixture.replies):
            raise InputError(f"{path}: has {len(fixture.replies)} recorded repl(ies) but iteration {iteration + 1} "
                             "needs another; re-record with --mode record")
        return fixture.replies[iteration]


class RecordingProposer:
    """Live mode that also writes each case's replies as its fixture (record mode)."""

    def __init__(self, inner: LLMProposer, fixtures_dir: str | Path) -> None:
        self.inner = inner
        self.fixtures_dir = Path(fixtures_dir)
        self._replies: dict[str, list[str]] = {}

    async def propose(self, case_id: str, messages: list[Message], iteration: int) -> str:
        path = fixture_path(self.fixtures_dir, case_id)  # before the paid call
        reply = await self.inner.propose(case_id, messages, iteration)
        replies = self._replies.setdefault(case_id, [])
        del replies[iteration:]
        replies.append(reply)
        fixture = _Fixture(case_id=case_id, model=self.inner.model, replies=replies)
        atomic_write_bytes(path, msgspec.json.format(msgspec.json.encode(fixture)) + b"\n", fsync=False)
        return reply


class Iteration(msgspec.Struct, kw_only=True):
    number: int
    reply: str
    dossier: Dossier | None
    gates: list[GateResult]
    rejection_reasons: list[str]


class VerificationResult(msgspec.Struct, kw_only=True):
    case_id: str
    status: Literal["accepted", "refused"]
    refusal_category: str | None = None
    iterations: list[Iteration] = []
    final_dossier: Dossier | None = None
    citations: list[Citation] = []
    levers: list[Lever] = []
    critical_gates_passed: bool = False
    gri_violation: bool = False
    duty_status: DutyStatus | None = None


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


async def verify(case: Case, proposer: Proposer, pack: Pack, prompts: PromptConfig) -> VerificationResult:
    """Run the propose/gate/revise loop for one case."""
    request = case.input
    bundle = build_bundle(pack, request.input, request.evidence, request.options.candidate_chapters)
    bundle_json = orjson.dumps([msgspec.to_builtins(item) for item in bundle], option=orjson.OPT_INDENT_2).decode()
    values = {"request_json": orjson.dumps({"input": request.input, "evidence": request.evidence},
                                           option=orjson.OPT_INDENT_2).decode(),
              "evidence_bundle_json": bundle_json}
    messages = [Message(role="system", content=prompts.render("tariff_proposer", "system", **values)),
                Message(role="user", content=prompts.render("tariff_proposer", "user", **values))]
    max_iters = request.options.max_iters
    iterations: list[Iteration] = []
    for number in range(max_iters):
        reply = await proposer.propose(case.id, messages, number)
        dossier, problems = _parse(reply)
        gates = run_gates(dossier, problems, pack, bundle, request.input, request.evidence)
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
