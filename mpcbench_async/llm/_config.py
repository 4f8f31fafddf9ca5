"""Model configuration: ``model_config.json`` → validated per-model settings.

The file keeps the original MPCBench keys (``agent_models``, ``judge_models``,
``data_generation_model``) and adds ``defaults`` and ``models``: per-model
settings merged over the defaults, field by field::

    {
      "agent_models": ["gpt-4o-mini", "sim/oracle-agent"],
      "judge_models": ["sim/judge"],
      "defaults": {"limits": {"max_concurrency": 16}},
      "models": {
        "gpt-4o-mini": {
          "base_url": "https://api.openai.com/v1",
          "api_key_env": "OPENAI_API_KEY",
          "params": {"temperature": 0, "max_tokens": 2048},
          "limits": {"max_concurrency": 64, "rpm": 5000, "tpm": 2000000},
          "timeouts": {"connect_s": 10, "read_s": 120, "call_deadline_s": 600},
          "breaker": {"failures": 5},
          "prices": {"input_per_1m": 0.15, "output_per_1m": 0.60}
        }
      }
    }

Models named ``sim/...`` need no base URL or key: the embedded sim serves them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from .._exceptions import ConfigError, RecordDecodeError
from ..records import decode_json
from ..runtime import LimitSettings, RetryPolicy

__all__ = ["BreakerSettings", "ModelConfig", "ModelSettings", "Prices", "Timeouts", "load_model_config"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class Prices(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """USD per one million tokens."""

    input_per_1m: float = 0.0
    output_per_1m: float = 0.0

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_1m + completion_tokens * self.output_per_1m) / 1e6


_Seconds = Annotated[float, msgspec.Meta(gt=0, le=86400)]


class Timeouts(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """How long one model call may take, in seconds.

    ``connect_s`` bounds opening a connection, ``read_s`` the wait for the reply
    (between bytes received, so it must cover the model's generation time), and
    ``call_deadline_s`` the whole call: every attempt, backoff sleep and limiter
    wait after the first send.
    """

    connect_s: _Seconds = 10.0
    read_s: _Seconds = 120.0
    call_deadline_s: _Seconds = 600.0


class BreakerSettings(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """The model's circuit breaker: opens after ``failures`` consecutive failed calls of a dead endpoint (0: never)."""

    failures: Annotated[int, msgspec.Meta(ge=0)] = 5


class ModelSettings(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Everything needed to call one model.

    ``model`` is the name sent to the API (defaults to the config name, so two
    config entries can call one API model with different params). ``reasoning``
    models get ``max_completion_tokens`` instead of ``max_tokens`` and no
    ``temperature``. ``api_key_env: null`` means the endpoint needs no key
    (a local vLLM or Ollama server). ``timeout_s`` (kept from earlier versions)
    caps each attempt as a whole on top of ``timeouts``; unset, it does not.
    """

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    params: dict[str, Any] = msgspec.field(default_factory=dict)
    reasoning: bool = False
    transport: Literal["native", "openai"] = "native"
    timeout_s: _Seconds | None = None
    timeouts: Timeouts = msgspec.field(default_factory=Timeouts)
    breaker: BreakerSettings = msgspec.field(default_factory=BreakerSettings)
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    limits: LimitSettings = msgspec.field(default_factory=LimitSettings)
    retry: RetryPolicy = msgspec.field(default_factory=RetryPolicy)
    prices: Prices = msgspec.field(default_factory=Prices)

    def reply_settings(self) -> dict[str, Any]:
        """The settings that change a model's replies (unit keys hash them; a sweep manifest shows their changes)."""
        return {"model": self.model, "base_url": self.base_url, "params": self.params, "reasoning": self.reasoning}

    def fingerprint(self) -> str:
        """A short hash of the settings that change a model's replies (for unit keys)."""
        return hashlib.sha256(msgspec.json.encode(self.reply_settings(), order="sorted")).hexdigest()[:16]


class _ConfigFile(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    agent_models: list[str] = msgspec.field(default_factory=list)
    judge_models: list[str] = msgspec.field(default_factory=list)
    data_generation_model: str | None = None
    tariff_models: list[str] = msgspec.field(default_factory=list)
    defaults: dict[str, Any] = msgspec.field(default_factory=dict)
    models: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Merge two settings dicts; nested dicts (limits, params, …) merge key by key."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


class ModelConfig:
    """The parsed configuration: model lists and settings for any model name."""

    def __init__(self, raw: _ConfigFile | None = None, *, source: str = "<model config>") -> None:
        self.raw = raw or _ConfigFile()
        self.source = source
        self._cache: dict[str, ModelSettings] = {}
        for name in self.raw.models:  # validate every entry up front
            self.settings_for(name)

    @property
    def agent_models(self) -> list[str]:
        return self.raw.agent_models

    @property
    def judge_models(self) -> list[str]:
        return self.raw.judge_models

    @property
    def data_generation_model(self) -> str | None:
        return self.raw.data_generation_model

    @property
    def tariff_models(self) -> list[str]:
        return self.raw.tariff_models

    def settings_for(self, name: str) -> ModelSettings:
        """Settings for ``name``: ``defaults`` merged with ``models[name]`` (if any)."""
        cached = self._cache.get(name)
        if cached is not None:
            return cached
        merged = _merge(self.raw.defaults, self.raw.models.get(name, {}))
        where = f"models.{name}" if name in self.raw.models else "defaults"
        try:
            settings = msgspec.convert(merged, ModelSettings)
        except msgspec.ValidationError as exc:
            raise ConfigError(f"{self.source}: {where}: {exc}") from exc
        self._cache[name] = settings
        return settings

    def with_overrides(self, name: str, overrides: dict[str, Any]) -> ModelConfig:
        """A copy in which ``name``'s settings are merged with ``overrides`` (e.g. limits for a profile run)."""
        raw = msgspec.structs.replace(self.raw, models={**self.raw.models,
                                                         name: _merge(self.raw.models.get(name, {}), overrides)})
        return ModelConfig(raw, source=self.source)

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: str = "<model config>") -> ModelConfig:
        try:
            raw = msgspec.convert(data, _ConfigFile)
        except msgspec.ValidationError as exc:
            raise ConfigError(f"{source}: {exc}") from exc
        return cls(raw, source=source)


def load_model_config(path: str | Path) -> ModelConfig:
    """Load and validate ``model_config.json``; errors name the file and the field."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: model config not found (pass --config PATH)")
    try:
        raw = decode_json(path.read_bytes(), _ConfigFile, source=str(path))
    except RecordDecodeError as exc:  # same message, as a configuration error
        raise ConfigError(str(exc)) from exc
    return ModelConfig(raw, source=str(path))
