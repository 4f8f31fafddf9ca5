"""The one rate-limit core: when may the next request go, given the windows, the headers and the 429s.

Pure and synchronous: every method takes ``now`` (seconds on the caller's clock) and returns a decision; nothing
here sleeps, locks or talks to a loop. Two adapters wrap it:

* in-process, ``runtime._limiter`` (``ModelLimiter``, ``SlidingWindow``, ``AdaptiveRate``,
  ``AdaptiveConcurrency``) waits on a lock and the clock until the core says a request fits;
* on Ray, ``distributed._limits.GlobalLimits`` (inside the limiter actor) asks the same core whether a batch of
  credits fits, and the workers report the headers and 429s they see to it.

It lives in ``runtime`` because both need it and ``runtime`` is the lowest layer that knows what a limit is
(``LimitSettings``, ``BucketReading``): ``distributed`` sits above ``llm`` above ``runtime``, so the Ray side can
import it and nothing here knows Ray or a client exists. What is decided here, and why, is in each class.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Annotated, Any

import msgspec

from ._limit_headers import MINUTE_S, BucketReading, counted_window

__all__ = ["AimdCap", "AimdRate", "LimitSettings", "ModelPace", "Probe", "Window"]

WINDOW_S = 60.0  # the span of an rpm/tpm limit
_KINDS = ("requests", "tokens")
RESET_MARGIN_S = 0.02  # past a reading's reset before its window counts as whole again (transit, rounding to ms)
SIZES_S = 2.0  # the burst is half the smallest bucket the replies of this many seconds reported (``Window.fit``)
PROBE_S = 1.0  # a longer reset, not yet known as a bucket's or a window's, holds all but one request this long
FLOW_S = 1.0  # a bucket's share taken by other clients is measured between readings this far apart ...
FLOW_UNITS = 20.0  # ... or as far as the rate takes to refill this many units, if sooner (rounding: 1 unit in 20)
RECHECK_S = 0.25  # a longer hold by such a reading is looked at again this often (a reading may have ended it)


class LimitSettings(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Limits for one model; ``None`` means unlimited.

    ``bucket_s``: the seconds of the configured rate the provider's bucket is assumed to hold until a
    reply's headers tell (1: a provider metering per second; 60: per minute). The configured burst is
    half of it.
    """

    max_concurrency: int = 32
    rpm: int | None = None
    tpm: int | None = None
    adaptive: bool = True
    pacing: bool = True
    bucket_s: Annotated[float, msgspec.Meta(gt=0)] = 1.0

    def burst(self, per_minute: int) -> int:
        """The burst for a configured window of ``per_minute``: half the assumed bucket, at most 1/20 of it."""
        return max(1, min(per_minute // 20, int(per_minute / 60.0 * self.bucket_s / 2)))


class Window:
    """At most ``capacity`` units within any ``window`` seconds, paced GCRA-style when ``burst`` is set.

    Units flow at ``capacity / window`` per second with at most ``burst`` back to back, so a minute's budget is
    spread over the minute instead of spent in one burst at its start (which providers with smaller buckets
    answer with 429s). Each take is counted for ``span`` seconds (default ``window``; the Ray actor counts a
    grant for ``window + ttl``, since its credits may start up to ``ttl`` after their stamp). ``fit`` sizes the
    burst to the provider's bucket as a reply reports it; ``max_burst`` is the configured one, restored by a
    reply without headers. A ``learned`` window (no configured limit) takes its capacity from the headers and
    follows the provider's limit when it changes.

    ``fit`` with ``through`` (the count of units ``sent`` through the request the reply answers) also sets a
    ceiling, since the pace alone assumes a bucket that refills continuously and a provider may instead count a
    *fixed* window, whole again all at once at its reset: its ``remaining`` was counted when that request
    reached it, so only the units sent after it are unaccounted for, and until the reset instant (plus
    ``RESET_MARGIN_S`` for transit and rounding) no more than ``through + remaining`` units are sent. A reading
    placed before the one applied last (a reply overtaken by a later request's) changes nothing.

    The reset is counted from the reply's arrival, but at most ``RESET_MARGIN_S`` after its request left
    (``sent_at``): a gateway stamps the headers as the request passes, so a reply that took the model seconds
    reports a window that may be long over, and counting its reset from the arrival would hold every window
    that long past its end (at a 1-s window and 1-s replies, half the limit unused).

    A *token bucket* that reports its reset as the time until it is full (OpenAI's convention, the sim's) is not
    whole at once at its reset: it refills all along, so holding a drained one for its whole reset loses up to a
    minute of the rate (a per-minute bucket another client drained). The readings tell which it is
    (``continuous``): a bucket's size (``remaining + reset × rate``) is the same in every reply, while a fixed
    window's falls by the rate with every second within the window (its reset nears, its remaining does not grow)
    and jumps up at its end. Two readings at least ``_spread`` units of the rate apart, the later one inside the
    earlier one's window, settle it: the same size (within rounding) is a bucket's, and its ceiling then grows at
    the rate from the reading's instant instead of lapsing at the reset. Until the readings have settled it, a
    reading still caps what is sent until its reset, but one request goes ``PROBE_S`` after one whose reset is
    longer, so that a long reset (a drained minute) yields a second reading instead of a minute's hold.
    """

    def __init__(self, capacity: int, *, window: float = WINDOW_S, span: float | None = None,
                 burst: int | None = None, learned: bool = False) -> None:
        if capacity <= 0:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.capacity = capacity
        self.window = window
        self.span = window if span is None else span
        self.burst = self.max_burst = burst
        self.learned = learned
        self._emission = window / capacity
        self._tat = float("-inf")  # GCRA: when the pacing bucket is next empty
        self._entries: deque[list[Any]] = deque()  # [taken at, amount, key]
        self._by_key: dict[int, list[Any]] = {}
        self._used = 0
        self.sent = 0  # units taken so far: a reply's reading is placed by the count through its request
        self._read_through = -1  # the count through the request whose reading set the ceiling
        self._ceiling = math.inf  # the count ``sent`` may reach ...
        self._until = -math.inf  # ... before this instant: the reading's reset (plus the margin)
        self._since = -math.inf  # the reading's instant: a bucket's ceiling grows from it at ``_refill`` a second
        self._refill = 0.0
        self._probe_at = math.inf  # while ``continuous`` is unknown: one more may go from this instant ...
        self._probe_ceiling = 0.0  # ... up to this count
        self.continuous: bool | None = None  # the readings show a token bucket (True), a fixed window (False)
        self._ref: tuple[float, float, float] | None = None  # (instant, size, reset instant): compared with the next
        self.rejected = 0  # requests answered 429 (they took nothing from the provider's count)
        self.others = 0.0  # units a second other clients on the key take from the provider's count (``_flow``)
        self.measured = False
        self._flow_ref: tuple[float, int, float, int, float] | None = None  # (instant, through, remaining,
        # rejected, reset instant) of the reading the next is compared with
        self._taken = (0.0, 0.0)  # units the others took and the seconds measured, each halved every FLOW_S
        self._sizes: deque[tuple[float, float]] = deque()  # (arrival, size): the last SIZES_S's readings' minimum

    def _expire(self, now: float) -> None:
        horizon = now - self.span
        entries = self._entries
        while entries and entries[0][0] <= horizon:
            _, amount, key = entries.popleft()
            self._used -= amount
            if key is not None:
                del self._by_key[key]

    def wait(self, total: int, now: float, floor: int | None = None) -> float:
        """Seconds until ``total`` units fit the window and the pace (0: now).

        ``floor`` (default ``total``), one request's cost, may exceed the burst; a ``total`` above the capacity or
        above ``max(burst, floor)`` never fits at once (infinity): a batch is at most one burst.
        """
        floor = total if floor is None else floor
        burst = self.burst
        # conditionals, not ``max``, here and in the per-request paths below: its argument parsing costs ten times
        # the comparison
        if total > self.capacity or (burst is not None and total > burst and total > floor):
            return math.inf
        entries = self._entries
        if entries and entries[0][0] <= now - self.span:  # (``_expire``'s own test: called only with one to drop)
            self._expire(now)
        pace = 0.0
        if burst is not None:
            tat = self._tat
            pace = (tat if tat > now else now) + (total - (floor if floor > burst else burst)) * self._emission - now
        excess = self._used + total - self.capacity
        room = 0.0
        if excess > 0:  # else the loop would stop at its first entry
            for taken, amount, _ in entries:
                if excess <= 0:
                    break
                excess -= amount
                room = taken + self.span - now
        wait = room if room > pace else pace
        over = self.sent + total - self._ceiling
        if over > 0:
            if self._refill:  # a bucket's: what it has left grows at its rate
                wait = max(wait, self._since + over / self._refill - now)
            elif now < self._until:  # spent until its reset, but for the probe (one more, from ``_probe_at``)
                probe = self.sent + total <= self._probe_ceiling
                if not (probe and now >= self._probe_at):
                    hold = (min(self._probe_at, self._until) if probe else self._until) - now
                    if self.continuous is None and hold > PROBE_S:  # the probe's reading may end it: look again soon
                        hold = RECHECK_S
                    wait = max(wait, hold)
        return wait if wait > 1e-9 else 0.0

    def take(self, amount: int, now: float, key: int | None = None) -> None:
        """Count ``amount`` units taken at ``now`` (``key``: so that unused ones can be given back)."""
        entry = [now, amount, key]
        self._entries.append(entry)
        if key is not None:
            self._by_key[key] = entry
        self._used += amount
        self.sent += amount
        self._tat = (self._tat if self._tat > now else now) + amount * self._emission  # ``max``, as in ``wait``

    def give_back(self, key: int, amount: int) -> None:
        """Unused units taken under ``key`` leave the window (the pace keeps them: a conservative choice)."""
        entry = self._by_key.get(key)
        if entry is not None:  # else it has left the window already
            back = min(amount, entry[1])
            entry[1] -= back
            self._used -= back

    def fit(self, reading: BucketReading, now: float, through: int | None = None, sent_at: float | None = None) -> None:
        """Pace to the provider's bucket as one reply reported it (no-op when pacing is off); with ``through`` (the
        count ``sent`` through the reply's request) and ``sent_at`` (when it left), cap what is sent until its reset
        (see the class).

        The burst becomes half the bucket: the other half absorbs admissions that reach the provider bunched
        closer than they left (event-loop, network and lease jitter). While the reading's ceiling holds (it came
        before its reset) the bucket is the one it reports; otherwise it is the smallest the readings of the last
        ``SIZES_S`` reported. A token bucket reports the same size in every reply, but a *fixed* window read as
        one (``remaining + reset × rate``) looks nearly twice the limit at its start and nearly empty at its end:
        with replies slower than the window no ceiling holds, and a burst sized at a window's start let the pace
        send 14 back to back and then 20 a second, 29 within a 1-s window of 20. The pacing credit
        becomes at most what the provider had left, so a bucket drained by someone else holds the next
        admissions until it has refilled enough for them: counted from when the reading's request left, less
        the units sent after it (not from the reply's arrival: at a sliding log, full at its rate, that put
        each start a round trip's transit later, a place lost for good each time; 93% of the limit used). A
        per-minute limit in the reply below the configured one paces at the provider's rate (a tier lowered, a
        shared key); one above it never raises the configured rate. A learned window takes the reply's limit as
        it is, higher or lower.
        """
        if self.max_burst is None:
            return
        if through is not None and through < self._read_through:  # overtaken: a later request's reading applies
            return
        # conditionals, not ``min``/``max``, as in ``wait``
        anchor = now if sent_at is None or now < sent_at + RESET_MARGIN_S else sent_at + RESET_MARGIN_S
        per_second = (reading.per_minute or self.capacity * 60.0 / self.window) / 60.0
        size = reading.remaining + reading.reset_s * (reading.per_minute or per_second * 60.0) / 60.0  # ``size``
        self._classify(anchor, size, reading.reset_s, per_second)
        if through is not None:
            self._read_through = through
            self._ceiling = through + reading.remaining
            self._since = anchor
            self._until = math.inf if self.continuous else anchor + reading.reset_s + RESET_MARGIN_S
            self._flow(anchor, through, reading.remaining, size, per_second, reading.reset_s)
            # a bucket's refill left to this client: until what others take is measured, half of it
            left = per_second - self.others if self.measured else per_second / 2
            self._refill = (left if left > per_second / 20 else per_second / 20) if self.continuous else 0.0
            if self.continuous is False:  # what the others will take of the window before its reset is not ours
                self._ceiling -= self.others * reading.reset_s
            self._probe_at = anchor + PROBE_S if self.continuous is None and reading.reset_s > PROBE_S else math.inf
            # one beyond those in flight already
            self._probe_ceiling = (self.sent if self.sent > self._ceiling else self._ceiling) + 1
        if reading.per_minute is not None:
            provider = 60.0 / reading.per_minute
            if self.learned:
                self.capacity = max(1, int(reading.per_minute * self.window / 60.0))
            else:
                provider = max(self.window / self.capacity, provider)
            if provider != self._emission:  # the same pace (the usual reply): nothing to re-space
                self._pace(provider, now)
        sizes = self._sizes  # the sliding minimum: sizes rising from the oldest, a larger one dropped by a smaller
        while sizes and sizes[-1][1] >= size:
            sizes.pop()
        while sizes and sizes[0][0] <= now - SIZES_S:
            sizes.popleft()
        sizes.append((now, size))
        capped = through is not None and now < self._until  # this reading's ceiling guards its window
        burst = int((size if capped else sizes[0][1]) / 2)
        self.burst = burst if burst > 1 else 1
        # the pace's credit at most what the provider had left at the reading, less what was sent after its request
        after = 0 if through is None else self.sent - through
        short = self.burst - reading.remaining + after
        if short > 0:
            credit = (now if through is None or sent_at is None else sent_at) + short * self._emission
            if credit > self._tat:
                self._tat = credit

    @staticmethod
    def _spread(size: float, per_second: float) -> float:
        """How far (in units) two readings of one bucket may differ: ``remaining`` is whole units, the reset
        rounded to the millisecond."""
        return 1.0 + 0.002 * per_second + 1e-6 * size

    def _classify(self, at: float, size: float, reset_s: float, per_second: float) -> None:
        """Compare a reading (its instant, size and reset) with the reference one (``continuous``, see the class).

        Conclusive when the two are more than twice the spread plus one unit of the rate apart (a fixed window's
        size falls by at least that much meanwhile) and the later one is inside the earlier one's window (before
        its reset, so that a fixed window has not yet been whole again); the later one becomes the reference.
        One past the reference's reset replaces it, one too close is left out.
        """
        ref = self._ref
        if ref is None or at >= ref[2]:
            self._ref = (at, size, at + reset_s)
        elif (at - ref[0]) * per_second > 2 * (spread := self._spread(size, per_second)) + 1:
            self.continuous = abs(size - ref[1]) <= spread
            self._ref = (at, size, at + reset_s)

    def _flow(self, at: float, through: int, remaining: float, size: float, per_second: float,
              reset_s: float) -> None:
        """Measure what other clients on the key take (``others``, units a second) from this reading and the last.

        Between two readings, the provider's count lost this client's accepted requests (those sent between the
        two, less the ones answered 429) and, for a bucket, gained the rate × the time; what else it lost, other
        clients took. A bucket's pair counts only when it cannot have been full meanwhile (a full one stops
        refilling), a fixed window's only inside one window. The measures are summed as they come, signed (a
        bucket's remaining is whole units, so one pair may be a unit off either way; over consecutive pairs those
        errors cancel), each sum halved every ``FLOW_S`` seconds measured, so the rate follows a neighbour that
        comes or goes. ``measured``: whether the sums span ``FLOW_UNITS`` of the rate (or ``FLOW_S``) yet.
        """
        ref = self._flow_ref
        if ref is not None and self.continuous is not None:
            span = at - ref[0] if at > ref[0] else 0.0
            ours = through - ref[1] - (self.rejected - ref[3])
            expected = ref[2] - ours + (per_second * span if self.continuous else 0.0)
            if (expected < size - 1) if self.continuous else at < ref[4]:
                keep = 0.5 ** (span / FLOW_S)
                taken, seconds = self._taken[0] * keep + expected - remaining, self._taken[1] * keep + span
                self._taken = (taken, seconds)
                self.measured = self.measured or seconds >= min(FLOW_S, FLOW_UNITS / per_second)
                self.others = max(0.0, taken / seconds) if seconds > 0 else 0.0
        self._flow_ref = (at, through, remaining, self.rejected, at + reset_s)

    def _pace(self, emission: float, now: float) -> None:
        """Pace at ``emission`` s per unit from now on; the admissions already paced ahead of now are re-spaced
        at it too (a slower pace read once must not hold calls after a faster one is read again)."""
        if self._tat > now:
            self._tat = now + (self._tat - now) * emission / self._emission
        self._emission = emission


class Probe:
    """Until a model with nothing configured has its first reply: how many requests may be out.

    One goes first and the rest wait for its reply (a burst sent before any reading overruns a bucket not yet
    known). Each ``hold_s`` without a reply the allowance doubles (1, 2, 4, ...), as TCP's slow start does per
    round trip: the old rule, all of them at once after ``hold_s``, sent a model whose replies take about that
    long a burst of ``max_concurrency`` just before the first reading arrived (at fixed 1-s windows of 20 and
    1-s replies, 12 of the run's 15 429s). A probe that ends without a reply (``ended``) makes room for the next.
    """

    def __init__(self, hold_s: float) -> None:
        self.hold_s = hold_s
        self.out = 0  # probes sent and not ended
        self.allowed = 1
        self.until = math.inf  # when the allowance next doubles: ``hold_s`` after the first went, then each ``hold_s``

    def admit(self, now: float) -> float:
        """0 when one more may go now (counted out), else the seconds until the allowance next doubles."""
        if now >= self.until:
            self.allowed *= 2
            self.until = now + self.hold_s
        if self.out < self.allowed:
            self.out += 1
            if self.until == math.inf:
                self.until = now + self.hold_s
            return 0.0
        return self.until - now

    def ended(self) -> None:
        """A probe ended without a reply observed (it failed): its place is free."""
        self.out -= 1


class AimdRate:
    """A request rate learned from 429s alone (AIMD), for providers that say nothing else.

    Off (no pacing at all) until a 429 arrives. The first sets the rate to half the successes of the last
    second (what the provider let through); each later 429 episode multiplies it by ``decrease`` (429s from
    requests started before the last decrease belong to the same episode). Each success while the pace binds
    (a request waited for it within the last second, or one is waiting) adds ``growth × max(ceiling, rate) /
    rate``: the rate climbs by ``growth × ceiling`` per second (``ceiling``: the rate the last decrease cut),
    additively up to where the 429s began and faster beyond it. When the first 429 came with fewer than
    ``SLOW_START_SUCCESSES`` successes in the last second to estimate from (e.g. a key another client drained),
    the rate starts at half a request a second and doubles every second the pace binds, until the next 429.
    Admissions are paced (GCRA) with a burst of ``BURST_S`` seconds' worth. ``waiting`` is kept by the adapter:
    how many admissions wait for the pace now.
    """

    BURST_S = 0.25
    SLOW_START_SUCCESSES = 4

    def __init__(self, *, decrease: float = 0.7, growth: float = 0.1, minimum: float = 1 / 60) -> None:
        self.rate: float | None = None
        self.decrease = decrease
        self.growth = growth
        self.minimum = minimum
        self.decreases = 0
        self.ceiling = 0.0
        self.waiting = 0
        self._doubling = False
        self._tat = float("-inf")
        self._last_decrease = float("-inf")
        self._last_wait = float("-inf")
        self._second = 0  # successes counted per whole second while off: this second's and the last one's
        self._this_second = 0
        self._last_second = 0

    @property
    def burst(self) -> int:
        """Admissions allowed back to back at the current rate."""
        return max(1, int((self.rate or 0.0) * self.BURST_S))

    def wait(self, n: int, now: float) -> float:
        """Seconds until ``n`` admissions fit the pace (0: now, and always while off); infinity when ``n`` is
        more than one burst."""
        rate = self.rate
        if rate is None:
            return 0.0
        burst = self.burst
        if n > burst and n > 1:
            return math.inf
        wait = max(self._tat, now) - now + (n - burst) / rate
        return wait if wait > 1e-9 else 0.0

    def take(self, n: int, now: float, *, waited: bool) -> None:
        """Count ``n`` admissions at ``now``; ``waited``: they waited for the pace (it binds)."""
        rate = self.rate
        if rate is None:
            return
        self._tat = max(self._tat, now) + n / rate
        if waited:
            self._last_wait = now

    def _recent_successes(self, now: float) -> float:
        """Successes within the last second, from the per-second counts."""
        second = math.floor(now)
        if second != self._second:
            return self._this_second * (1.0 - (now - second)) if second == self._second + 1 else 0.0
        return self._this_second + self._last_second * (1.0 - (now - second))

    def succeeded(self, now: float, count: int = 1) -> None:
        """``count`` requests succeeded: counted while off, each a step up while the pace binds."""
        rate = self.rate
        if rate is None:
            second = math.floor(now)
            if second != self._second:
                self._last_second = self._this_second if second == self._second + 1 else 0
                self._this_second = 0
                self._second = second
            self._this_second += count
        elif self.waiting or now - self._last_wait < 1.0:
            for _ in range(count):
                step = math.log(2) * rate if self._doubling else self.growth * max(self.ceiling, rate)
                rate += step / rate
            self.rate = rate

    def limited(self, started_at: float, now: float) -> None:
        """A 429 the headers do not explain, for a request started at ``started_at``: decrease once per episode."""
        if started_at < self._last_decrease:
            return
        if self.rate is None:
            successes = self._recent_successes(now)
            self._doubling = successes < self.SLOW_START_SUCCESSES
            self.ceiling = max(self.minimum, successes, 1.0)
            self.rate = max(self.minimum, self.ceiling / 2)
        else:
            self._doubling = False
            self.ceiling = self.rate
            self.rate = max(self.minimum, self.rate * self.decrease)
        # No burst credit: the provider's bucket is empty now, so the next admission waits one emission interval.
        self._tat = max(self._tat, now + self.burst / self.rate)
        self._last_decrease = now
        self.decreases += 1


class AimdCap:
    """A concurrency cap that halves once per 429 episode and grows by 1 per cap's worth of saturated successes.

    Only the arithmetic: who holds the slots (a counter in-process, leases on Ray) is the adapter's business.
    """

    def __init__(self, maximum: int, *, minimum: int = 1, decrease_factor: float = 0.5,
                 adaptive: bool = True) -> None:
        if maximum < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {maximum}")
        self.maximum = maximum
        self.minimum = min(minimum, maximum)
        self.decrease_factor = decrease_factor
        self.adaptive = adaptive
        self.limit = float(maximum)
        self.decreases = 0
        self._last_decrease = float("-inf")
        self._saturated_successes = 0

    @property
    def limit(self) -> float:
        """The cap before rounding: halved per 429 episode, grown by 1 per cap's worth of saturated successes."""
        return self._limit

    @limit.setter
    def limit(self, value: float) -> None:
        # ``cap`` is read on every admission and release (a property there was a Python call each time, issue 31):
        # a plain attribute, kept in step here, where the limit changes (on a 429 episode or a growth step)
        self._limit = value
        self.cap = max(self.minimum, int(value))

    def limited(self, started_at: float, now: float, *, busy: int | None = None) -> None:
        """A 429 for a request started at ``started_at``: shrink once per episode, and only when the cap bound
        (``busy``, the requests being sent then, at least the cap; ``None``: assume it did)."""
        if not self.adaptive or started_at < self._last_decrease or (busy is not None and busy < self.cap):
            return
        self.limit = max(float(self.minimum), float(int(self.limit * self.decrease_factor)))
        self._last_decrease = now
        self._saturated_successes = 0
        self.decreases += 1

    def wants_growth(self, in_use: int) -> bool:
        """Whether successes now count toward growth: adaptive, below the maximum and ``in_use`` at the cap."""
        return self.adaptive and self._limit < self.maximum and in_use >= self.cap

    def succeeded(self, count: int = 1) -> bool:
        """``count`` successes while saturated (``wants_growth``); whether the cap grew."""
        self._saturated_successes += count
        grew = False
        while self._saturated_successes >= self.cap and self.limit < self.maximum:
            self._saturated_successes -= self.cap
            self.limit = min(float(self.maximum), float(self.cap + 1))
            grew = True
        return grew


class ModelPace:
    """One model's pace from every signal: the configured windows, the headers' buckets and the 429s' rate.

    What paces a model, strongest first:

    1. **Headers** (``observe``): each kind with a reading gets its window fitted to the provider's bucket; a
       kind with no configured window gets one *learned* from a reading with a limit.
    2. **Configuration**: ``rpm``/``tpm`` windows, paced (``settings.pacing``) with the configured burst, 1
       until the first reply (the slow start), restored by a reply without headers of that kind.
    3. **429s alone** (``limited``): one the readings just observed do not explain (no empty bucket) drives
       the ``AimdRate`` (none when ``adaptive`` or ``pacing`` is off).

    ``span_extra``: seconds each take stays counted beyond the window (the Ray actor's lease ``ttl``).
    """

    def __init__(self, settings: LimitSettings, *, span_extra: float = 0.0) -> None:
        self.settings = settings
        self.span_extra = span_extra
        self.requests = self._window(settings.rpm) if settings.rpm else None
        self.tokens = self._window(settings.tpm) if settings.tpm else None
        self.rate = AimdRate() if settings.adaptive and settings.pacing else None
        self.slow_start = settings.pacing
        self._last_readings: dict[str, BucketReading] | None = None
        self._counted = {"requests": MINUTE_S, "tokens": MINUTE_S}  # the window each kind's header limit counts

    def _window(self, capacity: int) -> Window:
        """A configured window, paced with the configured burst unless pacing is off (1 until a reply)."""
        span = WINDOW_S + self.span_extra
        if not self.settings.pacing:
            return Window(capacity, span=span)
        window = Window(capacity, span=span, burst=self.settings.burst(capacity))
        window.burst = 1
        return window

    def observe(self, readings: dict[str, BucketReading] | None, now: float,
                through: tuple[int | None, int | None] = (None, None), sent_at: float | None = None) -> None:
        """A reply arrived with these readings (``{}``: no rate-limit headers; ``None``: not looked at, e.g.
        pacing off or a client that does not pass headers). ``through``: the requests and tokens windows' counts
        ``sent`` through the reply's request (``None``: not known, e.g. on Ray, or the window did not exist then)
        and ``sent_at``, when it left, which let a reading cap what is sent until its reset (``Window.fit``)."""
        if readings is None or not self.settings.pacing:
            self.end_slow_start()
            return
        self._last_readings = readings
        counted_by_kind = self._counted
        for kind in _KINDS:  # no tuple made per kind: the collector counts every one
            requests = kind == "requests"
            window = self.requests if requests else self.tokens
            reading = readings.get(kind)
            if reading is not None:
                counted = counted_by_kind[kind] = counted_window(reading, counted_by_kind[kind])
                if counted != MINUTE_S:  # else ``per_window`` is the reading itself
                    reading = reading.per_window(counted)
                if window is None and reading.per_minute is not None:
                    window = Window(max(1, int(reading.per_minute)), span=WINDOW_S + self.span_extra, burst=1,
                                    learned=True)
                    if kind == "requests":
                        self.requests = window
                    else:
                        self.tokens = window
                if window is not None:
                    window.fit(reading, now, through[0] if requests else through[1], sent_at)
            elif window is not None and not window.learned:  # no reading of this kind: the configured burst
                window.burst = window.max_burst
        self.slow_start = False

    def end_slow_start(self) -> None:
        """A reply arrived that was not observed: the configured windows' burst from now on."""
        if self.slow_start:
            self.slow_start = False
            for window in (self.requests, self.tokens):
                if window is not None and not window.learned:
                    window.burst = window.max_burst

    def explained(self, token_cost: int) -> bool:
        """Whether the readings observed last (the 429's own) show an empty bucket; they are used up."""
        readings, self._last_readings = self._last_readings, None
        return readings is not None and (
            ("requests" in readings and readings["requests"].remaining < 1)
            or ("tokens" in readings and readings["tokens"].remaining < max(1, token_cost)))

    def limited(self, started_at: float, token_cost: int, now: float) -> None:
        """A 429 for a request started at ``started_at``: the rate decreases unless the headers explain it."""
        explained = self.explained(token_cost)
        self.end_slow_start()
        if self.requests is not None:
            self.requests.rejected += 1
        if self.rate is not None and not explained:
            self.rate.limited(started_at, now)

    def succeeded(self, now: float, count: int = 1) -> None:
        self._last_readings = None
        if self.slow_start:
            self.end_slow_start()
        if self.rate is not None:
            self.rate.succeeded(now, count)

    def wait(self, costs: tuple[int, ...] | list[int], now: float) -> float:
        """Seconds until ``len(costs)`` requests costing ``costs`` tokens fit every window and the rate."""
        wait = 0.0
        if self.requests is not None:
            wait = self.requests.wait(len(costs), now, 1)
        tokens = self.tokens
        if tokens is not None:
            wait = max(wait, tokens.wait(sum(self.tokens_charged(costs)), now, min(costs[0], tokens.capacity)))
        if self.rate is not None:
            wait = max(wait, self.rate.wait(len(costs), now))
        return wait

    def tokens_charged(self, costs: tuple[int, ...] | list[int]) -> list[int]:
        """Each cost as the tokens window charges it: clamped to its capacity (the server, not the limiter,
        rejects a request that can never fit)."""
        capacity = self.tokens.capacity if self.tokens is not None else 0
        return [min(max(cost, 0), capacity) for cost in costs]

    def take(self, costs: tuple[int, ...] | list[int], now: float, key: int | None = None, *,
             waited: bool = False) -> None:
        """Count the requests of ``costs`` admitted at ``now`` in every window and the rate."""
        if self.requests is not None:
            self.requests.take(len(costs), now, key)
        if self.tokens is not None:
            charged = sum(self.tokens_charged(costs))
            if charged:
                self.tokens.take(charged, now, key)
        if self.rate is not None:
            self.rate.take(len(costs), now, waited=waited)

    def give_back(self, key: int, requests: int, tokens: int) -> None:
        """Unused requests and tokens of the admission ``key`` leave the windows."""
        if self.requests is not None:
            self.requests.give_back(key, requests)
        if self.tokens is not None:
            self.tokens.give_back(key, tokens)
