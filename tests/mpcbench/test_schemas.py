"""Schema validation of generated data: every kind of defect, named by file and JSON path."""

from __future__ import annotations

import orjson
import pytest

from mpcbench_async.mpcbench import SchemaSet
from tests.conftest import REPO

SCHEMAS = SchemaSet(REPO / "schemas")

GOOD_CALENDAR = {
    "calendars": [{"id": "cal_a", "email": "a@x.io"}],
    "events": [{"id": "e1", "title": "Sync", "start": "2026-03-30T10:00:00+01:00", "end": "2026-03-30T10:30:00+01:00",
                "attendees": [{"email": "a@x.io", "name": "A"}]}],
}


def with_change(doc, path, value):
    doc = orjson.loads(orjson.dumps(doc))
    target = doc
    for part in path[:-1]:
        target = target[part]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


class TestDefects:
    def test_valid_document_has_no_problems(self):
        """A correct calendar passes."""
        assert [] == SCHEMAS.problems("calendar", GOOD_CALENDAR)

    @pytest.mark.parametrize(("path", "value", "expected"), [
        (["events", 0, "start"], KeyError, "$.events[0]: 'start' is a required property"),
        (["events", 0, "start"], "2026-03-30 10:00", "$.events[0].start: '2026-03-30 10:00' does not match "
         "'^\\\\d{4}-\\\\d{2}-\\\\d{2}T\\\\d{2}:\\\\d{2}(:\\\\d{2}(\\\\.\\\\d+)?)?(Z|[+-]\\\\d{2}:\\\\d{2})$'"),
        (["events", 0, "start"], "2026-03-30T10:00:00", None),
        (["events", 0, "attendees"], [], "$.events[0].attendees: [] should be non-empty"),
        (["events", 0, "attendees", 0, "email"], "not-an-email", None),
        (["events", 0, "title"], 42, "$.events[0].title: 42 is not of type 'string'"),
        (["calendars"], {"id": "x"}, "$.calendars: {'id': 'x'} is not of type 'array'"),
    ])
    def test_each_defect_is_named_by_path(self, path, value, expected):
        """Missing fields, bad timestamps (no offset), empty lists, bad emails and wrong types are each caught."""
        problems = SCHEMAS.problems("calendar", with_change(GOOD_CALENDAR, path, value))
        assert 1 == len(problems)
        if expected is not None:
            assert expected == problems[0]
        else:
            assert problems[0].startswith("$." + ".".join(str(p) for p in path).replace(".0", "[0]"))

    @pytest.mark.parametrize(("value", "problem"), [
        ("2025-02-30T10:00:00+01:00", "is not a real date (February 2025 has 28 days)"),
        ("2026-03-30T10:00:00+25:00", "has the UTC offset +25:00; offsets lie within ±14:00"),
        ("2026-03-30T10:00:00+15:00", "has the UTC offset +15:00; offsets lie within ±14:00"),
        ("2026-03-30T10:00:00+05:99", "has the UTC offset +05:99, whose minutes or seconds are past 59"),
        ("2026-03-30T24:00:00Z", "is not an ISO 8601 date or date-time (hour must be in 0..23)"),
    ])
    def test_a_timestamp_the_pattern_accepts_is_checked_by_the_calendar(self, value, problem):
        """The schema's regex passes 2025-02-30 and +25:00; the calendar check names the path and what is wrong."""
        problems = SCHEMAS.problems("calendar", with_change(GOOD_CALENDAR, ["events", 0, "start"], value))
        assert [f"$.events[0].start: {value!r} {problem}"] == problems

    def test_a_date_field_is_checked_by_the_calendar(self):
        """A Jira release date (pattern YYYY-MM-DD) of 2026-04-31 is refused; the edge offsets ±14:00 pass."""
        jira = {"projects": [{"key": "AB", "name": "A", "fixVersions": [{"name": "v1", "releaseDate": "2026-04-31"}]}],
                "issues": []}
        assert any(p.endswith("'2026-04-31' is not a real date (April 2026 has 30 days)")
                   for p in SCHEMAS.problems("jira", jira))
        for edge in ("+14:00", "-14:00", "-12:00", "+05:45"):
            good = with_change(GOOD_CALENDAR, ["events", 0, "start"], "2026-03-30T10:00:00" + edge)
            assert [] == SCHEMAS.problems("calendar", good)

    def test_format_date_time_is_checked_by_the_calendar(self, tmp_path):
        """A schema declaring format date or date-time gets the same calendar check."""
        for name in ("world_state", "slack", "gmail", "calendar", "contacts", "jira", "drive"):
            (tmp_path / f"{name}_schema.json").write_text('{"type": "object"}')
        (tmp_path / "drive_schema.json").write_text(
            '{"properties": {"at": {"type": "string", "format": "date-time"}, "on": {"format": "date"}}}')
        problems = SchemaSet(tmp_path).problems("drive", {"at": "2026-02-29T10:00Z", "on": "2026-00-10"})
        assert ["$.at: '2026-02-29T10:00Z' is not a real date (February 2026 has 28 days)",
                "$.on: '2026-00-10' is not a real date (there is no month 00)"] == problems

    def test_check_file_prefixes_the_file(self, tmp_path):
        """Problems in a data file name the file, then the JSON path."""
        path = tmp_path / "s_calendar.json"
        path.write_bytes(orjson.dumps(with_change(GOOD_CALENDAR, ["events", 0, "end"], KeyError)))
        assert [f"{path}: $.events[0]: 'end' is a required property"] == SCHEMAS.check_file(path, "calendar")

    def test_check_file_reports_broken_json(self, tmp_path):
        """A data file that is not JSON is one problem naming the file."""
        path = tmp_path / "s_slack.json"
        path.write_text("{")
        [problem] = SCHEMAS.check_file(path, "slack")
        assert problem.startswith(f"{path}: not valid JSON (")

    @pytest.mark.parametrize("name", ["world_state", "slack", "gmail", "calendar", "contacts", "jira", "drive"])
    def test_every_schema_rejects_an_empty_object(self, name):
        """Each schema has required top-level fields."""
        assert SCHEMAS.problems(name, {})
