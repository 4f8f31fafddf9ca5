"""Logging set-up: console or JSON output on stderr, with secrets redacted everywhere.

Library modules log through the standard ``logging`` module (``logging.getLogger(__name__)``,
structured fields in ``extra=``) and never print; ``configure_logging`` (the CLI calls it) renders
those records, and structlog's, through one structlog renderer.

Redaction (``mpcbench_async._redact``) runs last before rendering, over every
value in the event (nested dicts and lists, exception text and tracebacks
included): values under credential-named keys (``api_key``, ``authorization``,
``token``, ``secret``, ``password``) are replaced, and secret-looking substrings
(``Bearer …``, ``sk-…``, ``api-key: …``) and every value registered with
``register_secret`` (the API keys the client loads) are masked inside free
text. Tracebacks of uncaught exceptions go through the same masking: a chained
SDK exception may quote a server's reply, credentials included.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import MutableMapping
from types import TracebackType
from typing import Any, Literal, TextIO, cast

import structlog

from .._redact import redact, redact_text, register_secret

__all__ = ["configure_logging", "redact", "redact_text", "register_secret"]


def _redact_processor(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    return {k: redact(v, k) for k, v in event.items()}


def _drop_ray_stamp(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Once imported, Ray stamps every log record with ``_ray_timestamp_ns`` (its record factory): not a field."""
    event.pop("_ray_timestamp_ns", None)
    return event


def _redacted_excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    """Print an uncaught exception's traceback like Python does, with secrets masked."""
    sys.stderr.write(redact_text("".join(traceback.format_exception(kind, exc, tb))))


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is at the time of writing (it may be swapped, e.g. by tests)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()


def configure_logging(
    fmt: Literal["console", "json"] = "console",
    *,
    level: str = "warning",
    stream: TextIO | None = None,
) -> None:
    """Configure structlog, stdlib logging and the uncaught-exception hook once for the process."""
    if stream is None:
        stream = cast(TextIO, _CurrentStderr())  # write, flush and isatty are all a renderer uses
    renderer: Any
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=stream.isatty())
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            _redact_processor,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=False,
    )
    # Route stdlib logging (this library's modules, aiohttp, httpx, openai) through the same redaction; the
    # fields a record carries in ``extra=`` are rendered beside its event, as structlog renders keyword fields.
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_log_level, structlog.stdlib.ExtraAdder(), _drop_ray_stamp,
                               structlog.processors.TimeStamper(fmt="iso", utc=True),
                               structlog.processors.format_exc_info],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, _redact_processor, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    sys.excepthook = _redacted_excepthook
