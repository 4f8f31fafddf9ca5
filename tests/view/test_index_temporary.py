"""No temporary index is left behind: a build stopped by the viewer's shutdown (Ctrl-C) removes its own, and the next
build removes those of builders that were killed (their process is gone), never those of a live one."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from mpcbench_async.view import BackgroundIndex, open_index
from mpcbench_async.view import _build as build_module
from mpcbench_async.view._index import BuildCancelled


def dead_pid() -> int:
    """The pid of a process that has exited."""
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True)
    return int(child.stdout)


def temporaries(sweep_dir: Path) -> list[str]:
    return sorted(p.name for p in (sweep_dir / ".view").iterdir() if p.name != "index.sqlite")


def test_the_next_build_removes_temporaries_of_dead_builders_only(sweep_dir: Path) -> None:
    view = sweep_dir / ".view"
    view.mkdir()
    dead, alive = dead_pid(), os.getppid()
    left = [f"index.sqlite.{dead}.140.tmp", f"index.sqlite.{dead}.140.tmp-journal", f"index.sqlite.{alive}.7.tmp"]
    for name in left:
        (view / name).write_bytes(b"half an index")
    index = open_index(sweep_dir)
    index.close()
    assert index.rebuilt
    assert [f"index.sqlite.{alive}.7.tmp"] == temporaries(sweep_dir)


class HeldBuild:
    """The index's ``build`` held once its temporary file exists, until the test releases it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entered, self.release = threading.Event(), threading.Event()
        build = build_module.build

        def held(*args: Any) -> None:
            self.entered.set()
            self.release.wait(60)
            build(*args)

        monkeypatch.setattr(build_module, "build", held)


def test_closing_the_viewer_mid_build_removes_its_temporary_and_stops_the_build(
        sweep_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    held = HeldBuild(monkeypatch)
    state = BackgroundIndex(sweep_dir).start()
    assert held.entered.wait(60)
    [temporary] = temporaries(sweep_dir)
    assert re.fullmatch(rf"index\.sqlite\.{os.getpid()}\.\d+\.tmp", temporary)
    state.close()  # what the CLI does on Ctrl-C
    assert [] == temporaries(sweep_dir)
    held.release.set()
    assert asyncio.run(state.wait(60))
    assert state.done and state.index is None and isinstance(state.error, BuildCancelled)
    assert [] == sorted(p.name for p in (sweep_dir / ".view").iterdir())  # nothing written, nothing left


def test_a_finished_build_leaves_only_the_index(sweep_dir: Path) -> None:
    state = BackgroundIndex(sweep_dir).start()
    assert asyncio.run(state.wait(60))
    state.close()
    assert state.error is None and state.index is not None
    assert ["index.sqlite"] == sorted(p.name for p in (sweep_dir / ".view").iterdir())
