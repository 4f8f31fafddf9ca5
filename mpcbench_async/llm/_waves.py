"""Lock-step waves: who still calls a batch model, how many of them wait on it, and what each wave took.

An agent run calls its model, runs the tools of the reply and calls again. On a batch model each call waits for its
batch, so the runs move in lock-step *waves*: every run waiting on the model joins the next batch, the tools run
between batches. A run says it is a *member* for as long as it may call again (``LLMClient.wave_member``): the
gathering batch is then sent as soon as every member waits on the model (none can add a request before a batch
ends) instead of at ``max_wait_s``; a batch is still cut at ``max_requests`` or ``max_wait_s`` after its first
request, so the slowest run does not hold the rest. Callers that are no member (a judge) join waves and are never
waited for.

Why a context variable: the transport sees requests, not runs; the member's task carries its membership down to
``BatchTransport.complete`` through every layer of the client unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal

import anyio
import anyio.lowlevel
import msgspec

__all__ = ["SETTLE_CHECKPOINTS", "Member", "WaveLog", "WaveReport", "Waves"]

# When every member waits, the gathering batch still lets the loop turn this often before it is sent: a run that
# has just ended hands its place to the pool's next unit within a few checkpoints, and that run's first request
# belongs in this wave, not the next.
SETTLE_CHECKPOINTS = 20

Cut = Literal["size", "age", "waiting", "resumed"]


class WaveReport(msgspec.Struct, kw_only=True, frozen=True):
    """One batch as its model's caller saw it: why it was sent, and when (the transport's clock, seconds)."""

    model: str
    batch_id: str
    requests: int
    cut: Cut  # full (``max_requests``), old (``max_wait_s``), every member waiting, or a journalled batch resumed
    started: float  # its first request joined (a resumed batch: when this invocation first waited on it)
    submitted: float  # created at the provider
    ended: float  # its results were in hand

    @property
    def latency_s(self) -> float:
        return self.ended - self.submitted


class WaveLog(msgspec.Struct, kw_only=True, frozen=True):
    """One batch model's waves: the most calls one member made (the waves its longest run needed) and each batch."""

    model: str
    turns: int
    reports: list[WaveReport]


class Member:
    """One caller that will call again until it leaves: its calls so far (an agent run's turns)."""

    def __init__(self, waves: Waves) -> None:
        self.waves, self.calls = waves, 0


_MEMBERS: ContextVar[tuple[Member, ...]] = ContextVar("wave_members", default=())


class Waves:
    """The members of one batch model, the keys of their calls waiting on a batch not yet ended, and the reports."""

    def __init__(self) -> None:
        self.members = 0
        self.waiting: set[str] = set()
        self.most_calls = 0  # the most calls one member made: the turns of the longest run, the waves it needs
        self.reports: list[WaveReport] = []
        self._changed: anyio.Event | None = None  # made by the gathering batch's leader, which waits on it

    @contextmanager
    def member(self) -> Iterator[Member]:
        """The calling task (and what it starts) is a member until the block ends; nested, the outer one counts."""
        mine = self.of_caller()
        if mine is not None:
            yield mine
            return
        member = Member(self)
        token = _MEMBERS.set((*_MEMBERS.get(), member))
        self.members += 1
        try:
            yield member
        finally:
            self.members -= 1
            _MEMBERS.reset(token)
            self.stir()

    def of_caller(self) -> Member | None:
        """The calling task's membership of these waves, ``None`` when it is no member."""
        return next((m for m in _MEMBERS.get() if m.waves is self), None)

    def counted(self, member: Member) -> None:
        member.calls += 1
        self.most_calls = max(self.most_calls, member.calls)

    def wait_on(self, key: str) -> None:
        self.waiting.add(key)
        self.stir()

    def done(self, keys: Iterator[str] | set[str] | list[str]) -> None:
        """These calls' batch ended (or never started): their runs go on, so they wait no more."""
        self.waiting.difference_update(keys)
        self.stir()

    def all_waiting(self) -> bool:
        return self.members > 0 and len(self.waiting) >= self.members

    def stir(self) -> None:
        if self._changed is not None:
            self._changed.set()

    async def changed(self) -> None:
        """Until a member comes or goes, a call waits, a batch ends or the gathering batch fills."""
        self._changed = anyio.Event()
        await self._changed.wait()

    async def settled_all_waiting(self) -> bool:
        """Every member waits, still, after the loop has turned ``SETTLE_CHECKPOINTS`` times."""
        for _ in range(SETTLE_CHECKPOINTS):
            if not self.all_waiting():
                return False
            await anyio.lowlevel.checkpoint()
        return self.all_waiting()
