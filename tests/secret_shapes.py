"""Test keys and what each of their shapes must look like once masked (the scanner for key material in any shape
is ``mpcbench_async.testing.Scanner``).

Computed here from the definitions, not with the code under test.
"""

from __future__ import annotations

import re

from mpcbench_async._redact import secret_part
from mpcbench_async.sim._leaks import SHAPE_SEPARATOR, key_shapes
from mpcbench_async.testing._secrets import alnum, base64_core

__all__ = ["HEADER_KEY", "PLAIN_KEY", "SECRETS", "SHAPES", "SK_KEY", "masked_quote", "masked_shape",
           "masked_shapes"]

# Made-up keys for these tests (random, as real keys are; no provider issued them).
SK_KEY = "sk-proj-JfP1E8lHaxyKoeyzgchXnygAdNbJGeX5mXmbToY8"
PLAIN_KEY = "YOz6DwH6bMhImnhpMchYiJxfLDWrC08K"  # no recognisable shape: only the registry can catch it
HEADER_KEY = "5aeec2d0a7b7958a9b248840b4ca790d"  # hex, as Azure's; written literally into a configured header
SECRETS = (SK_KEY, PLAIN_KEY, HEADER_KEY)
SHAPES = tuple(key_shapes(SK_KEY))  # full bare part spaced punct lines percent base64_0 base64_1 base64_2 base64url


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
