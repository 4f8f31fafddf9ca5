"""Process-global state is documented (issue 27 point 5): ARCHITECTURE.md's "Process-global registries" table lists
every module-level name a module of the package mutates (item assignment, ``append``, ``update``, ``pop``, …) or
rebinds (``global``), so a new registry, cache or singleton cannot appear unannounced."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "mpcbench_async"
MUTATORS = {"append", "appendleft", "add", "update", "setdefault", "pop", "popitem", "clear", "extend", "insert",
            "remove", "discard"}


def mutated_module_names(path: Path) -> set[str]:
    """The module-level names of ``path`` that its code changes in place or rebinds with ``global``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    defined = {target.id for node in tree.body
               for target in (node.targets if isinstance(node, ast.Assign) else
                              [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else [])
               if isinstance(target, ast.Name)}
    changed: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            changed.update(node.names)
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            changed.update(target.value.id for target in targets
                           if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS
              and isinstance(node.func.value, ast.Name)):
            changed.add(node.func.value.id)
    return changed & defined


def found() -> set[tuple[str, str]]:
    return {(path.relative_to(PACKAGE).as_posix(), name) for path in sorted(PACKAGE.rglob("*.py"))
            for name in mutated_module_names(path)}


def documented() -> set[tuple[str, str]]:
    """``(module, name)`` for each name in the ``where`` column of ARCHITECTURE.md's table: ``path.py``: ``names``."""
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("\n## Process-global registries\n", 1)[1].split("\n## ", 1)[0]
    pairs = set()
    for row in (line for line in section.splitlines()[2:] if line.startswith("| ") and "---" not in line):
        where = row.split("|")[2]
        for module, names in re.findall(r"`([\w/]+\.py)`: ((?:`\w+`[^;`]*)+)", where):
            pairs.update((module, name) for name in re.findall(r"`(\w+)`", names))
    return pairs


def test_every_process_global_registry_is_documented():
    assert set() == found() - documented()


def test_every_documented_registry_still_exists():
    assert set() == documented() - found()


def test_the_scan_finds_the_known_registries():
    """The scan reads what it should: the suite, transport, provider and sim policy registries, and a singleton."""
    assert {("runner/_registry.py", "SUITES"), ("llm/_registry.py", "_FACTORIES"), ("llm/_providers.py", "_FACTORIES"),
            ("sim/_registry.py", "POLICIES"), ("runtime/_pool.py", "_watcher")} <= found()
