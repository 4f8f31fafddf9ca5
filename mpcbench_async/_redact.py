"""Secret redaction: the registry of known secret values and the masking of secret-looking text.

The one place that decides what a secret looks like. Every boundary where text
from outside is stored or shown uses it, so that no key reaches a record, a
report, a log, the cache or the terminal, even when a server echoes the
request's credentials in an error body or a model quotes them in its reply:

* every ``BenchError`` masks its own text when it is built (``_exceptions``),
  which covers every error message the runners store or print;
* every chat reply's content and tool-call arguments are masked when the reply
  is decoded (``llm._wire``), before the cache, a call store, a record or the
  next turn's prompt sees them; tool results are masked before they are stored
  or sent (``mask_value``);
* logging masks every event value when it is rendered (``runtime._logging``),
  which covers log lines, stdlib loggers and uncaught tracebacks.

Two functions, two scopes:

``mask_secrets(text)`` masks the *registered* secrets only (``register_secret``:
the API keys the client loads, credential header values of the model config),
in any of these shapes:

* the full value, and any run of 8 or more of its characters (a cut-short or
  prefix-less key, a quoted substring) — past a provider's public prefix
  (``sk-proj-``, ``sk-ant-api03-``…: ``PUBLIC_PREFIXES``), which is kept where the
  rest is masked and never masked alone;
* split by whitespace, punctuation or any non-ASCII character (``sk-ab cd-ef``,
  ``sk_ab.cd``, one character per line), JSON and ``repr`` escapes of those
  (``\\n``, ``\\t``, ``\\xb7``, ``\\u2014``) counting as separators;
* percent-encoded, character by character (``%73%6B%2D…``) or partly;
* base64 and base64url at each of the three alignments a key can have inside a
  larger blob (``Basic base64(user:key)``), wrapped lines included.

It leaves every other text alone, so it is what model content and tool results
go through. ``redact_text(text)`` is ``mask_secrets`` plus the *shape* rules for
error texts and logs: ``Bearer …`` and ``sk-…`` tokens, and the value after a
credential name followed by ``:`` or ``=`` (``Authorization: …``,
``"api-key": "…"``, ``?key=…``). The shape rules would mangle ordinary prose
("the bearer of this letter"), so they never touch model content.

How the shapes are matched (built once per set of secrets, ``_Matcher``): text
and secret are both reduced to a *skeleton*, their ASCII letters and digits
only (percent escapes decoded, separator escapes dropped first), so separators
of any kind vanish and base64 and base64url coincide. Every 8-character window
of each secret's skeleton, and every 10-character window of the key-only core of
its base64 at alignments 0, 1 and 2 (10 such characters carry 7.5 of the key's:
any 8 of them encoded anywhere give one), is kept; a text leaks if its skeleton
contains one. The search samples the text's skeleton every 4 bytes as 32-bit
integers (every match holds a sample) and looks them up in the windows' 4-grams
— one set intersection for short texts, a numpy bitmap past 32 KB — then checks
the few candidates; only a real match costs a regular expression, which masks it
in the text from its first to its last character, separators included.

False positives. A window of a random alphanumeric key is one of 62**8 (2.2e14)
strings, and a base64 window stands for 7.5 of its characters (62**7.5, 2.8e13);
a 48-character key gives about 200 windows, so the chance that a 1 MB text holds
one by accident is about 1e-5 at worst (a text made of base64 of alphanumeric
ASCII), far less for prose or JSON; for a 32-character hex key over 1 MB of random
hex, about 1e-2. Human-chosen secrets are another matter, so:

* a value shorter than 8 characters is not registered at all (it would mask
  ordinary words; such a value is a placeholder such as ``EMPTY``, not a key) —
  a warning says so once;
* a value whose skeleton has fewer than 16 characters is masked as its full value
  only (and by the shape rules where they apply);
* windows that could be ordinary text are skipped: one character class only
  (``password``, ``12345678``, ``ABCDEFGH``) or fewer than 5 distinct characters.
  Such a window is masked as part of any longer matched run; alone, it is not;
* a masked run may start a character or two early, where the text just before a
  piece of a key happens to continue the key backwards.

What cannot be caught (``mask_secrets`` sees text, not meaning): a key re-encoded
other than above — hex, ROT13, reversed, changed case, spelled out, HTML entities,
JSON ``\\u`` escapes of its letters, base64 of a percent-encoding of every byte,
double base64 — or cut into pieces
shorter than 8 characters with other letters or digits between them; and a key
that was never registered.
"""

