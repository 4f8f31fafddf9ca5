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


# Exception classes outside the tree, each caught inside the project and never raised to a caller, and why. A name
# starting with ``_`` needs no entry: it cannot leave its module by name.
INTERNAL = {
    "_replies.py: ReplyParseError": "a model's reply that is no JSON object, handed back to the model (agent, judge, "
                                    "generation); the module is in the checks' source digest",
    "mpcbench/tools/_jql.py: JqlError": "a tool call's unreadable JQL, returned to the model as the tool's error; "
                                        "the module is in the checks' source digest",
    "mpcbench/tools/_dates.py: DateError": "a tool call's unreadable date, returned to the model as the tool's "
                                           "error; the module is in the checks' source digest",
    "mpcbench/tools/_execution.py: ToolTimeLimit": "a stop signal (a BaseException, as KeyboardInterrupt) ending a "
                                                   "tool call at its time limit",
    "levels/_answer.py: AnswerError": "an unreadable final answer: the levels agent's loop asks the model again",
    "levels/_agent.py: ReplayEnded": "a replayed run's recorded replies ran out: the loop ends there",
    "view/_index.py: BuildCancelled": "the viewer shutting down stops its index build, which it awaits",
}


def exception_classes() -> list[str]:
    """``"module: Class"`` for every public exception class outside ``_exceptions`` (by its bases' names: a builtin
    exception, one of the tree, or another found here)."""
    import builtins

    known = {name for name in dir(builtins)
             if isinstance(getattr(builtins, name), type) and issubclass(getattr(builtins, name), BaseException)}
    known |= TREE
    classes = [(path, node) for path in sorted(PACKAGE.rglob("*.py")) if path.name != "_exceptions.py"
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.ClassDef)]
    found: dict[str, str] = {}
    while True:
        new = {node.name: f"{path.relative_to(PACKAGE).as_posix()}: {node.name}" for path, node in classes
               if node.name not in found and {b.id if isinstance(b, ast.Name) else b.attr
                                               if isinstance(b, ast.Attribute) else "" for b in node.bases} & known}
        if not new:
            return sorted(where for name, where in found.items() if not name.startswith("_"))
        found |= new
        known |= set(new)


def test_every_exception_outside_the_tree_is_internal_and_says_why():
    """A public exception class outside ``_exceptions`` is one a caller could meet, outside the tree: each left is
    caught inside the project, and listed in INTERNAL with the reason."""
    assert sorted(INTERNAL) == exception_classes()
