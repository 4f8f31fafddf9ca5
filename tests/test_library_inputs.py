"""The library refuses what the CLI refuses, with the same rule and a message naming the setting (issue 28 point 4,
issue 27 point 5): each bad input the CLI turns away is fed to the library too, and the two messages differ only in
naming the setting (``max_turns``) or its flag (``--max-turns``). Values only a library caller can pass (a number
where a path belongs, a bare string where a list belongs) get a clear ``InputError``, never a ``TypeError`` from deep
inside."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from mpcbench_async import InputError
from mpcbench_async.cli import main
from mpcbench_async.levels import LevelsInputs
from mpcbench_async.perf import ProfileOptions
from mpcbench_async.sweep import Output, SweepOptions, check_sweep_options, dry_run_sweep
from mpcbench_async.testing import write_workspace
from mpcbench_async.view import open_index
from tests.sweep_options import sweep_options


def cli_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one `error:` line the CLI prints for ``argv`` (exit 2)."""
    assert 2 == main(argv)
    (line,) = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]
    return line.removeprefix("error: ")


def library_error(options: SweepOptions) -> InputError:
    with pytest.raises(InputError) as caught:
        check_sweep_options(options)
    return caught.value


@pytest.mark.parametrize(("flags", "settings", "message", "setting"), [
    (["--trials", "0"], {"trials": 0}, "trials must be at least 1, got 0", "trials"),
    (["--max-turns", "0"], {"max_turns": 0}, "max_turns must be at least 1, got 0", "max_turns"),
    (["--concurrency", "0"], {"concurrency": 0}, "concurrency must be at least 1, got 0", "concurrency"),
    (["--max-cost", "0"], {"max_cost": 0.0}, "max_cost must be a positive amount of USD, got 0.0", "max_cost"),
    (["--suite", "nope"], {"suites": ["nope"]},
     "suites: unknown suite(s) nope; available: hscodecomp, levels, mpcbench, tariff", "suites"),
    (["--suite", "levels", "--levels", "4"], {"suites": ["levels"], "levels": [4]},
     "levels: choose among 1, 2, 3 (got 4)", "levels"),
])
def test_the_clis_bad_sweep_inputs_are_the_librarys(flags, settings, message, setting, tmp_path, capsys):
    """Same rule, same words: the library names the setting, the CLI its flag, and nothing is written."""
    caught = library_error(sweep_options(out=tmp_path / "out", **settings))
    assert (message, setting) == (str(caught), caught.setting)
    flag = {"suites": "--suite"}.get(setting, "--" + setting.replace("_", "-"))
    assert flag + message[len(setting):] == cli_error(["sweep", "--out", str(tmp_path / "out"), *flags], capsys)
    assert not (tmp_path / "out").exists()


def test_an_output_path_that_is_a_file(tmp_path, capsys):
    """--out naming a file: the parser's refusal and the library's share the rule (``output_dir_problem``)."""
    (tmp_path / "f").write_text("x")
    assert f"out: {tmp_path / 'f'} is a file, not a directory" == str(library_error(sweep_options(out=tmp_path / "f")))
    with pytest.raises(SystemExit):
        main(["sweep", "--out", str(tmp_path / "f")])
    assert f"argument --out: {tmp_path / 'f'} is a file, not a directory" in capsys.readouterr().err


@pytest.mark.parametrize(("settings", "message"), [
    ({"out": 3}, "out must be a path (str or pathlib.Path), got int 3"),
    ({"config": None}, "config must be a path (str or pathlib.Path), got NoneType None"),
    ({"suites": "mpcbench"}, "suites must be a list of values, got str 'mpcbench'"),
    ({"models": "sim/echo"}, "models must be a list of values, got str 'sim/echo'"),
    ({"models": ["sim/echo", 3]}, "models[1] must be a string, got int 3"),
    ({"max_turns": "12"}, "max_turns must be a whole number, got str '12'"),
    ({"trials": 1.5}, "trials must be a whole number, got float 1.5"),
    ({"retry_errors": "yes"}, "retry_errors must be True or False, got str 'yes'"),
    ({"cache_mode": "sometimes"}, "cache_mode must be one of 'read', 'write', 'readwrite', 'off', got str "
                                  "'sometimes'"),
    ({"max_cost": "5"}, "max_cost must be a number, got str '5'"),
    ({"max_cost": float("nan")}, "max_cost must be a positive amount of USD, got nan"),
])
def test_values_only_a_library_caller_can_pass(settings: dict[str, Any], message: str):
    """Wrong types are named by setting, with the value given, before anything is read or written."""
    caught = library_error(sweep_options(**settings))
    assert (message, next(iter(settings))) == (str(caught), caught.setting)


