"""DESIGN.md §3 in the import graph: every import inside the package points down the layers.

Every ``import`` of every module counts — at module level, inside functions
(lazy imports) and under ``if TYPE_CHECKING:`` — so a lazy import cannot hide an
upward dependency. Modules of one layer may import each other; a module may
import any lower layer; nothing else.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mpcbench_async"

# Layer of each top-level part of the package, lowest first (DESIGN.md §3). Parts of one layer
# may import each other except where listed in APART. Shared helpers sit below records.
LAYERS: list[set[str]] = [
    {"_redact", "_exceptions", "_answers", "_rows", "_numbers", "_text", "_replies", "_validate", "_options", "_lazy",
     "_resources", "_checkpoint", "stats"},
    {"records"},
    {"_prompts", "runtime", "labels"},
    {"llm"},
    {"sim"},
    {"distributed"},
    {"runner"},
    {"mpcbench", "tariff", "levels"},
    {"perf", "sweep", "report"},
    {"view", "compare", "export"},
    {"cli"},
    {"evaluation", "generator", "testing", "__main__", "_wiring", "__init__"},
]
# Same layer, yet neither may know the other.
APART = [{"mpcbench", "tariff"}, {"mpcbench", "levels"}, {"tariff", "levels"}, {"perf", "sweep"}, {"perf", "report"}]
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}
# The composition root and the package root may reach into any part's private modules: wiring is their job.
ROOTS = {"_wiring", "__init__"}



def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, package_dir: Path = PACKAGE) -> list[tuple[int, str]]:
    """``(line, absolute module)`` for every import in ``path`` that names a module of the package."""
    name = module_name(path, package_dir)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            # ``from . import x`` imports the sub-module x; ``from .x import y`` imports x.
            found += ([(node.lineno, f"{base}.{alias.name}") for alias in node.names] if node.module is None
                      else [(node.lineno, base)])
    return [(line, module) for line, module in found if module.split(".")[0] == "mpcbench_async"]


def part_of(module: str) -> str:
    """The top-level part a module belongs to: its sub-package or root module (the root ``__init__`` itself)."""
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    return parts[1]


def violations() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = part_of(module_name(path))
        for line, module in imported_modules(path):
            other = part_of(module)
            if other == own or other not in RANK or own not in RANK:  # unplaced parts fail the test above
                continue
            upward = RANK[other] > RANK[own]
            apart = RANK[other] == RANK[own] and any({own, other} <= pair for pair in APART)
            if upward or apart:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({own}) imports {module} ({other})")
    return found


def private_imports() -> list[str]:
    """Imports of another part's private module (``x._y``): a package is used through what its ``__init__`` exports."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own, where = part_of(module_name(path)), str(path.relative_to(PACKAGE.parent))
        for line, module in imported_modules(path):
            private = any(p.startswith("_") and not p.startswith("__") for p in module.split(".")[2:])
            if private and part_of(module) != own and own not in ROOTS:
                found.append(f"{where}:{line} imports {module}")
    return found


class TestImportGraph:
    def test_every_part_of_the_package_has_a_layer(self):
        """A new sub-package or root module must be placed in LAYERS before it can be imported."""
        parts = {part_of(module_name(path)) for path in PACKAGE.rglob("*.py")}
        assert set() == parts - set(RANK)

    def test_imports_point_down_the_layers(self):
        """No module imports a higher layer, or a benchmark the other one (lazy imports included)."""
        assert [] == violations()

    def test_no_part_imports_another_parts_private_module(self):
        """Across packages only the exported names are used (``from ..sweep import Summary``, not ``._summary``), so a
        package can reshape its modules freely; the lazy exports keep such imports as light as the module's own."""
        assert [] == private_imports()

    @pytest.mark.parametrize(("source", "expected"), [
        ("from ..sim import SimServer", ["mpcbench_async.sim"]),
        ("def f():\n    from ...sim._server import SimServer", ["mpcbench_async.sim._server"]),
        ("from . import _client", ["mpcbench_async.llm._client"]),
        ("import mpcbench_async.sweep, json", ["mpcbench_async.sweep"]),
    ])
    def test_relative_and_lazy_imports_are_resolved(self, tmp_path, source, expected):
        """Relative imports resolve against the module's package; imports inside functions count."""
        package_dir = tmp_path / "mpcbench_async"
        where = {"from . import": "llm/__init__.py", "def f():": "llm/sub/_x.py"}
        path = package_dir / next((file for start, file in where.items() if source.startswith(start)), "llm/_x.py")
        path.parent.mkdir(parents=True)
        path.write_text(source)
        assert expected == [module for _, module in imported_modules(path, package_dir)]


