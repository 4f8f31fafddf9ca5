"""Logging set-up: JSON and console output with secrets redacted from every value and from stdlib logs."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import orjson
import pytest
import structlog

from mpcbench_async.runtime import _logging, configure_logging, redact, redact_text, register_secret

SECRETS = ["abcdefghijkl", "abc.def", "zzzzzzzzzzzz", "qqqqq", "xyz123", "my-secret-value-123"]


@pytest.fixture(autouse=True)
def isolated_logging(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Give each test fresh registered secrets, then restore structlog defaults and the root handlers."""
    monkeypatch.setattr(_logging, "_registered", set())
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    structlog.reset_defaults()
    root.handlers[:] = handlers
    root.setLevel(level)


def assert_no_secrets(output: str) -> None:
    leaked = [secret for secret in SECRETS if secret in output]
    assert [] == leaked, output


class TestRedactText:
    def test_bearer_token(self):
        """A bearer token keeps its scheme and loses its value."""
        assert "sent Bearer *** ok" == redact_text("sent Bearer abc.def ok")

    def test_sk_key(self):
        """An sk- key keeps its prefix and loses its value."""
        assert "key sk-*** used" == redact_text("key sk-abcdefghijkl used")

    def test_header_assignment(self):
        """api_key=... and x-api-key: ... lose their values."""
        assert "api_key=*** and x-api-key: ***" == redact_text("api_key=hunter22 and x-api-key: hunter33")

    def test_authorization_header_with_bearer_scheme(self):
        """'Authorization: Bearer <token>' in free text loses the token."""
        assert_no_secrets(redact_text("Authorization: Bearer qqqqq"))

    def test_authorization_in_json_text(self):
        """A JSON-looking Authorization header inside free text loses the token."""
        assert_no_secrets(redact_text('{"Authorization": "Bearer xyz123"}'))

    def test_registered_secret(self):
        """A registered value is masked wherever it appears."""
        register_secret("my-secret-value-123")
        assert "token=*** end" == redact_text("token=my-secret-value-123 end")

    def test_short_values_are_not_registered(self):
        """Values shorter than six characters are ignored so common words are not masked."""
        register_secret("abc")
        register_secret(None)
        assert "abc" == redact_text("abc")

    def test_plain_text_unchanged(self):
        """Text without secrets passes through unchanged."""
        assert "skipped 3 tokens for task-7" == redact_text("skipped 3 tokens for task-7")


class TestRedact:
    def test_secret_keys_and_nested_values(self):
        """Values under secret-looking keys become *** and nested free text is masked, other values kept."""
        event = {
            "api_key": "sk-abcdefghijkl",
            "headers": {"Authorization": "Bearer abc.def", "Accept": "json"},
            "items": ["Bearer abc.def", 3],
            "tup": ("sk-abcdefghijkl",),
            "password": "",
            "tokens": 42,
        }
        expected = {
            "api_key": "***",
            "headers": {"Authorization": "***", "Accept": "json"},
            "items": ["Bearer ***", 3],
            "tup": ("sk-***",),
            "password": "",
            "tokens": 42,
        }
        assert expected == redact(event)

    def test_exception_values_are_masked(self):
        """An exception value becomes its masked repr."""
        register_secret("my-secret-value-123")
        assert "RuntimeError('bad key ***')" == redact(RuntimeError("bad key my-secret-value-123"))


class TestConfigureLogging:
    def test_json_output_is_redacted(self):
        """JSON log lines carry masked values for secret keys, headers and free text."""
        stream = io.StringIO()
        configure_logging(fmt="json", stream=stream)
        structlog.get_logger().warning(
            "x",
            api_key="sk-abcdefghijkl",
            headers={"Authorization": "Bearer abc.def"},
            note="call failed with key sk-zzzzzzzzzzzz and Authorization: Bearer qqqqq",
        )
        output = stream.getvalue()
        event = orjson.loads(output.splitlines()[0])
        assert "x" == event["event"]
        assert "warning" == event["level"]
        assert "***" == event["api_key"]
        assert {"Authorization": "***"} == event["headers"]
        assert event["note"].startswith("call failed with key sk-*** and Authorization: ")
        assert_no_secrets(output)

    def test_level_filters(self):
        """Events below the configured level are dropped."""
        stream = io.StringIO()
        configure_logging(fmt="json", stream=stream, level="warning")
        structlog.get_logger().info("quiet")
        structlog.get_logger().error("loud")
        assert ["loud"] == [orjson.loads(line)["event"] for line in stream.getvalue().splitlines()]

    def test_registered_secret_in_exception_is_masked(self):
        """A registered secret inside a logged exception's message and traceback is masked."""
        stream = io.StringIO()
        configure_logging(fmt="json", stream=stream)
        register_secret("my-secret-value-123")
        log = structlog.get_logger()
        try:
            raise RuntimeError("auth failed for my-secret-value-123")
        except RuntimeError as exc:
            log.exception("call.failed")
            log.warning("call.failed", error=exc)
        output = stream.getvalue()
        first, second = (orjson.loads(line) for line in output.splitlines())
        assert "RuntimeError: auth failed for ***" in first["exception"]
        assert "RuntimeError('auth failed for ***')" == second["error"]
        assert_no_secrets(output)

    def test_stdlib_logging_is_redacted(self):
        """stdlib loggers (aiohttp, httpx, openai) go through the same redaction and renderer."""
        stream = io.StringIO()
        configure_logging(fmt="json", stream=stream)
        logging.getLogger("aiohttp").warning("Authorization: Bearer xyz123")
        output = stream.getvalue()
        event = orjson.loads(output.splitlines()[0])
        assert "warning" == event["level"]
        assert event["event"].startswith("Authorization: ")
        assert_no_secrets(output)

    def test_stdlib_sk_key_is_redacted(self):
        """An sk- key in a stdlib log message is masked to sk-***."""
        stream = io.StringIO()
        configure_logging(fmt="json", stream=stream)
        logging.getLogger("openai").warning("using key %s", "sk-abcdefghijkl")
        assert "using key sk-***" == orjson.loads(stream.getvalue().splitlines()[0])["event"]

    def test_console_output_is_redacted(self):
        """The console renderer gets the same masked values, without colour codes on a non-terminal."""
        stream = io.StringIO()
        configure_logging(fmt="console", stream=stream)
        structlog.get_logger().warning(
            "x",
            api_key="sk-abcdefghijkl",
            headers={"Authorization": "Bearer abc.def"},
            note="call failed with key sk-zzzzzzzzzzzz and Authorization: Bearer qqqqq",
        )
        logging.getLogger("aiohttp").warning("Authorization: Bearer xyz123")
        output = stream.getvalue()
        assert "api_key=***" in output
        assert "sk-***" in output
        assert "\x1b[" not in output
        assert_no_secrets(output)
