"""Fixture mode is replay through the normal client: call records, totals, retries and limits apply offline."""

from __future__ import annotations

import shutil

import anyio
import msgspec
import orjson
import pytest

from mpcbench_async import LLMCallRecord, ModelConfig, ServerError, load_prompts
from mpcbench_async.llm import ChatRequest, Endpoint, LLMClient, MockTransport
from mpcbench_async.tariff import FixtureTransport, load_pack, load_suite, run_cases
from mpcbench_async.tariff._pipeline import call_key, parse_call_key
from tests.conftest import REPO

SUITE = REPO / "storage" / "benchmarks" / "tariff"
PROMPTS = load_prompts(REPO / "prompt_config.json")
CASES = load_suite(SUITE / "cases")[:8]


@pytest.fixture(scope="module")
def shipped_pack():
    return load_pack(REPO / "storage" / "packs" / "tariff")


async def run(pack, tmp_path, name: str, client: LLMClient | None = None, fixtures=SUITE / "fixtures"):
    return await run_cases(CASES, pack=pack, prompts=PROMPTS, mode="fixture",
                           results_path=tmp_path / f"{name}.jsonl", fixtures_dir=fixtures, client=client,
                           handle_signals=False)


def scores(records) -> list[tuple[str, object]]:
    return [(r.case_id, msgspec.to_builtins(r.score)) for r in records]


class TestCallKey:
    def test_round_trips_and_other_keys_are_none(self):
        """tariff/<case_id>/iter<N> parses back to (case_id, N), even for an id holding '/'; other keys do not."""
        assert ("c1", 2) == parse_call_key(call_key("c1", 2))
        assert ("../x", 0) == parse_call_key(call_key("../x", 0))
        assert [None] * 4 == [parse_call_key(k) for k in ("unit-1/turn0", "tariff/c1/iterx", "tariff//iter1",
                                                          "other/c1/iter0")]


class TestThroughTheClient:
    async def test_every_proposer_call_is_a_call_record_of_the_fixture_transport(self, shipped_pack, tmp_path):
        """One ok call record per pipeline iteration, keyed tariff/<case>/iter<N>; scores as without a given client."""
        calls: list[LLMCallRecord] = []
        async with LLMClient(transport=FixtureTransport(SUITE / "fixtures"), call_sink=calls.append) as client:
            records = await run(shipped_pack, tmp_path, "given", client)
            totals = client.totals()["fixture"]
        expected = sorted(call_key(r.case_id, n) for r in records for n in range(len(r.result.iterations)))
        assert expected == sorted(c.key for c in calls)
        assert ({"ok"}, {"fixture"}, {1}) == ({c.status for c in calls}, {c.transport for c in calls},
                                             {c.attempts for c in calls})
        assert (len(expected), len(expected), 0) == (totals.calls, totals.attempts, totals.errors)
        assert scores(await run(shipped_pack, tmp_path, "own")) == scores(records)

    async def test_a_transient_failure_is_retried_and_the_score_is_unchanged(self, shipped_pack, tmp_path,
                                                                             fake_clock):
        """A 503 on one case's first call is retried by the client (2 attempts); every score stays the same."""
        fixtures = FixtureTransport(SUITE / "fixtures")
        flaky = call_key(CASES[0].id, 0)
        failed: list[str] = []

        async def handler(endpoint: Endpoint, request: ChatRequest):
            if request.key == flaky and not failed:
                failed.append(request.key)
                raise ServerError("service unavailable", model=endpoint.model, endpoint=endpoint.url, status=503)
            return await fixtures.complete(endpoint, request)

        calls: list[LLMCallRecord] = []
        async with LLMClient(transport=MockTransport(handler), clock=fake_clock, call_sink=calls.append) as client:
            records = await run(shipped_pack, tmp_path, "flaky", client)
            retries, totals = client.retries, client.totals()["fixture"]
        assert [flaky] == failed
        assert (1, totals.calls + 1, 0) == (retries, totals.attempts, totals.errors)
        assert [(flaky, "ok", 2)] == [(c.key, c.status, c.attempts) for c in calls if c.attempts > 1]
        assert {"ok"} == {r.status for r in records}
        assert scores(await run(shipped_pack, tmp_path, "plain")) == scores(records)

    async def test_the_model_limits_apply(self, shipped_pack, tmp_path):
        """With limits.max_concurrency 1, at most one fixture call is in flight although 8 cases run at once."""
        fixtures = FixtureTransport(SUITE / "fixtures")
        in_flight, peak = [0], [0]

        async def handler(endpoint: Endpoint, request: ChatRequest):
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
            try:
                return await fixtures.complete(endpoint, request)
            finally:
                in_flight[0] -= 1

        config = ModelConfig.from_dict({"models": {"fixture": {"limits": {"max_concurrency": 1}}}})
        async with LLMClient(config, transport=MockTransport(handler)) as client:
            await run(shipped_pack, tmp_path, "limited", client)
        assert 1 == peak[0]

    async def test_without_a_limit_calls_overlap(self, shipped_pack, tmp_path):
        """The contrast: under the default limits two fixture calls are in flight together."""
        fixtures = FixtureTransport(SUITE / "fixtures")
        in_flight = [0]
        overlapped = anyio.Event()

        async def handler(endpoint: Endpoint, request: ChatRequest):
            in_flight[0] += 1
            if in_flight[0] == 2:
                overlapped.set()
            with anyio.fail_after(10):  # guards against a hang only; two calls arrive at once
                await overlapped.wait()
            in_flight[0] -= 1
            return await fixtures.complete(endpoint, request)

        async with LLMClient(transport=MockTransport(handler)) as client:
            records = await run(shipped_pack, tmp_path, "overlap", client)
        assert {"ok"} == {r.status for r in records}


class TestMisses:
    async def test_a_missing_fixture_or_iteration_names_the_file_and_is_not_retried(self, shipped_pack, tmp_path):
        """No fixture file, or fewer replies than iterations: a permanent error record and call, naming the file."""
        fixtures = tmp_path / "fixtures"
        shutil.copytree(SUITE / "fixtures", fixtures)
        missing = CASES[0].id
        (fixtures / f"{missing}.json").unlink()
        short = next(c.id for c in CASES[1:]
                     if len(orjson.loads((fixtures / f"{c.id}.json").read_bytes())["replies"]) > 1)
        data = orjson.loads((fixtures / f"{short}.json").read_bytes())
        (fixtures / f"{short}.json").write_bytes(orjson.dumps({**data, "replies": data["replies"][:1]}))
        calls: list[LLMCallRecord] = []
        async with LLMClient(transport=FixtureTransport(fixtures), call_sink=calls.append) as client:
            records = await run(shipped_pack, tmp_path, "misses", client, fixtures)
        messages = {
            missing: f"{fixtures / missing}.json: no fixture for case {missing!r}; record one with ``mode=record``",
            short: f"{fixtures / short}.json: has 1 recorded repl(ies) but iteration 2 needs another; re-record "
                   "with ``mode=record``",
        }
        errors = {r.case_id: (r.error_class, r.error_message, r.retryable) for r in records if r.status == "error"}
        assert {case: ("ReplayMissError", text, False) for case, text in messages.items()} == errors
        failed_calls = {c.key: (c.error_class, c.error_message, c.attempts) for c in calls if c.status == "error"}
        assert {call_key(missing, 0): ("ReplayMissError", messages[missing], 1),
                call_key(short, 1): ("ReplayMissError", messages[short], 1)} == failed_calls
