"""The reader finds its kept entries through the experiment's ``KeyIndex`` (a number per unit key, held as packed
integers: no key string per unit at 100k units), and that changes nothing it counts."""

from __future__ import annotations

import orjson
import pytest

from mpcbench_async.sweep import summarize
from mpcbench_async.sweep._experiment import KeyIndex
from mpcbench_async.sweep._reading import Reader

from .test_summary_stats import _write_sweep


def _keys_of(path):
    return [orjson.loads(line)["key"] for name in ("runs.jsonl", "judgements.jsonl")
            for line in (path / name).read_bytes().splitlines()]


def test_kept_entries_are_found_by_the_key_index_without_a_string_per_key(tmp_path):
    _write_sweep(tmp_path)
    keys = _keys_of(tmp_path)
    (tmp_path / "experiment_keys.txt").write_text("".join(f"{k}\n" for k in sorted(set(keys))))
    reader = Reader(tmp_path)
    runs = reader.runs()
    judges = reader.judgements(runs)
    assert reader.keys is not None and len(runs) + len(judges) == len(set(keys))
    assert runs.slots == {} and judges.slots == {}  # the key → slot dict is only for a directory without a list
    assert sorted([*runs, *judges]) == sorted(set(keys))
    assert all(runs[key].slot == slot for slot, key in enumerate(runs))


def test_the_key_index_numbers_our_keys_and_any_other_exactly():
    ours = ["run-00000000000000ff", "run-0000000000000001", "judge-0000000000000001", "case-00000000000000aa"]
    others = ["levels-x1", "run-00000000000000FF", "my_suite:7"]
    index = KeyIndex([*ours, *others, ours[0]])  # a key listed twice counts once
    assert len(index) == 7
    assert sorted(index.number(k) for k in [*ours, *others]) == list(range(7))  # type: ignore[type-var]
    assert all(index.key(index.number(k)) == k for k in [*ours, *others])  # type: ignore[arg-type]
    for near in ["run-0000000000000002", "run-0x000000000000ff", "run-0_00000000000ff", "run- 00000000000000ff",
                 "judge-00000000000000ff", "run-00000000000000fff", "case-00000000000000AA", "other"]:
        assert near not in index and index.number(near) is None, near
    assert index.has_kind("case") and index.has_kind("levels") and not index.has_kind("tariff")


@pytest.mark.parametrize("text, problem", [
    ("run-0000000000000001\nnot a key!\n", "line 2 holds 'key!'"),
    ("run-0000000000000001\u2028run-0000000000000002 bad!\n", "line 2 holds 'bad!'"),  # numbered as splitlines does
])
def test_a_damaged_list_names_the_line_as_before(tmp_path, problem, text):
    from mpcbench_async._exceptions import InputError
    (tmp_path / "experiment_keys.txt").write_text(text)
    with pytest.raises(InputError, match=problem):
        Reader(tmp_path)


def test_a_key_list_naming_every_unit_counts_as_no_list(tmp_path):
    _write_sweep(tmp_path)
    without = summarize(tmp_path)
    (tmp_path / "experiment_keys.txt").write_text("".join(f"{k}\n" for k in sorted(set(_keys_of(tmp_path)))))
    assert summarize(tmp_path) == without
