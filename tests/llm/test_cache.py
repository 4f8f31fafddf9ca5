"""The response cache at the sim: hits make no HTTP call, trials stay apart, modes, concurrency, broken files."""

from __future__ import annotations

import sqlite3

import anyio
import msgspec
import pytest

from mpcbench_async import LLMCallRecord, Message, ModelConfig, ReplyStoreError
from mpcbench_async.llm import ResponseCache, cache_path, cache_scope
from mpcbench_async.llm._cache import CacheError, cache_digest
from mpcbench_async.records import FunctionSchema, ToolSchema

PRICED = ModelConfig.from_dict({"models": {"sim/echo": {"prices": {"input_per_1m": 2.0, "output_per_1m": 8.0}}}})
TOOLS = [ToolSchema(function=FunctionSchema(name="Jira_SearchIssuesWithJql"))]


def user(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


def same_reply(result):
    """A result without how it was obtained (latency, attempts), which a hit cannot repeat."""
    return msgspec.structs.replace(result, latency_s=0.0, attempts=0)


async def one_run(client, texts=("alpha", "beta", "gamma")):
    """A small 'unit': plain calls, one with tools and a param override."""
    results = [await client.chat("sim/echo", user(text)) for text in texts]
    results.append(await client.chat("sim/echo", user("with tools"), TOOLS, temperature=0.5))
    return results


class TestHits:
    async def test_a_second_identical_run_makes_no_http_call_and_gives_identical_results(self, sim, make_client,
                                                                                        tmp_path):
        """Run 1 fills the cache (4 calls at the sim); run 2 in a new client and cache object sends nothing."""
        path = tmp_path / "cache.sqlite3"
        first_records: list[LLMCallRecord] = []
        first = make_client("native", PRICED, first_records)
        first.cache = ResponseCache(path)
        fetched = await one_run(first)
        assert 4 == sim.stats.total_received
        second_records: list[LLMCallRecord] = []
        second = make_client("native", PRICED, second_records)
        second.cache = ResponseCache(path)
        served = await one_run(second)
        assert 4 == sim.stats.total_received
        assert [same_reply(r) for r in fetched] == [same_reply(r) for r in served]
        assert [(0.0, 0)] * 4 == [(r.latency_s, r.attempts) for r in served]
        assert [(True, 0.0, 0, r.cost_usd, r.usage) for r in first_records] == [
            (r.cached, r.cost_usd, r.attempts, r.value_usd, r.usage) for r in second_records]
        assert all(r.cost_usd and r.cost_usd > 0 for r in first_records)
        assert [(False, None)] * 4 == [(r.cached, r.value_usd) for r in first_records]
        totals = second.totals()["sim/echo"]
        assert (4, 4, 0.0, 0) == (totals.calls, totals.cached, totals.cost_usd, totals.attempts)

    async def test_trials_are_separate_entries(self, sim, make_client, tmp_path):
        """The same request in trials 0 and 1 is fetched twice; trial 1 again is a hit (scope or per call)."""
        client = make_client("native")
        client.cache = ResponseCache(tmp_path / "c.sqlite3")
        for trial in (0, 1):
            with cache_scope(trial=trial):
                await client.chat("sim/echo", user("same"))
        assert 2 == sim.stats.total_received
        await client.chat("sim/echo", user("same"), cache_extra={"trial": 1})
        with cache_scope(trial=1):
            await client.chat("sim/echo", user("same"))
        assert 2 == sim.stats.total_received
        assert 2 == client.cache.stats().entries

    async def test_anything_that_changes_the_reply_misses(self, sim, make_client, tmp_path):
        """Messages, params, tools and the model all change the key; a reply-neutral `user` param does not."""
        client = make_client("native")
        client.cache = ResponseCache(tmp_path / "c.sqlite3")
        await client.chat("sim/echo", user("x"))
        await client.chat("sim/echo", user("y"))
        await client.chat("sim/echo", user("x"), temperature=0.3)
        await client.chat("sim/echo", user("x"), TOOLS)
        await client.chat("sim/echo?latency_ms=0", user("x"))
        assert 5 == sim.stats.total_received
        await client.chat("sim/echo", user("x"), user="someone")
        assert 5 == sim.stats.total_received

    async def test_a_changed_judge_prompt_refetches_only_the_judge_calls(self, sim, make_client, tmp_path):
        """Agent turns then judge calls; rerun with another judge prompt: the 3 agent turns are hits, judges not."""
        path = tmp_path / "c.sqlite3"

        async def sweep(judge_prompt: str) -> list[bool]:
            records: list[LLMCallRecord] = []
            client = make_client("native", records=records)
            client.cache = ResponseCache(path)
            for trial in range(3):
                with cache_scope(trial=trial):
                    answer = await client.chat("sim/echo", user(f"task 1, attempt {trial}"))
                    await client.chat("sim/judge", [Message(role="system", content=judge_prompt),
                                                    Message(role="user", content=answer.content or "")])
            return [r.cached for r in records]

        assert [False] * 6 == await sweep("Judge strictly.")
        assert [True, False] * 3 == await sweep("Judge strictly, citing the rubric.")
        assert 9 == sim.stats.total_received

    async def test_configured_headers_that_change_the_reply_miss(self, sim, make_client, tmp_path):
        """Clients that differ only in a configured header (an organization, an API version, a routing header) do not
        share entries; header names are case-insensitive; a secret header counts by its hash, never in clear."""
        path = tmp_path / "c.sqlite3"

        async def call(headers: dict[str, str]) -> bool:
            records: list[LLMCallRecord] = []
            client = make_client("native", ModelConfig.from_dict({"models": {"sim/echo": {"headers": headers}}}),
                                 records)
            client.cache = ResponseCache(path)
            await client.chat("sim/echo", user("x"))
            return records[0].cached

        secret_a, secret_b = "Bearer cachetest" + "a" * 24, "Bearer cachetest" + "b" * 24
        assert [False, False, True, False, False, True, False, False, True] == [
            await call({}), await call({"OpenAI-Organization": "org-a"}), await call({"openai-organization": "org-a"}),
            await call({"OpenAI-Organization": "org-b"}), await call({"anthropic-version": "2023-06-01"}),
            await call({"Anthropic-Version": "2023-06-01"}), await call({"X-Route": "eu"}),
            await call({"Authorization": secret_a}), await call({"Authorization": secret_a})]
        assert [False, True] == [await call({"Authorization": secret_b}), await call({})]
        assert 7 == sim.stats.total_received
        stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
        assert b"cachetest" not in stored and b"org-a" not in stored

    def test_no_configured_headers_keep_the_keys_caches_were_filled_with(self):
        """A model without configured headers keeps the key of earlier versions: existing caches still hit."""
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "seed": 1}
        pinned = "d736cd6686f59ea88dbfb2bcefaa060761627b6b937ec2cc7b6b585dd84ff57f"
        assert pinned == cache_digest("sim://", body) == cache_digest("sim://", body, headers={})
        assert pinned != cache_digest("sim://", body, headers={"OpenAI-Organization": "org-a"})

    def test_the_key_hashes_endpoint_body_and_scope(self):
        """The digest is stable for equal inputs and differs with the endpoint or an extra field."""
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "seed": 1}
        digest = cache_digest("sim://", body)
        assert digest == cache_digest("sim://", dict(reversed(body.items())))
        assert len({digest, cache_digest("https://a/v1", body), cache_digest("sim://", body, {"trial": 1}),
                    cache_digest("sim://", {**body, "seed": 2})}) == 4


