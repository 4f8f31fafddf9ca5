"""Logging set-up: JSON and console output with secrets redacted from every value, stdlib logs and tracebacks."""

from __future__ import annotations

import io
import logging
import subprocess
import sys

import orjson
import pytest
import structlog

from mpcbench_async import _redact
from mpcbench_async.runtime import configure_logging
from mpcbench_async.runtime._logging import register_secret

SECRETS = ["abcdefghijkl", "abc.def", "zzzzzzzzzzzz", "qqqqq", "xyz123", "my-secret-value-123"]


@pytest.fixture(autouse=True)
def isolated_logging(monkeypatch: pytest.MonkeyPatch, restored_logging: None) -> None:
    """Give each test fresh registered secrets; ``restored_logging`` restores structlog, the root handlers and
    the excepthook."""
    monkeypatch.setattr(_redact, "_registry", _redact._Registry())


def assert_no_secrets(output: str) -> None:
    leaked = [secret for secret in SECRETS if secret in output]
    assert [] == leaked, output


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

    def test_uncaught_exception_traceback_is_redacted(self, capsys):
        """An uncaught exception's traceback, chained causes included, is printed with secrets masked."""
        configure_logging(fmt="console")
        register_secret("my-secret-value-123")
        try:
            try:
                raise ValueError("server said: Authorization: Bearer my-secret-value-123")
            except ValueError as cause:
                raise RuntimeError("call failed") from cause
        except RuntimeError as exc:
            sys.excepthook(type(exc), exc, exc.__traceback__)
        err = capsys.readouterr().err
        assert err.startswith("Traceback (most recent call last):\n")
        assert "ValueError: server said: Authorization: Bearer ***\n" in err
        assert err.endswith("RuntimeError: call failed\n")
        assert "my-secret-value-123" not in err

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


class TestStructlogImportedLate:
    """A process that has not imported structlog does not pay for it until something logs (issue 31), yet
    structlog is configured (redaction included) before any code can use it."""

    def run(self, code: str) -> subprocess.CompletedProcess[str]:
        setup = ("import sys\nfrom mpcbench_async.runtime import configure_logging\n"
                 "configure_logging(fmt='json')\nassert 'structlog' not in sys.modules\n")
        return subprocess.run([sys.executable, "-c", setup + code], capture_output=True, text=True, timeout=60,
                              check=True)

    def test_structlog_imported_after_the_setup_is_configured_and_redacts(self):
        out = self.run("import structlog\n"
                       "structlog.get_logger().warning('x', api_key='sk-abcdefghijkl', note='key sk-zzzzzzzzzzzz')")
        assert "" == out.stdout  # an unconfigured structlog prints to stdout
        event = orjson.loads(out.stderr.splitlines()[0])
        assert ("x", "warning", "***", "key sk-***") == (event["event"], event["level"], event["api_key"],
                                                         event["note"])

    def test_a_stdlib_record_is_rendered_by_structlog_when_it_comes(self):
        out = self.run("import logging\nlogging.getLogger('openai').info('quiet')\n"
                       "assert 'structlog' not in sys.modules\n"
                       "logging.getLogger('openai').warning('using key %s', 'sk-abcdefghijkl', extra={'n': 1})")
        event = orjson.loads(out.stderr.splitlines()[0])
        assert ("using key sk-***", "warning", 1) == (event["event"], event["level"], event["n"])
