"""The one hasher behind every unit key (DESIGN.md §4): sweep runs and judgements, tariff cases, generation.

A key is what resume compares against the records on disk, so its bytes are a
file format: changing how it is computed makes every existing directory rerun
(and pay for) all of its units. Every suite therefore builds its key here from
the parts that determine the unit's result.
"""

from __future__ import annotations

import hashlib

__all__ = ["unit_key"]


def unit_key(*parts: bytes | str, prefix: str = "", nul_after_last: bool = True) -> str:
    """``prefix`` + the first 16 hex digits of the sha256 of ``parts``, each followed by a NUL byte.

    The NUL keeps ``("ab", "c")`` and ``("a", "bc")`` apart; strings are UTF-8 encoded.
    ``nul_after_last=False`` leaves out the NUL after the last part: the framing tariff
    case keys were first written with, kept so their results files still resume.
    """
    digest = hashlib.sha256()
    for i, part in enumerate(parts):
        digest.update(part.encode() if isinstance(part, str) else part)
        if nul_after_last or i < len(parts) - 1:
            digest.update(b"\x00")
    return prefix + digest.hexdigest()[:16]
