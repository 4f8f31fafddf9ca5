"""Typed decoding of records: field paths in errors, strictness, round trips."""

from __future__ import annotations

import pytest

from mpcbench_async import LLMCallRecord, Message, RecordDecodeError, ToolCall, Usage
from mpcbench_async.records import FunctionCall, decode_json, load_json_file
from mpcbench_async.records._codec import encode_json


class TestDecode:
    def test_wrong_type_names_the_source_and_field(self):
        """A wrong-typed nested field is reported with the source name and JSON path."""
        with pytest.raises(RecordDecodeError) as caught:
            decode_json(b'{"role": "assistant", "tool_calls": [{"id": 1, "function": {"name": "f"}}]}', Message,
                        source="run.json")
        assert "run.json: Expected `str`, got `int` - at `$.tool_calls[0].id`" == str(caught.value)

    def test_unknown_field_is_an_error(self):
        """Unknown fields in our own records are rejected, naming the field."""
        with pytest.raises(RecordDecodeError) as caught:
            decode_json(b'{"role": "user", "content": "x", "colour": "red"}', Message, source="m.json")
        assert "m.json: Object contains unknown field `colour`" == str(caught.value)

    def test_invalid_role_is_rejected(self):
        """Roles are limited to system, user, assistant and tool."""
        with pytest.raises(RecordDecodeError) as caught:
            decode_json(b'{"role": "robot"}', Message)
        assert "<input>: Invalid enum value 'robot' - at `$.role`" == str(
            caught.value)

    def test_not_json_says_so(self, tmp_path):
        """A file that is not JSON is reported with its path."""
        path = tmp_path / "bad.json"
        path.write_text("{nope")
        with pytest.raises(RecordDecodeError) as caught:
            load_json_file(path, Message)
        assert str(caught.value).startswith(f"{path}: not valid JSON (")


class TestRoundTrip:
    def test_message_omits_unset_fields_on_the_wire(self):
        """Encoded messages carry only the fields that are set (the OpenAI wire shape)."""
        message = Message(role="assistant", tool_calls=[ToolCall(id="c1", function=FunctionCall(name="f"))])
        assert b'{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"f"}}]}' == encode_json(message)
        assert message == decode_json(encode_json(message), Message)

    def test_call_record_round_trips(self):
        """An LLMCallRecord decodes back to an equal record."""
        record = LLMCallRecord(model="m", key="k", status="error", attempts=3, usage=Usage(prompt_tokens=4),
                               error_class="ServerError", error_message="boom")
        assert record == decode_json(encode_json(record), LLMCallRecord)
