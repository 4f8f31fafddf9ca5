"""The package carries its data: prompts, schemas, the tariff pack, the default config, the example benchmark.

From an empty working directory (no clone around it) the loaders and the CLI read the
copies shipped in ``mpcbench_async/_data``; a workspace's own files always win. The
last test builds the wheel, installs it into a fresh venv and runs the README's
library examples and ``mpcbench-async sweep`` from an empty directory (CI only: it
takes about a minute and fetches the dependencies from the package registry).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mpcbench_async import load_model_config, load_prompts
from mpcbench_async._resources import SHIPPED, shipped_path, workspace_path
from mpcbench_async.mpcbench import load_schemas
from mpcbench_async.tariff import load_pack
from mpcbench_async.testing import write_workspace
from tests.conftest import REPO

PACKAGE = REPO / "mpcbench_async"


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_data_is_the_repository_copy(name):
    """Each shipped path is a symlink to the repository's top-level file: one copy to edit, nothing to drift."""
    link = PACKAGE / "_data" / name
    assert (True, (REPO / name).resolve()) == (link.is_symlink(), link.resolve())
    assert link == shipped_path(name)


def test_py_typed_ships():
    """``py.typed`` marks the package as typed for its users' type checkers."""
    assert (PACKAGE / "py.typed").is_file()


