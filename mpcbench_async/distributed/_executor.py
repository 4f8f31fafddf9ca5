"""``RayExecutor``: a runner's units run on Ray worker actors; the driver stays the only writer of the sweep directory.

The ``Runner`` (``Runner(executor=...)``) keeps everything it does for a local
sweep — the pipeline, the stage files, resume by key, follow-ups, the lock,
signals, progress — and hands only the running of one unit to the executor:
``await executor.run(stage, key, unit)`` sends ``(stage, unit)`` to the
least-loaded live ``UnitWorker`` actor, which runs ``stage.run(unit, client)``
on its own event loop through its own client, and returns the ``UnitReply``
(the record, the unit's call records, the worker's retries, or the exception
the unit raised); the driver writes the record and the calls. Each stage object
goes to the cluster once (``ray.put``) and to each worker once (``add_stage``,
before its first unit there); a unit call then names its stage by a small id,
so it costs one small message each way. Every worker leases its models' capacity from one limiter actor, so each
model's RPM, TPM and concurrency limits hold across all workers together.

Fault tolerance: a worker that dies (its process killed, its node lost) fails
every unit it had in flight with ``RayActorError``; the executor marks it dead,
has the limiter reclaim its leases and sends exactly those units to the live
workers — each runs again once, from the start (a unit's record is written only
when it has finished, so a unit already recorded is never in flight and never
re-run). When no worker is left, ``WorkersLost`` says so. A unit cancelled on
the driver (``abandon``, SIGINT after the grace period) is cancelled on its
worker (``ray.cancel``).

Ray is imported when the executor starts (``require_ray``); it needs the
asyncio backend (the driver awaits Ray's object references).

A local Ray instance the executor starts goes away with its driver: Ray ends its
raylet and GCS with the driver, and a watchdog process (``_watchdog``) SIGKILLs
the rest — worker actors, agents — within about a second when the driver dies
without shutting Ray down (SIGKILL, a crash); Ray alone left them 2–60 s.
"""

from __future__ import annotations

import logging
import os
import socket
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._exceptions import InputError
from .._options import setting_error
from ..llm import ModelConfig
from ..runtime import current_unit_attempt
from ._limiter_actor import start_limiter
from ._watchdog import Watchdog, start_watchdog
from ._worker import UnitReply, UnitWorker, WorkersLost

if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["RayExecutor", "WorkerState", "WorkersLost", "require_ray"]

log = logging.getLogger(__name__)

RAY_MISSING = "the Ray executor needs Ray: pip install -e '.[ray]'"
# What a driver without RAY_AUTH_MODE is told when it cannot join: Ray >= 2.59's `ray start` turns token checks on.
AUTH_HINT = ("; a cluster started by `ray start` of Ray 2.59 or later checks a token: set RAY_AUTH_MODE=token for this "
             "command (the token is read from ~/.ray/auth_token, or RAY_AUTH_TOKEN)")


