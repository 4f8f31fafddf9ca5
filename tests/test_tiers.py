"""The tier table (``tests/_tiers.py``) stays true: every process-launching test file is marked, no entry is stale."""

from __future__ import annotations

import re

import pytest

from ._tiers import DIRECTORY_MARKERS, SLOW, SUBPROCESS_FILES, markers_for
from .conftest import REPO

LAUNCHES = re.compile(r"\bsubprocess\.(?:run|Popen|check_output|check_call|call)\b|\bopen_process\(|\brun_process\("
                      r"|\bcreate_subprocess_exec\(|\bsys\.executable\b")


def _test_files() -> list[str]:
    return sorted(str(p.relative_to(REPO)) for p in (REPO / "tests").rglob("test_*.py"))


def test_every_file_that_launches_processes_is_marked_subprocess() -> None:
    launching = {f for f in _test_files() if LAUNCHES.search((REPO / f).read_text(encoding="utf-8"))}
    unmarked = sorted(f for f in launching if "subprocess" not in markers_for(f + "::test"))
    assert [] == unmarked


def test_no_entry_names_a_missing_file_or_test() -> None:
    files = set(_test_files())
    stale = sorted(e for e in SUBPROCESS_FILES | SLOW if e.split("::")[0] not in files)
    assert [] == stale
    for entry in SLOW:
        path, _, rest = entry.partition("::")
        for name in rest.split("::") if rest else []:
            assert re.search(rf"\b(?:class|def) {re.escape(name)}\b", (REPO / path).read_text(encoding="utf-8")), entry
    assert all((REPO / d).is_dir() for d in DIRECTORY_MARKERS)


@pytest.mark.parametrize(("nodeid", "expected"), [
    ("tests/test_tiers.py::test_no_entry_names_a_missing_file_or_test", set()),
    ("tests/distributed/test_cli.py::TestDriverKilled::test_x", {"ray", "slow", "subprocess"}),
    ("tests/sweep/test_sweep.py::TestKill::test_sigkill_at_any_point_loses_and_duplicates_nothing[kill_after2]",
     {"slow", "subprocess"}),
    ("tests/sweep/test_sweep.py::TestOther::test_y", {"subprocess"}),
    ("tests/test_secrets.py::TestNoKeyLeaves::test_sweep[openai]", {"slow", "subprocess"}),
])
def test_markers_for_a_node(nodeid: str, expected: set[str]) -> None:
    assert expected == markers_for(nodeid)
