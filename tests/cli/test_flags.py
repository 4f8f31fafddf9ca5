"""Library messages name settings; the CLI shows each as its flag (``cli/_flags.py``)."""

from __future__ import annotations

import ast
import re

import pytest

from mpcbench_async import InputError, load_model_config
from mpcbench_async.cli import main
from mpcbench_async.cli._flags import _SETTINGS, flag, flagged
from mpcbench_async.perf import ProfileOptions
from tests.conftest import REPO


@pytest.mark.parametrize(("text", "setting", "shown"), [
    ("max_turns must be at least 1, got 0", "max_turns", "--max-turns must be at least 1, got 0"),
    ("suites: unknown suite(s) x", "suites", "--suite: unknown suite(s) x"),
    ("fix it, then rerun with ``retry_errors=True``", None, "fix it, then rerun with --retry-errors"),
    ("skipped (``certificate=False``)", None, "skipped (--no-certificate)"),
    ("drop ``stream=False``", None, "drop --no-stream"),
    ("no task matches ``tasks='x*'``", None, "no task matches --tasks 'x*'"),
    ("pass another ``out``; or ``mode=live`` ``model=M``", None, "pass another --out; or --mode live --model M"),
    # msgspec's single backticks, a name that is no setting, and a setting not at the start stay as they are
    ("Object missing required field `mode` - at `$.out`", None, "Object missing required field `mode` - at `$.out`"),
    ("see ``params`` in the config", None, "see ``params`` in the config"),
    ("the trials are 0", "trials", "the trials are 0"),
])
def test_flagged(text, setting, shown):
    assert shown == flagged(text, setting)


def test_flag_names():
    assert ["--max-turns", "--suite", "--scoring", "--ledger-sync"] == [
        flag(s) for s in ("max_turns", "suites", "tariff_scoring", "ledger_fsync")]


def _cli_error(argv: list[str], capsys) -> str:
    assert 2 == main(argv)
    return capsys.readouterr().err


def test_a_missing_config_names_the_setting_to_the_library_and_the_flag_on_the_command_line(tmp_path, capsys):
    missing = tmp_path / "nope.json"
    with pytest.raises(InputError) as caught:
        load_model_config(missing)
    assert f"{missing}: model config not found (pass ``config=PATH``)" == str(caught.value)
    assert f"error: {missing}: model config not found (pass --config PATH)\n" == _cli_error(
        ["sweep", "--config", str(missing), "--out", str(tmp_path / "out")], capsys)


def test_profile_options_name_settings_and_the_cli_its_flags(tmp_path, capsys):
    with pytest.raises(InputError) as caught:
        ProfileOptions(mode="rate")
    assert "``mode=rate`` needs ``rates=R1,R2,...`` (requests/s)" == str(caught.value)
    assert "error: --mode rate needs --rates R1,R2,... (requests/s)\n" == _cli_error(
        ["profile", "endpoint", "--model", "sim/echo", "--mode", "rate", "--out", str(tmp_path / "p")], capsys)


# Library messages that still name a flag, and why: their modules are part of the checks' source digest
# (``mpcbench._provenance.checks_version``), so editing them would mark every stored run as checked by other code.
DIGESTED = {"mpcbench/_generation.py", "mpcbench/_task.py"}


def _raised_texts(path):
    """The string parts of every ``raise X(...)`` in ``path``."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            for arg in node.exc.args:
                for part in ast.walk(arg):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        yield node.lineno, part.value


def test_no_library_error_names_a_flag():
    """Outside ``cli/``, a raised message names settings (``flagged`` turns them into flags), never ``--flag``;
    shell commands quoted in single backticks (``ray start --head``) are not flags of this program."""
    package = REPO / "mpcbench_async"
    found = [f"{path.relative_to(package)}:{line}: {text.strip()[:80]}"
             for path in sorted(package.rglob("*.py")) if "cli" not in path.relative_to(package).parts
             and path.relative_to(package).as_posix() not in DIGESTED
             for line, text in _raised_texts(path) if re.search(r"(^|[\s(])--[a-z]", re.sub(r"`[^`]*`", "", text))]
    assert [] == found


def test_every_setting_a_library_error_names_is_shown_as_a_flag():
    """A setting in double backticks that ``_SETTINGS`` does not list would reach the terminal as ``name``, not as
    its flag: every one a raised library message names is listed (``DirLock``'s ``out`` and ``logs_dir`` too, which
    it names through a variable)."""
    package = REPO / "mpcbench_async"
    named = {match for path in sorted(package.rglob("*.py")) if "cli" not in path.relative_to(package).parts
             for _, text in _raised_texts(path) for match in re.findall(r"``([a-z][a-z0-9_]*)(?:=[^`]*)?``", text)}
    assert {"out", "models", "rates", "slo"} <= named  # the scan reads the messages
    assert set() == (named | {"out", "logs_dir"}) - _SETTINGS
