"""``mpcbench-async --help`` prints a stored rendering of the program's help (``cli/_help.py``) when it is exactly
what argparse would print, and builds the parser otherwise."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from mpcbench_async.cli import _help_text, build_parser, main
from tests.conftest import REPO

FIX = 'python -c "from mpcbench_async.cli._help import write_rendering; write_rendering()"'


@pytest.mark.skipif(sys.version_info[:2] != _help_text.PYTHON,
                    reason=f"the stored help was rendered by Python {_help_text.PYTHON}; argparse's layout differs "
                           "between versions, and on this one the parser renders it")
def test_the_stored_help_is_what_the_parser_renders(monkeypatch):
    """A command or flag added to the program's parser without regenerating the text fails here."""
    monkeypatch.setenv("COLUMNS", "80")
    assert build_parser().format_help() == _help_text.TEXT, f"the stored --help is stale: run {FIX}"


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_at_the_stored_width_prints_the_stored_text(flag, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(_help_text, "PYTHON", sys.version_info[:2])
    monkeypatch.setattr(_help_text, "TEXT", "the stored text\n")  # proves which path printed it
    assert 0 == main([flag])
    assert ("the stored text\n", "") == capsys.readouterr()


@pytest.mark.parametrize(("columns", "argv"), [("100", ["--help"]), ("80", ["--help", "sweep"]),
                                               ("80", ["--log-level", "info", "--help"])])
def test_anything_else_goes_through_the_parser(columns, argv, monkeypatch, capsys):
    """Another width, or more arguments than the flag: argparse renders (and exits 0, as ever)."""
    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setattr(_help_text, "PYTHON", sys.version_info[:2])
    monkeypatch.setattr(_help_text, "TEXT", "the stored text\n")
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert 0 == exit_.value.code
    out = capsys.readouterr().out
    assert out.startswith("usage: mpcbench-async") and "the stored text" not in out


def test_another_python_goes_through_the_parser(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(_help_text, "PYTHON", (2, 7))
    monkeypatch.setattr(_help_text, "TEXT", "the stored text\n")
    with pytest.raises(SystemExit):
        main(["--help"])
    assert capsys.readouterr().out.startswith("usage: mpcbench-async")


def test_the_stored_help_imports_no_argparse():
    """The point of it: ``--help`` loads the package root and the text, not argparse or a parser module."""
    probe = ("import sys\nbefore = set(sys.modules)\nfrom mpcbench_async.cli import main, _help_text\n"
             "_help_text.PYTHON = sys.version_info[:2]\nassert main(['--help']) == 0\n"
             "print(sorted(set(sys.modules) - before), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "COLUMNS": "80"})
    assert 0 == proc.returncode, proc.stderr
    loaded = set(ast.literal_eval(proc.stderr.strip().splitlines()[-1]))
    assert set() == loaded & {"argparse", "mpcbench_async.cli._commands", "mpcbench_async.cli._exit", "re"}
