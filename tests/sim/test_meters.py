"""The sim's rate meters on a virtual clock: a token bucket refills continuously, a fixed window all at once, a
sliding log one place at a time."""

from __future__ import annotations

from mpcbench_async.runtime import read_limit_headers
from mpcbench_async.sim._meters import FixedWindow, Meter, SlidingLog, TokenBucket


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def reading(meter: Meter) -> tuple[float, float]:
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


def test_an_empty_start_is_a_key_drained_before_the_first_request():
    """``start="empty"``: a per-minute bucket of 1200 has nothing at first and reports the whole minute to full;
    a fixed 1-s window's first window is spent, the next one whole."""
    clock = Clock(10.0)
    bucket = TokenBucket(1200, 60.0, clock, start="empty")
    assert (0.05, (0.0, 60.0)) == (round(bucket.try_take(1), 6), reading(bucket))
    clock.now = 10.05
    assert 0.0 == round(bucket.try_take(1), 6)
    clock = Clock(5.5)
    window = FixedWindow(1200, 1.0, clock, start="empty")
    assert (0.5, (0.0, 0.5)) == (window.try_take(1), reading(window))
    clock.now = 6.0
    assert 0.0 == window.try_take(1)


def test_a_share_is_another_client_taking_part_of_the_rate():
    """``share=0.4``: a 1-s bucket of 20, drained, refills at 12 a second (the other client takes 8), so after
    0.5 s it holds 6; a fixed window of 20 is spent 8 by its end, 4 half-way, whatever the client took."""
    clock = Clock(0.0)
    bucket = TokenBucket(1200, 1.0, clock, share=0.4)
    assert [0.0] * 20 == [bucket.try_take(1) for _ in range(20)]
    clock.now = 0.5
    assert [0.0] * 6 == [bucket.try_take(1) for _ in range(6)]
    assert 0.0 < bucket.try_take(1)
    clock = Clock(3.5)
    window = FixedWindow(1200, 1.0, clock, share=0.4)
    assert [0.0] * 16 + [0.5] == [window.try_take(1) for _ in range(17)]
    assert (0.0, 0.5) == reading(window)


def test_a_sliding_log_frees_each_place_a_window_after_it():
    """At most 20 in any trailing second: 10 at 0.0 s and 10 at 0.5 s fill it; the 21st is told to wait until the
    first ten leave (1.0 s), and at 1.0 s those ten places are free, not the whole log (a fixed window's would be).
    The reset is when the oldest leaves. A cost of 15 at 1.0 s waits for the 0.5-s takes too (1.5 s)."""
    clock = Clock(0.0)
    log = SlidingLog(1200, 1.0, clock)
    assert [0.0] * 10 == [log.try_take(1) for _ in range(10)]
    clock.now = 0.5
    assert [0.0] * 10 + [0.5] == [log.try_take(1) for _ in range(11)]
    assert (0.0, 0.5) == reading(log)
    clock.now = 1.0
    assert (10.0, 0.5) == reading(log)
    assert (0.5, [0.0] * 10, (0.0, 0.5)) == (log.try_take(15), [log.try_take(1) for _ in range(10)], reading(log))


def test_a_sliding_logs_share_and_empty_start():
    """``share=0.4`` holds 8 of a log of 20 all along: 12 pass; ``start="empty"``: full at its creation, whole again
    a window later."""
    log = SlidingLog(1200, 1.0, Clock(0.0), share=0.4)
    assert [0.0] * 12 + [1.0] == [log.try_take(1) for _ in range(13)]
    clock = Clock(3.0)
    log = SlidingLog(1200, 1.0, clock, start="empty")
    assert (1.0, (0.0, 1.0)) == (log.try_take(1), reading(log))
    clock.now = 4.0
    assert [0.0] * 20 == [log.try_take(1) for _ in range(20)]
