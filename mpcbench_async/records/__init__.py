"""Typed records: everything the runner persists or sends over the wire."""

from ._calls import LLMCallRecord
from ._chat import ChatResult, FunctionCall, FunctionSchema, Message, ToolCall, ToolSchema, Usage
from ._codec import decode_json, encode_json, load_json_file, to_builtins

__all__ = [
    "ChatResult",
    "FunctionCall",
    "FunctionSchema",
    "LLMCallRecord",
    "Message",
    "ToolCall",
    "ToolSchema",
    "Usage",
    "decode_json",
    "encode_json",
    "load_json_file",
    "to_builtins",
]
