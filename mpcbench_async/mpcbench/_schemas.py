r"""JSON-Schema validation of generated data, with errors that name the file and JSON path.

Schemas live in ``schemas/<name>_schema.json`` (world_state and the six
sources). Validators are built once per directory and reused.

A regular expression cannot tell a real date from ``2025-02-30`` or an offset of
``+25:00``, so a string that a date-shaped ``pattern`` (one starting ``^\d{4}-\d{2}-\d{2}``,
as every date and timestamp of the shipped schemas does) or a ``format`` of ``date`` or
``date-time`` accepts is also checked by the calendar (``_validate.timestamp_problem``):
the day must exist and the UTC offset lie within ±14:00.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._exceptions import InputError
from .._resources import workspace_path
from .._validate import timestamp_problem

if TYPE_CHECKING:
    import jsonschema

__all__ = ["SOURCES", "SchemaSet", "format_path", "load_schemas"]

SOURCES: tuple[str, ...] = ("slack", "gmail", "calendar", "contacts", "jira", "drive")
_NAMES = ("world_state", *SOURCES)
_DATE_PATTERN = "^\\d{4}-\\d{2}-\\d{2}"  # how a pattern for a date or a timestamp starts
_DATE_FORMATS = ("date", "date-time")


def _validator_class() -> Any:
    """Draft 7, with date-shaped ``pattern`` and ``format: date|date-time`` also checked by the calendar."""
    import jsonschema

    draft7 = jsonschema.Draft7Validator.VALIDATORS

    def calendar(instance: Any) -> Any:
        if isinstance(instance, str) and (problem := timestamp_problem(instance)) is not None:
            yield jsonschema.ValidationError(f"{instance!r} {problem}")

    def pattern(validator: Any, regex: str, instance: Any, schema: dict[str, Any]) -> Any:
        errors = list(draft7["pattern"](validator, regex, instance, schema))
        yield from errors
        if not errors and regex.startswith(_DATE_PATTERN):
            yield from calendar(instance)

    def format_(validator: Any, name: str, instance: Any, schema: dict[str, Any]) -> Any:
        if name in _DATE_FORMATS:
            yield from calendar(instance)
        else:
            yield from draft7["format"](validator, name, instance, schema)

    return jsonschema.validators.extend(jsonschema.Draft7Validator, {"pattern": pattern, "format": format_})


def format_path(path: Any) -> str:
    """``["events", 3, "start"]`` → ``$.events[3].start``."""
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


class SchemaSet:
    """The seven schemas of one ``schemas/`` directory."""

    def __init__(self, directory: str | Path) -> None:
        import jsonschema  # ~70 ms: only when a command validates data, never for --help
        import orjson

        self.directory = Path(directory)
        self._validators: dict[str, jsonschema.protocols.Validator] = {}
        validator = _validator_class()
        self.texts: dict[str, str] = {}
        for name in _NAMES:
            path = self.directory / f"{name}_schema.json"
            try:
                text = path.read_text(encoding="utf-8")
                schema = orjson.loads(text)
                jsonschema.Draft7Validator.check_schema(schema)
            except OSError as exc:
                raise InputError(f"{path}: cannot read schema ({exc.strerror})") from exc
            except orjson.JSONDecodeError as exc:
                raise InputError(f"{path}: not valid JSON ({exc})") from exc
            except jsonschema.SchemaError as exc:
                raise InputError(f"{path}: not a valid JSON Schema: {exc.message}") from exc
            self._validators[name] = validator(schema)
            self.texts[name] = text

    def problems(self, name: str, document: Any, *, limit: int = 20) -> list[str]:
        """Every validation problem of ``document`` as ``"$.path: message"`` (at most ``limit``)."""
        errors = sorted(self._validators[name].iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
        return [f"{format_path(e.absolute_path)}: {e.message}" for e in errors[:limit]]

    def check_file(self, path: str | Path, name: str) -> list[str]:
        """Problems of one data file, each prefixed with the file name (unreadable JSON included)."""
        import orjson

        path = Path(path)
        try:
            document = orjson.loads(path.read_bytes())
        except OSError as exc:
            return [f"{path}: cannot read ({exc.strerror})"]
        except orjson.JSONDecodeError as exc:
            return [f"{path}: not valid JSON ({exc})"]
        return [f"{path}: {problem}" for problem in self.problems(name, document)]


@lru_cache(maxsize=8)
def load_schemas(directory: str) -> SchemaSet:
    """A cached ``SchemaSet`` for ``directory`` (the package's copy for a ``schemas`` the working directory lacks)."""
    return SchemaSet(workspace_path(directory))


