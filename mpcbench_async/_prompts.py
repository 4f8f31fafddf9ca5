"""``prompt_config.json``: every prompt the project sends (both benchmarks), as templates with ``{placeholders}``.

Each template may use only the values its caller fills in (``PLACEHOLDERS``), by
plain name: loading renders every template once with sample values, so an unknown
placeholder, a stray brace, ``{0}`` or ``{name.attribute}`` is refused when the file
is loaded, naming the file and the template, instead of failing a unit mid-run.
``require`` refuses a run that needs an optional template the file lacks. A part the
project sends (``SENT_PARTS``: both parts of most templates, only ``user`` of ``repair``
and ``tariff_critique``) that is empty or only whitespace is refused at load too: it
would send the model an empty message.
"""

from __future__ import annotations

import hashlib
import string
from pathlib import Path
from typing import Any

import msgspec

from ._exceptions import InputError
from ._resources import workspace_path
from .records import load_json_file

__all__ = ["PLACEHOLDERS", "SENT_PARTS", "PromptConfig", "PromptTemplate", "load_prompts"]

# The values each template's callers pass (``render(name, part, **values)``), with a sample of each value's type.
PLACEHOLDERS: dict[str, dict[str, Any]] = {
    "world_state": {"scenario_json": "", "schema_json": "", "noise_level": 0.5, "depth": 0.5, "noise_events": 1},
    "source": {"source": "", "source_title": "", "world_state_json": "", "schema_json": ""},
    "repair": {"problems": ""},
    "agent": {"now": "", "timezone": "", "user_prompt": "", "workday_start": "", "workday_end": ""},
    "judge": {"judge_input_json": ""},
    "tariff_proposer": {"request_json": "", "evidence_bundle_json": ""},
    "tariff_critique": {"reasons": ""},
    "levels_agent": {"task_text": "", "available_refs": "", "participants": ""},
}
_PARTS = ("system", "user")
# The parts of each template the project sends to a model; the others may be left empty.
SENT_PARTS: dict[str, tuple[str, ...]] = {name: _PARTS for name in PLACEHOLDERS} | {
    "repair": ("user",), "tariff_critique": ("user",)}


class PromptTemplate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    system: str = ""
    user: str = ""


class PromptConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, dict=True):
    """The prompt templates. ``digest(name)`` changes when that prompt changes (unit keys use it).

    ``path`` is the file the templates were loaded from, for messages (``source`` is a template).
    """

    version: int = 1
    world_state: PromptTemplate
    source: PromptTemplate
    repair: PromptTemplate
    agent: PromptTemplate | None = None
    judge: PromptTemplate | None = None
    tariff_proposer: PromptTemplate | None = None
    tariff_critique: PromptTemplate | None = None
    levels_agent: PromptTemplate | None = None

    @property
    def path(self) -> str:
        """The file the templates came from (``prompt_config.json`` when built in code)."""
        return self.__dict__.get("_path", "prompt_config.json")

    def digest(self, *names: str) -> str:
        """A short hash of the named templates, so editing one prompt changes only its units' keys."""
        parts = {name: msgspec.to_builtins(getattr(self, name)) for name in names}
        return hashlib.sha256(msgspec.json.encode(parts, order="sorted")).hexdigest()[:16]

    def require(self, *names: str) -> None:
        """Refuse now, naming the file and the templates, when a run needs templates this file lacks."""
        missing = [name for name in names if getattr(self, name) is None]
        if missing:
            them = "them" if len(missing) > 1 else "it"
            raise InputError(f"{self.path}: " + "; ".join(f"$.{name} is missing" for name in missing)
                             + f" (this run needs {them}; copy {them} from the shipped prompt_config.json)")

    def render(self, name: str, part: str, **values: Any) -> str:
        """Fill one template; a placeholder without a value is an error naming it."""
        template: PromptTemplate | None = getattr(self, name)
        if template is None:
            raise InputError(f"{self.path}: $.{name} is missing")
        text = getattr(template, part)
        try:
            return text.format_map(values)
        except KeyError as exc:
            raise InputError(f"{self.path}: $.{name}.{part} uses unknown placeholder {{{exc.args[0]}}}") from exc
        except (ValueError, IndexError, AttributeError, TypeError) as exc:
            raise InputError(f"{self.path}: $.{name}.{part} is not a valid template ({exc})") from exc


def _template_problem(text: str, samples: dict[str, Any], sent: bool) -> str | None:
    """Why ``text`` cannot be filled from ``samples`` (the values its callers pass), or None.

    ``sent``: the project sends this part to a model, so it must not be empty.
    """
    if sent and not text.strip():
        return ("is empty or missing; it is sent to the model, so give it a text (copy it from the shipped "
                "prompt_config.json)")
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(text) if field is not None]
    except ValueError as exc:
        return f"is not a valid template ({exc}; write a literal brace as {{{{ or }}}})"
    for field in fields:
        if not field.isidentifier():
            return f"uses the placeholder {{{field}}}; placeholders are plain names"
        if field not in samples:
            return (f"uses unknown placeholder {{{field}}} (known: "
                    + ", ".join(f"{{{k}}}" for k in samples) + ")")
    try:
        text.format_map(samples)
    except (ValueError, TypeError) as exc:  # a format spec that does not fit the value, e.g. {user_prompt:d}
        return f"is not a valid template ({exc})"
    return None


def load_prompts(path: str | Path) -> PromptConfig:
    """Load ``prompt_config.json``; errors name the file and field, every bad template at once.

    A relative ``prompt_config.json`` missing from the working directory is read from the package's copy.
    """
    path = workspace_path(path)
    config = load_json_file(path, PromptConfig)
    config.__dict__["_path"] = str(path)
    problems = [f"{path}: $.{name}.{part} {problem}" for name, samples in PLACEHOLDERS.items()
                if (template := getattr(config, name)) is not None
                for part in _PARTS
                if (problem := _template_problem(getattr(template, part), samples, part in SENT_PARTS[name]))
                is not None]
    if problems:
        raise InputError("\n".join(problems))
    return config
