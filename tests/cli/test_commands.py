"""Sub-parsers built on first use: ``--help`` builds one parser, a command builds its own, help texts unchanged.

Guards for the start-up cost without a timing test (issue 31): how many argparse parsers and
arguments a command line constructs, which modules ``--help`` imports, and how often the packaged
defaults are looked up. Timings live in bench/startup.py (bench/RESULTS.md).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys

import pytest

from mpcbench_async import _resources
from mpcbench_async.cli import COMMANDS, build_parser, main
from mpcbench_async.cli._commands import Commands, add_commands
from tests.conftest import REPO

GROUPS = {"generate": ["world-state", "sources", "all"], "tariff": ["run", "compare", "import", "convert-fixtures"],
          "levels": ["import", "check", "verify", "summary", "generate"], "profile": ["endpoint", "sweep"],
          "sim": ["serve"], "bench": ["client"], "cache": ["stats", "prune"], "labels": ["export"]}


@pytest.fixture
def built(monkeypatch):
    """Counts of the argparse parsers and arguments constructed from now on."""
    counts = {"parsers": 0, "arguments": 0}
    parser_init, add_argument = argparse.ArgumentParser.__init__, argparse._ActionsContainer.add_argument

    def counting_init(self, *args, **kwargs):
        counts["parsers"] += 1
        parser_init(self, *args, **kwargs)

    def counting_add_argument(self, *args, **kwargs):
        counts["arguments"] += 1
        return add_argument(self, *args, **kwargs)

    monkeypatch.setattr(argparse.ArgumentParser, "__init__", counting_init)
    monkeypatch.setattr(argparse._ActionsContainer, "add_argument", counting_add_argument)
    return counts


@pytest.fixture(autouse=True)
def _parser_width(monkeypatch):
    """Help at a width other than the stored text's, so the parser renders it (the stored text: test_help_cache)."""
    monkeypatch.setenv("COLUMNS", "100")


