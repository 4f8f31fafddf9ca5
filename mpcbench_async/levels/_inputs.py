"""The levels suite's settings in a sweep, apart from the suite: a sweep reads them whether or not it runs the
levels suite, and importing the suite (its agent, oracle, data and statistics) costs a sweep that does not run it
~40 ms of start-up (issue 31)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from .._lazy import TYPE_CHECKING
from .._options import setting_error

if TYPE_CHECKING:
    from ..runner import RunChoice

__all__ = ["LevelsInputs"]


class LevelsInputs(msgspec.Struct, kw_only=True, frozen=True):
    """What a sweep's levels suite reads: ``data`` (what ``levels import`` or ``levels generate`` wrote, or a
    checkout of the original), which ``levels`` (1–3) and which ``splits`` (``None``: every split in ``data``)."""

    data: Path = Path("storage/levels")
    levels: Sequence[int] = (1, 2, 3)
    splits: Sequence[str] | None = None

    def check(self, run: RunChoice) -> None:
        """Refuse, reading nothing, levels outside 1–3 when ``run`` chooses the levels suite (``check_sweep_options``
        calls it with the other settings' checks)."""
        if "levels" in run.suites and (not self.levels or not set(self.levels) <= {1, 2, 3}):
            raise setting_error("levels", f"levels: choose among 1, 2, 3 (got "
                                          f"{', '.join(map(str, self.levels)) or 'none'})")
