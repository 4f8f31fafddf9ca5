"""Streamed replies (``"stream": true``): Server-Sent Events parsed and assembled into one ``WireCompletion``.

Both transports feed the raw bytes of an ``text/event-stream`` body to a ``StreamAssembler``
as they arrive, so a streamed reply ends as the same ``WireCompletion`` (hence the same
``ChatResult``) a non-streamed one gives: content concatenated, tool calls put together from
their ``index``ed deltas, the last ``finish_reason``, the usage of the final usage chunk
(none sent: none recorded, as for a non-streamed reply without usage). On the way it times
the chunks that carry content, reasoning or a tool-call delta (``StreamTiming``).

The parser follows the SSE spec (``\\n``, ``\\r\\n`` or ``\\r`` line ends; multi-line ``data:``;
``:`` comments such as keep-alive pings; ``event:`` names), and is lenient at the end of the
body: an event missing its final blank line still counts. A stream that ends before
``data: [DONE]`` was cut (a ``BadResponseError``, retried); an error event mid-stream is the
``LLMError`` its code or type stands for.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterable, Callable
from typing import Any

import msgspec
import orjson

from .._exceptions import BadResponseError, LLMError
from ._wire import (
    StreamTiming,
    WireCompletion,
    _WireChoice,
    _WireFunction,
    _WireMessage,
    _WireToolCall,
    _WireUsage,
    error_for_status,
)

__all__ = ["SSEParser", "StreamAssembler", "is_event_stream"]

_LINE_END = re.compile(rb"\r\n|\r|\n")
_DONE = b"[DONE]"
_BOM = b"\xef\xbb\xbf"
# The HTTP status an error event's ``type`` stands for when it carries no numeric ``code``.
_STATUS_OF_TYPE = {"invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
                   "not_found_error": 404, "rate_limit_error": 429}


def is_event_stream(content_type: str | None) -> bool:
    """Whether a reply's Content-Type is an SSE stream (a server that ignores ``stream`` answers JSON)."""
    return content_type is not None and content_type.split(";", 1)[0].strip().lower() == "text/event-stream"


class SSEParser:
    """Incremental SSE parser: ``feed`` bytes as they arrive, get the complete events as ``(event, data)``."""

    def __init__(self) -> None:
        self._buffer = b""
        self._event = ""
        self._data: list[bytes] = []
        self._started = False  # a byte-order mark is stripped from the stream's start (SSE spec)

    def feed(self, chunk: bytes) -> list[tuple[str, bytes]]:
        buffer = self._buffer + chunk
        if not self._started:
            if len(buffer) < len(_BOM) and _BOM.startswith(buffer):
                self._buffer = buffer  # maybe a mark split across reads
                return []
            buffer, self._started = buffer.removeprefix(_BOM), True
        held = b""
        if buffer.endswith(b"\r"):  # maybe the first half of a \r\n split across reads
            buffer, held = buffer[:-1], b"\r"
        *lines, rest = _LINE_END.split(buffer)
        self._buffer = rest + held
        events: list[tuple[str, bytes]] = []
        for line in lines:
            self._line(line, events)
        return events

    def close(self) -> list[tuple[str, bytes]]:
        """The events still pending at the end of the body (a last line or event without its line end)."""
        events: list[tuple[str, bytes]] = []
        if self._buffer.rstrip(b"\r"):
            self._line(self._buffer.rstrip(b"\r"), events)
        self._buffer = b""
        self._line(b"", events)
        return events

    def _line(self, line: bytes, events: list[tuple[str, bytes]]) -> None:
        if not line:  # a blank line ends the event
            if self._data:
                events.append((self._event or "message", b"\n".join(self._data)))
            self._event, self._data = "", []
            return
        if line.startswith(b":"):  # a comment (keep-alive ping)
            return
        field, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            self._data.append(value)
        elif field == b"event":
            self._event = value.decode("utf-8", "replace")


class _DeltaFunction(msgspec.Struct):
    name: str | None = None
    arguments: str | None = None


