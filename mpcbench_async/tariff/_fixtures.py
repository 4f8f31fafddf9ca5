"""Tariff fixtures: each case's recorded proposer replies, served through the client or written in record mode.

A suite's ``fixtures/<case_id>.json`` holds ``{"case_id", "model", "replies": [...]}``,
one reply per pipeline iteration. Fixture mode is replay through the normal
``LLMClient``: ``FixtureTransport`` answers the proposer's call ``tariff/<case_id>/iter<N>``
(``call_key``) with ``replies[N]``, so the client's limits, retries, breaker, call
records and accounting apply offline exactly as to a live model. Fixtures are
addressed by that call key, not by a request hash (the ``replay`` transport's
store): they hold replies only, and the proposer prompts may be reworded
without re-recording them. Record mode (``RecordingProposer``) writes them.
"""

from __future__ import annotations

from pathlib import Path

import anyio.to_thread
import msgspec

from .._exceptions import InputError, ReplayMissError
from .._validate import id_problem
from ..llm import ChatRequest, Endpoint, Transport, WireCompletion
from ..records import Message
from ..runtime import atomic_write_bytes
from ._pipeline import LLMProposer, parse_call_key

__all__ = ["FixtureTransport", "RecordingProposer", "fixture_path", "read_reply", "recorded_models"]


class _Fixture(msgspec.Struct, kw_only=True):
    case_id: str
    model: str
    replies: list[str]


def fixture_path(fixtures_dir: Path, case_id: str) -> Path:
    """``fixtures_dir/<case_id>.json``; refused when the id is no safe file name or the path leaves the directory.

    Case ids are checked when cases load; this is the second line of defence for
    ids given from elsewhere (and for a fixture that is a symlink out).
    """
    path = fixtures_dir / f"{case_id}.json"
    problem = id_problem(case_id)
    if problem is None and not path.resolve().is_relative_to(fixtures_dir.resolve()):
        problem = "resolves outside the fixtures directory"
    if problem is not None:
        raise InputError(f"{fixtures_dir}: case id {case_id[:80]!r} cannot name a fixture file: {problem}")
    return path


class _Recorder(msgspec.Struct):
    model: str = ""


def recorded_models(fixtures_dir: Path) -> list[str]:
    """The models whose replies ``fixtures_dir`` holds, most cases first: what a fixture run replays and reports.

    A fixture that does not decode is skipped here; the run reports it, naming the file, when its case replays it.
    """
    counts: dict[str, int] = {}
    for path in sorted(fixtures_dir.glob("*.json")):
        try:
            model = msgspec.json.decode(path.read_bytes(), type=_Recorder).model
        except (OSError, msgspec.DecodeError):
            continue
        if model:
            counts[model] = counts.get(model, 0) + 1
    return sorted(counts, key=lambda m: (-counts[m], m))


def read_reply(fixtures_dir: Path, case_id: str, iteration: int) -> str:
    """The reply recorded for ``case_id``'s iteration ``iteration`` (0-based); blocking file I/O.

    A missing fixture or iteration is a ``ReplayMissError`` (retrying cannot help); an
    unreadable fixture or an unsafe case id an ``InputError``. Both name the file.
    """
    path = fixture_path(fixtures_dir, case_id)
    try:
        fixture = msgspec.json.decode(path.read_bytes(), type=_Fixture)
    except FileNotFoundError as exc:
        raise ReplayMissError(f"{path}: no fixture for case {case_id!r}; record one with ``mode=record``") from exc
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise InputError(f"{path}: invalid fixture ({exc})") from exc
    except RecursionError as exc:
        raise InputError(f"{path}: invalid fixture (nested too deeply to read)") from exc
    if iteration >= len(fixture.replies):
        raise ReplayMissError(f"{path}: has {len(fixture.replies)} recorded repl(ies) but iteration {iteration + 1} "
                              "needs another; re-record with ``mode=record``")
    return fixture.replies[iteration]


class FixtureTransport(Transport):
    """Answer the tariff proposer's calls from ``fixtures_dir``, offline (no key, no network, no sim)."""

    name = "fixture"
    offline = True

    def __init__(self, fixtures_dir: str | Path) -> None:
        self.fixtures_dir = Path(fixtures_dir)

    async def complete(self, endpoint: Endpoint, request: ChatRequest) -> WireCompletion:
        parsed = parse_call_key(request.key)
        if parsed is None:
            raise ReplayMissError(f"{self.fixtures_dir}: call key {request.key[:80]!r} names no case iteration "
                                  "(fixtures answer tariff/<case_id>/iter<N>)")
        reply = await anyio.to_thread.run_sync(read_reply, self.fixtures_dir, *parsed)
        return msgspec.convert({"choices": [{"message": {"role": "assistant", "content": reply},
                                             "finish_reason": "stop"}]}, WireCompletion)


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