def _help(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--help"])
    assert 0 == stopped.value.code
    return capsys.readouterr().out


class TestBuiltOnFirstUse:
    def test_help_builds_only_the_program_parser(self, built, capsys):
        """``--help`` constructs one parser and its four options (-h, --version, --log-format, --log-level), and lists
        every command with its one-line help."""
        out = _help([], capsys)
        assert {"parsers": 1, "arguments": 4} == built
        for name, _, text in COMMANDS:
            assert re.search(rf"^    {re.escape(name)} +{re.escape(text.split()[0])}", out, re.M), name

    def test_a_command_builds_its_own_parser_only(self, built, capsys):
        """``sweep --help`` builds the program's parser and sweep's: two, never the other 25."""
        out = _help(["sweep"], capsys)
        assert 2 == built["parsers"]
        assert 4 < built["arguments"] <= 4 + 50
        assert out.startswith("usage: mpcbench-async sweep ")

    def test_a_subcommand_builds_its_group_and_itself(self, built, capsys):
        """``tariff run --help`` builds three parsers: the program's, tariff's and run's."""
        out = _help(["tariff", "run"], capsys)
        assert 3 == built["parsers"]
        assert out.startswith("usage: mpcbench-async tariff run ")

    def test_a_parse_builds_the_same_as_its_help(self, built):
        """Parsing a real command line builds just the parsers on its path."""
        args = build_parser().parse_args(["cache", "stats", "--json"])
        assert (3, "cache", "stats", True) == (built["parsers"], args.command, args.cache_command, args.json)

    @pytest.mark.parametrize("name", [name for name, _, _ in COMMANDS])
    def test_every_command_builds(self, name, capsys):
        """Every builder named in ``COMMANDS`` exists and makes the parser of its name (and of each subcommand)."""
        assert _help([name], capsys).startswith(f"usage: mpcbench-async {name} ")
        for sub in GROUPS.get(name, []):
            assert _help([name, sub], capsys).startswith(f"usage: mpcbench-async {name} {sub} ")

    def test_the_groups_listed_here_are_every_group(self):
        """``GROUPS`` above names every subcommand, so the test above builds every parser there is."""
        parser = build_parser()
        top = next(a for a in parser._actions if isinstance(a, Commands))
        found = {}
        for name in top.choices:
            nested = [a for a in top.choices[name]._actions if isinstance(a, Commands)]
            if nested:
                found[name] = list(nested[0].choices)
        assert GROUPS == found


class TestCommandsAction:
    def test_an_unknown_command_lists_the_choices_without_building(self, built, capsys):
        with pytest.raises(SystemExit):
            main(["nope"])
        assert 1 == built["parsers"]
        assert "invalid choice: 'nope' (choose from 'sweep', 'summarize', " in capsys.readouterr().err

    def test_a_name_twice_is_refused(self):
        commands = add_commands(argparse.ArgumentParser(prog="p"), dest="command")
        commands.add_command("a", lambda c: c.add_parser("a"), help="first")
        with pytest.raises(argparse.ArgumentError, match="conflicting subparser: a"):
            commands.add_command("a", lambda c: c.add_parser("a"), help="again")

    def test_a_builder_that_adds_no_parser_is_a_clear_bug(self):
        parser = argparse.ArgumentParser(prog="p")
        commands = add_commands(parser, dest="command")
        commands.add_command("a", lambda c: None, help="builds nothing")
        with pytest.raises(RuntimeError, match="the builder of 'a' added no parser named 'a'"):
            parser.parse_args(["a"])

    def test_built_once(self, built):
        """A second lookup reuses the parser the first one built."""
        parser = build_parser()
        top = next(a for a in parser._actions if isinstance(a, Commands))
        assert top.choices["summarize"] is top.choices["summarize"]
        assert 2 == built["parsers"]


def test_help_imports_no_command_module():
    """``--help`` rendered by the parser (at a width other than the stored text's, ``test_help_cache``) imports the
    program's parser modules only: no command module, and none of typing, shutil, threading, ast or
    importlib.resources (each a few ms of a start-up about twice the bare interpreter's)."""
    probe = ("import sys\nbefore = set(sys.modules)\nfrom mpcbench_async.cli import main\ntry:\n    main(['--help'])\n"
             "except SystemExit:\n    pass\nprint(sorted(set(sys.modules) - before), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "100"})
    loaded = set(ast.literal_eval(proc.stderr.strip().splitlines()[-1]))
    assert {"mpcbench_async", "mpcbench_async._lazy", "mpcbench_async._wiring", "mpcbench_async.cli",
            "mpcbench_async.cli._commands", "mpcbench_async.cli._exit", "mpcbench_async.cli._help",
            "mpcbench_async.cli._help_text", "mpcbench_async.llm", "mpcbench_async.llm._providers",
            "mpcbench_async.runner", "mpcbench_async.runner._registry", "mpcbench_async.sim",
            "mpcbench_async.sim._registry"} == {
        m for m in loaded if m.startswith("mpcbench_async")}
    assert set() == loaded & {"typing", "shutil", "threading", "ast", "pathlib", "importlib.resources"}


def test_packaged_defaults_are_looked_up_once(tmp_path, monkeypatch, capsys):
    """From a directory without the inputs, ``sweep --help`` reads both defaults from the package: one lookup."""
    monkeypatch.chdir(tmp_path)
    _resources._data_root.cache_clear()
    _help(["sweep"], capsys)
    info = _resources._data_root.cache_info()
    assert (1, 1) == (info.misses, info.hits)  # model_config.json and prompt_config.json


def test_the_readme_commands_and_their_flags_are_in_their_help(capsys):
    """Every ``mpcbench-async CMD [SUB] … --flag`` the README shows is a command whose --help lists the flag."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    shown = re.findall(r"mpcbench-async ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)?)([^`|\n]*)", text)
    assert len(shown) > 30
    names = {name for name, _, _ in COMMANDS}
    for words, rest in shown:
        command = words.split()[:1] if words.split()[0] not in GROUPS else words.split()[:2]
        if command[0] not in names:
            continue  # prose such as "mpcbench-async installed"
        out = _help(command, capsys)
        for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", rest):
            assert flag in out, (command, flag)