class _DeltaToolCall(msgspec.Struct):
    index: int | None = None
    id: str | None = None
    function: _DeltaFunction | None = None


class _Delta(msgspec.Struct):
    """A choice's delta; ``reasoning_content`` (vLLM, DeepSeek) or ``reasoning`` (OpenRouter, Ollama) are
    tokens of a reasoning model's thinking: they time the stream as tokens do, and are not part of the reply."""

    content: str | None = None
    tool_calls: list[_DeltaToolCall] | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None


class _ChunkChoice(msgspec.Struct):
    index: int = 0
    delta: _Delta | None = None
    finish_reason: str | None = None


class _Chunk(msgspec.Struct):
    """One ``chat.completion.chunk``; ``error``/``object`` only to recognise an error event."""

    choices: list[_ChunkChoice] | None = None
    usage: _WireUsage | None = None
    model: str | None = None
    id: str | None = None
    object: str | None = None
    error: Any = None


_chunk_decoder = msgspec.json.Decoder(_Chunk)


class _Choice:
    """One choice being assembled: content parts, tool calls by index (id, name, argument parts), finish."""

    __slots__ = ("calls", "content", "finish_reason", "last_call")

    def __init__(self) -> None:
        self.content: list[str] | None = None
        self.calls: dict[int, tuple[list[str], list[str]]] = {}  # index -> ([id, name], argument parts)
        self.finish_reason: str | None = None
        self.last_call: int | None = None

    def call_index(self, call: _DeltaToolCall, position: int) -> int:
        """Which call a tool-call delta belongs to.

        By its ``index`` when it has one (OpenAI, vLLM). Without one (Gemini's OpenAI-compatible
        API sends each parallel call whole in its own chunk): a delta with an ``id`` not seen yet
        starts a new call, one with a known ``id`` continues that call, one without an ``id``
        continues the last call (its arguments' next part) or, before any call, is its position.
        """
        if call.index is not None:
            return call.index
        if call.id:
            known = next((index for index, ((ident, _), _) in self.calls.items() if ident == call.id), None)
            return known if known is not None else max(self.calls, default=-1) + 1
        return self.last_call if self.last_call is not None else position

    def wire(self, index: int) -> _WireChoice:
        calls = [_WireToolCall(id=ident, function=_WireFunction(name=name, arguments="".join(parts)))
                 for (ident, name), parts in (self.calls[i] for i in sorted(self.calls))]
        message = _WireMessage(content=None if self.content is None else "".join(self.content),
                               tool_calls=calls or None)
        return _WireChoice(message=message, finish_reason=self.finish_reason, index=index)


