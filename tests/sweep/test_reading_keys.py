"""The reader keys its kept entries by the experiment key table's own strings (one copy of each unit key at
100k units, not one more per decoded line), and that changes nothing it counts."""

from __future__ import annotations

import orjson

from mpcbench_async.sweep import summarize
from mpcbench_async.sweep._reading import Reader

from .test_summary_stats import _write_sweep


def _keys_of(path):
    return [orjson.loads(line)["key"] for name in ("runs.jsonl", "judgements.jsonl")
            for line in (path / name).read_bytes().splitlines()]


def test_kept_entries_share_the_key_tables_strings(tmp_path):
    _write_sweep(tmp_path)
    keys = _keys_of(tmp_path)
    (tmp_path / "experiment_keys.txt").write_text("".join(f"{k}\n" for k in sorted(set(keys))))
    reader = Reader(tmp_path)
    runs = reader.runs()
    judges = reader.judgements(runs)
    assert reader.keys is not None and len(runs) + len(judges) == len(set(keys))
    assert all(key is reader.keys[key] for key in [*runs, *judges])


def test_a_key_list_naming_every_unit_counts_as_no_list(tmp_path):
    _write_sweep(tmp_path)
    without = summarize(tmp_path)
    (tmp_path / "experiment_keys.txt").write_text("".join(f"{k}\n" for k in sorted(set(_keys_of(tmp_path)))))
    assert summarize(tmp_path) == without
