"""Sub-commands whose parsers are built on first use, so ``--help`` lists them without building any.

Why: building every parser (35 of them, 240 arguments) and importing every command
module made ``mpcbench-async --help`` cost 6.8× the bare interpreter's CPU (issue 31).
A command is registered with ``Commands.add_command``: its name, its one-line help
(listed by the parent's ``--help``) and the function that builds its parser. argparse
finds the name among the choices; the parser is built when argparse looks it up,
which is when the command is used (``mpcbench-async sweep …``, ``sweep --help``).
A builder is a function of the ``Commands`` action that calls ``add_parser(name, …)``
(without ``help``: the listing is in place already) and adds its arguments; the
top-level builders are named as ``"_module:function"`` strings, imported only then.
Command groups (``tariff run``) use ``add_commands`` the same way, so
``tariff run --help`` builds three parsers: the program's, ``tariff``'s and ``run``'s.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, MutableMapping

from .._lazy import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Build = Callable[["Commands"], object] | str

__all__ = ["Commands", "add_commands"]


class Commands(argparse._SubParsersAction):
    """A sub-parsers action whose parsers are made by their builders when first looked up."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # argparse looks the command up in both (typeshed calls them dicts; a mapping is all argparse needs)
        self._name_parser_map = self.choices = _Parsers(self)  # type: ignore[assignment]

    def add_command(self, name: str, build: Build, *, help: str) -> None:
        """List ``name`` with ``help``; ``build(self)`` adds its parser (``self.add_parser(name, …)``) when used."""
        parsers = self._name_parser_map
        assert isinstance(parsers, _Parsers)
        if name in parsers:
            raise argparse.ArgumentError(self, f"conflicting subparser: {name}")
        self._choices_actions.append(self._ChoicesPseudoAction(name, (), help))
        parsers.defer(name, build)


def add_commands(parser: argparse.ArgumentParser, **kwargs: Any) -> Commands:
    """``parser.add_subparsers(**kwargs)`` whose sub-commands are built lazily (``Commands.add_command``)."""
    commands = parser.add_subparsers(action=Commands, **kwargs)
    assert isinstance(commands, Commands)
    return commands


class _Parsers(MutableMapping[str, argparse.ArgumentParser]):
    """argparse's name → parser map (and the action's choices): names known at once, parsers built on lookup."""

    def __init__(self, action: Commands) -> None:
        self._action = action
        self._parsers: dict[str, argparse.ArgumentParser | None] = {}  # None: not built yet
        self._builders: dict[str, Build] = {}
        self._building: str | None = None  # while its builder runs, argparse's add_parser must not see the name

    def defer(self, name: str, build: Build) -> None:
        self._parsers[name] = None
        self._builders[name] = build

    def __getitem__(self, name: str) -> argparse.ArgumentParser:
        parser = self._parsers[name]
        if parser is None:
            self._building = name
            try:
                _resolve(self._builders[name])(self._action)
            finally:
                self._building = None
            parser = self._parsers[name]
            if parser is None:
                raise RuntimeError(f"the builder of {name!r} added no parser named {name!r}")
            del self._builders[name]
        return parser

    def __contains__(self, name: object) -> bool:
        return name in self._parsers and name != self._building

    def __setitem__(self, name: str, parser: argparse.ArgumentParser) -> None:
        self._parsers[name] = parser

    def __delitem__(self, name: str) -> None:
        del self._parsers[name]
        self._builders.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parsers)

    def __len__(self) -> int:
        return len(self._parsers)


def _resolve(build: Build) -> Callable[[Commands], object]:
    """The builder itself, or the function a ``"_module:function"`` string names in this package."""
    if not isinstance(build, str):
        return build
    from importlib import import_module

    module, _, function = build.partition(":")
    builder: Callable[[Commands], object] = getattr(import_module(f".{module.lstrip('.')}", __package__), function)
    return builder
