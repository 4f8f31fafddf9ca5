"""Finding an API key in any shape in a text: the scanner chaos tests and ``bench/chaos.py`` search outputs with.

Computed from the definitions, not with the code under test: the key-only base64 characters come from encoding
the key between fills of all-zero and all-one bits (a character that depends on a fill bit differs between the
two), and the scanner looks for 12-character runs of key material in the letters and digits of a text after
undoing JSON escapes and percent-encoding. The shapes are the sim's (``echo_shapes``, ``quote_key``): full,
without its prefix, an 8-character part, split by spaces, punctuation and newlines, percent-encoded, base64 at
three alignments and base64url.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from urllib.parse import unquote

from .._redact import secret_part
from ..sim import key_shapes

__all__ = ["Scanner", "alnum", "base64_core", "random_keys"]

_NOT_ALNUM = re.compile(rb"[^A-Za-z0-9]")
_MATERIAL = 12  # a run this long of key material counts as a leak (chance matches are impossible at 12)


def alnum(data: bytes) -> bytes:
    return _NOT_ALNUM.sub(b"", data)


def base64_core(blob: str, key: str) -> tuple[int, int]:
    """The span of ``blob`` (base64 or base64url of bytes holding ``key``) whose characters only the key determines."""
    urlsafe = "-" in blob or "_" in blob
    decode = base64.urlsafe_b64decode if urlsafe else base64.b64decode
    data = decode(blob)
    at = data.index(key.encode())
    before, after = len(data[:at]), len(data) - at - len(key)
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    low = encode(b"\x00" * before + key.encode() + b"\x00" * max(after, 2)).decode()
    high = encode(b"\xff" * before + key.encode() + b"\xff" * max(after, 2)).decode()
    same = [i for i in range(len(low)) if low[i] == high[i] and low[i] != "="]
    return same[0], same[-1] + 1


def _forms(key: str) -> list[bytes]:
    """The key's secret part (a public prefix such as ``sk-proj-`` is no leak): its letters and digits and the
    key-only characters of its base64 at each alignment."""
    secret = secret_part(key)
    forms = [alnum(secret.encode())]
    for align in range(3):
        blob = base64.b64encode(b"\x00" * align + secret.encode() + b"\x00\x00").decode()
        first, last = base64_core(blob, secret)
        forms.append(alnum(blob[first:last].encode()))
    return forms


class Scanner:
    """Finds key material of ``secrets`` in a text: 12-character runs of a key's letters and digits, or of the
    key-only characters of its base64 at any alignment (base64url has the same letters and digits), in the
    text's letters and digits once JSON/``repr`` escapes and percent-encoding are undone."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self.secrets = secrets
        self.material = {run: key for key in secrets for form in _forms(key)
                         for run in (form[i:i + _MATERIAL] for i in range(len(form) - _MATERIAL + 1))}
        # every 12-character run holds one whole block of 6 at a multiple of 6 of its form: search those first
        self.blocks = {form[i:i + 6] for key in secrets for form in _forms(key) for i in range(0, len(form) - 5, 6)}

    @staticmethod
    def views(text: str) -> list[bytes]:
        unescaped = (text.replace("\\n", "\n").replace("\\r", "\r").replace("\\t", "\t").replace('\\"', '"')
                     .replace("\\\\", "\\"))
        views = [alnum(unescaped.encode("utf-8", "replace"))]
        if "%" in unescaped:
            views.append(alnum(unquote(unescaped).encode("utf-8", "replace")))
        return views

    def find(self, text: str) -> list[str]:
        """What leaked in ``text``: the shapes found verbatim, raw or JSON-escaped (``sk-pro…:lines``…), and
        ``material of KEY`` for a 12-character run of key material in any other shape."""
        found = {f"{key[:6]}…:{name}" for key in self.secrets for name, value in key_shapes(key).items()
                 if value in text or json.dumps(value)[1:-1] in text}
        for view in self.views(text):
            for block in self.blocks:
                at = view.find(block)
                while at >= 0:
                    for start in range(max(0, at - 6), at + 1):
                        key = self.material.get(view[start:start + _MATERIAL])
                        if key is not None and not any(hit.startswith(key[:6]) for hit in found):
                            found.add(f"material of {key[:6]}…")
                    at = view.find(block, at + 1)
        return sorted(found)


def random_keys(seed: int) -> tuple[str, str, str]:
    """Three made-up keys, random as real ones are: ``sk-proj-`` + 40 letters and digits, 32 letters and digits
    (no recognisable shape) and 32 hex digits (as Azure's)."""
    rng = random.Random(seed)
    letters = string.ascii_letters + string.digits
    return ("sk-proj-" + "".join(rng.choice(letters) for _ in range(40)),
            "".join(rng.choice(letters) for _ in range(32)), "".join(rng.choice("0123456789abcdef") for _ in range(32)))
