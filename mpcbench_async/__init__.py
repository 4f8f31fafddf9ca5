"""mpcbench-async: an asynchronous, high-throughput runner for LLM-agent benchmarks.

The public API is re-exported here; sub-packages hold the layers of DESIGN.md §3
(``records`` → ``runtime`` → ``llm`` → ``sim`` → benchmarks → ``cli``), and
implementation modules are private (``_name.py``).
"""

from __future__ import annotations

from ._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._exceptions import (
        BadResponseError,
        BatchDeadlineError,
        BenchError,
        BudgetExceeded,
        CacheError,
        CallDeadlineError,
        CircuitOpenError,
        ConfigError,
        GenerationError,
        HTMLReplyError,
        InputError,
        Interrupted,
        LedgerError,
        LimiterLost,
        LLMConnectionError,
        LLMError,
        LLMTimeoutError,
        MissingAPIKeyError,
        MixedScoringError,
        PermanentLLMError,
        RateLimitError,
        RecordDecodeError,
        ReplayMissError,
        ReplyStoreError,
        ServerError,
        ToolWorkerTimeout,
        TransientLLMError,
        UnknownBatchError,
        WorkersLost,
    )
    from ._prompts import PromptConfig, load_prompts
    from .llm import LLMClient, ModelConfig, ModelSettings, RetryEvent, load_model_config
    from .mpcbench import SweepPlan, build_plan
    from .records import ChatResult, FunctionCall, FunctionSchema, LLMCallRecord, Message, ToolCall, ToolSchema, Usage
    from .runner import Runner
    from .runtime import JsonlWriter, LimitSettings, ModelLimiter, ResumeIndex, RetryPolicy, WorkerPool
    from .sweep import SweepOptions, run_sweep, summarize

__version__ = "0.1.0"

__all__ = [
    "BadResponseError",
    "BatchDeadlineError",
    "BenchError",
    "BudgetExceeded",
    "CacheError",
    "CallDeadlineError",
    "ChatResult",
    "CircuitOpenError",
    "ConfigError",
    "FunctionCall",
    "FunctionSchema",
    "GenerationError",
    "HTMLReplyError",
    "InputError",
    "Interrupted",
    "JsonlWriter",
    "LLMCallRecord",
    "LLMClient",
    "LLMConnectionError",
    "LLMError",
    "LLMTimeoutError",
    "LedgerError",
    "LimiterLost",
    "LimitSettings",
    "Message",
    "MissingAPIKeyError",
    "MixedScoringError",
    "ModelConfig",
    "ModelLimiter",
    "ModelSettings",
    "PermanentLLMError",
    "PromptConfig",
    "RateLimitError",
    "RecordDecodeError",
    "ReplayMissError",
    "ReplyStoreError",
    "ResumeIndex",
    "RetryEvent",
    "RetryPolicy",
    "Runner",
    "ServerError",
    "SweepOptions",
    "SweepPlan",
    "ToolCall",
    "ToolSchema",
    "ToolWorkerTimeout",
    "TransientLLMError",
    "UnknownBatchError",
    "Usage",
    "WorkerPool",
    "WorkersLost",
    "__version__",
    "build_plan",
    "load_model_config",
    "load_prompts",
    "run_sweep",
    "summarize",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names

from . import _wiring  # noqa: E402,F401  registers the sim provider and the benchmark policy loader (see _wiring)