from __future__ import annotations

import base64
import logging
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

__all__ = ["MASK", "PUBLIC_PREFIXES", "is_secret_name", "mask_secrets", "mask_value", "redact", "redact_text",
           "register_secret", "register_secret_headers", "register_secret_url", "secret_part"]

MASK = "***"
MIN_SECRET_LEN = 8
"""Values shorter than this are not registered (they would mask ordinary words)."""
MIN_WINDOWED_LEN = 16
"""Secrets whose skeleton (letters and digits) is shorter than this are masked as their full value only."""
WINDOW = 8
"""A run of this many characters of a secret (split or percent-encoded or not) is masked."""
BASE64_WINDOW = 10
"""A run of this many key-only characters of a secret's base64 is masked: 7.5 of its characters, so that any 8 of
them encoded at any alignment (10 key-only characters) are, and a chance match is as unlikely as for ``WINDOW``."""
PUBLIC_PREFIXES = tuple(sorted((
    "sk-", "sk-proj-", "sk-svcacct-", "sk-admin-", "sk-ant-api03-", "sk-ant-admin01-", "sk-or-v1-", "gsk_", "xai-",
    "hf_", "ghp_", "gho_", "github_pat_", "glpat-", "r8_", "pplx-", "nvapi-", "AIza"), key=len, reverse=True))
"""Providers' published key prefixes: not secret, so never masked alone (the full value is masked whole)."""
_VECTOR_FROM = 1 << 15  # texts this long are decoded and sampled with numpy
_TABLE_BITS = 18  # the bitmap of 4-grams: 2**18 entries, a few hundred set (a false hit costs one set lookup)
_HASH = 0x9E3779B1  # Fibonacci hashing: the product's top bits index the bitmap

_log = logging.getLogger(__name__)
_SECRET_NAME = re.compile(r"api[_-]?key|authorization|auth[_-]?token|access[_-]?token|secret|password", re.I)
_SECRET_TEXT = re.compile(
    r"(?P<bearer>(?i:bearer)\s+)[A-Za-z0-9._~+/=-]+"
    r"|(?P<sk>\bsk-)[A-Za-z0-9_-]{6,}"
    r"|(?P<hdr>(?i:authorization|api[_-]?key|auth[_-]?token|access[_-]?token)[\"']?\s*[:=]\s*[\"']?"
    r"(?:(?i:bearer|basic)\s+)?)[^\s\"',}&]+"
    r"|(?P<query>[?&](?i:key|token)=)[^\s\"'&#:;,)}\]]+"
)

_ALNUM = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_NOT_ALNUM = bytes(b for b in range(256) if b not in _ALNUM)
_CLASSES = (frozenset(b"abcdefghijklmnopqrstuvwxyz"), frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
            frozenset(b"0123456789"))


def _hex(code: int) -> str:
    """A regex for ``code`` as two hex digits, either case."""
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{code:02x}")


# Between two characters of a secret in the original text: anything but a letter or digit, where a percent
# escape of a letter or digit counts as that letter or digit and escapes of separators (``%2D``, ``\n``,
# ``\xb7``, ``\u2014``) as separators, as in ``_skeleton``. Each position parses one way only, and the
# quantifier is possessive, so matching stays linear.
_SEP = (r"(?:[^A-Za-z0-9%\\]"
        r"|%(?:[01][0-9A-Fa-f]|2[0-9A-Fa-f]|3[A-Fa-f]|40|5[B-Fb-f]|60|7[B-Fb-f]|[89A-Fa-f][0-9A-Fa-f])"
        r"|%(?![0-9A-Fa-f]{2})|\\(?:[nrt]|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4})"
        r"|\\(?![nrt]|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}))*+")


def _char(byte: int) -> str:
    return f"(?:{chr(byte)}|%{_hex(byte)})"


