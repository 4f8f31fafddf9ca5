"""Secret redaction: the registry of known secret values and the masking of secret-looking text.

The one place that decides what a secret looks like. Two boundaries use it, so
that no key reaches a record, a report, a log or the terminal, even when a
server echoes the request's credentials in its error body:

* every ``BenchError`` masks its own text when it is built (``_exceptions``),
  which covers every error message the runners store or print;
* logging masks every event value when it is rendered (``runtime._logging``),
  which covers log lines, stdlib loggers and uncaught tracebacks.

Masked: every value registered with ``register_secret`` (the API keys the
client loads, credential header values of the model config), whole or cut
short where a quoted reply was truncated; ``Bearer …`` and ``sk-…`` tokens;
the value after a credential name followed by ``:`` or ``=``
(``Authorization: …``, ``"api-key": "…"``, ``?key=…``). Values under
credential-named keys of structured data are masked whole (``redact``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MASK", "is_secret_name", "redact", "redact_text", "register_secret", "register_secret_headers"]

MASK = "***"
_MIN_SECRET_LEN = 6  # shorter values would mask ordinary words
_PREFIX_LEN = 8  # a key's first characters mark what is left of it where a text was cut short
_KEY_CHARS = r"[A-Za-z0-9._~+/=-]*"
_SECRET_NAME = re.compile(r"api[_-]?key|authorization|auth[_-]?token|access[_-]?token|secret|password", re.I)
_SECRET_TEXT = re.compile(
    r"(?P<bearer>(?i:bearer)\s+)[A-Za-z0-9._~+/=-]+"
    r"|(?P<sk>\bsk-)[A-Za-z0-9_-]{6,}"
    r"|(?P<hdr>(?i:authorization|api[_-]?key|auth[_-]?token|access[_-]?token)[\"']?\s*[:=]\s*[\"']?"
    r"(?:(?i:bearer|basic)\s+)?)[^\s\"',}&]+"
    r"|(?P<query>[?&](?i:key|token)=)[^\s\"'&#:;,)}\]]+"
)


class _Registry:
    """The secret values to mask, longest first (a secret that contains another is masked whole)."""

    def __init__(self) -> None:
        self.values: tuple[str, ...] = ()
        self.starts: re.Pattern[str] | None = None  # what is left of a secret where a text was cut

    def add(self, value: str) -> None:
        if value not in self.values:
            self.values = tuple(sorted((*self.values, value), key=len, reverse=True))
            starts = sorted({re.escape(v[:_PREFIX_LEN]) for v in self.values}, key=len, reverse=True)
            self.starts = re.compile(f"(?:{'|'.join(starts)}){_KEY_CHARS}")


_registry = _Registry()


def register_secret(value: str | None) -> None:
    """Mask this value wherever it appears from now on, even cut short (values under 6 characters are ignored).

    Error texts quote servers' replies cut to a few hundred characters, and a cut
    can fall inside a key: what is left of it (its first 8 characters or more) is
    masked too.
    """
    if value and len(value) >= _MIN_SECRET_LEN:
        _registry.add(value)


def is_secret_name(name: str) -> bool:
    """Whether a header or field name holds a credential (``api-key``, ``Authorization``, ``x-auth-token``…)."""
    return _SECRET_NAME.search(name) is not None


def register_secret_headers(headers: Mapping[str, str]) -> None:
    """Register the values of the credential headers among ``headers`` (e.g. a configured ``api-key``)."""
    for name, value in headers.items():
        if is_secret_name(name):
            scheme, _, credential = value.partition(" ")
            register_secret(credential if credential and scheme.lower() in ("bearer", "basic") else value)


def _mask_match(match: re.Match[str]) -> str:
    prefix = match.group("bearer") or match.group("sk") or match.group("hdr") or match.group("query") or ""
    return prefix + MASK


def redact_text(text: str) -> str:
    """``text`` with registered secrets and secret-looking substrings masked."""
    registry = _registry
    for secret in registry.values:
        if secret in text:
            text = text.replace(secret, MASK)
    if registry.starts is not None:
        text = registry.starts.sub(MASK, text)
    return _SECRET_TEXT.sub(_mask_match, text)


def redact(value: Any, key: str | None = None) -> Any:
    """``value`` with secrets masked, recursing into dicts, lists and tuples; ``key`` is the field it sits under."""
    if key is not None and is_secret_name(key) and value not in (None, ""):
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
