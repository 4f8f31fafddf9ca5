"""Test keys, what each of their shapes must look like once masked, and a scanner for key material in any shape.

Computed here from the definitions, not with the code under test: the key-only base64 characters come from
encoding the key between fills of all-zero and all-one bits (a character that depends on a fill bit differs
between the two), and the scanner looks for 12-character runs of key material in the letters and digits of
a text after undoing JSON escapes and percent-encoding.
"""

from __future__ import annotations

import base64
import json
import re
from urllib.parse import unquote

from mpcbench_async._redact import secret_part
from mpcbench_async.sim._leaks import SHAPE_SEPARATOR, key_shapes

# Made-up keys for these tests (random, as real keys are; no provider issued them).
SK_KEY = "sk-proj-JfP1E8lHaxyKoeyzgchXnygAdNbJGeX5mXmbToY8"
PLAIN_KEY = "YOz6DwH6bMhImnhpMchYiJxfLDWrC08K"  # no recognisable shape: only the registry can catch it
HEADER_KEY = "5aeec2d0a7b7958a9b248840b4ca790d"  # hex, as Azure's; written literally into a configured header
SECRETS = (SK_KEY, PLAIN_KEY, HEADER_KEY)
SHAPES = tuple(key_shapes(SK_KEY))  # full bare part spaced punct lines percent base64_0 base64_1 base64_2 base64url

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


def masked_shape(name: str, key: str, label: str = "") -> str:
    """``label`` + shape ``name`` of ``key`` once masked: the characters of its secret part (past a provider's
    public prefix such as ``sk-proj-``, which is kept) as ``***``, separators between included; for base64,
    the characters only the secret part's bits determine.

    The full value is masked whole. A masked run of a key ends where the key's characters end, so ordinary
    text is kept; it may start early when the characters just before a piece of the key happen to continue it
    backwards (here: the label ``bare=`` before the hex key's ``ec2d…`` ends in the key's third character,
    ``e``), as documented.
    """
    value = key_shapes(key)[name]
    secret = secret_part(key)
    public = len(key) - len(secret)
    if name == "full":
        return label + "***"
    if name.startswith("base64"):
        first, last = base64_core(value, secret)
        return label + value[:first] + "***" + value[last:]
    if name in ("bare", "part"):
        offset = key.index(value)
        kept = value[:max(0, public - offset)]
        if kept or not label:
            return label + kept + "***"
        before = alnum(key[public:offset].encode()).decode()
        while before and alnum(label.encode()) and alnum(label.encode()).decode()[-1] == before[-1]:
            before, label = before[:-1], re.sub(r"[A-Za-z0-9][^A-Za-z0-9]*$", "", label)
        return label + "***"
    start = {"spaced": public + public // 3, "punct": public + public // 3, "lines": 2 * public,
             "percent": 3 * public}[name]
    trailing = value[len(value.rstrip("._:/-")):] if name == "punct" else ""
    return label + value[:start] + "***" + trailing


def masked_shapes(key: str) -> str:
    """`` shapes: full=*** | …`` as the sim's ``echo_shapes`` text reads once masked."""
    return " shapes: " + SHAPE_SEPARATOR.join(masked_shape(name, key, f"{name}=") for name in SHAPES)


def masked_quote(key: str) -> str:
    """The sim's ``quote_key`` text once masked."""
    return f"Your key, quoted back:{masked_shapes(key)}"


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

    def __init__(self, secrets: tuple[str, ...] = SECRETS) -> None:
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
