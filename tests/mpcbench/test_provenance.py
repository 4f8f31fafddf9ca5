"""The source versions are cached across processes, and the cache never hides an edit to the code they digest."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from mpcbench_async.mpcbench import _provenance


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the package's sources (same name, so its absolute imports resolve inside the copy)."""
    copy = tmp_path / _provenance._PACKAGE.name
    shutil.copytree(_provenance._PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return copy


def parses(entries: tuple[str, ...], package: Path) -> tuple[str, int]:
    """The digest of ``entries`` in ``package`` and how many source files computing it parsed."""
    before = _provenance.parsed_files
    digest = _provenance._source_digest(entries, package)
    return digest, _provenance.parsed_files - before


class TestCachedVersions:
    def test_a_new_process_with_the_cache_warm_parses_no_source_file(self) -> None:
        versions = (_provenance.checks_version, _provenance.baselines_version, _provenance.sim_judge_version)
        first = []
        for version in versions:
            version.cache_clear()  # computed by an earlier test, perhaps under another $XDG_CACHE_HOME
            first.append(version())
            version.cache_clear()  # as in a new process: only the cache file remains
        before = _provenance.parsed_files
        assert first == [version() for version in versions]
        assert 0 == _provenance.parsed_files - before

    def test_the_three_versions_of_a_process_walk_the_package_once(self) -> None:
        """A sweep asks for all three: one walk of the package's files stamps them all (each walk ~2 ms)."""
        versions = (_provenance.checks_version, _provenance.baselines_version, _provenance.sim_judge_version)
        for version in (*versions, _provenance._package_stamp):
            version.cache_clear()
        computed = [version() for version in versions]
        assert (2, 1) == _provenance._package_stamp.cache_info()[:2]  # (hits, misses)
        stamp = _provenance._stamp(_provenance._PACKAGE)
        assert computed == [_provenance._source_digest(entries, stamp=stamp) for entries in (
            _provenance.CHECK_ENTRY, _provenance.BASELINE_ENTRY, _provenance.SIM_JUDGE_ENTRY)]

    def test_the_cached_digest_is_the_computed_one(self, tree: Path) -> None:
        computed, parsed = parses(_provenance.BASELINE_ENTRY, tree)
        assert len(_provenance._closure(_provenance.BASELINE_ENTRY, tree)) == parsed
        assert (computed, 0) == parses(_provenance.BASELINE_ENTRY, tree)
        _provenance.cache_file(tree).unlink()
        assert computed == parses(_provenance.BASELINE_ENTRY, tree)[0]

    def test_an_edit_to_a_module_the_checks_import_changes_both_versions(self, tree: Path) -> None:
        checks, baselines = parses(_provenance.CHECK_ENTRY, tree)[0], parses(_provenance.BASELINE_ENTRY, tree)[0]
        with (tree / "_answers.py").open("a") as file:  # imported by the checks, not named in any entry
            file.write("# edited\n")
        assert checks != parses(_provenance.CHECK_ENTRY, tree)[0]
        assert baselines != parses(_provenance.BASELINE_ENTRY, tree)[0]

    def test_an_edit_of_the_same_size_is_seen_by_its_modification_time(self, tree: Path) -> None:
        digest = parses(_provenance.BASELINE_ENTRY, tree)[0]
        agent = tree / "mpcbench" / "_agent.py"
        source = agent.read_bytes()
        agent.write_bytes(source[:-1] + b"#")  # the last newline becomes a comment: one byte for another
        info = os.stat(agent)
        os.utime(agent, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))
        edited, parsed = parses(_provenance.BASELINE_ENTRY, tree)
        assert digest != edited and parsed > 0

    def test_a_new_module_an_entry_directory_gains_changes_the_baselines_version(self, tree: Path) -> None:
        digest = parses(_provenance.BASELINE_ENTRY, tree)[0]
        (tree / "mpcbench" / "_sim" / "_oracle" / "_new_family.py").write_text("RULES = ()\n")
        assert digest != parses(_provenance.BASELINE_ENTRY, tree)[0]

    def test_an_unreadable_cache_is_recomputed(self, tree: Path) -> None:
        digest = parses(_provenance.CHECK_ENTRY, tree)[0]
        _provenance.cache_file(tree).write_bytes(b"{not json")
        assert digest == parses(_provenance.CHECK_ENTRY, tree)[0]
