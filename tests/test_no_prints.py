"""Library code never prints: it logs through the standard ``logging`` module, which ``configure_logging`` renders."""

from __future__ import annotations

import ast
import io
import logging
import subprocess
import sys

import orjson
import pytest

from mpcbench_async.runtime import configure_logging, iter_jsonl
from tests.conftest import REPO

PACKAGE = REPO / "mpcbench_async"
# The command line prints by design; testing.py is a helper for tests.
LIBRARY = [p for p in sorted(PACKAGE.rglob("*.py"))
           if p.relative_to(PACKAGE).parts[0] != "cli" and p.name not in {"testing.py", "__main__.py"}]


def calls(path, test) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    return [f"{path.relative_to(REPO)}:{node.lineno}" for node in ast.walk(tree) if test(node)]


class TestSource:
    def test_no_print_or_stdout_in_library_modules(self):
        """No library module calls print() or touches sys.stdout."""

        def prints(node) -> bool:
            return ((isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print")
                    or (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                        and node.value.id == "sys" and node.attr == "stdout"))

        assert [] == [hit for path in LIBRARY for hit in calls(path, prints)]

    def test_only_the_logging_setup_uses_structlog(self):
        """An unconfigured structlog logger prints to stdout, so library modules log through stdlib logging."""

        def imports_structlog(node) -> bool:
            return ((isinstance(node, ast.Import) and any(a.name.split(".")[0] == "structlog" for a in node.names))
                    or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "structlog"))

        users = [hit.split(":")[0] for path in LIBRARY for hit in calls(path, imports_structlog)]
        assert ["mpcbench_async/runtime/_logging.py"] == users


TORN = b'{"key": "a", "status": "ok"}\n{"key": "b", "sta'


class TestLibraryUse:
    def test_a_warning_prints_nothing_to_stdout(self, tmp_path):
        """Imported as a library (no logging set up), reading a torn file writes nothing to stdout; Python's
        last-resort handler shows the warning on stderr."""
        path = tmp_path / "torn.jsonl"
        path.write_bytes(TORN)
        code = ("import sys, mpcbench_async; from mpcbench_async.runtime import iter_jsonl; "
                "print(len(list(iter_jsonl(sys.argv[1]))), file=sys.stderr)")
        proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, cwd=REPO,
                              timeout=60)
        assert (0, "") == (proc.returncode, proc.stdout)
        assert ["jsonl.torn_tail_skipped", "1"] == proc.stderr.splitlines()

    def test_the_warning_reaches_a_stdlib_handler_with_its_fields(self, tmp_path, caplog):
        """The warning is a stdlib log record of the module's logger; its fields are attributes of the record."""
        path = tmp_path / "torn.jsonl"
        path.write_bytes(TORN)
        with caplog.at_level(logging.WARNING):
            assert 1 == len(list(iter_jsonl(path)))
        [record] = caplog.records
        assert ("mpcbench_async.runtime._jsonl", "WARNING", "jsonl.torn_tail_skipped", str(path), 2) == (
            record.name, record.levelname, record.getMessage(), record.path, record.line)


@pytest.mark.usefixtures("restored_logging")
class TestRendering:
    def test_configure_logging_renders_the_fields_masked(self):
        """With the CLI's set-up a library record's ``extra`` fields are rendered beside its event, secrets
        masked, with a level and a timestamp."""
        stream = io.StringIO()
        configure_logging(fmt="json", stream=stream, level="info")
        logging.getLogger("mpcbench_async.runner._runner").info(
            "unit.failed", extra={"model": "m", "error_message": "HTTP 401: bad key sk-abcdefghijklmnop"})
        event = orjson.loads(stream.getvalue())
        assert ("unit.failed", "info", "m", "HTTP 401: bad key sk-***") == (
            event["event"], event["level"], event["model"], event["error_message"])
        assert event["timestamp"].endswith("Z")
