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

structlog is imported only when something is logged or something else imports it
(issue 31: ~40-100 ms of every command's start-up, and a sweep that goes well logs
nothing): the root handler builds its formatter at its first record, and structlog is
configured at once if it is already imported, else right after its first import
(``_ConfigureOnImport``), before any code can use it unconfigured.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Callable, MutableMapping, Sequence
from types import ModuleType, TracebackType
from typing import Any, Literal, TextIO, cast

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


def _structlog() -> ModuleType:
    import structlog  # the one import, when first needed (see the module docstring)

    return structlog


def _renderer(fmt: str, colors: bool) -> Any:
    structlog = _structlog()
    return structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer(colors=colors)


def _configure_structlog(fmt: str, colors: bool, level: str, stream: TextIO) -> None:
    structlog = _structlog()
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            _redact_processor,
            _renderer(fmt, colors),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=False,
    )


class _StructlogHandler(logging.StreamHandler):
    """Stdlib records through structlog's renderer and the redaction; the formatter is built at the first record."""

    def __init__(self, stream: TextIO, fmt: str, colors: bool) -> None:
        super().__init__(stream)
        self._fmt, self._colors = fmt, colors

    def format(self, record: logging.LogRecord) -> str:
        if self.formatter is None:
            structlog = _structlog()
            self.setFormatter(structlog.stdlib.ProcessorFormatter(
                foreign_pre_chain=[structlog.stdlib.add_log_level, structlog.stdlib.ExtraAdder(), _drop_ray_stamp,
                                   structlog.processors.TimeStamper(fmt="iso", utc=True),
                                   structlog.processors.format_exc_info],
                processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, _redact_processor,
                            _renderer(self._fmt, self._colors)],
            ))
        return super().format(record)


class _ConfigureOnImport:
    """A ``sys.meta_path`` finder that runs ``configure`` right after ``structlog``'s first import (before the
    importer gets the module), so structlog is never used unconfigured; for every other name it finds nothing.

    The latest ``configure_logging`` wins, as when structlog was imported up front. It stays on ``sys.meta_path``
    (removing a finder while the import system walks the list would skip the next one) and answers nothing once
    structlog is imported.
    """

    def __init__(self) -> None:
        self.configure: Callable[[], None] | None = None

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None) -> Any:
        if name != "structlog" or self.configure is None or "structlog" in sys.modules:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None) if finder is not self else None
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        loader, configure = spec.loader, self.configure
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module

        def exec_then_configure(module: ModuleType) -> None:
            exec_module(module)
            configure()

        loader.exec_module = exec_then_configure  # this module's loader object only
        return spec


_on_import = _ConfigureOnImport()


def configure_logging(
    fmt: Literal["console", "json"] = "console",
    *,
    level: str = "warning",
    stream: TextIO | None = None,
) -> None:
    """Configure structlog, stdlib logging and the uncaught-exception hook once for the process."""
    if stream is None:
        stream = cast(TextIO, _CurrentStderr())  # write, flush and isatty are all a renderer uses
    colors = fmt != "json" and stream.isatty()

    def configure() -> None:
        _configure_structlog(fmt, colors, level, stream)

    if "structlog" in sys.modules:
        _on_import.configure = None
        configure()
    else:
        _on_import.configure = configure
        if _on_import not in sys.meta_path:
            sys.meta_path.insert(0, _on_import)
    # Route stdlib logging (this library's modules, aiohttp, httpx, openai) through the same redaction; the
    # fields a record carries in ``extra=`` are rendered beside its event, as structlog renders keyword fields.
    root = logging.getLogger()
    root.handlers[:] = [_StructlogHandler(stream, fmt, colors)]
    root.setLevel(level.upper())
    sys.excepthook = _redacted_excepthook
