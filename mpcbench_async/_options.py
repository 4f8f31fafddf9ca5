"""Settings passed to the library as values, checked against their declared types before any work starts.

The CLI's parser turns text into typed values and refuses what it cannot parse; a
library caller passes values directly, so a ``str`` where a path belongs, a bare
string where a list of names belongs (``suites="mpcbench"`` iterates as letters) or
a float where a count belongs would fail deep inside (``TypeError: 'str' / 'str'``).
``checked_options`` applies the declared type of every field of an options struct
(``SweepOptions``, ``ProfileOptions``, any ``msgspec.Struct``) in one place: it
returns a copy with paths given as text made ``Path`` and raises an ``InputError``
naming the setting (``InputError.setting``; the CLI shows the flag) otherwise.
"""

from __future__ import annotations

import os
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

import msgspec

from ._exceptions import InputError

__all__ = ["checked_options", "setting_error", "sweep_dir_problem"]

S = TypeVar("S", bound=msgspec.Struct)


class _Bad(Exception):
    """Why a value does not fit a type (internal: becomes the ``InputError``); ``where``: ``[1]`` in a list."""

    def __init__(self, problem: str, where: str = "") -> None:
        super().__init__(problem)
        self.problem, self.where = problem, where


def setting_error(setting: str, message: str) -> InputError:
    """An ``InputError`` whose ``message`` starts with ``setting`` (``max_turns must be at least 1``, ``out: …``);
    the CLI shows the flag there (``--max-turns must be at least 1``)."""
    return InputError(message, setting=setting)


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:59] + '…'}"


def _fit(value: Any, hint: Any) -> Any:
    """``value`` as ``hint`` declares it (text made ``Path``), or ``_Bad`` saying what was expected."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return value
    if origin is Literal:
        if value in args:
            return value
        raise _Bad(f"must be one of {', '.join(map(repr, args))}, got {_shown(value)}")
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        problems: list[_Bad] = []
        for arm in (a for a in args if a is not type(None)):
            try:
                return _fit(value, arm)
            except _Bad as exc:
                problems.append(exc)
        raise problems[0] if len(problems) == 1 else _Bad(f"has the wrong type, got {_shown(value)}")
    if hint is Path:
        if isinstance(value, (str, os.PathLike)) and not isinstance(value, bytes):
            return Path(value)
        raise _Bad(f"must be a path (str or pathlib.Path), got {_shown(value)}")
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise _Bad(f"must be True or False, got {_shown(value)}")
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _Bad(f"must be a whole number, got {_shown(value)}")
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value  # inf and nan are the domain checks' to refuse, in the words the CLI uses too
        raise _Bad(f"must be a number, got {_shown(value)}")
    if hint is str:
        if isinstance(value, str):
            return value
        raise _Bad(f"must be a string, got {_shown(value)}")
    if origin in (Sequence, list, tuple) or origin is typing.Sequence:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise _Bad(f"must be a list of values, got {_shown(value)}")
        item = args[0] if args else Any
        fitted = []
        for index, element in enumerate(value):
            try:
                fitted.append(_fit(element, item))
            except _Bad as exc:
                raise _Bad(exc.problem, f"[{index}]{exc.where}") from None
        return type(value)(fitted)
    if origin is dict:
        if not isinstance(value, dict):
            raise _Bad(f"must be a mapping, got {_shown(value)}")
        key, item = args if args else (Any, Any)
        fitted_map = {}
        for k, v in value.items():
            try:
                fitted_map[_fit(k, key)] = _fit(v, item)
            except _Bad as exc:
                raise _Bad(exc.problem, f"[{k!r}]{exc.where}") from None
        return fitted_map
    if isinstance(hint, type) and issubclass(hint, msgspec.Struct):  # a settings object inside settings: its own
        if not isinstance(value, hint):
            raise _Bad(f"must be a {hint.__name__}, got {_shown(value)}")
        return checked_options(value)  # a bad field in it is named by its own name (``max_turns``)
    return value  # a type with no rule here: its own checks apply


def checked_options(options: S) -> S:
    """``options`` with every field checked against its declared type (paths given as text made ``Path``).

    Raises ``InputError`` naming the first bad setting (``setting_error``).
    """
    if not isinstance(options, msgspec.Struct):
        raise InputError(f"expected options as a settings object, got {_shown(options)}")
    hints = typing.get_type_hints(type(options))
    changes: dict[str, Any] = {}
    for name in options.__struct_fields__:
        value = getattr(options, name)
        try:
            fitted = _fit(value, hints[name])
        except _Bad as exc:
            raise setting_error(name, f"{name}{exc.where} {exc.problem}") from None
        if type(fitted) is not type(value) or (fitted is not value and fitted != value):  # nan is itself
            changes[name] = fitted
    return msgspec.structs.replace(options, **changes) if changes else options


def sweep_dir_problem(path: str | Path) -> str | None:
    """Why ``path`` is not a sweep's output directory to read (absent, not a directory, or holding neither
    ``runs.jsonl`` nor ``manifest.json``); ``None`` when it is one. The viewer, the report and ``summarize`` read
    such directories: an empty report of a mistyped path would look like a sweep that ran nothing."""
    path = Path(path)
    if not path.is_dir():
        return f"{path}: no such directory" if not path.exists() else f"{path} is a file, not a sweep directory"
    if not any((path / name).exists() for name in ("runs.jsonl", "manifest.json")):
        return f"{path}: no runs.jsonl or manifest.json here; is it a sweep output directory?"
    return None
