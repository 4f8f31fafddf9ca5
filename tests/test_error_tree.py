"""One error tree (issue 27 point 5): every exception the library raises on purpose is defined in ``_exceptions``.

A ``BenchError`` subclass elsewhere would be missing from the tree the module's docstring draws and from what a
user can import in one place; this scans every module's classes (by their bases' names, so it needs no import).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from mpcbench_async import _exceptions

PACKAGE = Path(_exceptions.__file__).resolve().parent
TREE = {name for name in _exceptions.__all__ if isinstance(getattr(_exceptions, name), type)}


def test_every_bench_error_is_defined_in_the_one_tree():
    outside = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "_exceptions.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                         for b in node.bases}
                if bases & TREE:
                    outside.append(f"{path.relative_to(PACKAGE.parent)}: {node.name}")
    assert [] == outside


def test_the_tree_drawn_in_the_docstring_names_every_class():
    """The docstring's tree is what a reader sees first: it lists every class of the module's ``__all__``."""
    doc = _exceptions.__doc__ or ""
    assert [] == sorted(name for name in TREE if not re.search(rf"[─ ] {name}\b", doc))