def _check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Refuse at once a ``HOST:PORT`` (or ``ray://HOST:PORT``) address where nothing listens.

    ``ray.init`` would retry such an address for minutes before giving up; a TCP connect says in
    seconds. ``auto`` and forms without a port are left to Ray.
    """
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise setting_error("ray_address", f"ray_address {address}: nothing answers there ({exc.strerror or exc}); "
                            "start the head with `ray start --head --port=PORT` and give HEAD:PORT") from None


def require_ray() -> ModuleType:
    """The ``ray`` module, or an ``InputError`` saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise InputError(RAY_MISSING) from exc
    return ray


class WorkerState:
    """What the driver knows of one worker actor: where it runs, whether it lives, which units it has in flight."""

    def __init__(self, index: int, actor: Any, pid: int, node: str) -> None:
        self.index, self.actor, self.pid, self.node = index, actor, pid, node
        self.worker_id = f"worker-{index}"  # names its leases at the limiter
        self.alive = True
        self.units: set[str] = set()  # keys of the units it runs now
        self.retries = 0  # its client's retries, as of its latest reply
        self.stages: dict[int, Any] = {}  # stage id -> the reference of its add_stage call (awaited before units)


class RayExecutor:
    """Runs units on ``workers`` Ray actors (see the module docstring); ``async with`` it around the ``Runner``.

    ``address``: a running cluster's address (``HEAD:6379``, or ``auto``); ``None`` starts a local Ray instance for
    the executor's lifetime. If Ray is already initialised in this process, that instance is used as it is (and
    ``address`` is not looked at); only what the executor started is shut down. ``workers`` defaults to the
    cluster's CPU count; each worker claims one CPU and they are spread over the nodes. ``concurrency`` is the
    most units one worker runs at once (give it the runner's concurrency times its stages). ``transport``
    overrides every model's transport on the workers (a registered name, as ``LLMClient(transport=...)``).
    """

    def __init__(self, config: ModelConfig, *, address: str | None = None, workers: int | None = None,
                 concurrency: int = 64, transport: str | None = None) -> None:
        if workers is not None and workers < 1:
            raise setting_error("workers", f"workers must be at least 1, got {workers}")
        self.config, self.address, self.requested = config, address, workers
        self.concurrency, self.transport = max(1, concurrency), transport
        self.workers: list[WorkerState] = []
        self.rerun: Counter[str] = Counter()  # units sent again because their worker died, by key
        self.limiter: Any = None  # the global limiter actor
        self._ray: Any = None
        self._started = False
        self._watchdog: Watchdog | None = None  # takes a local instance down with a driver that dies
        self._stages: dict[int, tuple[Any, Any]] = {}  # id(stage) -> (stage, its object ref): the id stays unique

    # -- lifecycle -----------------------------------------------------------
    async def __aenter__(self) -> RayExecutor:
        ray = self._ray = require_ray()
        if self.address is not None:
            _check_reachable(self.address)
        if not ray.is_initialized():
            self._init(ray)
        try:
            await self._start_workers(ray)
        except BaseException:
            self._shutdown()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every live worker's client, stop the actors, shut down the Ray instance if the executor started it."""
        import anyio

        ray = self._ray
        if ray is None:
            return
        with anyio.CancelScope(shield=True):
            for worker in self.live:
                try:
                    await worker.actor.aclose.remote()
                except ray.exceptions.RayActorError:
                    continue  # it died meanwhile: nothing to close
        self._shutdown()

    def _init(self, ray: Any) -> None:
        if self.address is None:
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # a local instance reports nothing anywhere
            cpus = max(self.requested or 0, os.cpu_count() or 1)
            self._watchdog = start_watchdog(os.path.dirname(ray.__file__))
            try:
                ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=True)
            except BaseException:
                self._stop_watchdog()
                raise
        else:
            try:
                ray.init(address=self.address, log_to_driver=True)
            except (ConnectionError, ValueError) as exc:
                raise setting_error("ray_address", f"ray_address {self.address}: cannot join the Ray cluster there: "
                                    f"{exc}{'' if os.environ.get('RAY_AUTH_MODE') else AUTH_HINT}") from exc
        self._started = True

    async def _start_workers(self, ray: Any) -> None:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        count = self.requested or max(1, cpus)
        if count > cpus:
            raise setting_error("workers", f"workers {count}: the Ray cluster has {cpus} CPU(s) and each worker "
                                "needs one; ask for fewer workers or add nodes")
        self.limiter = start_limiter()
        actor_class = ray.remote(UnitWorker).options(num_cpus=1, max_concurrency=self.concurrency,
                                                     scheduling_strategy="SPREAD")
        actors = [actor_class.remote(self.config, worker_id=f"worker-{i}", limiter=self.limiter,
                                     transport=self.transport) for i in range(count)]
        where = [await actor.ready.remote() for actor in actors]
        self.workers = [WorkerState(i, actor, pid, node)
                        for i, (actor, (pid, node)) in enumerate(zip(actors, where, strict=True))]
        log.info("ray.workers_started", extra={"workers": count, "nodes": len({node for _, node in where})})

    def _shutdown(self) -> None:
        ray = self._ray
        for worker in self.workers:
            ray.kill(worker.actor, no_restart=True)
        if self.limiter is not None:
            ray.kill(self.limiter, no_restart=True)
        self.workers, self.limiter, self._stages = [], None, {}
        if self._started:
            ray.shutdown()
            self._started = False
        self._stop_watchdog()
        self._ray = None

    def _stop_watchdog(self) -> None:
        if self._watchdog is not None:
            self._watchdog.stop()
            self._watchdog = None

    # -- units ---------------------------------------------------------------
    @property
    def live(self) -> list[WorkerState]:
        return [worker for worker in self.workers if worker.alive]

    @property
    def retries(self) -> int:
        """Retries made by every worker's client so far (dead workers' as of their last reply)."""
        return sum(worker.retries for worker in self.workers)

    async def check_models(self, models: Sequence[str]) -> None:
        """Resolve every model on every worker (all at once), so a missing key there fails before any unit is sent."""
        replies = [worker.actor.check_models.remote(list(models)) for worker in self.live]
        for reply in replies:
            error = await reply
            if error is not None:
                raise error

    async def run(self, stage: Any, key: str, unit: Any) -> UnitReply:
        """Run ``unit`` (``key``) of ``stage`` on the least-loaded live worker; again on another if that one dies."""
        ray = self._ray
        stage_id = id(stage)
        if stage_id not in self._stages:
            self._stages[stage_id] = (stage, ray.put(stage))
        while True:
            worker = self._least_loaded()
            worker.units.add(key)
            try:
                reply: UnitReply = await self._run_on(worker, stage_id, unit)
            except ray.exceptions.RayActorError as exc:
                self._lost(worker, exc)
                self.rerun[key] += 1
                continue
            finally:
                worker.units.discard(key)
            worker.retries = max(worker.retries, reply.retries)
            return reply

    async def _run_on(self, worker: WorkerState, stage_id: int, unit: Any) -> UnitReply:
        """``unit`` on ``worker``, its stage sent there first if it is not yet (every unit waits for that one send)."""
        import anyio

        added = worker.stages.get(stage_id)
        if added is None:
            added = worker.stages[stage_id] = worker.actor.add_stage.remote(stage_id, self._stages[stage_id][1])
        await added
        ref = worker.actor.run.remote(stage_id, unit, current_unit_attempt())  # a resumed unit's try, as locally
        try:
            reply: UnitReply = await ref
        except anyio.get_cancelled_exc_class():
            self._ray.cancel(ref)  # the worker stops the unit too: it makes no more calls
            raise
        return reply

    def _least_loaded(self) -> WorkerState:
        live = self.live
        if not live:
            raise WorkersLost(f"every Ray worker died ({len(self.workers)} started); the finished units are saved: "
                              "rerun the same command to resume")
        return min(live, key=lambda worker: len(worker.units))

    def _lost(self, worker: WorkerState, exc: BaseException) -> None:
        """``worker`` died: never use it again, and give its leases back to the limiter."""
        if not worker.alive:
            return
        worker.alive = False
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        log.warning("ray.worker_died", extra={"worker": worker.worker_id, "pid": worker.pid, "node": worker.node,
                                              "in_flight": len(worker.units), "reason": reason})
        self._ray.kill(worker.actor, no_restart=True)  # were it only unreachable, it must not finish those units too
        if self.limiter is not None:
            self.limiter.reclaim.remote(worker.worker_id)
