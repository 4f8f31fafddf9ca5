"""The sim's two rate meters on a virtual clock: a token bucket refills continuously, a fixed window all at once."""

from __future__ import annotations

from mpcbench_async.runtime import read_limit_headers
from mpcbench_async.sim._meters import FixedWindow, TokenBucket


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def reading(meter: TokenBucket | FixedWindow) -> tuple[float, float]:
    """(remaining, reset in seconds) as a client reads the meter's headers."""
    got = read_limit_headers(meter.headers("requests"))["requests"]
    return got.remaining, got.reset_s


def test_a_fixed_window_is_whole_again_only_at_its_end():
    """1200 a minute in 1-s windows (20 each), counted from whole seconds: 20 pass at 5.25 s, the 21st is told to
    wait until 6 s, and still at 5.95 s; a token bucket the same size lets one more through every 0.05 s instead
    (5 in 0.25 s)."""
    clock = Clock(5.25)
    window = FixedWindow(1200, 1.0, clock)
    assert [0.0] * 20 + [0.75] == [window.try_take(1) for _ in range(21)]
    assert (0.0, 0.75) == reading(window)
    clock.now = 5.95
    assert (0.05, (0.0, 0.05)) == (round(window.try_take(1), 6), reading(window))
    clock.now = 6.0
    assert (0.0, (19.0, 1.0)) == (window.try_take(1), reading(window))

    clock = Clock(5.0)
    bucket = TokenBucket(1200, 1.0, clock)
    assert [0.0] * 20 + [0.05] == [round(bucket.try_take(1), 6) for _ in range(21)]
    clock.now = 5.25
    assert [0.0] * 5 + [0.05] == [round(bucket.try_take(1), 6) for _ in range(6)]


def test_a_fixed_windows_reading_and_its_size():
    """Half spent half-way through: 10 left, whole in 0.5 s; a cost above the window's size takes all of it."""
    clock = Clock(2.5)
    window = FixedWindow(1200, 1.0, clock)
    assert [0.0] * 10 == [window.try_take(1) for _ in range(10)]
    assert (10.0, 0.5) == reading(window)
    clock.now = 3.0
    assert (0.0, (0.0, 1.0)) == (window.try_take(50), reading(window))
