"""The response cache: replies keyed by everything that determines them, in one SQLite file.

Why: sweeps repeat calls (a rerun after a crash, re-judging with a changed judge
prompt, the same agent turn under another judge), and each repeat costs money and
time. A hit answers without any HTTP call; the client marks its call record
``cached`` with $0 spent and keeps the reply's original cost as ``value_usd``.

The key (``cache_digest``) hashes the endpoint, the request body as canonical
JSON (the API model, messages, tools and every param, ``seed`` included; the
reply-neutral ``user``, ``metadata``, ``store`` and ``service_tier`` left out, as
in the call store), the model's configured ``headers`` (an ``OpenAI-Organization``,
an ``anthropic-version`` or a routing header can change the reply; names
case-insensitive; a credential header — ``Authorization``, ``api-key``, … — by the
SHA-256 of its value, never in clear; none configured leaves the key as it was
before headers counted) and the caller's extra key fields — the trial index, so
trials of one unit stay independent samples::

    with cache_scope(trial=2):        # around a unit: every call inside it
        await run_unit(...)
    await client.chat(model, messages, cache_extra={"trial": 2})   # or per call

Modes: ``read`` (serve hits, store nothing; the file is opened read-only and
must exist), ``write`` (always call, store every reply), ``readwrite`` (serve
hits, store misses; counts hits), ``off``. SQLite in WAL mode allows concurrent
readers beside one writer; every statement runs in a worker thread (one at a time
per cache, on one connection) so the event loop never waits on the disk or a lock.
A file that is not a cache, or stays locked longer than ``timeout_s``, is a
``CacheError`` naming the file and what to do when the cache is opened or managed
(``open``, ``stats``, ``prune``: a user error). During a call (``get``, ``put``) the
same failure, or a damaged stored reply, is a ``ReplyStoreError``: retryable, since
it is the file's failure and not the unit's result, so once the cache is deleted or
repaired a plain rerun runs those units again.
"""

from __future__ import annotations

import contextvars
import hashlib
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeVar, get_args

import anyio
import anyio.to_thread
import msgspec
import orjson

from .._exceptions import CacheError, ReplyStoreError
from .._redact import is_secret_name
from ._wire import WireCompletion

__all__ = ["CACHE_FILE", "CACHE_MODES", "DEFAULT_CACHE_DIR", "CacheError", "CacheMode", "CacheStats",
           "ModelCacheStats", "ResponseCache", "cache_digest", "cache_path", "cache_scope"]

CacheMode = Literal["read", "write", "readwrite", "off"]
DEFAULT_CACHE_DIR = Path(".mpcbench_cache")
CACHE_FILE = "responses.sqlite3"
CACHE_MODES: tuple[str, ...] = get_args(CacheMode)
SCHEMA_VERSION = 1
_NOT_HASHED = frozenset({"user", "metadata", "store", "service_tier"})
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    digest TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    created REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0,
    last_hit REAL,
    response BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS responses_model ON responses (model);
CREATE INDEX IF NOT EXISTS responses_created ON responses (created);
"""
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(WireCompletion).decode
_T = TypeVar("_T")

_scope: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar("mpcbench_cache_scope",
                                                                          default=MappingProxyType({}))


def cache_path(location: str | Path | None = None) -> Path:
    """The cache file for a ``--cache`` location: a directory (or a name without a suffix) holds ``CACHE_FILE``."""
    path = Path(location) if location is not None else DEFAULT_CACHE_DIR
    return path / CACHE_FILE if path.is_dir() or not path.suffix else path


@contextmanager
def cache_scope(**extra: Any) -> Iterator[None]:
    """Add key fields (e.g. ``trial=2``) to the cache key of every call made inside the block (tasks included)."""
    token = _scope.set({**_scope.get(), **extra})
    try:
        yield
    finally:
        _scope.reset(token)


def cache_digest(endpoint: str, body: Mapping[str, Any], extra: Mapping[str, Any] | None = None, *,
                 headers: Mapping[str, str] | None = None) -> str:
    """The cache key: sha256 over the endpoint, the reply-determining request body, the configured ``headers``
    (credential values hashed) and the scope's key fields."""
    key: dict[str, Any] = {"endpoint": endpoint, "request": {k: v for k, v in body.items() if k not in _NOT_HASHED},
                           "extra": {**_scope.get(), **(extra or {})}}
    if headers:  # absent when none are configured: the keys of caches filled before headers counted still hit
        key["headers"] = {name.lower(): _header_value(name, value) for name, value in headers.items()}
    return hashlib.sha256(orjson.dumps(key, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)).hexdigest()


def _header_value(name: str, value: str) -> str:
    """A header's value as the key holds it: a credential (or cookie) only as its SHA-256."""
    if is_secret_name(name) or "cookie" in name.lower():
        return "sha256:" + hashlib.sha256(value.encode()).hexdigest()
    return value


class ModelCacheStats(msgspec.Struct, kw_only=True):
    model: str
    entries: int
    hits: int
    oldest: float
    newest: float


class CacheStats(msgspec.Struct, kw_only=True):
    """What ``cache stats`` shows: entries and hits per model and the file's size on disk (WAL included)."""

    path: str
    entries: int
    size_bytes: int
    models: list[ModelCacheStats]


