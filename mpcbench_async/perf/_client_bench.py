"""``bench client``: requests/s and client CPU per call for each transport.

The same workload (N one-message chat calls to ``sim/echo`` at concurrency C)
goes through the full ``LLMClient`` path — limiter, retry loop, accounting —
with each transport, against one sim server running in a separate process.
CPU is ``time.process_time`` of this process, so it counts the client only.
Each (transport, concurrency) cell is repeated; medians are reported.
"""

from __future__ import annotations

import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import anyio
import msgspec

from ..llm import LLMClient, ModelConfig
from ..records import Message
from ..runtime import WorkerPool

__all__ = ["ClientBenchRow", "format_markdown", "run_client_bench"]


class ClientBenchRow(msgspec.Struct, kw_only=True):
    """Medians for one transport at one concurrency."""

    transport: str
    concurrency: int
    requests: int
    repeats: int
    requests_per_s: float
    cpu_us_per_call: float
    wall_s: float


async def _one_run(base_url: str, transport: str, concurrency: int, requests: int, tag: str) -> tuple[float, float]:
    config = ModelConfig.from_dict({
        "defaults": {"limits": {"max_concurrency": concurrency, "adaptive": False},
                     "params": {"max_tokens": 16}},
    })
    messages = [Message(role="user", content="Summarise the status of project ALPHA in one line.")]
    async with LLMClient(config, transport=transport, sim_base_url=base_url) as client:

        async def call(i: int) -> None:
            await client.chat("sim/echo", messages, key=f"{tag}-{i}")

        warm = WorkerPool(call, concurrency=concurrency)
        async with warm.stream(range(-concurrency, 0)) as results:
            async for _ in results:
                pass
        pool = WorkerPool(call, concurrency=concurrency)
        wall0, cpu0 = time.perf_counter(), time.process_time()
        async with pool.stream(range(requests)) as results:
            async for _ in results:
                pass
        return time.perf_counter() - wall0, time.process_time() - cpu0


def run_client_bench(
    base_url: str,
    *,
    transports: Sequence[str] = ("native", "openai"),
    concurrencies: Sequence[int] = (1, 64, 256),
    requests: int = 2000,
    repeats: int = 3,
    progress: Callable[[str], None] | None = None,
) -> list[ClientBenchRow]:
    """Measure every (transport, concurrency) cell ``repeats`` times; return medians.

    Repeats are interleaved across transports (A B A B …) so drift in machine
    load affects both alike.
    """
    samples: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for concurrency in concurrencies:
        n = max(requests, concurrency * 4) if concurrency > 1 else max(200, requests // 4)
        for repeat in range(repeats):
            for transport in transports:
                wall, cpu = anyio.run(_one_run, base_url, transport, concurrency, n,
                                      f"{transport}-{concurrency}-{repeat}")
                samples.setdefault((transport, concurrency), []).append((wall, cpu / n))
                if progress:
                    progress(f"{transport:7s} c={concurrency:<4d} run {repeat + 1}/{repeats}: "
                             f"{n / wall:8.0f} req/s  {cpu / n * 1e6:7.0f} µs CPU/call")
    rows = []
    for (transport, concurrency), runs in samples.items():
        n = max(requests, concurrency * 4) if concurrency > 1 else max(200, requests // 4)
        wall = statistics.median(w for w, _ in runs)
        rows.append(ClientBenchRow(
            transport=transport, concurrency=concurrency, requests=n, repeats=len(runs),
            requests_per_s=statistics.median(n / w for w, _ in runs),
            cpu_us_per_call=statistics.median(c for _, c in runs) * 1e6, wall_s=wall,
        ))
    return rows


def format_markdown(rows: Sequence[ClientBenchRow], command: str) -> str:
    """The results as a Markdown section: machine, command, table and native/SDK ratios."""
    by = {(r.transport, r.concurrency): r for r in rows}
    concurrencies = sorted({r.concurrency for r in rows})
    lines = [
        f"### LLM client transports — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "",
        f"Machine: {platform.machine()}, {_cores()} cores, Python {sys.version.split()[0]}, "
        f"{platform.system()} {platform.release()}. Command: `{command}`.",
        "Sim in a separate process; client CPU = process time of the client only; medians of "
        f"{rows[0].repeats if rows else 0} interleaved runs.",
        "",
        "| concurrency | transport | requests | req/s | CPU µs/call |",
        "|---:|---|---:|---:|---:|",
    ]
    for c in concurrencies:
        for t in sorted({r.transport for r in rows}):
            r = by.get((t, c))
            if r:
                lines.append(f"| {c} | {t} | {r.requests} | {r.requests_per_s:,.0f} | {r.cpu_us_per_call:,.0f} |")
    if any(t == "openai" for t, _ in by) and any(t == "native" for t, _ in by):
        lines += ["", "| concurrency | CPU native/SDK | SDK CPU ÷ native CPU | req/s native/SDK |",
                  "|---:|---:|---:|---:|"]
        for c in concurrencies:
            n, s = by.get(("native", c)), by.get(("openai", c))
            if n and s:
                lines.append(f"| {c} | {n.cpu_us_per_call / s.cpu_us_per_call:.2f} | "
                             f"{s.cpu_us_per_call / n.cpu_us_per_call:.1f}× | "
                             f"{n.requests_per_s / s.requests_per_s:.2f} |")
    return "\n".join(lines) + "\n"


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 0)
