"""The sim's OpenAI Batch API: JSONL files, batches that finish on a clock you can move, output and error files.

Routes (added to ``SimServer``): ``POST /v1/files`` (multipart, ``purpose=batch``),
``GET /v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches`` (list), ``GET /v1/batches/{id}``,
``POST /v1/batches/{id}/cancel`` and ``POST /sim/clock`` (``{"advance_s": N}``).

Why a clock: a real batch takes minutes to a day. Here a batch's requests finish
at evenly spaced times over ``batch_latency_s`` after its creation (0: all done at
the first look), by ``SimClock``, which is real time plus an offset a test moves
forward, so expiry and "a provider that never finishes" are tested offline,
with no sleeps. A batch is evaluated lazily whenever it is read.

Options come from the first line's model (the ``FaultSpec`` query suffix, e.g.
``sim/judge?batch_latency_s=3600&batch_expiry_s=60``): ``batch_latency_s``,
``batch_expiry_s`` (the completion window; requests not done by then are
``batch_expired`` in the error file) and ``batch_reject`` (the upload is refused).
Each line is answered by the server's policies and per-request faults (``fault``,
``fail_first``, ``p500``…), its attempt being how often its ``custom_id`` ran in
earlier batches, so ``fail_first=1`` fails a request once and its resubmission
succeeds. ``stats.batch_billed`` counts the successful results per ``custom_id``:
a test proves that nothing is billed twice.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from typing import Any

import msgspec
import orjson
from aiohttp import web

from ._anthropic import chat_request, message_reply
from ._faults import FaultSpec, split_model_name

__all__ = ["BatchDesk", "SimClock"]

CHAT_PATH = "/v1/chat/completions"

# (status, response body) for one line; the server answers it with its policies and faults.
Answer = Callable[[dict[str, Any], str, int], tuple[int, dict[str, Any]]]


class SimClock:
    """Wall time plus an offset that ``advance`` moves forward (batches are timed by it)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def now(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += max(0.0, seconds)


def _error(status: int, message: str, code: str | None = None) -> web.Response:
    body = orjson.dumps({"error": {"message": message, "type": "invalid_request_error", "code": code}})
    return web.Response(status=status, body=body, content_type="application/json")


def _json(doc: Any) -> web.Response:
    return web.Response(body=orjson.dumps(doc), content_type="application/json")


class _Batch:
    """One batch: its lines, when each is due, and (once terminal) its output and error files."""

    def __init__(self, ident: str, input_file_id: str, lines: list[dict[str, Any]], spec: FaultSpec,
                 created: float) -> None:
        self.ident, self.input_file_id, self.lines, self.spec = ident, input_file_id, lines, spec
        self.created = created
        self.status = "in_progress"
        self.finished: float | None = None
        self.output_file_id: str | None = None
        self.error_file_id: str | None = None
        self.completed = self.failed = 0
        self.entries: list[dict[str, Any]] = []  # every line's result, OpenAI-shaped (Anthropic's made from them)

    def due(self, index: int) -> float:
        """When line ``index`` finishes: evenly spread over the batch latency."""
        return self.created + self.spec.batch_latency_s * (index + 1) / len(self.lines)

    def doc(self) -> dict[str, Any]:
        expires = self.created + self.spec.batch_expiry_s
        return {"id": self.ident, "object": "batch", "endpoint": CHAT_PATH, "errors": None,
                "input_file_id": self.input_file_id, "completion_window": "24h", "status": self.status,
                "output_file_id": self.output_file_id, "error_file_id": self.error_file_id,
                "created_at": int(self.created), "in_progress_at": int(self.created), "expires_at": int(expires),
                "completed_at": int(self.finished) if self.status == "completed" and self.finished else None,
                "request_counts": {"total": len(self.lines), "completed": self.completed, "failed": self.failed}}


class BatchDesk:
    """Files and batches of one sim server (see the module docstring)."""

    def __init__(self, answer: Answer, defaults: Callable[[], FaultSpec], count: Callable[[str, str], None]) -> None:
        self.answer, self.defaults, self.count = answer, defaults, count
        self.clock = SimClock()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, _Batch] = {}
        self.runs: dict[str, int] = {}  # custom_id → how often it ran in a batch (its fault attempt)

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{id}/content", self._content)
        app.router.add_post("/v1/batches", self._create)
        app.router.add_get("/v1/batches", self._list)
        app.router.add_get("/v1/batches/{id}", self._get)
        app.router.add_post("/v1/batches/{id}/cancel", self._cancel)
        app.router.add_post("/sim/clock", self._advance)
        app.router.add_post("/v1/messages/batches", self._anthropic_create)
        app.router.add_get("/v1/messages/batches/{id}", self._anthropic_get)
        app.router.add_get("/v1/messages/batches/{id}/results", self._anthropic_results)
        app.router.add_post("/v1/messages/batches/{id}/cancel", self._anthropic_cancel)

    @staticmethod
    def _new_id(prefix: str) -> str:
        """A fresh id (random: a batch id journalled against another sim must not name one of this sim's)."""
        return f"{prefix}-{secrets.token_hex(10)}"

    # -- files -------------------------------------------------------------
    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        if form.get("purpose") != "batch" or not isinstance(upload, web.FileField):
            return _error(400, "a batch upload needs purpose=batch and a file field")
        raw = upload.file.read()
        lines, problem = self._parse(raw)
        if problem is None and lines and self._spec(lines[0])[0].batch_reject:
            problem = "simulated: the file was rejected (batch_reject)"
        if problem is not None:
            self.count("batch_rejected", "uploads")
            return _error(400, f"invalid batch file: {problem}", "invalid_file")
        ident = self._new_id("file")
        self.files[ident] = raw
        self.count("batch_uploads", "uploads")
        return _json({"id": ident, "object": "file", "bytes": len(raw), "purpose": "batch",
                      "filename": upload.filename, "created_at": int(self.clock.now())})

    def _parse(self, raw: bytes) -> tuple[list[dict[str, Any]], str | None]:
        lines: list[dict[str, Any]] = []
        seen: set[str] = set()
        for number, text in enumerate(raw.splitlines(), 1):
            if not text.strip():
                continue
            try:
                line = orjson.loads(text)
                custom_id, body = line["custom_id"], line["body"]
                ok = (isinstance(custom_id, str) and isinstance(body, dict) and line.get("method") == "POST"
                      and line.get("url") == CHAT_PATH and isinstance(body.get("model"), str))
            except (orjson.JSONDecodeError, KeyError, TypeError):
                ok = False
            if not ok:
                return [], (f"line {number} is not a request (custom_id, method POST, url {CHAT_PATH}, "
                            "body with a model)")
            if custom_id in seen:
                return [], f"line {number}: custom_id {custom_id!r} appears twice"
            seen.add(custom_id)
            lines.append(line)
        return lines, None if lines else "the file holds no requests"

    def _spec(self, line: dict[str, Any]) -> tuple[FaultSpec, str]:
        _base, query = split_model_name(line["body"]["model"])
        try:
            return self.defaults().with_overrides(query), ""
        except (ValueError, msgspec.ValidationError) as exc:
            return self.defaults(), str(exc)

    async def _content(self, request: web.Request) -> web.Response:
        raw = self.files.get(request.match_info["id"])
        if raw is None:
            return _error(404, f"No such File object: {request.match_info['id']}", "not_found")
        return web.Response(body=raw, content_type="application/jsonl")

    # -- batches -----------------------------------------------------------
    async def _create(self, request: web.Request) -> web.Response:
        try:
            body = orjson.loads(await request.read())
            input_file_id = body["input_file_id"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return _error(400, "a batch needs a JSON body with input_file_id")
        raw = self.files.get(input_file_id)
        if raw is None:
            return _error(404, f"No such File object: {input_file_id}", "not_found")
        if body.get("endpoint") != CHAT_PATH:
            return _error(400, f"endpoint must be {CHAT_PATH}")
        lines, _ = self._parse(raw)
        ident = self._new_id("batch")
        batch = self.batches[ident] = _Batch(ident, input_file_id, lines, self._spec(lines[0])[0], self.clock.now())
        self.count("batch_creates", "batches")
        return _json(batch.doc())

    async def _list(self, _request: web.Request) -> web.Response:
        """Every batch, newest first, on one page (OpenAI pages by ``limit`` and ``after``; a sim has few)."""
        now = self.clock.now()
        for batch in self.batches.values():
            self._settle(batch, now)
        docs = [batch.doc() for batch in reversed(self.batches.values())]
        return _json({"object": "list", "data": docs, "has_more": False})

    async def _get(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return _error(404, f"No batch found with id '{request.match_info['id']}'.", "not_found")
        self._settle(batch, self.clock.now())
        return _json(batch.doc())

    async def _cancel(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return _error(404, f"No batch found with id '{request.match_info['id']}'.", "not_found")
        now = self.clock.now()
        self._settle(batch, now)
        if batch.status == "in_progress":
            self._finish(batch, now, "cancelled", "batch_cancelled", "This request was cancelled with its batch.")
        return _json(batch.doc())

    async def _advance(self, request: web.Request) -> web.Response:
        self.clock.advance(float(orjson.loads(await request.read()).get("advance_s", 0)))
        return _json({"now": self.clock.now()})

    # -- Anthropic Message Batches (the same batches, Anthropic's shapes, translated as /v1/messages is) ----------
    async def _anthropic_create(self, request: web.Request) -> web.Response:
        try:
            requests = orjson.loads(await request.read())["requests"]
            lines = [{"custom_id": r["custom_id"], "body": chat_request(r["params"])} for r in requests]
            if not lines or len({line["custom_id"] for line in lines}) != len(lines):
                raise ValueError("requests must be non-empty with distinct custom_ids")
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            self.count("batch_rejected", "uploads")
            return _anthropic_error(400, f"invalid message batch: {exc}")
        if self._spec(lines[0])[0].batch_reject:
            self.count("batch_rejected", "uploads")
            return _anthropic_error(400, "invalid message batch: simulated: the batch was rejected (batch_reject)")
        ident = self._new_id("msgbatch")
        batch = self.batches[ident] = _Batch(ident, "", lines, self._spec(lines[0])[0], self.clock.now())
        self.count("batch_uploads", "uploads")
        self.count("batch_creates", "batches")
        return _json(_anthropic_doc(batch, request))

    def _anthropic_batch(self, request: web.Request) -> _Batch | web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return _anthropic_error(404, f"No message batch found with id '{request.match_info['id']}'.")
        self._settle(batch, self.clock.now())
        return batch

    async def _anthropic_get(self, request: web.Request) -> web.Response:
        batch = self._anthropic_batch(request)
        return batch if isinstance(batch, web.Response) else _json(_anthropic_doc(batch, request))

    async def _anthropic_cancel(self, request: web.Request) -> web.Response:
        batch = self._anthropic_batch(request)
        if isinstance(batch, web.Response):
            return batch
        if batch.status == "in_progress":
            self._finish(batch, self.clock.now(), "cancelled", "batch_cancelled", "cancelled")
        return _json(_anthropic_doc(batch, request))

    async def _anthropic_results(self, request: web.Request) -> web.Response:
        batch = self._anthropic_batch(request)
        if isinstance(batch, web.Response):
            return batch
        if batch.status == "in_progress":
            return _anthropic_error(400, f"message batch {batch.ident} is still processing")
        body = b"".join(orjson.dumps({"custom_id": e["custom_id"], "result": _anthropic_result(e)}) + b"\n"
                        for e in batch.entries)
        return web.Response(body=body, content_type="application/binary")

    def _settle(self, batch: _Batch, now: float) -> None:
        """Bring an unfinished batch up to ``now``: completed when its last line is due, expired at its window."""
        if batch.status != "in_progress":
            return
        if batch.due(len(batch.lines) - 1) <= min(now, batch.created + batch.spec.batch_expiry_s):
            self._finish(batch, batch.due(len(batch.lines) - 1), "completed", "", "")
        elif now >= batch.created + batch.spec.batch_expiry_s:
            self._finish(batch, batch.created + batch.spec.batch_expiry_s, "expired", "batch_expired",
                         "This request could not be executed before the completion window expired.")

    def _finish(self, batch: _Batch, at: float, status: str, code: str, message: str) -> None:
        """Answer every line due by ``at``; the rest get ``code`` in the error file."""
        output: list[bytes] = []
        errors: list[bytes] = []
        for index, line in enumerate(batch.lines):
            custom_id = line["custom_id"]
            entry: dict[str, Any] = {"id": f"batch_req_{hashlib.sha256(custom_id.encode()).hexdigest()[:16]}",
                                     "custom_id": custom_id, "response": None, "error": None}
            if batch.due(index) > at:
                entry["error"] = {"code": code, "message": message}
                errors.append(orjson.dumps(entry))
                continue
            attempt = self.runs.get(custom_id, 0)
            self.runs[custom_id] = attempt + 1
            status_code, body = self.answer(line["body"], custom_id, attempt)
            entry["response"] = {"status_code": status_code, "request_id": entry["id"], "body": body}
            if status_code == 200:
                output.append(orjson.dumps(entry))
                self.count("batch_billed", custom_id)
            else:
                errors.append(orjson.dumps(entry))
        batch.entries = [orjson.loads(raw) for raw in output + errors]
        batch.completed, batch.failed = len(output), len(errors)
        batch.status, batch.finished = status, at
        if output:
            batch.output_file_id = self._store(b"\n".join(output) + b"\n")
        if errors:
            batch.error_file_id = self._store(b"\n".join(errors) + b"\n")

    def _store(self, raw: bytes) -> str:
        ident = self._new_id("file")
        self.files[ident] = raw
        return ident


def _anthropic_error(status: int, message: str) -> web.Response:
    kind = "not_found_error" if status == 404 else "invalid_request_error"
    body = orjson.dumps({"type": "error", "error": {"type": kind, "message": message}})
    return web.Response(status=status, body=body, content_type="application/json")


def _anthropic_doc(batch: _Batch, request: web.Request) -> dict[str, Any]:
    ended = batch.status != "in_progress"
    counts = {"processing": 0 if ended else len(batch.lines), "succeeded": 0, "errored": 0, "canceled": 0,
              "expired": 0}
    for entry in batch.entries:
        counts[_anthropic_result(entry)["type"]] += 1
    origin = f"{request.scheme}://{request.host}"
    return {"id": batch.ident, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts, "created_at": batch.created, "ended_at": batch.finished,
            "expires_at": batch.created + batch.spec.batch_expiry_s,
            "results_url": f"{origin}/v1/messages/batches/{batch.ident}/results" if ended else None}


def _anthropic_result(entry: dict[str, Any]) -> dict[str, Any]:
    """One OpenAI-shaped line's result as Anthropic reports it: succeeded, errored, expired or canceled."""
    response, error = entry.get("response"), entry.get("error") or {}
    if response is None:
        return {"type": "expired" if error.get("code") == "batch_expired" else "canceled"}
    body = response["body"]
    if response["status_code"] != 200:
        return {"type": "errored", "error": {"type": "error", "error": {
            "type": body["error"]["type"], "message": body["error"]["message"]}}}
    return {"type": "succeeded", "message": message_reply(body)}
