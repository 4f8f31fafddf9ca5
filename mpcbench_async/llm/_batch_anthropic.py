"""Anthropic Message Batches behind ``BatchBackend``: the judge's plain request mapped to a Messages request.

``POST /v1/messages/batches`` takes the requests themselves (no file upload), so
``upload`` keeps them in this process under a local id and ``create`` sends them.
A kill between the two loses nothing that was paid for: ``create`` of an id this
process does not hold fails transiently, and the requests are resubmitted. There
is no way to find a batch by its requests (``find`` gives ``None``), so a kill in
the moment between the batch's creation and its journal line can send it again.
Each request and result is mapped as the Messages transport maps them (``_anthropic_shape``: system prompts,
tools, ``tool_use`` and ``tool_result`` blocks, ``max_tokens``; the reply's text, tool calls and usage), so agents'
turns go in Message Batches as judges' requests do.
"""

from __future__ import annotations

import hashlib
from typing import Any

import aiohttp
import orjson

from .._exceptions import LLMConnectionError, LLMError, ServerError
from ._anthropic_shape import from_anthropic, to_anthropic
from ._batch_api import BatchView, UnknownBatchError
from ._transport import Endpoint
from ._wire import WireCompletion, completion_from_builtins, error_for_status

__all__ = ["AnthropicBatches", "messages_params"]

VERSION = "2023-06-01"


def messages_params(body: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions body as Messages params (``to_anthropic``; a batch request is never streamed)."""
    return to_anthropic({k: v for k, v in body.items() if k not in ("stream", "stream_options")})


class AnthropicBatches:
    """Anthropic's Message Batches API over aiohttp (``x-api-key``, ``anthropic-version``)."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._staged: dict[str, list[tuple[str, dict[str, Any]]]] = {}

    async def _call(self, endpoint: Endpoint, method: str, url: str, **kwargs: Any) -> bytes:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        headers = {**endpoint.headers, "anthropic-version": VERSION}
        if endpoint.api_key:
            headers["x-api-key"] = endpoint.api_key
        try:
            async with self._session.request(method, url, headers=headers, **kwargs) as reply:
                body = await reply.read()
                if reply.status == 404:
                    raise UnknownBatchError(_message(body), model=endpoint.model, endpoint=url, status=404)
                if reply.status != 200:
                    raise error_for_status(reply.status, body, reply.headers, model=endpoint.model, endpoint=url)
                return body
        except aiohttp.ClientError as exc:
            raise LLMConnectionError(f"batch API call failed: {exc}", model=endpoint.model, endpoint=url) from exc

    @staticmethod
    def _url(endpoint: Endpoint, path: str = "") -> str:
        return endpoint.base_url.rstrip("/") + "/messages/batches" + path

    @staticmethod
    def _view(raw: bytes) -> BatchView:
        doc = orjson.loads(raw)
        counts = doc.get("request_counts") or {}
        total = sum(int(v or 0) for v in counts.values())
        status = {"ended": "completed", "canceling": "cancelling"}.get(doc["processing_status"], "in_progress")
        return BatchView(id=doc["id"], status=status, total=total, done=total - int(counts.get("processing") or 0),
                         output_file_id=doc.get("results_url"))

    async def upload(self, endpoint: Endpoint, lines: list[tuple[str, dict[str, Any]]]) -> str:
        ident = "local-" + hashlib.sha256("\n".join(k for k, _ in lines).encode()).hexdigest()[:20]
        self._staged[ident] = lines
        return ident

    async def create(self, endpoint: Endpoint, file_id: str) -> BatchView:
        lines = self._staged.pop(file_id, None)
        if lines is None:
            raise ServerError(f"the requests of {file_id} were never sent (the process that held them stopped)",
                              model=endpoint.model, endpoint=self._url(endpoint))
        requests = [{"custom_id": key, "params": messages_params(body)} for key, body in lines]
        return self._view(await self._call(endpoint, "POST", self._url(endpoint), json={"requests": requests}))

    async def find(self, endpoint: Endpoint, file_id: str) -> BatchView | None:
        return None

    async def poll(self, endpoint: Endpoint, batch_id: str) -> BatchView:
        return self._view(await self._call(endpoint, "GET", self._url(endpoint, f"/{batch_id}")))

    async def cancel(self, endpoint: Endpoint, batch_id: str) -> BatchView:
        return self._view(await self._call(endpoint, "POST", self._url(endpoint, f"/{batch_id}/cancel")))

    async def results(self, endpoint: Endpoint, view: BatchView) -> dict[str, WireCompletion | LLMError]:
        if view.output_file_id is None:
            return {}
        found: dict[str, WireCompletion | LLMError] = {}
        for text in (await self._call(endpoint, "GET", view.output_file_id)).splitlines():
            if text.strip():
                line = orjson.loads(text)
                found[line["custom_id"]] = _result(line["result"], endpoint, view.output_file_id)
        return found

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _message(body: bytes) -> str:
    try:
        return str(orjson.loads(body)["error"]["message"])
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return body[:200].decode(errors="replace")


def _result(result: dict[str, Any], endpoint: Endpoint, url: str) -> WireCompletion | LLMError:
    kind = result.get("type")
    if kind == "succeeded":
        return completion_from_builtins(from_anthropic(result["message"]), model=endpoint.model, endpoint=url)
    if kind == "errored":
        error = (result.get("error") or {}).get("error") or {}
        status = 400 if error.get("type") == "invalid_request_error" else 500
        return error_for_status(status, orjson.dumps({"error": error}), {}, model=endpoint.model, endpoint=url)
    return ServerError(f"batch_{kind}: the request was {kind} before it ran", model=endpoint.model, endpoint=url)
