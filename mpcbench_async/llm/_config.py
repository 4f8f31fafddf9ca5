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

Loading checks ``defaults`` and every ``models`` entry on its own, so an error
names where the bad value is written (``models.gpt-4o-mini: Expected `int` >= 1,
got `str` - at `$.params.max_tokens```): types and ranges of every setting, the
request params the client or the API read with a fixed type (``_Params``; other
params pass through as written), nesting (at most ``MAX_NESTING`` levels) and
integers that fit the request encoder, header names and values, the base URL and
model names. A value that passes here does not crash a call later.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import msgspec

from .._exceptions import ConfigError, RecordDecodeError
from .._resources import workspace_path
from .._validate import json_problem, name_problem
from ..records import decode_json
from ..runtime import LimitSettings, RetryPolicy
from ._registry import transport_names

__all__ = ["BreakerSettings", "ModelConfig", "ModelSettings", "Prices", "Timeouts", "load_model_config"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Per API a model speaks (``provider``): the environment variable that may name its base URL, else the default; and
# what the provider changes of a model's defaults (its transport and its key's variable) unless set.
PROVIDER_BASE_URLS = {"openai": ("OPENAI_BASE_URL", DEFAULT_BASE_URL),
                      "anthropic": ("ANTHROPIC_BASE_URL", "https://api.anthropic.com/v1"),
                      "gemini": ("GEMINI_BASE_URL", "https://generativelanguage.googleapis.com/v1beta")}
PROVIDER_DEFAULTS: dict[str, dict[str, Any]] = {"anthropic": {"transport": "anthropic",
                                                               "api_key_env": "ANTHROPIC_API_KEY"},
                                                 "gemini": {"transport": "gemini", "api_key_env": "GEMINI_API_KEY"}}
# A key variable read when the configured one is unset, as the provider's own SDK does.
KEY_FALLBACKS = {"GEMINI_API_KEY": "GOOGLE_API_KEY"}


class Prices(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """USD per one million tokens.

    Providers report cached prompt tokens (``usage.prompt_tokens_details.cached_tokens``, part of
    ``prompt_tokens``) and reasoning tokens (``usage.completion_tokens_details.reasoning_tokens``, part of
    ``completion_tokens``); ``cached_input_per_1m`` and ``reasoning_per_1m`` price them, and unset they cost
    the input and output rates. ``cache_write_per_1m`` prices prompt tokens written to the cache (Anthropic's
    ``cache_creation_input_tokens``, also part of ``prompt_tokens``); unset, they cost the input rate.
    """

    input_per_1m: float = 0.0
    output_per_1m: float = 0.0
    cached_input_per_1m: float | None = None
    reasoning_per_1m: float | None = None
    cache_write_per_1m: float | None = None
    batch_discount: Annotated[float, msgspec.Meta(ge=0, lt=1)] = 0.5

    def batched(self) -> Prices:
        """These prices at the batch tier: every rate times ``1 - batch_discount`` (OpenAI's, Anthropic's: 50 %)."""
        keep = 1.0 - self.batch_discount
        return Prices(input_per_1m=self.input_per_1m * keep, output_per_1m=self.output_per_1m * keep,
                      cached_input_per_1m=None if self.cached_input_per_1m is None else self.cached_input_per_1m * keep,
                      reasoning_per_1m=None if self.reasoning_per_1m is None else self.reasoning_per_1m * keep,
                      cache_write_per_1m=None if self.cache_write_per_1m is None else self.cache_write_per_1m * keep,
                      batch_discount=self.batch_discount)

    def cost(self, prompt_tokens: int, completion_tokens: int, *, cached_tokens: int = 0,
             reasoning_tokens: int = 0, cache_write_tokens: int = 0) -> float:
        # each count clamped to [0, its whole], as ``min(max(n, 0), whole)`` does: conditionals, since this runs per
        # call and the builtins' argument parsing costs ten times a comparison
        cached = cached_tokens if cached_tokens > 0 else 0
        cached = prompt_tokens if prompt_tokens < cached else cached
        written = cache_write_tokens if cache_write_tokens > 0 else 0
        written = prompt_tokens - cached if prompt_tokens - cached < written else written
        write_rate = self.input_per_1m if self.cache_write_per_1m is None else self.cache_write_per_1m
        reasoning = reasoning_tokens if reasoning_tokens > 0 else 0
        reasoning = completion_tokens if completion_tokens < reasoning else reasoning
        cached_rate = self.input_per_1m if self.cached_input_per_1m is None else self.cached_input_per_1m
        reasoning_rate = self.output_per_1m if self.reasoning_per_1m is None else self.reasoning_per_1m
        return ((prompt_tokens - cached - written) * self.input_per_1m + cached * cached_rate + written * write_rate
                + (completion_tokens - reasoning) * self.output_per_1m + reasoning * reasoning_rate) / 1e6

    def worst_case(self, prompt_tokens: int, max_output_tokens: int) -> float:
        """The most a call can cost: every prompt token uncached, every output token at the dearer output rate."""
        out_rate = max(self.output_per_1m, self.reasoning_per_1m or 0.0)
        return (prompt_tokens * self.input_per_1m + max_output_tokens * out_rate) / 1e6


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


class BatchSettings(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """How a model's calls go in provider batches (``"batch": true`` takes these defaults; ``llm/_batch``).

    A batch is cut at ``max_requests`` calls or ``max_wait_s`` after its first; it is polled every ``poll_s``,
    doubling up to ``poll_max_s``; one not finished ``deadline_s`` after its creation is cancelled; a request
    that failed transiently is resubmitted up to ``resubmits`` times. ``api`` is the provider's batch API: ``openai``
    (the Batch API) or ``anthropic`` (Message Batches; the model's ``base_url`` is Anthropic's, e.g.
    ``https://api.anthropic.com/v1``, and its key goes in ``x-api-key``).
    """

    api: Literal["openai", "anthropic"] = "openai"
    max_requests: Annotated[int, msgspec.Meta(ge=1, le=50000)] = 50000
    max_wait_s: _Seconds = 2.0
    poll_s: Annotated[float, msgspec.Meta(ge=0)] = 5.0
    poll_max_s: Annotated[float, msgspec.Meta(ge=0)] = 60.0
    deadline_s: Annotated[float, msgspec.Meta(ge=0)] = 86400.0
    resubmits: Annotated[int, msgspec.Meta(ge=0)] = 2


class ModelSettings(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Everything needed to call one model.

    ``model`` is the name sent to the API (defaults to the config name, so two
    config entries can call one API model with different params). ``reasoning``
    models get ``max_completion_tokens`` instead of ``max_tokens`` and no
    ``temperature``. ``api_key_env: null`` means the endpoint needs no key
    (a local vLLM or Ollama server). ``timeout_s`` (kept from earlier versions)
    caps each attempt as a whole on top of ``timeouts``; unset, it does not.
    ``transport`` is a registered transport name (``_registry``); ``store`` is the
    call store file the ``record`` and ``replay`` transports write and read.
    ``prices`` override the shipped price table (``_prices``); unset and not in
    the table, the model's cost is unknown. ``budget_usd`` caps what the model
    may spend when the run has a ``Budget`` (``Budget.from_config``).
    ``provider`` is the API the model speaks: ``openai`` (chat completions, the default) or ``anthropic`` (the
    Messages API: transport ``anthropic``, key ``ANTHROPIC_API_KEY``, base URL ``ANTHROPIC_BASE_URL`` or
    Anthropic's, unless set) or ``gemini`` (``generateContent``: transport ``gemini``, key ``GEMINI_API_KEY``, base
    URL ``GEMINI_BASE_URL`` or Google's ``v1beta``, unless set); ``prompt_cache`` marks the stable prefix for the
    provider's prompt cache (Anthropic's ``cache_control``; cache reads are priced as cached input, cache writes at
    ``cache_write_per_1m``).
    """

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    params: dict[str, Any] = msgspec.field(default_factory=dict)
    reasoning: bool = False
    transport: str = "native"
    store: str | None = None
    timeout_s: _Seconds | None = None
    timeouts: Timeouts = msgspec.field(default_factory=Timeouts)
    breaker: BreakerSettings = msgspec.field(default_factory=BreakerSettings)
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    limits: LimitSettings = msgspec.field(default_factory=LimitSettings)
    retry: RetryPolicy = msgspec.field(default_factory=RetryPolicy)
    prices: Prices | None = None
    budget_usd: Annotated[float, msgspec.Meta(gt=0)] | None = None
    provider: Literal["openai", "anthropic", "gemini"] = "openai"
    prompt_cache: bool = False
    batch: bool | BatchSettings = False

    @property
    def batch_settings(self) -> BatchSettings | None:
        """The model's batch settings, ``None`` when its calls go online."""
        return BatchSettings() if self.batch is True else self.batch or None

    def reply_settings(self) -> dict[str, Any]:
        """The settings that change a model's replies (unit keys hash them; a sweep manifest shows their changes)."""
        return {"model": self.model, "base_url": self.base_url, "params": self.params, "reasoning": self.reasoning}

    def fingerprint(self) -> str:
        """A short hash of the settings that change a model's replies (for unit keys)."""
        return hashlib.sha256(msgspec.json.encode(self.reply_settings(), order="sorted")).hexdigest()[:16]


_Count = Annotated[int, msgspec.Meta(ge=1)]


class _Params(msgspec.Struct, kw_only=True, frozen=True):
    """The request params read with a fixed type (by the client's token budget, the sim or the API); others pass."""

    max_tokens: _Count | None = None
    max_completion_tokens: _Count | None = None
    temperature: Annotated[float, msgspec.Meta(ge=0)] | None = None
    top_p: Annotated[float, msgspec.Meta(ge=0, le=1)] | None = None
    n: _Count | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    seed: int | None = None
    stop: str | list[str] | None = None
    logprobs: bool | None = None
    top_logprobs: Annotated[int, msgspec.Meta(ge=0)] | None = None
    parallel_tool_calls: bool | None = None
    stream: bool | None = None
    stream_options: dict[str, Any] | None = None
    user: str | None = None
    reasoning_effort: str | None = None
    response_format: dict[str, Any] | None = None
    tool_choice: str | dict[str, Any] | None = None
    logit_bias: dict[str, float] | None = None


class _ParamsHolder(msgspec.Struct):
    """Wraps ``_Params`` so its errors carry the path ``$.params.<name>``."""

    params: _Params


_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_HEADER_VALUE = re.compile(r"^[^\x00-\x08\x0a-\x1f\x7f]*$")
_SET_BY_CLIENT = {"model": "name the API model with `model` beside `params`", "messages": "the task supplies them",
                  "tools": "the benchmark supplies them"}


def _at_least(value: float | None, low: float, path: str) -> list[str]:
    return [] if value is None or value >= low else [f"must be at least {low:g}, got {value:g} - at `$.{path}`"]


def _setting_problems(settings: ModelSettings) -> list[str]:
    """Values of a decoded entry that would fail a call later; each ends with its JSON path."""
    problems = [f"is set by the client ({why}); remove it - at `$.params.{key}`"
                for key, why in _SET_BY_CLIENT.items() if key in settings.params]
    if settings.transport not in transport_names():
        problems.append(f"unknown transport {settings.transport!r}; registered transports: "
                        f"{', '.join(transport_names())} - at `$.transport`")
    if settings.base_url is not None:
        parts = urlsplit(settings.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            problems.append(f"{settings.base_url[:80]!r} is not an http(s) URL with a host - at `$.base_url`")
    if settings.api_key_env is not None and (not settings.api_key_env or "=" in settings.api_key_env
                                             or "\x00" in settings.api_key_env):
        problems.append(f"{settings.api_key_env[:80]!r} is not an environment variable name (null: no key) - at "
                        "`$.api_key_env`")
    if settings.model is not None and (problem := name_problem(settings.model)) is not None:
        problems.append(f"API model name {problem} - at `$.model`")
    for name, value in settings.headers.items():
        if not _HEADER_NAME.match(name):
            problems.append(f"{name[:80]!r} is not an HTTP header name - at `$.headers`")
        elif not _HEADER_VALUE.match(value):
            problems.append(f"the value contains a line break or control character - at `$.headers.{name}`")
    limits, retry, prices = settings.limits, settings.retry, settings.prices
    problems += (_at_least(limits.max_concurrency, 1, "limits.max_concurrency") + _at_least(limits.rpm, 1, "limits.rpm")
                 + _at_least(limits.tpm, 1, "limits.tpm") + _at_least(retry.max_attempts, 1, "retry.max_attempts"))
    for name in ("max_total_wait", "initial_backoff", "max_backoff"):
        problems += _at_least(getattr(retry, name), 0, f"retry.{name}")
    for name in ("input_per_1m", "output_per_1m", "cached_input_per_1m", "reasoning_per_1m", "cache_write_per_1m"):
        problems += _at_least(getattr(prices, name, None), 0, f"prices.{name}")
    return problems


def _entry_problems(entry: dict[str, Any]) -> list[str]:
    """Why one ``defaults`` or ``models`` entry, taken on its own, is unusable (JSON paths relative to it)."""
    if (found := json_problem(entry, "$")) is not None:
        return [f"{found[1]} - at `{found[0]}`"]
    try:
        settings = msgspec.convert(entry, ModelSettings)
        msgspec.convert({"params": settings.params}, _ParamsHolder)
    except msgspec.ValidationError as exc:
        return [str(exc)]
    return _setting_problems(settings)


class _ConfigFile(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    agent_models: list[str] = msgspec.field(default_factory=list)
    judge_models: list[str] = msgspec.field(default_factory=list)
    data_generation_model: str | None = None
    tariff_models: list[str] = msgspec.field(default_factory=list)
    defaults: dict[str, Any] = msgspec.field(default_factory=dict)
    models: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)
    certificate: dict[str, Any] = msgspec.field(default_factory=dict)  # the sweep's validity thresholds (sweep layer)


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
        problems = self._problems()
        if problems:
            raise ConfigError("\n".join(f"{source}: {p}" for p in problems))
        for name in self.raw.models:  # every entry merged with the defaults must hold too
            self.settings_for(name)

    def _problems(self) -> list[str]:
        """Every bad model name and every bad entry of the file, each naming where it is written."""
        raw = self.raw
        named = [(f"$.{field}[{i}]", name) for field in ("agent_models", "judge_models", "tariff_models")
                 for i, name in enumerate(getattr(raw, field))]
        named += [("$.data_generation_model", raw.data_generation_model)] if raw.data_generation_model else []
        named += [("$.models", name) for name in raw.models]
        problems = [f"model name {name[:80]!r} {problem} - at `{where}`" for where, name in named
                    if (problem := name_problem(name)) is not None]
        entries = [("defaults", raw.defaults), *((f"models.{name}", entry) for name, entry in raw.models.items())]
        return problems + [f"{where}: {p}" for where, entry in entries for p in _entry_problems(entry)]

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

    @property
    def certificate(self) -> dict[str, Any]:
        """``$.certificate``: the validity certificate's thresholds, read and checked by the sweep."""
        return self.raw.certificate

    def settings_for(self, name: str) -> ModelSettings:
        """Settings for ``name``: ``defaults`` merged with ``models[name]`` (if any)."""
        cached = self._cache.get(name)
        if cached is not None:
            return cached
        if (problem := name_problem(name)) is not None:
            raise ConfigError(f"model name {name[:80]!r} {problem}")
        merged = _merge(self.raw.defaults, self.raw.models.get(name, {}))
        merged = {**PROVIDER_DEFAULTS.get(merged.get("provider", "openai"), {}), **merged}  # what is set wins
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
    """Load and validate ``model_config.json``; errors name the file and the field.

    A relative ``model_config.json`` missing from the working directory is read from the package's copy.
    """
    path = workspace_path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: model config not found (pass ``config=PATH``)")
    try:
        raw = decode_json(path.read_bytes(), _ConfigFile, source=str(path))
    except RecordDecodeError as exc:  # same message, as a configuration error
        raise ConfigError(str(exc)) from exc
    return ModelConfig(raw, source=str(path))
