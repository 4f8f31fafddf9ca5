"""The sim's rate-limit buckets: a minute's worth by default, a shorter window (``rate_window_s``) on request.

The buckets refill in real time, so the resets are checked against bounds from the settings (one request
refills in 10 s at 6 per minute) rather than exact values.
"""

from __future__ import annotations

import aiohttp
import httpx
import orjson
import pytest

from mpcbench_async.cli import main
from mpcbench_async.perf import sim_subprocess
from mpcbench_async.runtime import read_limit_headers
from mpcbench_async.runtime._retry import parse_duration
from mpcbench_async.sim import SimServer


async def chat(sim: SimServer, model: str, key: str) -> tuple[int, dict[str, str]]:
    """One chat request; its status and x-ratelimit-*/retry headers (names lower-cased)."""
    body = orjson.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4})
    async with aiohttp.ClientSession() as session:
        async with session.post(sim.base_url + "/chat/completions", data=body,
                                headers={"Idempotency-Key": key}) as resp:
            await resp.read()
            return resp.status, {name.lower(): value for name, value in resp.headers.items()
                                 if name.lower().startswith(("x-ratelimit-", "anthropic-ratelimit-", "retry-after"))}


def reset_s(headers: dict[str, str], kind: str = "requests") -> float:
    value = parse_duration(headers[f"x-ratelimit-reset-{kind}"])
    assert value is not None
    return value


async def test_per_minute_bucket_holds_the_minute(sim):
    """rpm 6 by default: six requests back to back; each reply reports the per-minute limit and what is left."""
    replies = [await chat(sim, "sim/echo?rpm=6", f"k{i}") for i in range(7)]
    assert [200] * 6 + [429] == [status for status, _ in replies]
    assert [("6", str(5 - i)) for i in range(6)] == [
        (h["x-ratelimit-limit-requests"], h["x-ratelimit-remaining-requests"]) for _, h in replies[:6]]
    assert 9.0 < reset_s(replies[0][1]) <= 10.0  # one request refills in 10 s
    assert 50.0 < reset_s(replies[5][1]) <= 60.0
    assert {"rate_limited": 1} == sim.stats.faults


async def test_short_window_holds_only_its_share(sim):
    """rpm 6 metered in 10 s buckets holds one request: the second is a 429 though the minute is not spent.

    The headers tell the bucket's size: 0 left + a reset under 10 s × 6/60 per second is one request.
    """
    status, first = await chat(sim, "sim/echo?rpm=6&rate_window_s=10", "a")
    status2, second = await chat(sim, "sim/echo?rpm=6&rate_window_s=10", "b")
    assert (200, "6", "0") == (status, first["x-ratelimit-limit-requests"], first["x-ratelimit-remaining-requests"])
    assert 9.0 < reset_s(first) <= 10.0
    assert (429, "0") == (status2, second["x-ratelimit-remaining-requests"])
    assert 9000 < int(second["retry-after-ms"]) <= 10000
    assert 0.9 < read_limit_headers(first)["requests"].size(6) <= 1.0
    assert {"rate_limited": 1} == sim.stats.faults


async def test_short_window_applies_to_tokens(sim):
    """tpm 600 in 1 s buckets holds 10 tokens: a larger request takes the whole bucket, the next one waits."""
    model = "sim/echo?tpm=600&rate_window_s=1"
    (status, first), (status2, second) = [await chat(sim, model, key) for key in ("a", "b")]
    assert (200, 429) == (status, status2)
    assert ("600", "0") == (first["x-ratelimit-limit-tokens"], first["x-ratelimit-remaining-tokens"])
    assert 0.9 < reset_s(first, "tokens") <= 1.0
    assert "x-ratelimit-limit-requests" not in first


async def test_no_headers_mode_sends_only_the_retry_hint(sim):
    """rate_headers=none: a 200 says nothing of the bucket, a 429 only how long to wait."""
    model = "sim/echo?rpm=60&rate_window_s=1&rate_headers=none"
    (status, first), (status2, second) = [await chat(sim, model, key) for key in ("a", "b")]
    assert (200, {}) == (status, first)
    assert (429, {"retry-after", "retry-after-ms"}) == (status2, set(second))
    assert 0 < int(second["retry-after-ms"]) <= 1000 and "1" == second["retry-after"]