# A JSON or repr escape of whitespace or of a non-ASCII character (``\\n``, ``\\xb7``, ``\\u2014``) is a separator.
_ESCAPE = re.compile(rb"\\(?:[nrt]|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4})")
_PERCENT_SEPARATOR = re.compile(rb"%(?:[01][0-9A-Fa-f]|2[0-9A-Fa-f]|3[A-Fa-f]|40|5[B-Fb-f]|60|7[B-Fb-f]"
                                rb"|[89A-Fa-f][0-9A-Fa-f])")
_PERCENT_ALNUM = re.compile(rb"%(?:3[0-9]|4[1-9A-Fa-f]|5[0-9Aa]|6[1-9A-Fa-f]|7[0-9Aa])")


def _decoded(match: re.Match[bytes]) -> bytes:
    return bytes((int(match[0][1:], 16),))


def _skeleton(text: str) -> bytes:
    """The letters and digits of ``text`` (ASCII); percent escapes decoded and separator escapes dropped first."""
    raw = text.encode("utf-8", "surrogatepass")  # the bytes of every other character are separators (>= 0x80)
    if len(raw) >= _VECTOR_FROM and (b"\\" in raw or b"%" in raw):
        return _skeleton_vectorised(raw)
    if b"\\" in raw:
        raw = _ESCAPE.sub(b" ", raw)
    if b"%" in raw:
        raw = _PERCENT_SEPARATOR.sub(b" ", raw)  # C speed: escapes of separators, by far the most common
        if b"%" in raw:
            raw = _PERCENT_ALNUM.sub(_decoded, raw)
    return raw.translate(None, _NOT_ALNUM)


_tables: Any = None  # numpy lookup tables of ``_skeleton_vectorised``, made on first use


def _skeleton_vectorised(raw: bytes) -> bytes:
    """``_skeleton`` of a long text's bytes in numpy: the same result, without a Python call per escape.

    Escapes are replaced in place by the byte they stand for (a percent escape) or by spaces, so every position
    keeps its length; escapes never overlap (``%`` is not a hex digit), as in the sequential version.
    """
    import numpy as np

    global _tables
    if _tables is None:
        hex_value = np.full(256, -1, dtype=np.int16)
        for digit in b"0123456789abcdefABCDEF":
            hex_value[digit] = int(chr(digit), 16)
        _tables = hex_value, np.frombuffer(b"nrt", dtype=np.uint8)
    hex_value, escaped = _tables
    size = len(raw)
    data = np.frombuffer(bytearray(raw + bytes(6)), dtype=np.uint8)  # padded: look-ups past the end find no hex

    def hex_at(positions: Any) -> Any:
        return hex_value[data[positions]]

    slash = np.flatnonzero(data[:size] == 0x5C)
    after = data[slash + 1]
    short = slash[np.isin(after, escaped)]
    data[short] = data[short + 1] = 0x20
    for letter, digits in ((0x78, 2), (0x75, 4)):  # \xNN, \uNNNN
        long = slash[after == letter]
        for offset in range(2, 2 + digits):
            long = long[hex_at(long + offset) >= 0]
        for offset in range(2 + digits):
            data[long + offset] = 0x20
    percent = np.flatnonzero(data[:size] == 0x25)
    high, low = hex_at(percent + 1), hex_at(percent + 2)
    valid = (high >= 0) & (low >= 0)
    percent = percent[valid]
    data[percent] = (high[valid] * 16 + low[valid]).astype(np.uint8)
    data[percent + 1] = data[percent + 2] = 0x20
    return data[:size].tobytes().translate(None, _NOT_ALNUM)


def secret_part(value: str) -> str:
    """``value`` without a provider's public key prefix (``sk-proj-``, ``sk-ant-api03-``, ``gsk_``…, the longest
    of ``PUBLIC_PREFIXES`` it starts with): the part whose pieces are masked. The prefix says which provider,
    nothing more, and ordinary text mentions it ("keys start with sk-ant-api03-")."""
    for prefix in PUBLIC_PREFIXES:
        if value.startswith(prefix):
            return value[len(prefix):]
    return value


def _usable(window: bytes) -> bool:
    """Whether a window is unlike ordinary text: two character classes or more, five distinct characters."""
    return len(set(window)) >= 5 and sum(1 for chars in _CLASSES if not chars.isdisjoint(window)) >= 2


