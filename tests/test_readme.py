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
