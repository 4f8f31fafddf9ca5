"""Output paths are checked when the command line is parsed, before any work (nothing measured is lost)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mpcbench_async.cli import main


@pytest.fixture()
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "a_file"
    path.write_text("not a directory")
    return path


def test_profile_endpoint_refuses_a_file_before_measuring(a_file: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mpcbench_async", "profile", "endpoint", "--model", "sim/echo",
                           "--concurrency", "1", "--duration", "5", "--out", str(a_file)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        f"mpcbench-async profile endpoint: error: argument --out: {a_file} is a file, not a directory")
    assert "req/s" not in done.stderr and "Traceback" not in done.stderr
    assert a_file.read_text() == "not a directory"


@pytest.mark.parametrize("argv", [
    ["generate", "all", "--data-dir", "{file}"],
    ["profile", "endpoint", "--model", "sim/echo", "--out", "{file}"],
])
def test_a_file_where_a_directory_is_expected(a_file: Path, argv: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main([a.format(file=a_file) for a in argv])
    assert stop.value.code == 2
    assert f"{a_file} is a file, not a directory" in capsys.readouterr().err


def test_a_directory_below_a_file(a_file: Path, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["generate", "all", "--data-dir", str(a_file / "sub")])
    assert stop.value.code == 2
    assert f"{a_file / 'sub'}: cannot create the directory there, {a_file} is a file" in capsys.readouterr().err


def test_bench_client_out_must_be_a_file(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["bench", "client", "--out", str(tmp_path)])
    assert stop.value.code == 2
    assert f"{tmp_path} is a directory, not a file" in capsys.readouterr().err