class ResponseCache:
    """One cache file in one mode; ``get``/``put`` for the client, ``stats``/``prune`` for the command line."""

    def __init__(self, path: str | Path, mode: CacheMode = "readwrite", *, timeout_s: float = 10.0) -> None:
        if mode not in CACHE_MODES:
            raise CacheError(f"unknown cache mode {mode!r}; modes: {', '.join(CACHE_MODES)}")
        self.path = Path(path)
        self.mode = mode
        self.timeout_s = timeout_s
        self.readable = mode in ("read", "readwrite")
        self.writable = mode in ("write", "readwrite")
        self._conn: sqlite3.Connection | None = None
        self._serial = anyio.CapacityLimiter(1)

    # -- the connection --------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        if self.mode == "read" and not self.path.is_file():
            raise CacheError(f"{self.path}: no response cache here (mode 'read' only reads an existing cache; "
                             "fill one with mode 'readwrite' or 'write')")
        if self.mode != "read":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        uri = f"{self.path.resolve().as_uri()}?mode={'ro' if self.mode == 'read' else 'rwc'}"
        conn = sqlite3.connect(uri, uri=True, timeout=self.timeout_s, isolation_level=None,
                               check_same_thread=False)
        try:
            if self.mode != "read":
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if version == 0 and not tables and self.mode != "read":
                conn.executescript(_SCHEMA + f"PRAGMA user_version = {SCHEMA_VERSION};")
            elif version != SCHEMA_VERSION or "responses" not in tables:
                raise CacheError(f"{self.path}: not a response cache of this version (schema {version}, tables "
                                 f"{sorted(tables)}); pass another cache file or delete this one")
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        return conn

    def _run(self, action: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``action`` on the connection, turning SQLite's errors into one clear ``CacheError``."""
        try:
            return action(self._connect())
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise CacheError(f"{self.path}: the response cache stayed locked by another process for "
                                 f"{self.timeout_s:g} s ({exc}); wait for it or use another cache file") from exc
            raise CacheError(f"{self.path}: cannot use the response cache: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            raise CacheError(f"{self.path}: not a usable response cache ({exc}); delete it or pass another "
                             "cache file") from exc

    async def _in_thread(self, action: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``action`` in a worker thread, for a call: the cache failing it is a (retryable) ``ReplyStoreError``."""
        try:
            return await anyio.to_thread.run_sync(self._run, action, limiter=self._serial)
        except CacheError as exc:
            raise ReplyStoreError(str(exc)) from exc

    # -- the client's side -----------------------------------------------------
    async def get(self, digest: str) -> WireCompletion | None:
        """The stored reply for ``digest`` (a hit is counted in ``readwrite`` mode), or ``None``."""
        if not self.readable:
            return None

        def lookup(conn: sqlite3.Connection) -> bytes | None:
            row = conn.execute("SELECT response FROM responses WHERE digest = ?", (digest,)).fetchone()
            if row is not None and self.writable:
                conn.execute("UPDATE responses SET hits = hits + 1, last_hit = ? WHERE digest = ?",
                             (time.time(), digest))
            return None if row is None else bytes(row[0])

        blob = await self._in_thread(lookup)
        if blob is None:
            return None
        try:
            return _decode(blob)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ReplyStoreError(f"{self.path}: the stored reply {digest} is damaged ({exc}); delete the cache "
                                  "file or prune it, then rerun") from exc

    async def put(self, digest: str, model: str, response: WireCompletion) -> None:
        """Store the reply to the request ``digest`` of ``model`` (replacing an older one) unless read-only."""
        if not self.writable:
            return
        blob = _encode(response.without_measurements())  # the reply, not how this fetch of it went
        await self._in_thread(lambda conn: conn.execute(
            "INSERT INTO responses (digest, model, created, response) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (digest) DO UPDATE SET response = excluded.response, created = excluded.created",
            (digest, model, time.time(), blob)))

    # -- the command line's side -----------------------------------------------
    def stats(self) -> CacheStats:
        """Entries, hits and age per model, and the size of the file and its WAL."""
        rows = self._run(lambda conn: conn.execute(
            "SELECT model, COUNT(*), SUM(hits), MIN(created), MAX(created) FROM responses GROUP BY model "
            "ORDER BY model").fetchall())
        models = [ModelCacheStats(model=m, entries=n, hits=h or 0, oldest=lo, newest=hi) for m, n, h, lo, hi in rows]
        size = sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())
        return CacheStats(path=str(self.path), entries=sum(m.entries for m in models), size_bytes=size,
                          models=models)

    def prune(self, *, older_than_s: float | None = None, model: str | None = None) -> int:
        """Delete the entries created more than ``older_than_s`` ago and/or of ``model``; return how many.

        With neither given every entry goes. The file is compacted afterwards.
        """
        if not self.writable:
            raise CacheError(f"{self.path}: opened in mode {self.mode!r}; pruning needs 'write' or 'readwrite'")
        where: list[str] = []
        args: list[Any] = []
        if older_than_s is not None:
            where.append("created < ?")
            args.append(time.time() - older_than_s)
        if model is not None:
            where.append("model = ?")
            args.append(model)
        clause = f" WHERE {' AND '.join(where)}" if where else ""

        def delete(conn: sqlite3.Connection) -> int:
            removed = conn.execute(f"DELETE FROM responses{clause}", args).rowcount  # noqa: S608 - fixed clauses
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return removed

        return self._run(delete)

    def open(self) -> ResponseCache:
        """Open the file now, so an unusable cache (missing in read mode, another schema, not SQLite) is one
        ``CacheError`` before any call rather than a failure of every call that asks it."""
        self._run(lambda _conn: None)
        return self

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
