"""Run a signal-handling WorkerPool that interrupts itself with SIGINT at item 20 (used by test_pool.py).

Usage: ``python pool_sigint_script.py OUT.jsonl [double]``. Each result is written to OUT.jsonl; the
number of records written is printed last on stdout, and the exit code is 130 when interrupted.

- default: item 20 sends one SIGINT; in-flight items finish within the 5 s grace period.
- ``double``: item 20 sends SIGINT twice, and items from 20 on wait for an event that never fires;
  the grace period is an hour, so only the second signal (abandon at once) lets the run end.
"""

from __future__ import annotations

import os
import signal
import sys

import anyio
import anyio.lowlevel

from mpcbench_async.runtime import JsonlWriter, WorkerPool


async def main(path: str, double: bool) -> int:
    never = anyio.Event()

    async def fn(i: int) -> int:
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        if i == 20:
            if double:
                # let the items before 20 finish and be written before interrupting
                for _ in range(50):
                    await anyio.lowlevel.checkpoint()
            os.kill(os.getpid(), signal.SIGINT)
            if double:
                os.kill(os.getpid(), signal.SIGINT)
        if double and i >= 20:
            await never.wait()
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        return i

    writer = JsonlWriter(path)
    pool = WorkerPool(fn, concurrency=4, handle_signals=True, grace_period=3600 if double else 5)
    try:
        async with pool.stream(range(1000)) as results:
            async for i in results:
                writer.write({"key": f"unit-{i}", "status": "ok"})
    finally:
        writer.close()
    print(writer.written, flush=True)
    return 130 if pool.interrupted else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1], len(sys.argv) > 2 and sys.argv[2] == "double"))
