"""Exit codes, the same for every command, and their text for ``--help``."""

from __future__ import annotations

import argparse

from .._lazy import TYPE_CHECKING
from ._help import columns

if TYPE_CHECKING:
    from typing import Any

__all__ = ["BUDGET", "EPILOG", "FAILED", "INTERRUPTED", "INVALID", "OK", "USER_ERROR", "with_epilog"]

OK, FAILED, USER_ERROR, BUDGET, INVALID, INTERRUPTED = 0, 1, 2, 3, 4, 130

EPILOG = """exit codes:
  0    every unit asked for has an ok result (from this run or an earlier one into the same output)
  1    some unit has none: it ended in an error (in this run, or in an earlier one and was not retried)
       or never ran; the error classes, with an example and what to do, are printed at the end
  2    user error: a bad file, field, flag, model or output path (one 'error:' line on stderr)
  3    a budget was reached (--max-cost, budget_usd): units in flight finished and are saved, the rest did
       not run; rerun with a higher budget to continue
  4    sweep --require-valid: every unit is ok, but the validity certificate is invalid (oracle ceiling,
       lazy floor or vacuous passes outside the thresholds of model config $.certificate, or a task
       family with no checked task) or unknown (no baselines); the reasons are printed
  130  interrupted (Ctrl-C, SIGTERM): finished units are saved; rerun the same command to resume"""


class _Formatter(argparse.HelpFormatter):
    """Wraps the description as usual but prints the exit-code table as written."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, columns() - 2 if width is None else width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text == EPILOG:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def with_epilog(**kwargs: Any) -> dict[str, Any]:
    """Parser keyword arguments that add the exit-code table under the help."""
    return {"epilog": EPILOG, "formatter_class": _Formatter, **kwargs}
