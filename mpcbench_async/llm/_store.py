"""The call store behind the ``record`` and ``replay`` transports: request→reply pairs in one JSONL file.

One JSON object per line, append-only (``runtime.JsonlWriter``: a torn last line is
skipped on read and trimmed before the next append)::

    {"hash": "9f86d0…", "key": "unit-3/turn0", "request": {...}, "response": {...}}

- ``request``: the chat-completion body the client sent — ``model`` (the API model,
  ``models.<name>.model`` or the config name), ``messages``, ``tools`` and every param.
- ``response``: an OpenAI chat-completion body (``choices[].message``, ``finish_reason``,
  ``usage``…), served exactly as a server's reply would be.
- ``hash``: ``request_hash(request)``, the sha256 of the body as canonical JSON (keys
  sorted, no whitespace) without ``user``, ``metadata``, ``store`` and ``service_tier``,
  which tag, bill or route a request without changing its reply. Replay recomputes it
  from ``request``, so the field is for people and tools reading the file, and lines
  written by hand (e.g. converted fixtures) may leave it out.
- ``key``: the call's key (its ``Idempotency-Key``), optional. When several replies
  share a hash (trials of one unit send identical requests), replay serves the one
  recorded under the caller's key, else the last one recorded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec
import orjson

from .._exceptions import RecordDecodeError, ReplyStoreError
from ..runtime import JsonlWriter, iter_jsonl
from ._transport import ChatRequest
from ._wire import WireCompletion

__all__ = ["CallStore", "StoreIndex", "StoredCall", "request_hash"]

_NOT_HASHED = frozenset({"user", "metadata", "store", "service_tier"})


def request_hash(body: Mapping[str, Any]) -> str:
    """The store key of a request body: sha256 of its canonical JSON, reply-neutral fields left out."""
    canonical = orjson.dumps({k: v for k, v in body.items() if k not in _NOT_HASHED}, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()


class StoredCall(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One line of a call store: a request body and the reply it got."""

    hash: str = ""
    key: str | None = None
    request: dict[str, Any]
    response: WireCompletion


class StoreIndex:
    """A loaded store: replies by request hash, and by (hash, call key) for exact replays."""

    def __init__(self, calls: Iterable[StoredCall], *, source: str) -> None:
        self._latest: dict[str, WireCompletion] = {}
        self._by_key: dict[tuple[str, str], WireCompletion] = {}
        for call in calls:
            digest = request_hash(call.request)
            if not call.response.choices:
                raise RecordDecodeError(f"{source}: the recorded reply to request {digest} has no choices")
            self._latest[digest] = call.response
            if call.key is not None:
                self._by_key[digest, call.key] = call.response

    def __len__(self) -> int:
        return len(self._latest)

    def find(self, digest: str, key: str) -> WireCompletion | None:
        """The reply recorded for this request under ``key``, else the last one recorded for it."""
        reply = self._by_key.get((digest, key))
        return reply if reply is not None else self._latest.get(digest)


class CallStore:
    """One store file: ``append`` for recording, ``load`` for replaying."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._writer: JsonlWriter | None = None

    def append(self, request: ChatRequest, response: WireCompletion) -> None:
        """Append one pair (a small flushed write, inline like every JSONL record of the project)."""
        if self._writer is None:
            self._writer = JsonlWriter(self.path)
        self._writer.write(StoredCall(hash=request_hash(request.body), key=request.key, request=request.body,
                                      response=response.without_measurements()))

    def load(self) -> StoreIndex:
        """Read the whole store (blocking file I/O: the replay transport runs it in a worker thread).

        A store that cannot be read or holds a damaged reply fails the call that loads it with a
        ``ReplyStoreError`` naming the file: retryable, so units it failed run again once the store is repaired.
        """
        try:
            return StoreIndex(iter_jsonl(self.path, type_=StoredCall), source=str(self.path))
        except RecordDecodeError as exc:
            raise ReplyStoreError(f"{exc}; repair or re-record the replay store, then rerun") from exc
        except OSError as exc:
            raise ReplyStoreError(f"{self.path}: cannot read the replay store ({exc.strerror or exc})") from exc

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
