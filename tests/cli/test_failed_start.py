"""A command whose start fails leaves its output directory exactly as it was (issue 28, point 5).

Missing key, bad config, bad task, unknown model: ``sweep``, ``tariff run`` and ``generate`` exit 2 with one
``error:`` line, and ``--out`` (``--logs-dir``) that did not exist still does not, while one that did keeps every
file byte for byte, times included, even a lock file an earlier sweep left with its pid.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from mpcbench_async.cli import main
from mpcbench_async.testing import write_workspace
from tests.conftest import REPO

MISSING_KEY = ("error: model 'gpt-agent' needs an API key: set the environment variable MPCB_FAILED_START_KEY (or "
               "set models.gpt-agent.api_key_env in keyed.json; null means the endpoint needs no key)")
TARIFF = ["--path", str(REPO / "storage/benchmarks/tariff"), "--pack", str(REPO / "storage/packs/tariff")]

# (name, command before the output flag, output flag, the one error line)
FAILURES = [
    ("sweep: missing key", ["sweep", "--config", "keyed.json"], "--out", MISSING_KEY),
    ("sweep: bad config", ["sweep", "--config", "broken.json"], "--out",
     "error: broken.json: not valid JSON (JSON is malformed: object keys must be strings (byte 1))"),
    ("sweep: bad task", ["sweep", "--tasks-dir", "bad_tasks"], "--out",
     "error: bad_tasks/planning/t9.json: Expected `str`, got `int` - at `$.task_id`"),
    ("sweep: unknown model", ["sweep", "--models", "sim/nobody"], "--out",
     "error: model 'sim/nobody': no sim policy 'sim/nobody'; available: "),
    ("tariff run: missing key", ["tariff", "run", "--mode", "live", "--model", "gpt-agent", "--config", "keyed.json",
                                 *TARIFF], "--out", MISSING_KEY),
    ("tariff run: bad config", ["tariff", "run", "--mode", "live", "--config", "broken.json", *TARIFF], "--out",
     "error: broken.json: not valid JSON (JSON is malformed: object keys must be strings (byte 1))"),
    ("generate: missing key", ["generate", "all", "--model", "gpt-agent", "--config", "keyed.json",
                               "--scenarios-dir", str(REPO / "scenarios"), "--data-dir", "generated"],
     "--logs-dir", MISSING_KEY),
]


def files(directory: Path) -> dict[str, tuple[bytes, int] | None] | None:
    """Every entry under ``directory``: a file's bytes and modification time, ``None`` for a directory."""
    if not directory.exists():
        return None
    return {p.relative_to(directory).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns) if p.is_file() else None
            for p in sorted(directory.rglob("*"))}


@pytest.fixture
def root(tmp_path: Path, monkeypatch) -> Path:
    """A workspace (sim models) with a config whose model needs an unset key, a broken config and a bad task."""
    root = write_workspace(tmp_path / "ws")
    config = orjson.loads((root / "model_config.json").read_bytes())
    keyed = {"model": "sim/lazy-agent", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "MPCB_FAILED_START_KEY"}
    (root / "keyed.json").write_bytes(orjson.dumps({**config, "models": {"gpt-agent": keyed},
                                                    "agent_models": ["gpt-agent"]}))
    (root / "broken.json").write_text("{not json")
    (root / "bad_tasks" / "planning").mkdir(parents=True)
    (root / "bad_tasks" / "planning" / "t9.json").write_text('{"task_id": 9}')
    monkeypatch.delenv("MPCB_FAILED_START_KEY", raising=False)
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize(("command", "flag", "error"), [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES])
@pytest.mark.parametrize("before", ["absent", "existing"])
def test_a_failed_start_leaves_the_output_as_it_was(root, capsys, command, flag, error, before):
    """Exit 2 and the one error line; an absent output (and its absent parent) stays absent, an existing one keeps
    its files, bytes and times, the lock file of an earlier sweep (another pid) included."""
    out = root / "parent" / "out"
    if before == "existing":
        out.mkdir(parents=True)
        (out / "notes.txt").write_text("mine")
        (out / ".lock").write_text("99999\n")
    was = files(root / "parent")
    code = main([*command, flag, str(out)])
    err = capsys.readouterr().err.splitlines()
    assert (2, was) == (code, files(root / "parent"))
    assert err[-1].startswith(error) and (err[-1] == error or error.endswith(" ")), err
    assert not (root / "generated").exists()
