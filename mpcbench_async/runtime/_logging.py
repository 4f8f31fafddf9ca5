"""structlog set-up: console or JSON output, with secrets redacted everywhere.

Redaction runs last before rendering, over every value in the event (nested
dicts and lists, exception text included): values under secret-looking keys
(``api_key``, ``authorization``, ``token``, ``secret``, ``password``) are
replaced, and secret-looking substrings (``Bearer …``, ``sk-…``) and any value
registered with ``register_secret`` (e.g. the contents of API-key variables)
are masked inside free text.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import MutableMapping
from typing import Any, Literal, TextIO

import structlog

__all__ = ["configure_logging", "redact", "redact_text", "register_secret"]

MASK = "***"
_SECRET_KEY = re.compile(r"(api[_-]?key|authorization|auth[_-]?token|access[_-]?token|secret|password)", re.I)
_SECRET_TEXT = re.compile(
    r"(?P<bearer>(?i:bearer)\s+)[A-Za-z0-9._~+/=-]+"
    r"|(?P<sk>\bsk-)[A-Za-z0-9_-]{6,}"
    r"|(?P<hdr>(?i:authorization|api[_-]?key|x-api-key)[\"']?\s*[:=]\s*[\"']?(?:(?i:bearer|basic)\s+)?)[^\s\"',}]+"
)
_registered: set[str] = set()


def register_secret(value: str | None) -> None:
    """Mask this exact value wherever it appears in log output (ignored if short)."""
    if value and len(value) >= 6:
        _registered.add(value)


def _mask_match(match: re.Match[str]) -> str:
    prefix = match.group("bearer") or match.group("sk") or match.group("hdr") or ""
    return prefix + MASK


def redact_text(text: str) -> str:
    """Mask secret-looking substrings and registered secrets in ``text``."""
    for secret in _registered:
        if secret in text:
            text = text.replace(secret, MASK)
    return _SECRET_TEXT.sub(_mask_match, text)


def redact(value: Any, key: str | None = None) -> Any:
    """Return ``value`` with secrets masked, recursing into dicts, lists and tuples."""
    if key is not None and _SECRET_KEY.search(key) and value not in (None, ""):
        return MASK
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact(v) for v in value)
    if isinstance(value, BaseException):
        return redact_text(repr(value))
    return value


def _redact_processor(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    return {k: redact(v, k) for k, v in event.items()}


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
    """Configure structlog (and stdlib logging) once for the process."""
    stream = stream or _CurrentStderr()  # type: ignore[assignment]
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
    # Route stdlib logging (aiohttp, httpx, openai) through the same redaction.
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_log_level, structlog.processors.format_exc_info],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, _redact_processor, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
