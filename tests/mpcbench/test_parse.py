"""Extracting the JSON object from model replies; measuring tool-call arguments against their cap."""

from __future__ import annotations

import pytest

from mpcbench_async._replies import ReplyParseError, arguments_size, extract_json_object


class TestExtractJsonObject:
    @pytest.mark.parametrize("text", [
        '{"a": 1}',
        '```json\n{"a": 1}\n```',
        '```\n{"a": 1}\n```',
        'Here you go:\n```json\n{"a": 1}\n```\nAnything else?',
        'Sure! {"a": 1} Hope that helps.',
    ])
    def test_finds_the_object(self, text):
        """Bare, fenced and prose-wrapped objects are all found."""
        assert {"a": 1} == extract_json_object(text)

    def test_empty_reply_says_so(self):
        """An empty reply is reported as such (the message goes back to the model)."""
        with pytest.raises(ReplyParseError) as caught:
            extract_json_object("  ")
        assert "the reply is empty; answer with one JSON object" == str(caught.value)

    def test_a_list_is_not_an_object(self):
        """A JSON array is rejected with the type named."""
        with pytest.raises(ReplyParseError) as caught:
            extract_json_object("[1, 2]")
        assert "the reply is not a JSON object (expected a JSON object, got list)" == str(caught.value)

    def test_broken_json_is_reported(self):
        """Unbalanced JSON is reported, not guessed at."""
        with pytest.raises(ReplyParseError):
            extract_json_object('```json\n{"a": [1, 2\n```')


class TestArgumentsSize:
    @pytest.mark.parametrize(("arguments", "size"), [
        ("x" * 16_384, None),
        ("x" * 16_385, 16_385),
        ("é" * 8_192, None),  # 2 bytes each: exactly 16 KiB
        ("é" * 8_193, 16_386),  # 8,193 characters, but over the cap in bytes
        ("", None),
    ])
    def test_the_cap_counts_utf8_bytes(self, arguments, size):
        """Arguments are measured in UTF-8 bytes, so a multi-byte text hits the 16 KiB cap with fewer characters."""
        assert size == arguments_size(arguments)
