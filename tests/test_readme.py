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
