"""The shipped tasks' sweep outputs, pinned: records and summary the same, byte for byte once times are left out.

``mpcbench-async sweep --models sim/oracle-agent,sim/lazy-agent --judges sim/judge`` on the repository's
``tasks/`` and ``data/`` (the seeded sim), run in-process. What varies from run to run is left out: wall times,
timestamps, latencies, call ids, the latency percentiles of the summary, and ``estimated_prompt_tokens`` (the
token estimator calibrates on replies in whatever order concurrent calls finish). Everything else — each run's
transcript, checks and scores, each judgement, each call's model, key, usage, cost and status, every summary
figure — is canonical JSON whose SHA-256 is pinned here (measured on commit 1d7ffc4, before the layered
client of issue 27, and after it; the judgements' since the sim judge's reply cache, whose code is in
``rubric_version``, changed that field alone; the runs' since ``checks_version`` stopped digesting the error tree
and the secret masking, which changed that field alone; both since the per-data caches of the checks' and tools'
readings, issue 31, whose code is in ``checks_version`` and ``rubric_version``: those two fields alone, checked with
them left out; and again since the benchmark-side CPU work of issue 31 (lazily imported sim policies, cheaper
answer reading and tool searches), the same two fields alone, every digest with them left out equal to the
start commit's, bdfea79; and since the tools' and answer reading's Python calls cut in issue 31's uvloop work,
those two fields alone again, every digest with them left out equal to b1520e8's; and since the answer reading's
checkpoints, issue 31's checks run on the event loop first, those two fields alone, every digest with them left
out equal to 371be65's). A change that moves any of it
(a refactor of the client, the runner or the summary that should change nothing) fails here, naming the file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson

from mpcbench_async.cli import main
from tests.conftest import REPO

VOLATILE = frozenset({"started_at", "finished_at", "latency_s", "queued_s", "retry_wait_s", "ttft_s", "tpot_s",
                      "itl_s", "call_id", "request_id", "response_id", "timings", "estimated_prompt_tokens",
                      "wall_s", "last_wall_s", "out_dir", "latency_p50_s", "latency_p95_s"})

PINNED = {
    "runs.jsonl": "64062b1c594646e29cc898fcf141eaf507272a833945c0e273e7abfc03d869bf",
    "judgements.jsonl": "42bc6f3648f0c1c7b11ca3bfe8fcea2bac4f52bad55d3f53e4330c969de4c00c",
    "calls.jsonl": "9491daafe690474e787cee1ca1ec2d8ac4329d328c99c53a97d7664ae4f77f00",
    "summary.json": "5c48f801ddf9711e08dde19158fa459a8cb8587e039ebfa862f0a25cb355e637",
}


def stable(value: Any) -> Any:
    """``value`` without its volatile fields, at any depth."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def digest(path: Path) -> str:
    """SHA-256 of the file's stable content: a JSONL file's lines sorted (concurrent units finish in any order)."""
    if path.suffix == ".jsonl":
        lines = sorted(orjson.dumps(stable(orjson.loads(line)), option=orjson.OPT_SORT_KEYS)
                       for line in path.read_bytes().splitlines())
        data = b"\n".join(lines)
    else:
        data = orjson.dumps(stable(orjson.loads(path.read_bytes())), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(data).hexdigest()


def test_the_shipped_sweep_writes_the_pinned_records_and_summary(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    out = tmp_path / "out"
    code = main(["sweep", "--models", "sim/oracle-agent,sim/lazy-agent", "--judges", "sim/judge", "--out", str(out)])
    assert 0 == code
    assert PINNED == {name: digest(out / name) for name in PINNED}
