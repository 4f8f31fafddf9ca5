"""The fields every unit record shares, whatever suite wrote it.

A suite's runner appends one record per finished unit; resume, outcomes and
summaries read the same few fields from every kind: the unit ``key``, its
``status`` (``ok`` | ``error``), whether an error is ``retryable`` (an
infrastructure failure a resume runs again), the error's class and message,
and when the unit ran. ``kind`` tags the record type (``agent_run``, ``judge``,
``tariff_case``…): each subclass narrows it to one ``Literal`` with that
default, so a line of another kind fails to decode as the record (see
``runtime.key_view``) and old logs, which always carry it, still decode.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["UnitRecord"]


class UnitRecord(msgspec.Struct, kw_only=True):
    """One finished unit of any suite: its key, how it ended, and when; subclasses add the payload."""

    key: str
    status: Literal["ok", "error"]
    retryable: bool = False
    error_class: str | None = None
    error_message: str | None = None
    started_at: float = 0.0
    finished_at: float = 0.0
    kind: str = "unit"

    @property
    def unscored(self) -> bool:
        """A record that ran yet gave no score (a judge's unparsable verdict): the runner counts these apart."""
        return False
