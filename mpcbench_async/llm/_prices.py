"""The shipped price table, and the one rule for which price a model's calls are charged at.

Why a table: a sweep that shows ``$0.0000`` for a model nobody priced reads as free,
which is how runs burn money unnoticed. So a model's price is, in order: its
``prices`` in model_config.json (an override: gateways and negotiated rates differ),
else this table by API model name, else **unknown** (``None``), which the client
records as ``cost_usd: null`` and budgets refuse, never as $0. ``sim/...`` models are
free: the embedded simulator bills nothing.

Names are matched after normalising: lower case, a gateway prefix dropped
(``openai/gpt-4o`` → ``gpt-4o``, as OpenRouter and LiteLLM spell them), dots as
dashes (``claude-sonnet-4.5`` = ``claude-sonnet-4-5``) and a trailing snapshot date
dropped (``-2024-08-06``, ``-20250514``) unless the dated name has its own row.
Only models billed at one flat rate per token kind are listed: models whose price
rises above a prompt length (Gemini 2.5 Pro, GPT-5.4/5.5 long context) are left out
rather than under-priced; give them ``prices`` in the config.

All prices USD per 1M tokens, standard (not batch, not priority) tier.
"""

from __future__ import annotations

import re

import msgspec

from ._config import ModelSettings, Prices

__all__ = ["PRICE_TABLE", "PRICES_AS_OF", "model_prices", "table_prices"]

PRICES_AS_OF = "2026-11-23"

_P = Prices


def _rows(rows: dict[str, tuple[float, float, float | None]]) -> dict[str, Prices]:
    """``name: (input, output, cached input)``; reasoning tokens bill at the output rate for all of these."""
    return {name: _P(input_per_1m=i, output_per_1m=o, cached_input_per_1m=c) for name, (i, o, c) in rows.items()}


def _with_cache_writes(factor: float, rows: dict[str, tuple[float, float, float | None]]) -> dict[str, Prices]:
    """``_rows``, with cache writes at ``factor`` × the input rate."""
    return {name: msgspec.structs.replace(p, cache_write_per_1m=round(p.input_per_1m * factor, 6))
            for name, p in _rows(rows).items()}


PRICE_TABLE: dict[str, Prices] = {
    # OpenAI — source: https://openai.com/api/pricing (developers.openai.com/api/docs/pricing), rates as
    # listed there in 2025-2026, cross-checked against the copy in github/docs data/tables/copilot/
    # models-and-pricing.yml (gpt-4.1, gpt-5-mini) and deploybase.ai/articles/openai-pricing (March 2026).
    **_rows({
        "gpt-4o": (2.50, 10.00, 1.25),
        "gpt-4o-2024-05-13": (5.00, 15.00, None),  # the first gpt-4o snapshot kept its launch price
        "gpt-4o-mini": (0.15, 0.60, 0.075),
        "gpt-4.1": (2.00, 8.00, 0.50),
        "gpt-4.1-mini": (0.40, 1.60, 0.10),
        "gpt-4.1-nano": (0.10, 0.40, 0.025),
        "gpt-5": (1.25, 10.00, 0.125),
        "gpt-5-mini": (0.25, 2.00, 0.025),
        "gpt-5-nano": (0.05, 0.40, 0.005),
        "gpt-5.1": (1.25, 10.00, 0.125),
        "o1": (15.00, 60.00, 7.50),
        "o3": (2.00, 8.00, 0.50),
        "o3-mini": (1.10, 4.40, 0.55),
        "o4-mini": (1.10, 4.40, 0.275),
    }),
    # Anthropic (direct, its OpenAI-compatible endpoint, or a gateway passing its rates through) — source:
    # https://platform.claude.com/docs/en/about-claude/pricing, "Model pricing" table; cached input is the
    # "cache hits and refreshes" column; cache writes (reported by the native Messages API) are the "5m cache
    # writes" column, 1.25× input.
    **_with_cache_writes(1.25, {
        "claude-opus-4-5": (5.00, 25.00, 0.50),
        "claude-opus-4-1": (15.00, 75.00, 1.50),
        "claude-opus-4": (15.00, 75.00, 1.50),
        "claude-sonnet-4-5": (3.00, 15.00, 0.30),
        "claude-sonnet-4": (3.00, 15.00, 0.30),
        "claude-3-7-sonnet": (3.00, 15.00, 0.30),
        "claude-haiku-4-5": (1.00, 5.00, 0.10),
        "claude-3-5-haiku": (0.80, 4.00, 0.08),
        "claude-3-haiku": (0.25, 1.25, 0.03),
    }),
    # Google Gemini (its OpenAI-compatible endpoint) — source: https://ai.google.dev/gemini-api/docs/pricing,
    # paid tier, text input. Cached input is left at the input rate (context-caching rates changed over 2025
    # and are not checked here): a cached prompt is over-priced, never under-priced.
    **_rows({
        "gemini-2.5-flash": (0.30, 2.50, None),
        "gemini-2.5-flash-lite": (0.10, 0.40, None),
        "gemini-2.0-flash": (0.10, 0.40, None),
    }),
    # Llama and Qwen on Groq — source: https://groq.com/pricing (on-demand tokens-as-a-service table).
    **_rows({
        "llama-3.3-70b-versatile": (0.59, 0.79, None),
        "llama-3.1-8b-instant": (0.05, 0.08, None),
    }),
}

_FREE = Prices()
_DATE = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


def _normal(name: str) -> str:
    return name.rsplit("/", 1)[-1].lower().replace(".", "-")


_BY_NORMAL = {_normal(name): prices for name, prices in PRICE_TABLE.items()}


def table_prices(api_model: str) -> Prices | None:
    """The shipped price of an API model name, or ``None`` when the table does not know it."""
    if api_model.startswith("sim/"):
        return _FREE
    name = _normal(api_model)
    found = _BY_NORMAL.get(name)
    return found if found is not None else _BY_NORMAL.get(_DATE.sub("", name))


def model_prices(name: str, settings: ModelSettings) -> Prices | None:
    """What calls of the configured model ``name`` cost: its configured ``prices``, else the table, else unknown."""
    if settings.prices is not None:
        return settings.prices
    return table_prices(name if name.startswith("sim/") else settings.model or name)
