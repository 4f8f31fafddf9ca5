"""The one registry of suites a sweep can run, by name: adding a suite is one module and one registration.

A suite's module (beside its benchmark) calls ``register_suite(name, factory)``
once, at import. Nothing here imports those modules (the runner sits below the
benchmarks): the package root hands the registry a *loader* that does
(``add_suite_loader``, as it does for the sim's policies), run on the first
lookup (``suite_names``, ``suite_factory``), so ``import mpcbench_async`` stays
light and the built-in suites are there whenever a sweep asks. A loader may declare
the names it registers: then ``suite_names`` lists them without running it, and
``suite_factory`` runs only the loader of the name asked for, so a sweep of MPCBench
alone never imports the tariff and levels suites (issue 31: ~75 ms of its start-up). The composition
(``sweep``) offers every registered name as a suite (the ``suites`` setting)
and calls the factory of each one chosen, with a ``SuiteRequest``, before
anything is written: a factory loads
and checks its inputs there (``InputError`` naming the file or setting) and
returns the suites to run (a tariff suite is one per model, so a list). The
registry is process-global on purpose, like ``llm.register_provider``: the name
is what a user types, and one name means one suite everywhere.
"""

from __future__ import annotations

from .._lazy import TYPE_CHECKING

if TYPE_CHECKING:  # the package root imports this module at start-up (its loader): no typing, no llm at run time
    from collections.abc import Callable, Iterable

    from ._request import SuiteFactory

__all__ = ["SUITES", "add_suite_loader", "register_suite", "suite_factory", "suite_names"]

SUITES: dict[str, SuiteFactory] = {}  # name -> factory; change it only through register_suite
# Each imports modules that call register_suite, with the names it says they register; run once, when needed.
_loaders: list[tuple[Callable[[], None], frozenset[str]]] = []


def add_suite_loader(loader: Callable[[], None], *, names: Iterable[str] = ()) -> None:
    """Have ``loader`` (which imports modules that call ``register_suite``) run before the next lookup that needs it;
    ``names``: the suites it registers (none declared: every lookup runs it)."""
    _loaders.append((loader, frozenset(names)))


def _load(name: str | None = None) -> None:
    """Run the loaders that declared ``name``; every loader when ``name`` is ``None`` or none declared it."""
    chosen = [entry for entry in _loaders if name in entry[1]] if name is not None else []
    for entry in chosen or list(_loaders):
        if entry in _loaders:  # not run meanwhile (a loader may look a suite up)
            _loaders.remove(entry)
            entry[0]()


def register_suite(name: str, factory: SuiteFactory) -> None:
    """Offer ``name`` as a suite, built by ``factory``; registering a name twice is a mistake and raises."""
    if name in SUITES and SUITES[name] is not factory:
        raise ValueError(f"suite {name!r} is already registered")
    SUITES[name] = factory


def suite_names() -> list[str]:
    """Every registered suite's name, sorted (the built-in ones included, loaded or declared)."""
    if not all(names for _, names in _loaders):
        _load()
    return sorted({*SUITES, *(name for _, names in _loaders for name in names)})


def suite_factory(name: str) -> SuiteFactory:
    """The factory registered for ``name`` (``KeyError`` for a name nobody registered)."""
    if name not in SUITES:
        _load(name)
    return SUITES[name]