@pytest.mark.parametrize(("hint", "names"), [("ms", {"retry-after-ms"}), ("seconds", {"retry-after"}),
                                             ("none", set())])
async def test_the_retry_hint_can_be_chosen(sim, hint, names):
    model = f"sim/echo?rpm=60&rate_window_s=1&rate_headers=none&rate_hint={hint}"
    replies = [await chat(sim, model, key) for key in ("a", "b")]
    assert (429, names) == (replies[1][0], set(replies[1][1]))


async def test_anthropic_spelling(sim):
    """rate_headers=anthropic: anthropic-ratelimit-<kind>-limit/remaining/reset, the reset an RFC 3339 time;
    read back, the bucket is the second's worth the sim holds (10 at 600 a minute)."""
    status, headers = await chat(sim, "sim/echo?rpm=600&rate_window_s=1&rate_headers=anthropic", "a")
    assert 200 == status
    assert ("600", "9") == (headers["anthropic-ratelimit-requests-limit"],
                            headers["anthropic-ratelimit-requests-remaining"])
    assert headers["anthropic-ratelimit-requests-reset"].endswith("Z")
    assert not any(name.startswith("x-ratelimit-") for name in headers)
    assert 9 <= read_limit_headers(headers)["requests"].size(600) <= 10.5  # 9 left + what refills in the ~0.1 s left


async def test_window_must_be_positive(sim):
    """A zero window is a 400 naming the field."""
    body = orjson.dumps({"model": "sim/echo?rpm=6&rate_window_s=0", "messages": []})
    async with aiohttp.ClientSession() as session:
        async with session.post(sim.base_url + "/chat/completions", data=body) as resp:
            status, data = resp.status, orjson.loads(await resp.read())
    assert 400 == status
    assert ("bad sim options in model name 'sim/echo?rpm=6&rate_window_s=0': Expected `float` > 0.0 - at "
            "`$.rate_window_s`") == data["error"]["message"]


def test_sim_serve_meters_in_the_window_given():
    """`sim serve --rpm 6 --rate-window-s 10`: a bucket of one request (10 s of 6/min), so the second is a 429."""
    body = {"model": "sim/echo", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
    with sim_subprocess(["--rpm", "6", "--rate-window-s", "10"]) as base_url, httpx.Client() as client:
        replies = [client.post(base_url + "/chat/completions", json=body, headers={"Idempotency-Key": f"k{i}"})
                   for i in range(2)]
    assert [200, 429] == [reply.status_code for reply in replies]
    assert ("6", "0") == (replies[0].headers["x-ratelimit-limit-requests"],
                          replies[0].headers["x-ratelimit-remaining-requests"])


def test_sim_serve_refuses_a_window_of_zero(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["sim", "serve", "--rate-window-s", "0"])
    assert 2 == exit_info.value.code
    assert "argument --rate-window-s: must be above 0, got 0" in capsys.readouterr().err


def test_sim_serve_meters_a_fixed_window_spent_before_the_first_request():
    """`sim serve --rpm 60 --rate-window-s 10 --rate-meter fixed --rate-start empty`: the window of 10 is spent
    already, so the first request is a 429 and the headers say none is left."""
    body = {"model": "sim/echo", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
    with sim_subprocess(["--rpm", "60", "--rate-window-s", "10", "--rate-meter", "fixed", "--rate-start", "empty"]
                        ) as base_url, httpx.Client() as client:
        reply = client.post(base_url + "/chat/completions", json=body, headers={"Idempotency-Key": "k0"})
    assert 429 == reply.status_code
    assert "0" == reply.headers["x-ratelimit-remaining-requests"]


@pytest.mark.parametrize("share", ["1", "-0.1", "half"])
def test_sim_serve_refuses_a_share_outside_zero_to_one(capsys, share):
    with pytest.raises(SystemExit) as exit_info:
        main(["sim", "serve", f"--rate-share={share}"])
    assert 2 == exit_info.value.code
    expected = f"not a number: {share!r}" if share == "half" else f"must be at least 0 and below 1, got {share}"
    assert f"argument --rate-share: {expected}" in capsys.readouterr().err