class StreamAssembler:
    """Assemble one streamed reply from its body's bytes, timing its token chunks from ``started``.

    ``feed(data, now)`` for every read (``now``: ``time.perf_counter()`` when it arrived), then
    ``finish()`` for the completion; ``cut(reason)`` is the error for a body that broke off.
    """

    def __init__(self, started: float, *, model: str, endpoint: str) -> None:
        self._started = started
        self._model = model
        self._endpoint = endpoint
        self._parser = SSEParser()
        self._choices: dict[int, _Choice] = {}
        self._usage: _WireUsage | None = None
        self._reply_model = ""
        self._id = ""
        self._events = 0
        self._done = False
        self._first: float | None = None
        self._last = 0.0
        self._gaps: list[float] = []

    def feed(self, data: bytes, now: float) -> None:
        for event, payload in self._parser.feed(data):
            self._event(event, payload, now)

    async def read(self, chunks: AsyncIterable[bytes], broke: Callable[[BaseException], bool]) -> WireCompletion:
        """Feed every chunk of the body as it arrives, then ``finish``.

        An exception for which ``broke`` is true (the HTTP library's transport errors) after
        ``data: [DONE]`` ends the body: the reply had arrived whole, only the end of its HTTP
        body was lost, and it is kept rather than retried (and billed twice). Before ``[DONE]``
        it propagates, for the transport to turn into its error (``cut``, a read timeout).
        """
        try:
            async for data in chunks:
                self.feed(data, time.perf_counter())
        except Exception as exc:
            if not (self._done and broke(exc)):
                raise
        return self.finish(time.perf_counter())

    def cut(self, reason: str) -> BadResponseError:
        """The error for a stream that ended before ``data: [DONE]`` (retried like a truncated body)."""
        return BadResponseError(f"stream ended before [DONE] after {self._events} events ({reason})",
                                model=self._model, endpoint=self._endpoint)

    def finish(self, now: float) -> WireCompletion:
        """The assembled completion once the body has ended (``now``: when it did)."""
        for event, payload in self._parser.close():
            self._event(event, payload, now)
        if not self._done:
            raise self.cut("the body ended")
        if not self._choices:
            raise BadResponseError("streamed reply has no choices", model=self._model, endpoint=self._endpoint)
        first = self._first
        timing = StreamTiming(ttft_s=(now if first is None else first) - self._started,
                              itl_s=[round(gap, 6) for gap in self._gaps],
                              chunks=0 if first is None else len(self._gaps) + 1)
        return WireCompletion(choices=[self._choices[i].wire(i) for i in sorted(self._choices)],
                              model=self._reply_model, usage=self._usage, id=self._id, stream=timing)

    def _event(self, event: str, payload: bytes, now: float) -> None:
        if self._done:
            return
        self._events += 1
        if payload.strip() == _DONE:
            self._done = True
            return
        try:
            chunk = _chunk_decoder.decode(payload)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise BadResponseError(f"undecodable stream event ({exc}): {payload[:200]!r}",
                                   model=self._model, endpoint=self._endpoint) from exc
        if event == "error" or chunk.error or chunk.object == "error":
            raise self._error(payload)
        self._reply_model = self._reply_model or chunk.model or ""
        self._id = self._id or chunk.id or ""
        if chunk.usage is not None:
            self._usage = chunk.usage
        token = False
        for choice in chunk.choices or ():
            token = self._choice(choice) or token
        if token:
            if self._first is None:
                self._first = now
            else:
                self._gaps.append(now - self._last)
            self._last = now

    def _choice(self, choice: _ChunkChoice) -> bool:
        """Add one choice's delta; whether it delivered a token (content or a tool-call delta)."""
        assembled = self._choices.get(choice.index)
        if assembled is None:
            assembled = self._choices[choice.index] = _Choice()
        if choice.finish_reason is not None:
            assembled.finish_reason = choice.finish_reason
        delta = choice.delta
        if delta is None:
            return False
        if delta.content is not None:
            if assembled.content is None:
                assembled.content = []
            assembled.content.append(delta.content)
        for position, call in enumerate(delta.tool_calls or ()):
            index = assembled.last_call = assembled.call_index(call, position)
            entry = assembled.calls.get(index)
            if entry is None:
                entry = assembled.calls[index] = (["", ""], [])
            head, arguments = entry
            function = call.function
            # id and name come once, in the call's first delta; a few servers repeat them on every delta
            if call.id and not head[0]:
                head[0] = call.id
            if function is not None:
                if function.name and not head[1]:
                    head[1] = function.name
                if function.arguments:
                    arguments.append(function.arguments)
        return bool(delta.content or delta.tool_calls or delta.reasoning_content or delta.reasoning)

    def _error(self, payload: bytes) -> LLMError:
        """The error an error event stands for: by its numeric ``code``, else its ``type``, else a server error."""
        try:
            data = orjson.loads(payload)
        except orjson.JSONDecodeError:
            data = None
        error = data.get("error") if isinstance(data, dict) else None
        details = error if isinstance(error, dict) else data if isinstance(data, dict) else {}
        code = details.get("code")
        if isinstance(code, str) and code.isdigit():
            code = int(code)
        if isinstance(code, int) and 400 <= code <= 599:
            status = code
        else:
            status = _STATUS_OF_TYPE.get(str(details.get("type")), 500)
        return error_for_status(status, payload, {}, model=self._model, endpoint=self._endpoint)
