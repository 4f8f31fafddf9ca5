"""Why a unit failed, in the words its error record and the log keep.

A unit (an agent run, a judgement, a tariff case) fails alone: the runners
turn any exception but cancellation into an error record for that unit and go
on with the others. ``unit_failure`` gives such a record its error class and
message — a ``BenchError`` masked its own text when it was built; any other
exception's text is masked here, as it may quote a server — and logs the
failure at warning, with the traceback at debug. ``log_unit_error`` logs an
expected failure (a model call that failed for good, a reply that could not be
used) at info, so ``--log-level info`` says why every unit failed.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from .._exceptions import BenchError
from .._redact import redact_text

__all__ = ["UnitFailure", "log_unit_error", "unit_failure"]


class UnitFailure(NamedTuple):
    error_class: str
    message: str


def _fields(kind: str, key: str, model: str, error_class: str, message: str) -> dict[str, str]:
    return {"kind": kind, "key": key, "model": model, "error_class": error_class, "error_message": message}


def log_unit_error(logger: logging.Logger, *, kind: str, key: str, model: str, error_class: str | None,
                   message: str | None) -> None:
    """An expected failure of one unit, at info."""
    logger.info("unit.failed", extra=_fields(kind, key, model, error_class or "Error", message or ""))


def unit_failure(logger: logging.Logger, exc: Exception, *, kind: str, key: str, model: str) -> UnitFailure:
    """The error class and (masked) message of a unit that raised ``exc``; logged at warning, traceback at debug."""
    message = str(exc) if isinstance(exc, BenchError) else redact_text(str(exc) or repr(exc))
    failure = UnitFailure(type(exc).__name__, message)
    fields = _fields(kind, key, model, *failure)
    logger.warning("unit.crashed", extra=fields)
    logger.debug("unit.crashed.traceback", exc_info=exc, extra=fields)
    return failure
