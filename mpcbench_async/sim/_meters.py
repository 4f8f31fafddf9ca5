"""How the sim meters a model's ``rpm``/``tpm`` (``FaultSpec.rate_meter``): a token bucket, a fixed window or a
sliding log.

Providers do all three. A token bucket (OpenAI's documented behaviour, the default here) refills continuously; a fixed
window (what many gateways and proxies count: so many requests per whole second or minute) is whole again all at
once at its end, so a client pacing evenly at the limit straddles its boundaries and one that trusts a reply's
``remaining`` until the reset must count the requests it sent after that reply's; a sliding log (at most so many in
any trailing window) frees each request's place one by one, ``window_s`` after it, so a client that sends late
loses that place for good. All three hold ``window_s`` seconds of
the rate and report themselves in the same headers — ``limit`` per minute, ``remaining`` now, ``reset`` until
whole again — so a client cannot tell them apart from one reply. ``clock`` is injectable so the meters can be
tested without waiting.

Two options play a key the client does not have to itself (``FaultSpec.rate_share``, ``rate_start``): ``share``, a
steady other client taking that share of the rate the whole time (its requests are not served, only counted
against the meter, so the sim's stats stay the client's own), and ``start="empty"``, a meter spent before the
first request (a bucket empty, the first fixed window used up), as a key another client has just drained.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime

__all__ = ["METERS", "FixedWindow", "Meter", "SlidingLog", "TokenBucket"]


class Meter:
    """A per-minute rate metered over ``window_s`` seconds: what a request takes, what replies report."""

    kind = ""

    def __init__(self, per_minute: int, window_s: float, clock: Callable[[], float] = time.monotonic, *,
                 share: float = 0.0, start: str = "full") -> None:
        self.per_minute = per_minute
        self.window_s = window_s
        self.rate = per_minute / 60.0
        self.size = self.rate * window_s
        self.clock = clock
        self.share = share
        self.start = start

    def state(self) -> tuple[float, float]:
        """What it holds now and the seconds until it is whole again."""
        raise NotImplementedError

    def try_take(self, cost: float) -> float:
        """Take ``cost`` (at most the whole size) and return 0, or return the seconds until it would fit."""
        raise NotImplementedError

    def headers(self, kind: str, spelling: str = "openai") -> dict[str, str]:
        """The meter as it is now: ``x-ratelimit-{limit,remaining,reset}-{kind}`` (``openai``) or
        ``anthropic-ratelimit-{kind}-{limit,remaining,reset}`` (``anthropic``, the reset an RFC 3339 time)."""
        level, to_full = self.state()
        if spelling == "anthropic":
            full_at = datetime.fromtimestamp(time.time() + to_full, UTC).isoformat(timespec="milliseconds")
            return {f"anthropic-ratelimit-{kind}-limit": str(self.per_minute),
                    f"anthropic-ratelimit-{kind}-remaining": str(int(level)),
                    f"anthropic-ratelimit-{kind}-reset": full_at.replace("+00:00", "Z")}
        return {f"x-ratelimit-limit-{kind}": str(self.per_minute),
                f"x-ratelimit-remaining-{kind}": str(int(level)),
                f"x-ratelimit-reset-{kind}": f"{to_full:.3f}s"}


class TokenBucket(Meter):
    """A token bucket that holds ``window_s`` seconds of the rate and refills continuously.

    With the default 60 s it holds the whole minute's budget; with 1 s it plays a provider that meters per second.
    Its headers let a client tell its size (``remaining + reset × limit / 60``) from any reply.
    """

    kind = "bucket"

    def __init__(self, per_minute: int, window_s: float, clock: Callable[[], float] = time.monotonic, *,
                 share: float = 0.0, start: str = "full") -> None:
        super().__init__(per_minute, window_s, clock, share=share, start=start)
        self.tokens = 0.0 if start == "empty" else self.size
        self.stamp = clock()

    def _level(self) -> float:
        """The level now: refilled at the rate less the other client's share."""
        now = self.clock()
        self.tokens = min(self.size, self.tokens + (now - self.stamp) * self.rate * (1.0 - self.share))
        self.stamp = now
        return self.tokens

    def state(self) -> tuple[float, float]:
        level = self._level()
        return level, (self.size - level) / self.rate

    def try_take(self, cost: float) -> float:
        level = self._level()
        cost = min(cost, self.size)
        if level >= cost:
            self.tokens -= cost
            return 0.0
        return (cost - level) / self.rate


class FixedWindow(Meter):
    """At most ``window_s`` seconds of the rate in each window, the windows counted from the clock's whole multiples
    of ``window_s`` (as a gateway counts whole seconds or minutes): whole again all at once at each window's end,
    which is what a reply's reset tells."""

    kind = "fixed"

    def __init__(self, per_minute: int, window_s: float, clock: Callable[[], float] = time.monotonic, *,
                 share: float = 0.0, start: str = "full") -> None:
        super().__init__(per_minute, window_s, clock, share=share, start=start)
        self.window = -math.inf  # the start of the window counted
        self.used = 0.0

    def _now(self) -> float:
        now = self.clock()
        start = math.floor(now / self.window_s) * self.window_s
        if start != self.window:
            first = self.window == -math.inf
            self.window, self.used = start, (self.size if first and self.start == "empty" else 0.0)
        return now

    def _spent(self, now: float) -> float:
        """Used in this window: the client's and the other client's share of the window so far."""
        return self.used + self.share * self.size * (now - self.window) / self.window_s

    def state(self) -> tuple[float, float]:
        now = self._now()
        return max(0.0, self.size - self._spent(now)), self.window + self.window_s - now

    def try_take(self, cost: float) -> float:
        now = self._now()
        cost = min(cost, self.size)
        if self._spent(now) + cost <= self.size:
            self.used += cost
            return 0.0
        return self.window + self.window_s - now


class SlidingLog(Meter):
    """At most ``window_s`` seconds of the rate taken within any trailing ``window_s`` seconds: each take leaves
    the log ``window_s`` after it, which is what a reply's reset tells (when the oldest leaves). Another client's
    steady ``share`` holds that share of the log all along; ``start="empty"``: a log full at its creation."""

    kind = "log"

    def __init__(self, per_minute: int, window_s: float, clock: Callable[[], float] = time.monotonic, *,
                 share: float = 0.0, start: str = "full") -> None:
        super().__init__(per_minute, window_s, clock, share=share, start=start)
        self.log: deque[tuple[float, float]] = deque()  # (taken at, amount), oldest first
        self.used = 0.0
        if start == "empty":
            self.log.append((clock(), self.size))
            self.used = self.size

    def _now(self) -> float:
        now = self.clock()
        log = self.log
        while log and log[0][0] <= now - self.window_s:
            self.used -= log.popleft()[1]
        return now

    def state(self) -> tuple[float, float]:
        now = self._now()
        left = max(0.0, self.size * (1.0 - self.share) - self.used)
        return left, (self.log[0][0] + self.window_s - now if self.log else 0.0)

    def try_take(self, cost: float) -> float:
        now = self._now()
        room = self.size * (1.0 - self.share)
        cost = min(cost, room)
        over = self.used + cost - room
        if over <= 0:
            self.log.append((now, cost))
            self.used += cost
            return 0.0
        leaves = now
        for taken, amount in self.log:  # the oldest takes leave first: wait for enough of them
            leaves, over = taken + self.window_s, over - amount
            if over <= 0:
                break
        return leaves - now


METERS: dict[str, type[Meter]] = {"bucket": TokenBucket, "fixed": FixedWindow, "log": SlidingLog}
