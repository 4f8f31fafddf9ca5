"""The sim's Batch API over HTTP: what it refuses, with which message, and the clock that finishes batches."""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson
import pytest

from mpcbench_async._exceptions import ConfigError
from mpcbench_async.llm import ModelConfig
from mpcbench_async.sim import SimServer


async def upload(sim: SimServer, raw: bytes) -> tuple[int, dict[str, Any]]:
    form = aiohttp.FormData()
    form.add_field("purpose", "batch")
    form.add_field("file", raw, filename="b.jsonl")
    async with aiohttp.ClientSession() as session, session.post(sim.base_url + "/files", data=form) as reply:
        return reply.status, orjson.loads(await reply.read())


async def call(sim: SimServer, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    async with aiohttp.ClientSession() as session, session.request(method, sim.base_url + path,
                                                                   json=body) as reply:
        return reply.status, orjson.loads(await reply.read())


def line(custom_id: str, model: str = "sim/echo") -> bytes:
    return orjson.dumps({"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions",
                         "body": {"model": model, "messages": [{"role": "user", "content": custom_id}]}}) + b"\n"


@pytest.mark.parametrize(("raw", "message"), [
    (b"not json\n", "invalid batch file: line 1 is not a request (custom_id, method POST, url /v1/chat/completions, "
                    "body with a model)"),
    (line("a") + line("a"), "invalid batch file: line 2: custom_id 'a' appears twice"),
    (b"\n", "invalid batch file: the file holds no requests"),
])
async def test_a_bad_file_is_refused_at_upload_naming_the_line(sim: SimServer, raw: bytes, message: str):
    """Malformed JSONL, a repeated custom_id, an empty file: a 400 that says which line, nothing stored."""
    status, body = await upload(sim, raw)
    assert (400, message, {}) == (status, body["error"]["message"], sim.stats.batch_uploads)


async def test_a_batch_finishes_on_the_sim_clock_and_unknown_ids_are_404(sim: SimServer):
    """latency 100 s: in progress until the clock moves; then the output file holds each reply; unknown ids 404."""
    status, uploaded = await upload(sim, line("a", "sim/echo?batch_latency_s=100") + line("b"))
    assert 200 == status
    _, batch = await call(sim, "POST", "/batches", {"input_file_id": uploaded["id"],
                                                   "endpoint": "/v1/chat/completions"})
    assert "in_progress" == (await call(sim, "GET", f"/batches/{batch['id']}"))[1]["status"]
    async with aiohttp.ClientSession() as session, session.post(
            sim.base_url.removesuffix("/v1") + "/sim/clock", json={"advance_s": 100}) as reply:
        assert 200 == reply.status
    _, done = await call(sim, "GET", f"/batches/{batch['id']}")
    assert ("completed", {"total": 2, "completed": 2, "failed": 0}) == (done["status"], done["request_counts"])
    async with aiohttp.ClientSession() as session, session.get(
            sim.base_url + f"/files/{done['output_file_id']}/content") as reply:
        lines = [orjson.loads(text) for text in (await reply.read()).splitlines()]
    assert [("a", 200, "echo: a"), ("b", 200, "echo: b")] == [
        (x["custom_id"], x["response"]["status_code"], x["response"]["body"]["choices"][0]["message"]["content"])
        for x in lines]
    assert (404, "No batch found with id 'batch-nope'.") == (
        lambda r: (r[0], r[1]["error"]["message"]))(await call(sim, "GET", "/batches/batch-nope"))
    assert (404, "No such File object: file-nope") == (lambda r: (r[0], r[1]["error"]["message"]))(
        await call(sim, "POST", "/batches", {"input_file_id": "file-nope", "endpoint": "/v1/chat/completions"}))


@pytest.mark.parametrize(("entry", "message"), [
    ({"batch": "yes"}, "Expected `bool | object`, got `str` - at `$.batch`"),
    ({"batch": {"max_wait": 1}}, "Object contains unknown field `max_wait` - at `$.batch`"),
    ({"prices": {"batch_discount": 1.5}}, "Expected `float` < 1.0 - at `$.prices.batch_discount`"),
])
def test_bad_batch_settings_name_the_file_and_field(entry: dict[str, Any], message: str):
    with pytest.raises(ConfigError) as caught:
        ModelConfig.from_dict({"models": {"gpt-4.1": entry}}, source="model_config.json")
    assert f"model_config.json: models.gpt-4.1: {message}" == str(caught.value)
