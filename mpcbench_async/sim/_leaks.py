"""A careless provider's leaks of the caller's key, in every shape the runner must mask (``_redact``).

``echo_auth=true`` makes error bodies quote the request's credential headers and
the bare key; ``echo_shapes=true`` adds the key in eleven shapes (``key_shapes``);
``quote_key=true`` makes every 200 reply's content quote the key in those shapes,
as a model might when a proxy put the key into its context. Tests use them to
prove that no key, whatever its shape, reaches a file or a stream.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping

import orjson

__all__ = ["SHAPE_SEPARATOR", "key_shapes", "quoted_key", "request_key", "echoed_credentials", "echoed_shapes"]

SHAPE_SEPARATOR = " | "


def request_key(headers: Mapping[str, str]) -> str:
    """The key a request carried: its ``api-key``/``x-api-key`` header, else its bearer token ("" if none)."""
    return headers.get("api-key") or headers.get("x-api-key") or headers.get("Authorization", "").partition(" ")[2]


def key_shapes(key: str) -> dict[str, str]:
    """``key`` as servers and models have been seen to quote it, by name.

    ``full``; ``bare`` (without its ``sk-``-like prefix, or its first three characters); ``part`` (8
    characters from its middle); ``spaced``, ``punct`` and ``lines`` (split by spaces, by punctuation,
    one character per line); ``percent`` (every byte percent-encoded); ``base64_0``/``_1``/``_2`` (base64
    of a blob holding it at each alignment in a 3-byte group); ``base64url`` (URL-safe alphabet).
    """
    data = key.encode()
    dash = key.find("-", 0, 8)
    middle = max(0, len(key) // 2 - 4)
    return {
        "full": key,
        "bare": key[dash + 1:] if dash >= 0 else key[3:],
        "part": key[middle:middle + 8],
        "spaced": " ".join(key[i:i + 3] for i in range(0, len(key), 3)),
        "punct": "".join(key[i:i + 3] + "._:/-"[i // 3 % 5] for i in range(0, len(key), 3)),
        "lines": "\n".join(key),
        "percent": "".join(f"%{byte:02X}" for byte in data),
        "base64_0": base64.b64encode(data + b"\n").decode(),
        "base64_1": base64.b64encode(b"Basic:" + b"u" + data).decode(),
        "base64_2": base64.b64encode(b"u:" + data + b"\n").decode(),
        "base64url": base64.urlsafe_b64encode(b"\xfb\xff\xfe\xfb" + data + b"\xff").decode(),
    }


def echoed_credentials(headers: Mapping[str, str]) -> str:
    """What a careless proxy quotes back (``echo_auth``): the credential headers and the bare key."""
    sent = {name: headers[name] for name in ("Authorization", "api-key", "x-api-key") if name in headers}
    return f" (request headers: {orjson.dumps(sent).decode()}; key {request_key(headers)})"


def echoed_shapes(headers: Mapping[str, str]) -> str:
    """The request's key in every shape (``echo_shapes``): `` shapes: bare=… | part=… | …``."""
    key = request_key(headers)
    if not key:
        return ""
    return " shapes: " + SHAPE_SEPARATOR.join(f"{name}={value}" for name, value in key_shapes(key).items())


def quoted_key(content: str | None, headers: Mapping[str, str]) -> str | None:
    """A reply's content quoting the request's key in every shape (``quote_key``).

    JSON keeps its shape, so the reply is still read as the policy meant it: the quote goes at the end of its
    free-text fields at any depth (``final_answer``, ``rationale``, ``reason``, ``description``…), or under a
    new top-level ``note`` when it has none; any other content gets the quote appended.
    """
    shapes = echoed_shapes(headers)
    if not shapes:
        return content
    quote = f"Your key, quoted back:{shapes}"
    try:
        doc = orjson.loads(content or "")
    except orjson.JSONDecodeError:
        doc = None
    if not isinstance(doc, dict):
        return f"{content or ''}\n\n{quote}"
    if not _quote_free_text(doc, quote):
        doc["note"] = quote
    return orjson.dumps(doc).decode()


_FREE_TEXT = frozenset({"final_answer", "rationale", "reasoning", "explanation", "reason", "conclusion",
                        "description", "summary", "body", "text"})


def _quote_free_text(value: object, quote: str) -> bool:
    """Append ``quote`` to every free-text string field inside ``value``; whether there was one."""
    found = False
    if isinstance(value, dict):
        for name, item in value.items():
            if name in _FREE_TEXT and isinstance(item, str):
                value[name] = f"{item}\n\n{quote}"
                found = True
            else:
                found = _quote_free_text(item, quote) or found
    elif isinstance(value, list):
        for item in value:
            found = _quote_free_text(item, quote) or found
    return found