@pytest.mark.parametrize(("options", "message", "setting"), [
    (SweepOptions(limits={"max_turns": 3}), "limits must be a Limits, got dict {'max_turns': 3}", "limits"),
    (SweepOptions(output=Output(out=3)), "out must be a path (str or pathlib.Path), got int 3", "out"),
    (SweepOptions(inputs=[LevelsInputs(levels=["1"])]), "levels[0] must be a whole number, got str '1'", "levels"),
    (SweepOptions(inputs=["tasks"]), "expected options as a settings object, got str 'tasks'", None),
])
def test_the_values_of_the_options_are_checked_as_their_settings(options: SweepOptions, message: str,
                                                                 setting: str | None):
    """A value in place of one of the small settings objects is refused by its name; a setting inside one is named
    by its own name, as the CLI's flag would be, wherever it lives (``limits``, ``output``, a benchmark's inputs)."""
    caught = library_error(options)
    assert (message, setting) == (str(caught), caught.setting)


def test_paths_given_as_text_work(tmp_path):
    """``Output(out="dir")`` (text, not Path) used to fail with ``TypeError: 'str' / 'str'``; every path setting,
    in every value of the options, takes text: a dry run of such options reads the workspace and plans its units."""
    root = write_workspace(tmp_path / "ws", tasks=2, agent_models=("sim/echo",), judge_models=("sim/judge",))
    options = sweep_options(out=str(tmp_path / "out"), config=str(root / "model_config.json"),
                           prompts=str(root / "prompt_config.json"), tasks_dir=str(root / "tasks"),
                           data_dir=str(root / "data"), scenarios_dir=str(root / "scenarios"))
    checked = check_sweep_options(options)
    assert (tmp_path / "out", root / "tasks") == (checked.output.out, checked.inputs[0].tasks_dir)
    estimate = dry_run_sweep(options)
    assert (4, str(tmp_path / "out")) == (estimate.units, estimate.out_dir)  # 2 runs and their 2 judgements
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["missing", "empty"])
def test_open_index_refuses_what_view_refuses(name, tmp_path, capsys):
    """open_index("missing") used to write an empty report; it raises the CLI's message, word for word."""
    (tmp_path / "empty").mkdir()
    path = tmp_path / name
    with pytest.raises(InputError) as caught:
        open_index(path)
    expected = {"missing": f"{path}: no such directory",
                "empty": f"{path}: no runs.jsonl or manifest.json here; is it a sweep output directory?"}[name]
    assert expected == str(caught.value)
    for command in (["view", str(path)], ["report", str(path), "--html"], ["summarize", str(path)]):
        assert expected == cli_error(command, capsys)
    assert not (tmp_path / "empty" / ".view").exists()


def test_open_index_of_a_non_path():
    with pytest.raises(InputError, match=r"^out_dir must be a path \(str or pathlib\.Path\), got int 3$"):
        open_index(3)  # type: ignore[arg-type]


def test_run_sweep_checks_before_anything(tmp_path):
    """run_sweep itself applies the check (not only the CLI): a bad setting, and --out is never created."""
    from mpcbench_async.sweep import run_sweep

    with pytest.raises(InputError, match="^max_turns must be at least 1, got 0$"):
        anyio.run(run_sweep, sweep_options(out=tmp_path / "out", max_turns=0))
    assert not Path(tmp_path / "out").exists()


@pytest.mark.parametrize(("settings", "message"), [
    ({"rates": "1,5"}, "rates must be a list of values, got str '1,5'"),
    ({"slo": {"ttft": "fast"}}, "slo['ttft'] must be a number, got str 'fast'"),
    ({"max_concurrency": 2.5}, "max_concurrency must be a whole number, got float 2.5"),
    ({"mode": "burst"}, "mode must be one of 'concurrency', 'rate', 'sweep', got str 'burst'"),
])
def test_profile_options_of_the_wrong_type(settings: dict[str, Any], message: str):
    """``profile endpoint``'s options checked by the same rule: the setting named, never a TypeError."""
    with pytest.raises(InputError) as caught:
        ProfileOptions(**settings)
    assert (message, next(iter(settings))) == (str(caught.value), caught.value.setting)


def test_tariff_run_options_of_the_wrong_type(tmp_path):
    """``run_tariff`` checks its options by the same rule before reading anything."""
    from mpcbench_async.sweep import TariffRunOptions, run_tariff

    with pytest.raises(InputError, match=r"^path must be a path \(str or pathlib\.Path\), got int 5$"):
        anyio.run(run_tariff, TariffRunOptions(path=5))  # type: ignore[arg-type]
