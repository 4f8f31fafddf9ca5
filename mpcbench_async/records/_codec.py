"""Typed JSON decoding with errors that name the source and the field.

Decoders are built once per type and reused (msgspec's fast path); errors are
turned into ``RecordDecodeError`` carrying the file (or other source) name and
msgspec's field path, e.g. ``tasks/a.json: Expected `int`, got `str` - at `$.max_turns```.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from .._exceptions import RecordDecodeError

__all__ = ["decode_json", "encode_json", "load_json_file", "to_builtins"]

T = TypeVar("T")

_encoder = msgspec.json.Encoder()


@cache
def _decoder(type_: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(type_)


def decode_json(data: bytes | str, type_: type[T], *, source: str = "<input>") -> T:
    """Decode ``data`` as ``type_``; on failure raise an error naming ``source`` and the field."""
    try:
        return _decoder(type_).decode(data)  # type: ignore[arg-type]  # mypy sees no __hash__ on type[T]
    except msgspec.ValidationError as exc:
        raise RecordDecodeError(f"{source}: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise RecordDecodeError(f"{source}: not valid JSON ({exc})") from exc
    except RecursionError as exc:  # msgspec gives up on ~1,000 levels of nesting
        raise RecordDecodeError(f"{source}: nested too deeply to read") from exc


def encode_json(obj: Any) -> bytes:
    """Encode a Struct or builtin value to compact JSON bytes."""
    return _encoder.encode(obj)


def to_builtins(obj: Any) -> Any:
    """Convert Structs to plain dicts/lists (defaults omitted) for foreign APIs."""
    return msgspec.to_builtins(obj)


def load_json_file(path: str | Path, type_: type[T]) -> T:
    """Read and decode one JSON file, naming the file in any error."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RecordDecodeError(f"{path}: cannot read ({exc.strerror})") from exc
    return decode_json(data, type_, source=str(path))

