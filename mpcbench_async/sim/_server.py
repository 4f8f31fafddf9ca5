"""The simulated OpenAI-compatible provider: a real HTTP server on loopback.

Routes: ``POST /v1/chat/completions`` (tools and tool_calls supported),
``GET /v1/models``, ``GET /sim/stats`` (request counters),
``POST /sim/reset`` and the Batch API (``_batch``: files, batches, ``POST /sim/clock``).
Requests are counted per idempotency key (the ``Idempotency-Key`` header, else a
hash of the body): ``received`` counts every request, ``completed`` only those
answered 200 with a full body — tests use it to prove that no call was completed
twice. A reply carries an ``x-request-id`` header as OpenAI's do (``req_`` and a hash of the seed, key and attempt).

Service time: a request's latency counts from its arrival at the handler, and a reply that needs no fault and no
gate is made (the policy, the completion) during that wait rather than after it. Why: the sim is the yardstick of
the runner's overhead (wall ÷ the Little's-law bound, issue 31); a burst of 128 requests used to wait on the sim's
own work after each latency, one after another, and that lateness was charged to the runner.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import orjson
from aiohttp import web

from . import _anthropic as anthropic
from . import _gemini as gemini
from ._batch import BatchDesk
from ._faults import FaultKind, FaultSpec, choose_fault, latency_seconds, split_model_name
from ._leaks import echoed_credentials, echoed_shapes, quoted_key, request_key
from ._meters import METERS, Meter
from ._policies import Reply
from ._registry import get_policy, policy_names
from ._stream import fixed_length, stream_events, write_stream

__all__ = ["SimServer", "SimStats"]

UNIT_ATTEMPT_HEADER = "X-Mpcbench-Unit-Attempt"  # sent by the runner's transports (runtime._attempt)


def _unit_attempt(value: str | None) -> int:
    """The unit's try a request says it belongs to (0 when absent or not a small whole number)."""
    return int(value) if value is not None and value.isascii() and value.isdigit() and len(value) <= 9 else 0


class SimStats(msgspec.Struct, kw_only=True):
    """Counters since start (or the last reset)."""

    received: dict[str, int] = msgspec.field(default_factory=dict)
    completed: dict[str, int] = msgspec.field(default_factory=dict)
    statuses: dict[str, int] = msgspec.field(default_factory=dict)
    faults: dict[str, int] = msgspec.field(default_factory=dict)
    in_flight: int = 0
    max_in_flight: int = 0
    batch_uploads: dict[str, int] = msgspec.field(default_factory=dict)
    batch_rejected: dict[str, int] = msgspec.field(default_factory=dict)
    batch_creates: dict[str, int] = msgspec.field(default_factory=dict)
    batch_billed: dict[str, int] = msgspec.field(default_factory=dict)

    @property
    def total_received(self) -> int:
        return sum(self.received.values())

    @property
    def total_completed(self) -> int:
        return sum(self.completed.values())


