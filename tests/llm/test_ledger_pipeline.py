"""The ledger's commits follow each other at the disk's pace, not the event loop's (issue 31).

In a burst of replies the loop works through a long queue; when the loop handed the next batch to the ledger's
thread, that commit began only after the burst, and every request of the burst waited for it. The thread now
takes the batch filled meanwhile itself. Shown with the loop blocked outright while a commit returns.
"""

from __future__ import annotations

import threading

import anyio

from mpcbench_async.llm import CallLedger
from tests.llm.test_ledger import hold_first_commit, intent, lines


async def test_the_next_commit_begins_while_the_loop_is_busy(tmp_path, monkeypatch):
    """Three intents handed in during the first commit are written and flushed in a second commit while the loop
    is blocked (no loop callback in between); their callers return once the loop runs again, lines in order."""
    ledger = CallLedger(tmp_path / "ledger.jsonl")
    hold, released = hold_first_commit(ledger, monkeypatch)
    held_write = ledger._write
    second = threading.Event()

    def write(batch: list[bytes]) -> None:
        held_write(batch)
        if ledger.stats.commits == 2:
            second.set()

    monkeypatch.setattr(ledger, "_write", write)
    done: list[str] = []

    async def one(call_id: str) -> None:
        await ledger.intend(intent(call_id))
        done.append(call_id)

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "p-0")
        await anyio.to_thread.run_sync(hold.wait)
        for i in (1, 2, 3):
            tg.start_soon(one, f"p-{i}")
        await anyio.wait_all_tasks_blocked()  # all three wait in the open batch
        released.set()
        committed = second.wait(30)  # the loop blocked: only the thread can start the second commit
        assert (True, [], 2, 4, 3) == (committed, done, ledger.stats.commits, ledger.stats.intents,
                                       ledger.stats.largest_commit)
    ledger.close()
    assert (["p-0", "p-1", "p-2", "p-3"], ["p-0", "p-1", "p-2", "p-3"]) == (
        done, [line["call_id"] for line in lines(tmp_path / "ledger.jsonl")])