def test_the_runner_imports_no_benchmark():
    """``runner`` drives any suite it is handed and knows none (issue 27): it sits below the benchmarks, so not one of
    its modules imports a benchmark, generation, the sweep's composition or anything above it, lazily or not."""
    above = {part for part, rank in RANK.items() if rank > RANK["runner"]}
    assert {"mpcbench", "tariff", "levels", "sweep", "generator"} <= above
    imports = [f"{path.name} imports {module}" for path in sorted((PACKAGE / "runner").rglob("*.py"))
               for _, module in imported_modules(path) if part_of(module) in above]
    assert [] == imports


def test_the_architecture_map_lists_the_layers_as_this_test_enforces_them():
    """ARCHITECTURE.md's layer table is the map a newcomer reads: each row names exactly the parts of that layer
    here, so the map cannot drift from the code."""
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rows = [line.split("|") for line in text.splitlines() if re.match(r"\| *\d+ *\|", line)]
    mapped = [set(re.findall(r"`([\w.]+)`", row[2])) for row in rows]
    assert LAYERS == mapped


# The sweep modules that still read MPCBench's own types, and why: its summary and viewer rows read MPCBench's records
# (_reading, _kept), verify re-derives its scores (_verify), the dry run estimates its units (_dry_run), the certificate
# runs its sim baselines on the plan's tasks (_baselines, _data_warnings), the experiment's fingerprint is the plan's
# (_experiment), and the composition takes the plan out of the suite it built (_job).
SWEEP_READS_MPCBENCH = {"_baselines", "_data_warnings", "_dry_run", "_experiment", "_job", "_kept", "_reading",
                        "_verify"}


def test_the_sweep_registers_no_suite_and_reads_mpcbench_only_where_listed():
    """Each benchmark's suite lives and registers beside it (issue 27): no sweep module calls ``register_suite`` or
    names a suite's factory, and only the modules in ``SWEEP_READS_MPCBENCH`` import ``mpcbench`` — a new one fails
    here until it is listed with its reason."""
    sweep = sorted((PACKAGE / "sweep").rglob("*.py"))
    registering = [path.name for path in sweep for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                   if isinstance(node, ast.Call) and "register_suite" in ast.unparse(node.func)]
    reading = {path.stem for path in sweep for _, module in imported_modules(path) if part_of(module) == "mpcbench"}
    assert ([], SWEEP_READS_MPCBENCH) == (registering, reading)


def exported(part: str) -> tuple[set[str], set[str]]:
    """A package's ``__all__`` and ``_INTERNAL`` (names only the project's other packages use), read from its source."""
    path = PACKAGE / part / "__init__.py" if (PACKAGE / part).is_dir() else PACKAGE / "__init__.py"
    lists = {"__all__": set(), "_INTERNAL": set()}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in lists:
                    lists[target.id] = {element.value for element in node.value.elts
                                        if isinstance(element, ast.Constant)}
    return lists["__all__"], lists["_INTERNAL"]


def imported_names(path: Path) -> list[tuple[int, str, str]]:
    """``(line, package, name)`` for every ``from <package> import name`` in ``path`` that names another part's
    package itself (``from ..runtime import DirLock``), not one of its modules (``from .. import _wiring``)."""
    own, name = part_of(module_name(path)), module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            base = node.module if node.level == 0 else ".".join(
                package[: len(package) - node.level + 1] + [node.module])
            parts = base.split(".")
            if parts[0] == "mpcbench_async" and len(parts) <= 2 and part_of(base) != own:
                found += [(node.lineno, base, alias.name) for alias in node.names
                          if not (PACKAGE.joinpath(*parts[1:], alias.name)).is_dir()
                          and not (PACKAGE.joinpath(*parts[1:], f"{alias.name}.py")).is_file()]
    return found


def test_across_packages_only_exported_names_are_imported():
    """Another part imports from a package only what its ``__init__`` lists: ``__all__`` (what users are promised) or
    ``_INTERNAL`` (what the project's other packages use, and users are not promised). The root package, ``_wiring``
    and the entry points are held to it too."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, module, name in imported_names(path):
            part = part_of(module)
            if part.startswith("_") and part != "__init__":
                continue  # a root module (``_exceptions``, ``_lazy``): its own ``__all__`` is checked by ruff and mypy
            public, internal = exported(part)
            if name not in public | internal:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {name} from {module}")
    assert [] == found


def test_internal_names_are_used_by_another_package_and_never_public():
    """``_INTERNAL`` holds only what another part imports (else the name is private to its package, and tests take it
    from its module), and no name is both promised and internal."""
    users: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for _, module, name in imported_names(path):
            users.setdefault(part_of(module), set()).add(name)
    unused, both = [], []
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        public, internal = exported(init.parent.name)
        unused += [f"{init.parent.name}.{name}" for name in sorted(internal - users.get(init.parent.name, set()))]
        both += [f"{init.parent.name}.{name}" for name in sorted(public & internal)]
    assert ([], []) == (unused, both)
