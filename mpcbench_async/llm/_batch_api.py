"""The batch interface (submit requests → poll → results per request) and the OpenAI Batch API behind it.

Why an interface: a provider's batch API is four calls — upload or send the
requests, create, poll, read the results — and everything else (grouping calls
into batches, the journal that survives a kill, resubmitting what failed, the
deadline) is the same for every provider. ``BatchBackend`` is those calls, plus
``find``: the batch made from an uploaded file, for a kill between create and journal;
``_batch.BatchTransport`` is the rest. ``OpenAIBatches`` speaks OpenAI's: a JSONL
upload (``POST /files``, ``purpose=batch``), ``POST /batches``, ``GET
/batches/{id}``, ``GET /batches`` (the list), the output and error files (``GET /files/{id}/content``) and
``POST /batches/{id}/cancel``.
"""

from __future__ import annotations

from typing import Any, Protocol

import aiohttp
import msgspec
import orjson

from .._exceptions import LLMConnectionError, LLMError, PermanentLLMError, ServerError, UnknownBatchError
from ._transport import Endpoint
from ._wire import WireCompletion, completion_from_builtins, error_for_status

__all__ = ["TERMINAL", "BatchBackend", "BatchView", "OpenAIBatches", "UnknownBatchError"]

TERMINAL = frozenset({"completed", "expired", "cancelled", "failed"})


class BatchView(msgspec.Struct, kw_only=True):
    """A batch as the provider reports it now."""

    id: str
    status: str
    done: int = 0
    total: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    message: str = ""  # why a batch ``failed`` as a whole

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


class BatchBackend(Protocol):
    """A provider's batch API: what ``BatchTransport`` needs and nothing more."""

    async def upload(self, endpoint: Endpoint, lines: list[tuple[str, dict[str, Any]]]) -> str:
        """Send ``(custom_id, chat body)`` pairs as a batch's input; its file id, or an ``LLMError`` when refused."""
        ...

    async def create(self, endpoint: Endpoint, file_id: str) -> BatchView:
        """Start a batch of the uploaded file (what is billed)."""
        ...

    async def find(self, endpoint: Endpoint, file_id: str) -> BatchView | None:
        """The batch created from ``file_id``, ``None`` when none was (a kill between upload and create)."""
        ...

    async def poll(self, endpoint: Endpoint, batch_id: str) -> BatchView:
        """The batch now; ``UnknownBatchError`` when the provider has no such batch."""
        ...

    async def results(self, endpoint: Endpoint, view: BatchView) -> dict[str, WireCompletion | LLMError]:
        """Every request's result of a terminal batch: its completion, or the error it ended with."""
        ...

    async def cancel(self, endpoint: Endpoint, batch_id: str) -> BatchView:
        """Ask the provider to stop the batch (what finished stays in its results)."""
        ...

    async def aclose(self) -> None: ...


CHAT_PATH = "/v1/chat/completions"


class OpenAIBatches:
    """The OpenAI Batch API over aiohttp (one session, opened on first use)."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session

    @staticmethod
    def _url(endpoint: Endpoint, path: str) -> str:
        return endpoint.base_url.rstrip("/") + path

    @staticmethod
    def _headers(endpoint: Endpoint) -> dict[str, str]:
        headers = dict(endpoint.headers)
        if endpoint.api_key:
            headers["Authorization"] = f"Bearer {endpoint.api_key}"
        return headers

    async def _call(self, endpoint: Endpoint, method: str, path: str, **kwargs: Any) -> bytes:
        url = self._url(endpoint, path)
        try:
            async with self._open().request(method, url, headers=self._headers(endpoint), **kwargs) as reply:
                body = await reply.read()
                if reply.status != 200:
                    raise error_for_status(reply.status, body, reply.headers, model=endpoint.model, endpoint=url)
                return body
        except aiohttp.ClientError as exc:
            raise LLMConnectionError(f"batch API call failed: {exc}", model=endpoint.model, endpoint=url) from exc

    @staticmethod
    def _view(raw: bytes) -> BatchView:
        doc = orjson.loads(raw)
        counts = doc.get("request_counts") or {}
        errors = (doc.get("errors") or {}).get("data") or []
        return BatchView(id=doc["id"], status=doc["status"], total=int(counts.get("total") or 0),
                         done=int(counts.get("completed") or 0) + int(counts.get("failed") or 0),
                         output_file_id=doc.get("output_file_id"), error_file_id=doc.get("error_file_id"),
                         message="; ".join(str(e.get("message")) for e in errors))

    async def upload(self, endpoint: Endpoint, lines: list[tuple[str, dict[str, Any]]]) -> str:
        jsonl = b"".join(orjson.dumps({"custom_id": custom_id, "method": "POST", "url": CHAT_PATH, "body": body})
                         + b"\n" for custom_id, body in lines)
        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        form.add_field("file", jsonl, filename="batch.jsonl", content_type="application/jsonl")
        return str(orjson.loads(await self._call(endpoint, "POST", "/files", data=form))["id"])

    async def create(self, endpoint: Endpoint, file_id: str) -> BatchView:
        return self._view(await self._call(endpoint, "POST", "/batches", json={
            "input_file_id": file_id, "endpoint": CHAT_PATH, "completion_window": "24h"}))

    async def find(self, endpoint: Endpoint, file_id: str) -> BatchView | None:
        after = ""
        while True:
            page = orjson.loads(await self._call(endpoint, "GET", "/batches?limit=100" + after))
            for doc in page.get("data") or ():
                if doc.get("input_file_id") == file_id:
                    return self._view(orjson.dumps(doc))
            if not page.get("has_more") or not page.get("data"):
                return None
            after = f"&after={page['data'][-1]['id']}"

    async def poll(self, endpoint: Endpoint, batch_id: str) -> BatchView:
        try:
            return self._view(await self._call(endpoint, "GET", f"/batches/{batch_id}"))
        except PermanentLLMError as exc:
            if exc.status == 404:
                raise UnknownBatchError(exc.detail, model=endpoint.model, endpoint=exc.endpoint,
                                        status=404) from exc
            raise

    async def cancel(self, endpoint: Endpoint, batch_id: str) -> BatchView:
        return self._view(await self._call(endpoint, "POST", f"/batches/{batch_id}/cancel"))

    async def results(self, endpoint: Endpoint, view: BatchView) -> dict[str, WireCompletion | LLMError]:
        found: dict[str, WireCompletion | LLMError] = {}
        url = self._url(endpoint, f"/batches/{view.id}")
        for file_id in (view.output_file_id, view.error_file_id):
            if file_id is None:
                continue
            for text in (await self._call(endpoint, "GET", f"/files/{file_id}/content")).splitlines():
                if text.strip():
                    line = orjson.loads(text)
                    found[line["custom_id"]] = self._result(line, endpoint, url)
        return found

    @staticmethod
    def _result(line: dict[str, Any], endpoint: Endpoint, url: str) -> WireCompletion | LLMError:
        response, error = line.get("response"), line.get("error")
        if response is not None and response.get("status_code") == 200:
            try:
                return completion_from_builtins(response["body"], model=endpoint.model, endpoint=url)
            except LLMError as exc:
                return exc
        if response is not None:
            return error_for_status(int(response.get("status_code") or 500), orjson.dumps(response.get("body")),
                                    {}, model=endpoint.model, endpoint=url)
        code = (error or {}).get("code") or "batch_error"
        return ServerError(f"{code}: {(error or {}).get('message', '')}", model=endpoint.model, endpoint=url)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
