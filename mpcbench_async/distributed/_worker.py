"""A Ray worker actor: runs the units the driver sends it on its own event loop, through its own client.

``UnitWorker`` is the body of one actor (``RayExecutor`` wraps it with
``ray.remote``). It runs ``stage.run(unit, client)`` exactly as the driver's
``Runner`` would, on the actor's asyncio loop (Ray runs an async actor's calls
concurrently there), and returns the record with the call records the unit
made: the driver, the only writer of the sweep directory, writes both. Each
stage object arrives once (``add_stage``) and is kept under a small id that
every unit call names (a plan holds every task and its data: deserialising it
per unit would cost more than the unit, and an object reference inside every
call would make the worker a borrower of it, one more exchange with the driver
per unit). A unit that raises sends its exception back, so the driver handles it
as if the unit had run there (``UnitReply.error``). A worker that lost the global
limiter sends ``WorkersLost`` instead of the unit's record: its calls could keep
to no limit, so the sweep stops and a rerun resumes (rather than every unit left
recorded as a failure that a resume would skip).
"""

from __future__ import annotations

import logging
import os
import pickle
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, NamedTuple

from .._exceptions import BenchError, WorkersLost
from ..llm import LLMClient, ModelConfig
from ..records import LLMCallRecord, UnitRecord
from ..runtime import unit_attempt
from ._leased import LeasedLimiters, leased_limiters

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["UnitReply", "UnitWorker", "WorkersLost"]

log = logging.getLogger(__name__)

_unit_calls: ContextVar[list[LLMCallRecord] | None] = ContextVar("unit_calls", default=None)


class UnitReply(NamedTuple):
    """What one unit sent back: its record (``None``: it did not run), its calls, the worker's retries, its error.

    ``retries`` is the worker client's running total (the driver keeps the latest per worker); ``error`` is the
    exception the unit raised (then ``record`` is ``None``).
    """

    record: UnitRecord | None
    calls: list[LLMCallRecord]
    retries: int
    error: Exception | None = None


class UnitWorker:
    """One worker: a client of its own (limits leased from the global limiter when given) and the stages it was sent.

    ``limiter`` is the global limiter actor (``None``: this worker's own local limits); ``worker_id`` names this
    worker's leases there, so they can be reclaimed when it dies.
    """

    def __init__(self, config: ModelConfig, *, worker_id: str, limiter: Any | None = None,
                 transport: str | None = None) -> None:
        self.worker_id = worker_id
        self._limiters: LeasedLimiters | None = leased_limiters(limiter, worker_id) if limiter is not None else None
        self.client = LLMClient(config, transport=transport, call_sink=_to_unit, limiter_factory=self._limiters)
        self._stages: dict[int, Any] = {}

    def ready(self) -> tuple[int, str]:
        """This worker's process id and node address, once it is up (the driver waits for every worker)."""
        import ray

        return os.getpid(), ray.util.get_node_ip_address()

    def check_models(self, models: Sequence[str]) -> Exception | None:
        """Resolve every model here, so a key missing on this worker's node fails before any unit is sent."""
        try:
            self.client.check_models(models)
        except Exception as exc:  # sent back as it is, to be raised on the driver
            return _portable(exc)
        return None

    def add_stage(self, stage_id: int, stage: Any) -> None:
        """Keep ``stage`` (Ray resolved its object reference here, once) for the units that name ``stage_id``."""
        self._stages[stage_id] = stage

    async def run(self, stage_id: int, unit: Any, attempt: int = 0) -> UnitReply:
        """Run ``unit`` of the stage added as ``stage_id``, as the unit's ``attempt``-th try (runtime.unit_attempt)."""
        stage = self._stages[stage_id]
        calls: list[LLMCallRecord] = []
        token = _unit_calls.set(calls)
        record: UnitRecord | None
        error: Exception | None = None
        try:
            with unit_attempt(attempt):
                record = await stage.run(unit, self.client)
        except Exception as exc:  # cancellation is not an Exception: ray.cancel ends the unit without a reply
            record, error = None, _portable(exc)
        finally:
            _unit_calls.reset(token)
        lost = self._limiters.lost() if self._limiters is not None else None
        if lost is not None and (record is None or record.status != "ok"):  # it failed for want of a limiter
            return UnitReply(None, calls, self.client.retries, WorkersLost(
                f"{lost}; the finished units are saved: rerun the same command to resume"))
        return UnitReply(record, calls, self.client.retries, error)

    async def aclose(self) -> None:
        """Close the client (its connections, any provider it started)."""
        await self.client.aclose()


def _to_unit(record: LLMCallRecord) -> None:
    """The client's call sink: the call goes back with the unit that made it (the sink runs in the unit's task)."""
    calls = _unit_calls.get()
    if calls is not None:
        calls.append(record)


def _portable(exc: Exception) -> Exception:
    """``exc`` if it survives the trip to the driver, else a ``BenchError`` with its class and text."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # an exception class whose arguments do not round-trip
        log.debug("unit.error.not_portable", exc_info=exc)
        return BenchError(f"{type(exc).__name__}: {exc}")
    return exc
