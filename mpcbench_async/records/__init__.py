"""Typed records: everything the runner persists or sends over the wire."""

from __future__ import annotations

from .._lazy import TYPE_CHECKING, lazy_exports

if TYPE_CHECKING:
    from ._calls import CallIntent, LLMCallRecord
    from ._chat import ChatResult, FunctionCall, FunctionSchema, Message, ToolCall, ToolSchema, Usage, add_cost
    from ._codec import decode_json, load_json_file
    from ._keys import unit_key
    from ._unit import UnitRecord

__all__ = ["CallIntent", "ChatResult", "FunctionCall", "FunctionSchema", "LLMCallRecord", "Message", "ToolCall",
           "ToolSchema", "UnitRecord", "Usage"]

# Used by the project's other packages (the import-graph test allows only these and ``__all__``),
# not promised to users.
_INTERNAL = ["add_cost", "decode_json", "load_json_file", "unit_key"]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
del TYPE_CHECKING, lazy_exports  # keep the namespace to the public names
