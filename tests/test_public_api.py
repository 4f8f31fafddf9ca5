"""The public API: every package's __all__ is complete and importable."""

from __future__ import annotations

import importlib

import pytest

from tests.conftest import REPO

SUBPACKAGES = ["records", "runtime", "llm", "sim", "stats", "runner", "mpcbench", "tariff", "levels", "sweep", "perf",
               "report", "view", "compare", "distributed", "labels", "export", "testing"]
PACKAGES = ["mpcbench_async", *(f"mpcbench_async.{name}" for name in SUBPACKAGES)]


def api_section() -> str:
    """The README's ``### API`` section."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return text.split("\n### API\n", 1)[1].split("\n### ", 1)[0]


def test_the_readme_names_every_top_level_name_and_package():
    """Every name of the top-level ``__all__`` is in the README's API section, and every sub-package is too."""
    import mpcbench_async

    section = api_section()
    assert [] == [name for name in mpcbench_async.__all__ if f"`{name}`" not in section]
    assert [] == [name for name in SUBPACKAGES if f"`{name}`" not in section]


def test_every_package_of_the_tree_is_covered():
    """A new sub-package is added to SUBPACKAGES (and so to the checks below and the README)."""
    found = {path.parent.name for path in (REPO / "mpcbench_async").glob("*/__init__.py")}
    assert set() == found - set(SUBPACKAGES) - {"cli", "evaluation", "generator"}  # entry points: no library API


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
