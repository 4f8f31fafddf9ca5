"""Live progress on stderr: one line redrawn on a terminal, periodic plain lines otherwise.

It reads the runner's counters on a timer (every 0.5 s on a terminal, 10 s
otherwise), so the cost is a few string formats per tick, never per unit. A retry
(``retried``, the client's retry listener) is shown at once — model, attempt, why,
the next try — and stays on the line until its wait is over; at most one such
immediate redraw a second, so a storm of 429s does not flood a log.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, TextIO

import anyio

if TYPE_CHECKING:
    from ..llm import RetryEvent
    from ..runner import SweepStats

__all__ = ["ProgressLine"]


def _eta(done: int, total: int, elapsed: float) -> str:
    if done <= 0 or total <= done:
        return "–"
    seconds = elapsed / done * (total - done)
    return f"{seconds / 60:.0f}m" if seconds >= 120 else f"{seconds:.0f}s"


class ProgressLine:
    def __init__(self, stats: SweepStats, stream: TextIO | None = None, *, quiet: bool = False,
                 in_flight=lambda: 0, retries=lambda: 0, batches=lambda: []) -> None:
        self.stats = stats
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = self.stream.isatty()
        self.in_flight = in_flight
        self.retries = retries
        self.batches = batches  # (id, done, total) of the provider batches running now
        self._t0 = time.monotonic()
        self._retry: tuple[RetryEvent, float] | None = None  # the latest retry and when its wait ends
        self._retry_shown = float("-inf")

    def retried(self, event: RetryEvent) -> None:
        """A call is being retried: show it now (at most once a second) and on every line until its wait ends."""
        now = time.monotonic()
        self._retry = (event, now + event.wait_s)
        if now - self._retry_shown >= 1.0:
            self._retry_shown = now
            self.emit()

    def line(self) -> str:
        s = self.stats
        elapsed = time.monotonic() - self._t0
        runs_todo = s.runs_total - s.runs_skipped
        judges_todo = s.judges_total - s.judges_skipped
        cases_todo = s.cases_total - s.cases_skipped
        done = s.runs_done + s.judges_done + s.cases_done
        units = [f"runs {s.runs_done}/{runs_todo} judges {s.judges_done}/{judges_todo}"] if s.runs_total else []
        units += [f"cases {s.cases_done}/{cases_todo}"] if s.cases_total else []  # tariff suites
        skipped = s.runs_skipped + s.judges_skipped + s.cases_skipped
        cached = f" ({s.cached_calls} cached)" if s.cached_calls else ""
        running = self.batches()
        batches = "".join(f" | batch {ident} {done}/{total}" for ident, done, total in running[:2])
        batches += f" (+{len(running) - 2} batches)" if len(running) > 2 else ""
        return (f"{' '.join(units) or 'starting'} (skipped {skipped}){batches} | "
                f"{s.calls / max(elapsed, 1e-9):.1f} calls/s "
                f"in-flight {self.in_flight()} retries {self.retries()} errors {s.errors} | "
                f"{s.tokens:,} tok ${s.cost_text()}{cached} | {elapsed:.0f}s "
                f"ETA {_eta(done, runs_todo + judges_todo + cases_todo, elapsed)}{self._retrying()}")

    def _retrying(self) -> str:
        """The retry in progress, if its wait is not over: `` | retrying M: attempt …; next try in N s``."""
        left = 0.0 if self._retry is None else self._retry[1] - time.monotonic()
        if self._retry is None or left < 0:
            return ""
        return " | " + self._retry[0].describe(reason_chars=80, wait_s=left)

    def emit(self, final: bool = False) -> None:
        if self.quiet:
            return
        if self.tty:
            self.stream.write("\r\x1b[2K" + self.line() + ("\n" if final else ""))
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    async def run(self) -> None:
        """Redraw until cancelled."""
        interval = 0.5 if self.tty else 10.0
        while True:
            await anyio.sleep(interval)
            self.emit()
