"""The public API: every package's __all__ is complete and importable."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = ["mpcbench_async", "mpcbench_async.records", "mpcbench_async.runtime", "mpcbench_async.llm",
            "mpcbench_async.sim", "mpcbench_async.perf", "mpcbench_async.stats", "mpcbench_async.report"]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_names_resolve(name):
    """Every name in __all__ exists in the package."""
    module = importlib.import_module(name)
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert [] == missing


@pytest.mark.parametrize("name", PACKAGES)
def test_all_lists_every_public_name(name):
    """Every public (non-underscore, non-module) name defined in a package is in its __all__."""
    module = importlib.import_module(name)
    public = {n for n, v in vars(module).items()
              if not n.startswith("_") and not isinstance(v, type(importlib)) and n != "annotations"}
    assert set() == public - set(module.__all__)