class TestModes:
    async def test_read_mode_stores_nothing_and_needs_an_existing_cache(self, sim, make_client, tmp_path):
        path = tmp_path / "c.sqlite3"
        client = make_client("native")
        client.cache = ResponseCache(path, mode="read")
        with pytest.raises(ReplyStoreError) as caught:  # a call's failure, retryable (the open cache: CacheError)
            await client.chat("sim/echo", user("x"))
        assert caught.value.retryable
        assert (f"{path}: no response cache here (mode 'read' only reads an existing cache; fill one with mode "
                "'readwrite' or 'write')") == str(caught.value)
        filler = make_client("native")
        filler.cache = ResponseCache(path, mode="write")
        await filler.chat("sim/echo", user("x"))
        await filler.chat("sim/echo", user("x"))  # write mode never reads: fetched again
        assert 2 == sim.stats.total_received
        reader = make_client("native")
        reader.cache = ResponseCache(path, mode="read")
        await reader.chat("sim/echo", user("x"))
        await reader.chat("sim/echo", user("new"))
        await reader.chat("sim/echo", user("new"))  # a miss in read mode is not stored
        assert (4, 1) == (sim.stats.total_received, reader.cache.stats().entries)
        assert [0] == [m.hits for m in reader.cache.stats().models]  # read mode does not count hits

    async def test_off_mode_is_no_cache(self, sim, make_client, tmp_path):
        client = make_client("native")
        client.cache = ResponseCache(tmp_path / "c.sqlite3", mode="off")
        for _ in range(2):
            await client.chat("sim/echo", user("x"))
        assert (2, False) == (sim.stats.total_received, (tmp_path / "c.sqlite3").exists())

    def test_an_unknown_mode_is_refused(self, tmp_path):
        with pytest.raises(CacheError, match=r"unknown cache mode 'sometimes'; modes: read, write, readwrite, off"):
            ResponseCache(tmp_path / "c", mode="sometimes")  # type: ignore[arg-type]

    def test_a_location_names_a_directory_or_a_file(self, tmp_path):
        assert tmp_path / "responses.sqlite3" == cache_path(tmp_path)
        assert tmp_path / "new" / "responses.sqlite3" == cache_path(tmp_path / "new")
        assert tmp_path / "mine.db" == cache_path(tmp_path / "mine.db")


