"""Shared builders for the tool tests: ScenarioData made directly in memory, no files."""

from __future__ import annotations

from datetime import datetime, time, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from mpcbench_async.mpcbench._data import ScenarioData
from mpcbench_async.mpcbench.tools import ToolBackend

SOURCE_NAMES = ("slack", "gmail", "calendar", "contacts", "jira", "drive")
LONDON = ZoneInfo("Europe/London")
# Wednesday 2025-11-19, 10:07 in London (GMT, +00:00).
REFERENCE_NOW = datetime(2025, 11, 19, 10, 7, tzinfo=LONDON)


def make_data(*, tz: tzinfo = LONDON, now: datetime | None = None, workday: tuple[time, time] = (time(9), time(18)),
              **sources: dict[str, Any]) -> ScenarioData:
    """A ScenarioData whose sources default to empty documents; keyword arguments fill sources by name."""
    unknown = set(sources) - set(SOURCE_NAMES)
    assert not unknown, f"unknown sources {unknown}"
    return ScenarioData(
        scenario_id="t1",
        world_state={"global_settings": {"timezone": getattr(tz, "key", "UTC")}},
        sources={name: sources.get(name, {}) for name in SOURCE_NAMES},
        tz=tz,
        reference_now=now if now is not None else REFERENCE_NOW,
        workday_start=workday[0],
        workday_end=workday[1],
    )


def make_backend(**kwargs: Any) -> ToolBackend:
    """A ToolBackend over ``make_data(**kwargs)``."""
    return ToolBackend(make_data(**kwargs))
