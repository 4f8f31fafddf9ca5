"""Extracting the JSON object from model replies."""

from __future__ import annotations

import pytest

from mpcbench_async.mpcbench import ReplyParseError, extract_json_object


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