def _windows(form: bytes, size: int) -> set[bytes]:
    return {window for i in range(len(form) - size + 1) if _usable(window := form[i:i + size])}


def _base64_cores(value: bytes) -> list[bytes]:
    """What base64 of ``value`` looks like wherever it sits in a blob: for each alignment (0, 1 or 2 bytes
    of the blob before it in its 3-byte group), the characters that only ``value``'s bits determine."""
    cores = []
    for align in range(3):
        encoded = base64.b64encode(bytes(align) + value)
        first, last = -(-8 * align // 6), (8 * align + 8 * len(value)) // 6  # chars wholly inside the value
        cores.append(encoded[first:last])
    return cores


class _Matcher:
    """The registered secrets compiled for masking: built once per set of secrets."""

    def __init__(self, values: Sequence[str]) -> None:
        self.full = tuple(sorted(values, key=len, reverse=True))  # longest first: a secret containing another
        plain: set[bytes] = set()
        encoded: set[bytes] = set()
        for value in values:
            secret = secret_part(value).encode("utf-8")
            chars = secret.translate(None, _NOT_ALNUM)
            if len(chars) < MIN_WINDOWED_LEN:
                continue
            plain.update(_windows(chars, WINDOW))
            for core in _base64_cores(secret):
                encoded.update(_windows(core.translate(None, _NOT_ALNUM), BASE64_WINDOW))
        self.windows = {WINDOW: frozenset(plain), BASE64_WINDOW: frozenset(encoded)}
        order = sys.byteorder
        self.grams = frozenset(int.from_bytes(window[i:i + 4], order) for window in plain | encoded
                               for i in range(len(window) - 3))
        self._table: Any = None  # a hashed bitmap of ``grams`` for long texts (numpy), built on first use

    def _hits(self, skeleton: bytes) -> list[int]:
        """Where a window may start: offsets of the skeleton near a sampled 4-gram of a window.

        The skeleton is sampled at offsets 0, 4, 8…; every match (8 or 10 bytes) holds one sampled gram, at most
        ``size - 4`` bytes after its start. A short skeleton is tested with one set intersection (C speed), then
        the grams found are looked up; a long one through numpy (an integer per sampled gram costs ~50 ns in
        Python), whose hits are checked against the set.
        """
        size = len(skeleton)
        if size < _VECTOR_FROM:
            with memoryview(skeleton) as view, view[:size - size % 4].cast("I") as sampled:
                common = self.grams.intersection(sampled)
            found: list[int] = []
            for gram in common:
                needle = gram.to_bytes(4, sys.byteorder)
                at = skeleton.find(needle)
                while at >= 0:
                    found.append(at)
                    at = skeleton.find(needle, at + 1)
            return found
        import numpy as np

        if self._table is None:
            self._table = np.zeros(1 << _TABLE_BITS, dtype=np.bool_)
            known = np.fromiter(self.grams, dtype=np.uint32, count=len(self.grams))
            self._table[(known * np.uint32(_HASH)) >> np.uint32(32 - _TABLE_BITS)] = True
        grams = np.frombuffer(skeleton, dtype=np.uint32, count=size // 4)
        maybe = np.flatnonzero(self._table[(grams * np.uint32(_HASH)) >> np.uint32(32 - _TABLE_BITS)])
        return [4 * index for index, gram in zip(maybe.tolist(), grams[maybe].tolist(), strict=True)
                if gram in self.grams]

    def runs(self, skeleton: bytes) -> list[bytes]:
        """The maximal runs of ``skeleton`` covered by secret windows (empty: no secret in it)."""
        if len(skeleton) < WINDOW or not self.grams:
            return []
        spans: set[tuple[int, int]] = set()
        for at in self._hits(skeleton):
            for size, windows in self.windows.items():
                spans.update((i, i + size) for i in range(max(0, at - size + 4), at + 1)
                             if skeleton[i:i + size] in windows)
        runs: list[bytes] = []
        begin = end = -1
        for start, stop in sorted(spans):
            if start > end:
                if end > begin:
                    runs.append(skeleton[begin:end])
                begin = start
            end = max(end, stop)
        if end > begin:
            runs.append(skeleton[begin:end])
        return runs


class _Registry:
    """The secret values to mask and their matcher (rebuilt when a value is added)."""

    def __init__(self) -> None:
        self.values: tuple[str, ...] = ()
        self.matcher: _Matcher | None = None
        self.refused: set[int] = set()  # hashes of values too short to mask, warned about once

    def add(self, value: str) -> None:
        if value not in self.values:
            self.values = (*self.values, value)
            self.matcher = _Matcher(self.values)


_registry = _Registry()


def register_secret(value: str | None) -> None:
    """Mask this value wherever it appears from now on, in any shape ``mask_secrets`` knows.

    A value shorter than ``MIN_SECRET_LEN`` characters is refused (with a warning, once): masking it would
    mangle ordinary text. One with fewer than ``MIN_WINDOWED_LEN`` letters and digits is masked whole only.
    """
    if not value:
        return
    if len(value) < MIN_SECRET_LEN:
        if hash(value) not in _registry.refused:
            _registry.refused.add(hash(value))
            _log.warning("a configured credential of %d characters is shorter than %d: it is used but not masked "
                         "in logs and records (too short to tell from ordinary text)", len(value), MIN_SECRET_LEN)
        return
    _registry.add(value)


def is_secret_name(name: str) -> bool:
    """Whether a header or field name holds a credential (``api-key``, ``Authorization``, ``x-auth-token``…)."""
    return _SECRET_NAME.search(name) is not None


def register_secret_url(url: str | None) -> None:
    """Register the credentials a URL carries: its password and the values of ``key``/``token``/``api_key``-like
    query parameters (``https://host/v1?key=…``)."""
    if not url:
        return
    parts = urlsplit(url)
    register_secret(parts.password)
    for name, value in parse_qsl(parts.query):
        if is_secret_name(name) or name.lower() in ("key", "token", "sig", "signature"):
            register_secret(value)


def register_secret_headers(headers: Mapping[str, str]) -> None:
    """Register the values of the credential headers among ``headers`` (e.g. a configured ``api-key``)."""
    for name, value in headers.items():
        if is_secret_name(name):
            scheme, _, credential = value.partition(" ")
            register_secret(credential if credential and scheme.lower() in ("bearer", "basic") else value)


def _mask_runs(text: str, runs: Sequence[bytes]) -> str:
    """``text`` with every occurrence of each skeleton run (separators and escapes between) masked.

    Spans are found in the unchanged text and merged, so a run that also occurs inside a longer one
    cannot cut the longer one apart before it is found.
    """
    spans = sorted(match.span() for run in set(runs)
                   for match in re.finditer(_SEP.join(_char(byte) for byte in run), text))
    out, done = [], 0
    for start, end in spans:
        if end <= done:
            continue
        if start >= done:
            out.append(text[done:start])
            out.append(MASK)
        done = end
    out.append(text[done:])
    return "".join(out)


def mask_secrets(text: str) -> str:
    """``text`` with every registered secret masked in any shape (see the module); ``text`` itself when none.

    Fast enough for every reply: a text without a secret costs a few passes at C speed (encode, escapes,
    translate, the sampled 4-grams looked up); ``bench/redact.py`` measures it.
    """
    matcher = _registry.matcher
    if matcher is None or len(text) < MIN_SECRET_LEN:
        return text
    for secret in matcher.full:
        if secret in text:
            text = text.replace(secret, MASK)
    if matcher.grams:
        runs = matcher.runs(_skeleton(text))
        if runs:
            text = _mask_runs(text, runs)
    return text


def mask_value(value: Any) -> Any:
    """``value`` with ``mask_secrets`` applied to every string in it (dicts, lists, tuples); ``value`` when none."""
    if _registry.matcher is None:
        return value
    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, dict):
        return {mask_value(k) if isinstance(k, str) else k: mask_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(mask_value(v) for v in value)
    return value


def _mask_match(match: re.Match[str]) -> str:
    prefix = match.group("bearer") or match.group("sk") or match.group("hdr") or match.group("query") or ""
    return prefix + MASK


def redact_text(text: str) -> str:
    """``text`` with registered secrets (any shape) and secret-looking substrings masked: for errors and logs."""
    return _SECRET_TEXT.sub(_mask_match, mask_secrets(text))


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