class TestConcurrency:
    async def test_concurrent_readers_beside_a_writer(self, sim, make_client, tmp_path):
        """Three read-only clients serve 20 hits each at once while a writer adds entries: no error, no call."""
        path = tmp_path / "c.sqlite3"
        writer = make_client("native")
        writer.cache = ResponseCache(path)
        texts = [f"q{i}" for i in range(20)]
        for text in texts:
            await writer.chat("sim/echo", user(text))
        assert 20 == sim.stats.total_received
        readers = []
        for _ in range(3):
            reader = make_client("native")
            reader.cache = ResponseCache(path, mode="read")
            readers.append(reader)
        served: list[str | None] = []

        async def read_all(reader):
            for text in texts:
                served.append((await reader.chat("sim/echo", user(text))).content)

        async with anyio.create_task_group() as tg:
            for reader in readers:
                tg.start_soon(read_all, reader)
            for i in range(10):
                tg.start_soon(writer.chat, "sim/echo", user(f"new{i}"))
        assert sorted(served) == sorted([f"echo: {t}" for t in texts] * 3)
        assert (30, 30) == (sim.stats.total_received, writer.cache.stats().entries)


class TestBrokenFiles:
    async def test_a_file_that_is_not_a_database_is_a_clear_error(self, make_client, tmp_path):
        path = tmp_path / "c.sqlite3"
        path.write_bytes(b"this is not sqlite" * 100)
        client = make_client("native")
        client.cache = ResponseCache(path)
        with pytest.raises(ReplyStoreError) as caught:  # a call's failure, retryable (the open cache: CacheError)
            await client.chat("sim/echo", user("x"))
        assert caught.value.retryable
        assert (f"{path}: not a usable response cache (file is not a database); delete it or pass another cache "
                "file") == str(caught.value)

    async def test_another_sqlite_database_is_refused(self, make_client, tmp_path):
        path = tmp_path / "other.db"
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE notes (text TEXT)")
        client = make_client("native")
        client.cache = ResponseCache(path)
        with pytest.raises(ReplyStoreError) as caught:  # a call's failure, retryable (the open cache: CacheError)
            await client.chat("sim/echo", user("x"))
        assert caught.value.retryable
        assert (f"{path}: not a response cache of this version (schema 0, tables ['notes']); pass another cache "
                "file or delete this one") == str(caught.value)

    async def test_a_cache_locked_by_another_writer_is_a_clear_error(self, make_client, tmp_path):
        """Another connection holds the write lock past the timeout: storing the reply fails with a clear line."""
        path = tmp_path / "c.sqlite3"
        with ResponseCache(path) as cache:
            cache.stats()  # creates it
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            client = make_client("native")
            client.cache = ResponseCache(path, timeout_s=0.05)
            with pytest.raises(ReplyStoreError) as caught:
                await client.chat("sim/echo", user("x"))
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert (f"{path}: the response cache stayed locked by another process for 0.05 s (database is locked); "
                "wait for it or use another cache file") == str(caught.value)


class TestStatsAndPrune:
    async def test_stats_count_entries_and_hits_by_model_and_prune_by_model_and_age(self, make_client, tmp_path):
        path = tmp_path / "c.sqlite3"
        client = make_client("native")
        client.cache = ResponseCache(path)
        for text in ("a", "b", "a", "a"):
            await client.chat("sim/echo", user(text))
        await client.chat("sim/judge", user("judge this"))
        stats = client.cache.stats()
        assert (3, [("sim/echo", 2, 2), ("sim/judge", 1, 0)]) == (
            stats.entries, [(m.model, m.entries, m.hits) for m in stats.models])
        assert stats.size_bytes > 0
        assert 0 == client.cache.prune(older_than_s=3600)
        assert 1 == client.cache.prune(model="sim/judge")
        assert 2 == client.cache.prune(older_than_s=0)
        assert 0 == client.cache.stats().entries

    def test_prune_needs_a_writable_cache(self, tmp_path):
        path = tmp_path / "c.sqlite3"
        with ResponseCache(path) as cache:
            cache.stats()
        with ResponseCache(path, mode="read") as cache, pytest.raises(
                CacheError, match="opened in mode 'read'; pruning needs 'write' or 'readwrite'"):
            cache.prune()