def _estimate_tokens(text_bytes: int) -> int:
    return max(1, text_bytes // 4)


_WORD_TOKEN = re.compile(rb"[A-Za-z]{1,6}|[0-9]{1,3}|[^\sA-Za-z0-9]")


def _prompt_tokens(raw: bytes, tokenizer: str) -> int:
    """The request's prompt tokens by the spec's ``tokenizer`` (``bytes``: 4 a token; ``words``: see ``FaultSpec``)."""
    return _estimate_tokens(len(raw)) if tokenizer == "bytes" else max(1, len(_WORD_TOKEN.findall(raw)))


def _error_body(message: str, kind: str, code: str | None = None) -> bytes:
    return orjson.dumps({"error": {"message": message, "type": kind, "code": code}})


_ERROR_TEXT: dict[str, tuple[str, str]] = {
    "400": ("invalid_request_error", "simulated bad request"),
    "401": ("authentication_error", "simulated: invalid API key provided"),
    "403": ("permission_error", "simulated: permission denied"),
    "404": ("not_found_error", "simulated: model not found"),
    "422": ("invalid_request_error", "simulated: unprocessable request"),
    "429": ("rate_limit_error", "simulated: rate limit reached, please retry"),
    "500": ("server_error", "simulated: internal server error"),
    "502": ("server_error", "simulated: bad gateway"),
    "503": ("server_error", "simulated: service unavailable"),
    "505": ("server_error", "simulated: HTTP version not supported"),
}

# What Python's http.server (a plain web server, not an API) sends for a POST, and a web UI's page.
_HTML_501 = (b'<!DOCTYPE HTML>\n<html lang="en">\n<head><title>Error response</title></head>\n<body>\n'
             b"<h1>Error response</h1>\n<p>Error code: 501</p>\n<p>Message: Unsupported method ('POST').</p>\n"
             b"</body>\n</html>\n")
_HTML_PAGE = b"<!doctype html>\n<html><head><title>Chat UI</title></head><body><div id=app></div></body></html>\n"
_HTML_FAULTS: dict[str, tuple[int, bytes]] = {"501": (501, _HTML_501), "html": (200, _HTML_PAGE)}


class SimServer:
    """An embedded sim provider. Use ``async with SimServer(...) as sim: sim.base_url``.

    ``on_complete(key)`` is called after each completed request and ``gate(key)``
    is awaited before each reply (tests use them to act at an exact point, e.g.
    hold some requests open and kill the client after its N-th completed call).
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        defaults: FaultSpec | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        on_complete: Callable[[str], None] | None = None,
        gate: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.seed = seed
        self.on_complete = on_complete
        self.gate = gate
        self.defaults = defaults or FaultSpec()
        self.host = host
        self.port = port
        self.stats = SimStats()
        self._buckets: dict[tuple[str, str], Meter] = {}
        self._runner: web.AppRunner | None = None
        self.batches = BatchDesk(self._batch_answer, lambda: self.defaults,
                                 lambda table, key: self._count(getattr(self.stats, table), key))

    # -- lifecycle ---------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_post("/v1/models/{name:.+}", self._generate)  # Gemini, at the sim's base URL
        app.router.add_post("/v1beta/models/{name:.+}", self._generate)  # and at Gemini's own path
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/sim/stats", self._stats)
        app.router.add_post("/sim/reset", self._reset)
        self.batches.routes(app)
        return app

    async def start(self) -> str:
        policy_names()  # runs the policy loaders now, so the first request does not pay for them
        self._runner = web.AppRunner(self.app(), access_log=None, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=4096, reuse_address=True)
        await site.start()
        # aiohttp types _server as AbstractServer; the loop's create_server returns a Server, which has sockets
        sockets = getattr(site._server, "sockets", None) or []
        if sockets:
            self.port = sockets[0].getsockname()[1]
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> SimServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def reset(self) -> None:
        self.stats = SimStats()
        self._buckets.clear()

    # -- routes ------------------------------------------------------------
    async def _models(self, _request: web.Request) -> web.Response:
        data = [{"id": name, "object": "model", "owned_by": "mpcbench-sim"} for name in policy_names()]
        return web.json_response({"object": "list", "data": data}, dumps=lambda o: orjson.dumps(o).decode())

    async def _stats(self, _request: web.Request) -> web.Response:
        return web.Response(body=msgspec.json.encode(self.stats), content_type="application/json")

    async def _reset(self, _request: web.Request) -> web.Response:
        self.reset()
        return web.Response(body=b"{}", content_type="application/json")

    def _count(self, table: dict[str, int], key: str) -> None:
        table[key] = table.get(key, 0) + 1

    def _respond(self, status: int, body: bytes, headers: dict[str, str] | None = None,
                 content_type: str = "application/json") -> web.Response:
        self._count(self.stats.statuses, str(status))
        return web.Response(status=status, body=body, content_type=content_type, headers=headers)

    async def _chat(self, request: web.Request, raw: bytes | None = None) -> web.StreamResponse:
        """A chat-completions request (``raw``: its body, when another endpoint's edge translated it)."""
        stats = self.stats
        stats.in_flight += 1
        stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        try:
            return await self._handle_chat(request, await request.read() if raw is None else raw)
        finally:
            stats.in_flight -= 1

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        """Anthropic's Messages API: the request translated to a chat request, served as one, the reply translated
        back (``_anthropic``)."""
        try:
            chat = anthropic.chat_request(orjson.loads(await request.read()))
        except (orjson.JSONDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
            return self._respond(*anthropic.error_reply(400, _error_body(str(exc), "invalid_request_error")))
        stream = chat.pop("stream", None) is True
        return await self._translated(request, chat, stream, anthropic.error_reply,
                                      lambda c: (anthropic.message_reply(c), anthropic.message_events), ())

    async def _generate(self, request: web.Request) -> web.StreamResponse:
        """Gemini's ``models/{model}:generateContent`` and ``:streamGenerateContent`` (``_gemini``); Gemini sends no
        rate-limit headers, so the ``x-ratelimit-*`` ones are dropped (a 429 keeps its ``retry-after``)."""
        model, _, method = request.match_info["name"].rpartition(":")
        try:
            if method not in ("generateContent", "streamGenerateContent") or not model:
                raise ValueError(f"unknown method {method!r}: generateContent or streamGenerateContent")
            chat = gemini.chat_request(model, orjson.loads(await request.read()))
        except (orjson.JSONDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
            return self._respond(*gemini.error_reply(400, _error_body(str(exc), "invalid_request_error")))
        return await self._translated(request, chat, method == "streamGenerateContent", gemini.error_reply,
                                      lambda c: (gemini.generate_reply(c), gemini.reply_events), ("x-ratelimit-",))

    async def _translated(self, request: web.Request, chat: dict[str, Any], stream: bool,
                          error_reply: Callable[[int, bytes], tuple[int, bytes]],
                          translate: Callable[[dict[str, Any]], tuple[dict[str, Any], Callable[..., list[bytes]]]],
                          drop: tuple[str, ...]) -> web.StreamResponse:
        """``chat`` served as a chat request, its reply translated by ``translate`` (the reply and its stream events)
        and its errors by ``error_reply``. A fault that breaks the connection off is served as it is (nothing to
        translate), and so is a malformed-reply fault (malformed in any shape)."""
        response = await self._chat(request, orjson.dumps(chat))
        if not isinstance(response, web.Response) or not isinstance(response.body, bytes):
            return response
        keep = {k: v for k, v in response.headers.items()
                if k.lower() not in ("content-type", "content-length") and not k.lower().startswith(drop)}
        if response.status != 200:
            status, body = error_reply(response.status, response.body)
            return web.Response(status=status, body=body, content_type="application/json", headers=keep)
        try:
            reply, events = translate(orjson.loads(response.body))
        except (orjson.JSONDecodeError, KeyError, IndexError, TypeError):
            return response
        if not stream:
            return web.Response(status=200, body=orjson.dumps(reply), content_type="application/json", headers=keep)
        streamed = web.StreamResponse(status=200, headers={**keep, "Content-Type": "text/event-stream"})
        await streamed.prepare(request)
        for event in events(reply):
            await streamed.write(event)
        await streamed.write_eof()
        return streamed

    async def _handle_chat(self, request: web.Request, raw: bytes) -> web.StreamResponse:
        loop = asyncio.get_running_loop()
        arrived = loop.time()  # the service time counts from here, the sim's own work inside it (``_wait``)
        try:
            body = orjson.loads(raw)
            model_name = body["model"]
            messages = body["messages"]
            if not isinstance(model_name, str) or not isinstance(messages, list):
                raise TypeError
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return self._respond(400, _error_body(
                "request body must be JSON with a string 'model' and a list 'messages'",
                "invalid_request_error"))

        sent_key = request_key(request.headers)  # credentials first, as providers check them: before the model
        if self.defaults.api_key is not None and sent_key != self.defaults.api_key:
            return self._respond(401, _error_body(f"Incorrect API key provided: {sent_key or '(none)'}.",
                                                  "invalid_request_error", "invalid_api_key"))
        base, query = split_model_name(model_name)
        policy = get_policy(base)
        if policy is None:
            return self._respond(404, _error_body(
                f"The model '{base}' does not exist; sim models: {', '.join(policy_names())}",
                "invalid_request_error", "model_not_found"))
        try:
            spec = self.defaults.with_overrides(query)
        except (ValueError, msgspec.ValidationError) as exc:
            return self._respond(400, _error_body(f"bad sim options in model name {model_name!r}: {exc}",
                                                  "invalid_request_error"))

        key = request.headers.get("Idempotency-Key") or hashlib.sha256(raw).hexdigest()[:32]
        attempt = self.stats.received.get(key, 0)
        self._count(self.stats.received, key)

        counted = raw if "stream" not in body else orjson.dumps(  # the prompt, not the request's stream flags
            {k: v for k, v in body.items() if k not in ("stream", "stream_options")})
        prompt_tokens = _prompt_tokens(counted, spec.tokenizer)
        max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
        limited = self._rate_limit(model_name, spec, prompt_tokens + max_tokens)
        if limited is not None:
            self._count(self.stats.faults, "rate_limited")
            return self._respond(429, _error_body("simulated: rate limit exceeded for " + model_name,
                                                  "rate_limit_error", "rate_limit_exceeded"), limited)
        # As a gateway does: the request is counted and its rate-limit headers stamped as it passes, before the
        # model's latency, so a slow reply reports the meter as it was when the request arrived.
        headers = self._limit_headers(model_name, spec)

        fault = choose_fault(spec, seed=self.seed, key=key, attempt=attempt,
                             unit_attempt=_unit_attempt(request.headers.get(UNIT_ATTEMPT_HEADER)))
        delay = latency_seconds(spec, seed=self.seed, key=key, attempt=attempt)
        # With no fault and no gate the reply does not depend on the wait: it is made during it, not after it.
        made = self._made(policy, body, base, spec, request, prompt_tokens, key) \
            if fault is None and self.gate is None else None
        if delay:
            await asyncio.sleep(max(0.0, arrived + delay - loop.time()))
        if fault is not None and fault != "cut":  # a cut breaks off the reply: it needs one
            self._count(self.stats.faults, fault)
            return await self._inject(request, fault, spec)

        if self.gate is not None:
            await self.gate(key)
        if made is None:
            made = self._made(policy, body, base, spec, request, prompt_tokens, key)
        if not isinstance(made, dict):
            return self._respond(*made)
        completion = made
        if fault is not None:
            self._count(self.stats.faults, fault)
        headers["x-request-id"] = f"req_{hashlib.sha256(f'{self.seed}:{key}:{attempt}'.encode()).hexdigest()[:24]}"
        if body.get("stream") is True:
            options = body.get("stream_options")
            events, tokens = stream_events(completion, include_usage=isinstance(options, dict)
                                           and options.get("include_usage") is True)
            self._count(self.stats.statuses, "200")
            response: web.StreamResponse = await write_stream(request, headers, events, tokens,
                                                              tokens_per_s=spec.tokens_per_s, cut=fault == "cut")
        elif fault == "cut":
            return await self._inject(request, "truncate", spec)
        else:
            if spec.tokens_per_s:  # the whole reply waits for its last token
                await asyncio.sleep((completion["usage"]["completion_tokens"] - 1) / spec.tokens_per_s)
            response = self._respond(200, orjson.dumps(completion), headers)
        self._count(self.stats.completed, key)
        if self.on_complete is not None:
            self.on_complete(key)
        return response

    def _made(self, policy: Callable[[dict[str, Any]], Reply], body: dict[str, Any], base: str, spec: FaultSpec,
              request: web.Request, prompt_tokens: int, key: str) -> dict[str, Any] | tuple[int, bytes]:
        """The completion of one chat request (the policy's reply, shaped by ``spec``), or the 500 (status, body)
        of a policy that failed."""
        try:
            reply = policy(body)
        except Exception as exc:  # a policy bug is the sim's 500, never a crashed handler
            return 500, _error_body(f"sim policy {base} failed: {type(exc).__name__}: {exc}", "server_error")
        if spec.output_tokens is not None:
            reply = msgspec.structs.replace(reply, content=fixed_length(reply.content, spec.output_tokens))
        if spec.quote_key:
            reply = msgspec.structs.replace(reply, content=quoted_key(reply.content, request.headers))
        return self._completion(body["model"], reply, prompt_tokens, key)

    def _batch_answer(self, body: dict[str, Any], key: str, attempt: int) -> tuple[int, dict[str, Any]]:
        """One batch line answered as ``_chat`` would (policy, faults), minus the wire: (status, body)."""
        model_name = body["model"]
        base, query = split_model_name(model_name)
        policy = get_policy(base)
        if policy is None:
            return 404, orjson.loads(_error_body(f"The model '{base}' does not exist", "invalid_request_error",
                                                 "model_not_found"))
        spec = self.defaults.with_overrides(query)
        fault = choose_fault(spec, seed=self.seed, key=key, attempt=attempt)
        if fault is not None:  # a batch has no connection to break: every fault is an error status
            self._count(self.stats.faults, fault)
            status = fault if fault in _ERROR_TEXT else "500"
            kind, text = _ERROR_TEXT[status]
            return int(status), orjson.loads(_error_body(text, kind))
        try:
            reply = policy(body)
        except Exception as exc:  # a policy bug is the sim's 500
            return 500, orjson.loads(_error_body(f"sim policy {base} failed: {exc}", "server_error"))
        if spec.output_tokens is not None:
            reply = msgspec.structs.replace(reply, content=fixed_length(reply.content, spec.output_tokens))
        return 200, self._completion(model_name, reply, _prompt_tokens(orjson.dumps(body), spec.tokenizer), key)

    # -- helpers -----------------------------------------------------------
    def _bucket(self, model: str, kind: str, per_minute: int, spec: FaultSpec) -> Meter:
        bucket = self._buckets.get((model, kind))
        if bucket is None or (bucket.per_minute, bucket.window_s, bucket.kind, bucket.share, bucket.start) != (
                per_minute, spec.rate_window_s, spec.rate_meter, spec.rate_share, spec.rate_start):
            bucket = self._buckets[(model, kind)] = METERS[spec.rate_meter](
                per_minute, spec.rate_window_s, share=spec.rate_share, start=spec.rate_start)
        return bucket

    def _rate_limit(self, model: str, spec: FaultSpec, token_cost: int) -> dict[str, str] | None:
        """Charge the request to the model's buckets; 429 headers if it does not fit."""
        waits: dict[str, float] = {}
        if spec.rpm:
            waits["requests"] = self._bucket(model, "requests", spec.rpm, spec).try_take(1)
        if spec.tpm and not waits.get("requests"):
            waits["tokens"] = self._bucket(model, "tokens", spec.tpm, spec).try_take(token_cost)
        wait = max(waits.values(), default=0.0)
        if wait <= 0:
            return None
        headers = self._limit_headers(model, spec)
        if spec.rate_hint in ("both", "ms"):
            headers["retry-after-ms"] = str(math.ceil(wait * 1000))
        if spec.rate_hint in ("both", "seconds"):
            headers["Retry-After"] = str(math.ceil(wait))
        return headers

    def _limit_headers(self, model: str, spec: FaultSpec) -> dict[str, str]:
        headers: dict[str, str] = {}
        if spec.rate_headers == "none":
            return headers
        for kind, per_minute in (("requests", spec.rpm), ("tokens", spec.tpm)):
            if per_minute:
                bucket = self._bucket(model, kind, per_minute, spec)
                headers.update(bucket.headers(kind, spec.rate_headers))
        return headers

    def _completion(self, model: str, reply: Reply, prompt_tokens: int, key: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        out_chars = len(reply.content or "")
        if reply.tool_calls:
            call_base = hashlib.sha256(key.encode()).hexdigest()[:12]  # unique per request, stable per key
            message["tool_calls"] = [
                {"id": f"call_{call_base}_{i}", "type": "function",
                 "function": {"name": call["name"], "arguments": call["arguments"]}}
                for i, call in enumerate(reply.tool_calls)
            ]
            out_chars += sum(len(c["name"]) + len(c["arguments"]) for c in reply.tool_calls)
        finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
        completion_tokens = _estimate_tokens(out_chars)
        return {
            "id": f"chatcmpl-{key[:16]}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }

    async def _inject(self, request: web.Request, fault: FaultKind, spec: FaultSpec) -> web.StreamResponse:
        if fault in _ERROR_TEXT:
            kind, text = _ERROR_TEXT[fault]
            if spec.echo_auth:
                text += echoed_credentials(request.headers)
            if spec.echo_shapes:
                text += echoed_shapes(request.headers)
            headers: dict[str, str] = {}
            if fault in ("429", "503"):
                if spec.retry_after_ms is not None:
                    headers["retry-after-ms"] = str(spec.retry_after_ms)
                if spec.retry_after is not None:
                    headers["Retry-After"] = spec.retry_after
            return self._respond(int(fault), _error_body(text, kind), headers)
        if fault in _HTML_FAULTS:
            status, page = _HTML_FAULTS[fault]
            return self._respond(status, page, content_type="text/html")
        if fault == "malformed":
            return self._respond(200, b'{"id": "chatcmpl-broken", "choices": [{"message": ')
        if fault == "timeout":
            await asyncio.sleep(spec.hang_s)
            return self._respond(504, _error_body("simulated: upstream timeout", "server_error"))
        transport = request.transport
        if fault == "truncate":
            response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
            response.content_length = 400
            await response.prepare(request)
            await response.write(b'{"id": "chatcmpl-cut", "object": "chat.completion", "choices": [')
        if transport is not None:
            # close() flushes what was written (the cut body); abort() drops the connection bare.
            transport.close() if fault == "truncate" else transport.abort()
        raise asyncio.CancelledError  # the connection is gone; nothing more to send