class TestWorkspacePath:
    def test_missing_file_is_the_shipped_copy(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        assert shipped_path("prompt_config.json") == workspace_path("prompt_config.json")
        assert (shipped_path("storage/packs/tariff") == workspace_path("storage/packs/tariff")
                and workspace_path("storage/packs/tariff").joinpath("gri.json").is_file())

    def test_the_working_directory_wins(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        (tmp_path / "model_config.json").write_text("{}")
        (tmp_path / "storage" / "packs").mkdir(parents=True)
        assert Path("model_config.json") == workspace_path("model_config.json")
        assert Path("storage/packs/tariff") == workspace_path("storage/packs/tariff")  # its own packs, even missing

    def test_benchmark_inputs_come_together(self, tmp_path, monkeypatch):
        """With a ``tasks/`` of its own, the workspace's missing ``data/`` is not replaced by the shipped data."""
        monkeypatch.chdir(tmp_path)
        assert [shipped_path(n) for n in ("tasks", "data", "scenarios")] == [
            workspace_path(n) for n in ("tasks", "data", "scenarios")]
        (tmp_path / "tasks").mkdir()
        assert [Path("tasks"), Path("data"), Path("scenarios")] == [
            workspace_path(n) for n in ("tasks", "data", "scenarios")]

    def test_other_paths_are_left_alone(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        absolute = tmp_path / "prompt_config.json"
        assert [Path("reports/x.json"), Path("schemas_old"), absolute] == [
            workspace_path("reports/x.json"), workspace_path("schemas_old"), workspace_path(absolute)]


def test_loaders_read_the_shipped_copies_from_an_empty_directory(tmp_path, monkeypatch):
    """The config, prompts, schemas and pack load by their usual relative names where none exists."""
    monkeypatch.chdir(tmp_path)
    assert str(shipped_path("model_config.json")) == load_model_config("model_config.json").source
    assert str(shipped_path("prompt_config.json")) == load_prompts("prompt_config.json").path
    assert shipped_path("schemas") == load_schemas("schemas").directory
    assert shipped_path("storage/packs/tariff") == load_pack("storage/packs/tariff").root


def test_write_workspace_writes_the_shipped_prompts(tmp_path):
    """``write_workspace`` needs no clone: its prompt_config.json is the shipped one, byte for byte."""
    write_workspace(tmp_path)
    assert shipped_path("prompt_config.json").read_bytes() == (tmp_path / "prompt_config.json").read_bytes()


def readme_examples() -> list[str]:
    """The Python blocks under "Library use" in README.md, as written."""
    section = (REPO / "README.md").read_text().split("## Library use", 1)[1]
    return re.findall(r"```python\n(.*?)```", section, re.S)[:2]


def run_from_empty_directory(python: Path, empty: Path) -> None:
    """The README's two library examples and ``mpcbench-async sweep``, run by ``python`` in ``empty``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    hello, sweep_example = readme_examples()
    run = subprocess.run([python, "-c", hello], cwd=empty, env=env, capture_output=True, text=True, timeout=120)
    assert (0, "") == (run.returncode, run.stderr)
    assert run.stdout.startswith("echo: hello Usage(prompt_tokens=")
    run = subprocess.run([python, "-c", sweep_example], cwd=empty, env=env, capture_output=True, text=True,
                         timeout=300)
    assert 0 == run.returncode, run.stderr
    assert (12, {"ok"}) == (len(run.stdout.splitlines()), {line.split()[-1] for line in run.stdout.splitlines()})
    run = subprocess.run([python.parent / "mpcbench-async", "sweep", "--quiet"], cwd=empty, env=env,
                         capture_output=True, text=True, timeout=300)
    assert 0 == run.returncode, run.stderr
    assert "counted: 34 runs, 34 judgements;" in run.stdout  # 17 shipped tasks × 2 agents, each judged once
    assert (empty / "reports" / "sweeps" / "latest" / "summary.json").is_file()
    assert {"reports"} == {p.name for p in empty.iterdir()}  # read the shipped inputs, wrote only the reports


def test_readme_examples_and_sweep_run_from_an_empty_directory(tmp_path):
    """In this checkout's environment (an editable install), run from a directory with nothing in it."""
    run_from_empty_directory(Path(sys.executable), tmp_path)


@pytest.mark.skipif(not os.environ.get("CI"), reason="builds the wheel and installs it into a fresh venv with its "
                    "dependencies (about a minute): runs when CI is set, as .ci/run does")
def test_wheel_installs_and_runs_from_an_empty_directory(tmp_path):
    """The wheel holds the code, py.typed and every shipped file; installed alone, it runs the README's examples."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(PACKAGE, source / "mpcbench_async", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in SHIPPED:  # what the _data symlinks point at
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        copy = shutil.copytree if (REPO / name).is_dir() else shutil.copy
        copy(REPO / name, source / name)
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", tmp_path / "dist", source],
                           capture_output=True, text=True, timeout=300)
    assert 0 == build.returncode, build.stderr
    (wheel,) = (tmp_path / "dist").glob("mpcbench_async-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"mpcbench_async/_data/{p.relative_to(REPO).as_posix()}" for name in SHIPPED
                for p in ([REPO / name] if (REPO / name).is_file() else (REPO / name).rglob("*")) if p.is_file()}
    assert set() == (expected | {"mpcbench_async/py.typed", "mpcbench_async-0.1.0.dist-info/licenses/LICENSE"}) - names

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=120)
    install = subprocess.run([venv / "bin" / "pip", "install", "-q", "--no-compile", "--disable-pip-version-check",
                              wheel], capture_output=True, text=True, timeout=600)
    assert 0 == install.returncode, install.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    where = subprocess.run([venv / "bin" / "python", "-c", "import mpcbench_async; print(mpcbench_async.__file__)"],
                           cwd=empty, capture_output=True, text=True, timeout=60)
    assert str(venv) in where.stdout  # the installed copy, not this checkout
    version = subprocess.run([venv / "bin" / "mpcbench-async", "--version"], cwd=empty, capture_output=True,
                             text=True, timeout=60)
    assert (0, "mpcbench-async 0.1.0\n", "") == (version.returncode, version.stdout, version.stderr)
    run_from_empty_directory(venv / "bin" / "python", empty)
    workspace = subprocess.run([venv / "bin" / "python", "-c", "from mpcbench_async.testing import write_workspace; "
                                "write_workspace('ws')"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (0, "") == (workspace.returncode, workspace.stderr)
