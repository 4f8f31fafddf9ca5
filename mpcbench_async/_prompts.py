"""``prompt_config.json``: every prompt the project sends (both benchmarks), as templates with ``{placeholders}``."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import msgspec

from ._exceptions import InputError
from .records import load_json_file

__all__ = ["PromptConfig", "PromptTemplate", "load_prompts"]


class PromptTemplate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    system: str = ""
    user: str = ""


class PromptConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The prompt templates. ``digest(name)`` changes when that prompt changes (unit keys use it)."""

    version: int = 1
    world_state: PromptTemplate
    source: PromptTemplate
    repair: PromptTemplate
    agent: PromptTemplate | None = None
    judge: PromptTemplate | None = None
    tariff_proposer: PromptTemplate | None = None
    tariff_critique: PromptTemplate | None = None

    def digest(self, *names: str) -> str:
        """A short hash of the named templates, so editing one prompt changes only its units' keys."""
        parts = {name: msgspec.to_builtins(getattr(self, name)) for name in names}
        return hashlib.sha256(msgspec.json.encode(parts, order="sorted")).hexdigest()[:16]

    def render(self, name: str, part: str, **values: Any) -> str:
        """Fill one template; a placeholder without a value is an error naming it."""
        template: PromptTemplate | None = getattr(self, name)
        if template is None:
            raise InputError(f"prompt_config.json: $.{name} is missing")
        text = getattr(template, part)
        try:
            return text.format_map(values)
        except KeyError as exc:
            raise InputError(f"prompt_config.json: $.{name}.{part} uses unknown placeholder {{{exc.args[0]}}}") from exc


def load_prompts(path: str | Path) -> PromptConfig:
    """Load ``prompt_config.json``; errors name the file and field."""
    return load_json_file(path, PromptConfig)
