"""The README's library example runs as written."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import REPO


def test_library_example_runs():
    """The Python block under 'Library use' runs against the embedded sim and prints a reply."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Library use", 1)[1]
    code = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert 0 == proc.returncode, proc.stderr
    assert proc.stdout.startswith("echo: hello Usage(prompt_tokens=")


def test_sweep_example_runs(tmp_path):
    """The README's Runner example streams one record per agent run and judgement of the chosen tasks."""
    text = (REPO / "README.md").read_text()
    code = re.findall(r"```python\n(.*?)```", text.split("## Library use", 1)[1], re.S)[1]
    code = code.replace('"reports/sweeps/example"', repr(str(tmp_path / "example")))
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert 0 == proc.returncode, proc.stderr
    lines = proc.stdout.splitlines()
    assert 12 == len(lines)  # 3 sc01 tasks × 2 agents, each run and its judgement
    assert {"ok"} == {line.split()[-1] for line in lines}


def test_client_layers_example_runs():
    """The README's custom chain: the default layers without the breaker, a counting layer of one's own."""
    text = (REPO / "README.md").read_text()
    code = re.findall(r"```python\n(.*?)```", text.split("### The client's layers", 1)[1], re.S)[0]
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert 0 == proc.returncode, proc.stderr
    assert ("echo: hello 1 ('cache', 'budget', 'records', 'breaker', 'retry', 'limiter', 'ledger')\n"
            == proc.stdout)


def test_sweep_settings_example_is_checked_as_a_sweep_would(tmp_path):
    """The README's sweep settings (run, limits, output, placement, each benchmark's inputs) pass the sweep's own
    checks as written, each setting where it belongs."""
    from mpcbench_async.sweep import check_sweep_options

    text = (REPO / "README.md").read_text()
    code = next(block for block in re.findall(r"```python\n(.*?)```", text.split("## Library use", 1)[1], re.S)
                if "options = SweepOptions(" in block)
    namespace: dict[str, object] = {}
    exec(code.replace('"reports/sweeps/x"', repr(str(tmp_path / "x"))), namespace)
    checked = check_sweep_options(namespace["options"])
    assert (["mpcbench", "tariff"], 16, tmp_path / "x", "original", [1, 2]) == (
        list(checked.run.suites), checked.limits.concurrency, checked.output.out, checked.inputs[1].scoring,
        list(checked.inputs[2].levels))
