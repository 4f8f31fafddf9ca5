"""The program's ``--help`` from a text rendered once, so the commonest start-up imports no argparse.

Why: ``mpcbench-async --help`` building its parser costs about as much as argparse alone
printing any help (``argparse``, ``re``, ``gettext``, ``locale``, ``textwrap``: 2.5× the bare
interpreter), above issue 31's goal of 2×. The top-level help never changes between runs, so
``_help_text.TEXT`` holds argparse's own rendering of it, and ``cached_help`` returns it when
argparse would print exactly that: the arguments are ``-h`` or ``--help`` alone, the terminal is as
wide as when it was rendered, and the Python is the one that rendered it (argparse's layout
changes between versions). Anything else goes through the parser as before.
``tests/cli/test_help_cache.py`` fails when the text and the parser disagree; regenerate it with
``python -c "from mpcbench_async.cli._help import write_rendering; write_rendering()"``.
"""

from __future__ import annotations

import os
import sys

from .._lazy import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["cached_help", "columns", "write_rendering"]


def columns() -> int:
    """``shutil.get_terminal_size().columns`` (what argparse wraps to) without importing ``shutil``.

    ``shutil`` imports bz2, lzma and zlib: about 3 ms, an eighth of ``mpcbench-async --help`` (issue 31).
    """
    try:
        width = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        width = 0
    if width <= 0:
        try:
            width = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            width = 0
    return width or 80


def cached_help(argv: Sequence[str]) -> str | None:
    """The program's help text if ``argv`` asks for exactly it and the stored rendering is what argparse would
    print here; ``None`` otherwise (the parser then renders it)."""
    if len(argv) != 1 or argv[0] not in ("-h", "--help"):
        return None
    from . import _help_text as rendered

    if (sys.version_info[:2], columns()) != (rendered.PYTHON, rendered.COLUMNS):
        return None
    return rendered.TEXT


def write_rendering() -> None:
    """Render the program's help at 80 columns with this Python and store it in ``_help_text.py``."""
    from pathlib import Path

    from . import build_parser

    os.environ["COLUMNS"] = "80"
    lines = "".join(f"    {line!r}\n" for line in build_parser().format_help().splitlines(keepends=True))
    source = ('"""The program\'s --help as argparse rendered it (``_help.write_rendering``; see ``_help``)."""\n\n'
              f"PYTHON = {sys.version_info[:2]!r}\nCOLUMNS = 80\nTEXT = (\n{lines})\n")
    Path(__file__).with_name("_help_text.py").write_text(source, encoding="utf-8")
