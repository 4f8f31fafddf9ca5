"""Tests for mpcbench.tools._jql: the JQL subset, parsed and run over in-memory issues."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from mpcbench_async.mpcbench.tools import JqlError, parse_jql
from tests.mpcbench.tools.conftest import make_backend

LONDON = ZoneInfo("Europe/London")
# Wednesday 2025-11-19 10:07 London (+00:00); startOfWeek() is Monday 2025-11-17 00:00.
NOW = datetime(2025, 11, 19, 10, 7, tzinfo=LONDON)
APP = {"key": "APP", "name": "Mobile App"}
NOTE = "these clauses are outside the supported JQL subset and were NOT applied"

ISSUES = [
    {"key": "APP-1", "project": APP, "summary": "Login page crash", "description": "App crashes on login",
     "status": "Done", "priority": "High", "assignee": {"displayName": "Alice Kim", "emailAddress": "alice@acme.io"},
     "fixVersions": [{"name": "1.4"}], "comments": [{"body": "The rollout was blocked by this"}],
     "created": "2025-11-01T09:00:00Z", "updated": "2025-11-18T09:00:00Z"},
    {"key": "APP-2", "project": APP, "summary": "Rollout plan for EU", "description": "Phased plan",
     "status": "In Progress", "priority": "Medium", "assignee": {"displayName": "Bob Stone"},
     "created": "2025-11-02T09:00:00Z", "updated": "2025-11-10T12:00:00Z"},
    {"key": "APP-10", "project": APP, "summary": "Dark mode", "description": "Ship after the rollout",
     "status": "To Do", "priority": "Low", "created": "2025-11-03T09:00:00Z", "updated": "2025-11-17T00:30:00Z"},
    {"key": "WEB-3", "project": "WEB", "summary": "Rollout dashboard", "status": "Done", "priority": "High",
     "fixVersions": [{"name": "2.0"}], "created": "2025-11-04T09:00:00Z", "updated": "2025-11-12T08:00:00Z"},
    {"key": "WEB-4", "summary": "Cache invalidation", "status": "Blocked", "priority": "High",
     "created": "2025-11-05T09:00:00Z", "updated": "2025-11-16T23:59:00Z"},
]
ALL = ["APP-1", "APP-2", "APP-10", "WEB-3", "WEB-4"]


def _keys(jql: str, issues=ISSUES, projects=()) -> list[str]:
    return [issue["key"] for issue in parse_jql(jql, now=NOW, tz=LONDON, projects=projects).run(list(issues), LONDON)]


def _unsupported(jql: str) -> list[str]:
    return parse_jql(jql, now=NOW, tz=LONDON).unsupported


class TestParseJqlFields:
    @pytest.mark.parametrize(("jql", "expected"), [
        ("project = APP", ["APP-1", "APP-2", "APP-10"]),
        ("project = app", ["APP-1", "APP-2", "APP-10"]),
        ('project = "Mobile App"', ["APP-1", "APP-2", "APP-10"]),
        ("project = WEB", ["WEB-3", "WEB-4"]),
        ("project != APP", ["WEB-3", "WEB-4"]),
        ("project in (WEB)", ["WEB-3", "WEB-4"]),
    ])
    def test_project(self, jql, expected):
        """project matches the project key or name, or the key prefix when the issue has no project field."""
        assert expected == _keys(jql)

    @pytest.mark.parametrize(("jql", "expected"), [
        ('project = "Web Portal"', ["WEB-3", "WEB-4"]),
        ("project = 'web portal'", ["WEB-3", "WEB-4"]),
        ('project in ("Web Portal", APP)', ALL),
        ('project not in ("WEB PORTAL")', ["APP-1", "APP-2", "APP-10"]),
        ("project = w1", ["WEB-3", "WEB-4"]),
    ])
    def test_project_by_a_name_or_id_from_the_projects_list(self, jql, expected):
        """A project named by the name or id the Jira projects list gives it finds issues that carry only the key."""
        assert expected == _keys(jql, projects=[{"key": "WEB", "name": "Web Portal", "id": "w1"}, "junk"])

    @pytest.mark.parametrize(("jql", "expected"), [
        ("key = APP-2", ["APP-2"]),
        ("key = app-10", ["APP-10"]),
        ("key in (APP-1, WEB-4)", ["APP-1", "WEB-4"]),
        ("key not in (APP-1, WEB-4)", ["APP-2", "APP-10", "WEB-3"]),
    ])
    def test_key(self, jql, expected):
        """key matches whole issue keys, case-insensitively, alone or in a list."""
        assert expected == _keys(jql)

    @pytest.mark.parametrize(("jql", "expected"), [
        ("status = Done", ["APP-1", "WEB-3"]),
        ("status = done", ["APP-1", "WEB-3"]),
        ('status = "In Progress"', ["APP-2"]),
        ("status != Done", ["APP-2", "APP-10", "WEB-4"]),
        ('status IN (Done, "In Progress")', ["APP-1", "APP-2", "WEB-3"]),
        ("status in (Blocked)", ["WEB-4"]),
        ('status NOT IN (Done, "To Do")', ["APP-2", "WEB-4"]),
        ("status not in (Done,Blocked)", ["APP-2", "APP-10"]),
    ])
    def test_status_with_in_and_not_in(self, jql, expected):
        """status compares whole values case-insensitively with =, !=, IN and NOT IN."""
        assert expected == _keys(jql)

    @pytest.mark.parametrize(("jql", "expected"), [
        ('text ~ "rollout"', ["APP-1", "APP-2", "APP-10", "WEB-3"]),
        ('text ~ "rollout plan"', ["APP-2"]),
        ("text ~ roll", ["APP-1", "APP-2", "APP-10", "WEB-3"]),
        ('text !~ "rollout"', ["WEB-4"]),
        ('summary ~ "rollout"', ["APP-2", "WEB-3"]),
        ("summary ~ 'crash login'", ["APP-1"]),
        ("description ~ rollout", ["APP-10"]),
        ('summary ~ ""', []),
    ])
    def test_text_search(self, jql, expected):
        """~ needs every word (as a word or prefix); text covers summary, description and comments."""
        assert expected == _keys(jql)

    @pytest.mark.parametrize(("jql", "expected"), [
        ('assignee = "Alice Kim"', ["APP-1"]),
        ("assignee = alice@acme.io", ["APP-1"]),
        ("assignee is EMPTY", ["APP-10", "WEB-3", "WEB-4"]),
        ("assignee is not empty", ["APP-1", "APP-2"]),
        ("priority = High", ["APP-1", "WEB-3", "WEB-4"]),
        ("fixVersion = 2.0", ["WEB-3"]),
        ('fixVersion in ("1.4", "2.0")', ["APP-1", "WEB-3"]),
    ])
    def test_people_priority_and_versions(self, jql, expected):
        """assignee matches display name or email; IS EMPTY tests presence; fixVersion reads version names."""
        assert expected == _keys(jql)

    @pytest.mark.parametrize(("jql", "expected"), [
        ("assignee = EMPTY", ["APP-10", "WEB-3", "WEB-4"]),
        ("assignee != null", ["APP-1", "APP-2"]),
        ('assignee = "EMPTY"', []),
        ("duedate is empty", ALL),
        ("updated is not EMPTY", ALL),
    ])
    def test_empty_as_a_value_and_on_dates(self, jql, expected):
        """= EMPTY means IS EMPTY (a quoted "EMPTY" is a name); IS [NOT] EMPTY works on date fields."""
        assert expected == _keys(jql)

    @pytest.mark.parametrize(("jql", "expected"), [
        ("priority >= High", ["APP-1", "WEB-3", "WEB-4"]),
        ("priority > Medium", ["APP-1", "WEB-3", "WEB-4"]),
        ("priority < medium", ["APP-10"]),
        ("priority <= Medium", ["APP-2", "APP-10"]),
    ])
    def test_priority_compares_by_rank(self, jql, expected):
        """priority > >= < <= compare by rank, Lowest to Blocker."""
        assert expected == _keys(jql)


class TestParseJqlDates:
    @pytest.mark.parametrize(("jql", "expected"), [
        ("updated >= -7d", ["APP-1", "APP-10", "WEB-4"]),
        ("updated > -1w", ["APP-1", "APP-10", "WEB-4"]),
        ("updated < -7d", ["APP-2", "WEB-3"]),
        ("updated >= -8d", ["APP-1", "APP-10", "WEB-3", "WEB-4"]),
        ("updated >= -9d", ALL),
        ("updated >= -36h", ["APP-1"]),
    ])
    def test_relative_offsets_count_back_from_the_reference_now(self, jql, expected):
        """-7d is seven days before the reference now (2025-11-12 10:07), not before the wall clock."""
        assert expected == _keys(jql)

    @pytest.mark.parametrize(("jql", "expected"), [
        ("updated <= 2025-11-12", ["APP-2"]),
        ('updated <= "2025-11-12 08:00"', ["APP-2", "WEB-3"]),
        ("updated <= 2025/11/13", ["APP-2", "WEB-3"]),
        ("created < 2025-11-03", ["APP-1", "APP-2"]),
        ("updated = 2025-11-18", ["APP-1"]),
        ("updated != 2025-11-18", ["APP-2", "APP-10", "WEB-3", "WEB-4"]),
    ])
    def test_absolute_dates(self, jql, expected):
        """A bare date is midnight at its start in the scenario zone; = and != compare calendar days."""
        assert expected == _keys(jql)

    @pytest.mark.parametrize(("jql", "expected"), [
        ("updated >= startOfWeek()", ["APP-1", "APP-10"]),
        ("updated < startOfWeek()", ["APP-2", "WEB-3", "WEB-4"]),
        ("updated >= startOfDay()", []),
        ("updated < endOfWeek()", ALL),
        ("updated <= now()", ALL),
    ])
    def test_functions(self, jql, expected):
        """startOfWeek() is Monday 00:00 of the reference week; startOfDay() and endOfWeek() likewise."""
        assert expected == _keys(jql)

    @pytest.mark.parametrize(("jql", "expected"), [
        ("updated >= startOfWeek(-1)", ALL),
        ("updated >= startOfWeek(-1) AND updated < startOfWeek()", ["APP-2", "WEB-3", "WEB-4"]),
        ('updated >= startOfDay("-2d")', ["APP-1", "APP-10"]),
        ("updated >= startOfDay(-36h)", ["APP-1"]),
        ("updated < endOfDay(-2)", ["APP-2", "APP-10", "WEB-3", "WEB-4"]),
        ("updated < endOfWeek(-1)", ["APP-2", "WEB-3", "WEB-4"]),
        ("updated >= startOfMonth() AND updated < startOfMonth(1)", ALL),
        ("updated >= endOfMonth()", []),
        ("created < endOfMonth(-1)", []),
    ])
    def test_functions_with_offsets(self, jql, expected):
        """startOf/endOf Day, Week and Month take an offset, in their own unit unless one is written."""
        assert expected == _keys(jql)

    def test_start_of_week_follows_the_zone(self):
        """startOfWeek() is local Monday midnight: 2025-11-16 23:30Z is still last week in London, this week in
        Kolkata."""
        issue = [{"key": "X-1", "updated": "2025-11-16T23:30:00Z"}]
        kolkata = ZoneInfo("Asia/Kolkata")
        in_kolkata = parse_jql("updated >= startOfWeek()", now=NOW.astimezone(kolkata), tz=kolkata).run(issue, kolkata)
        assert ([], ["X-1"]) == (_keys("updated >= startOfWeek()", issue), [i["key"] for i in in_kolkata])

    def test_issues_without_the_date_never_match(self):
        """A date clause excludes issues that lack the field or have an unreadable stamp."""
        issues = [{"key": "X-1"}, {"key": "X-2", "updated": "last week"}, {"key": "X-3", "updated": "2025-11-18"}]
        assert ["X-3"] == _keys("updated >= -7d", issues)

    def test_equal_date_uses_the_scenario_zone(self):
        """An update at 2025-11-18T23:30-05:00 (04:30 on the 19th in London) is on 2025-11-19 for the scenario."""
        issues = [{"key": "X-1", "updated": "2025-11-18T23:30:00-05:00"}]
        assert (["X-1"], []) == (_keys("updated = 2025-11-19", issues), _keys("updated = 2025-11-18", issues))


class TestParseJqlLogic:
    @pytest.mark.parametrize(("jql", "expected"), [
        ("project = APP AND status = Done", ["APP-1"]),
        ("project = WEB OR status = Done", ["APP-1", "WEB-3", "WEB-4"]),
        ("project = WEB OR status = Done AND summary ~ login", ["APP-1", "WEB-3", "WEB-4"]),
        ("(project = WEB OR status = Done) AND summary ~ rollout", ["WEB-3"]),
        ("status = Done AND summary ~ login OR key = WEB-4", ["APP-1", "WEB-4"]),
        ("status = Done AND (summary ~ login OR key = WEB-4)", ["APP-1"]),
        ("NOT status = Done", ["APP-2", "APP-10", "WEB-4"]),
        ("NOT (project = APP OR status = Done)", ["WEB-4"]),
        ("project = APP AND NOT status = Done", ["APP-2", "APP-10"]),
        ("NOT project = APP AND status = Done", ["WEB-3"]),
        ("NOT NOT status = Done", ["APP-1", "WEB-3"]),
        ("((key = APP-1))", ["APP-1"]),
        ("project = app and status = done or key = web-4", ["APP-1", "WEB-4"]),
    ])
    def test_and_binds_tighter_than_or_and_not_tighter_than_and(self, jql, expected):
        """AND binds tighter than OR, NOT applies to the next condition, parentheses group."""
        assert expected == _keys(jql)

    def test_empty_query_keeps_everything(self):
        """An empty JQL string selects every issue in input order."""
        assert ALL == _keys("")


class TestParseJqlOrderBy:
    @pytest.mark.parametrize(("jql", "expected"), [
        ("ORDER BY updated DESC", ["APP-1", "APP-10", "WEB-4", "WEB-3", "APP-2"]),
        ("ORDER BY updated", ["APP-2", "WEB-3", "WEB-4", "APP-10", "APP-1"]),
        ("ORDER BY updated ASC", ["APP-2", "WEB-3", "WEB-4", "APP-10", "APP-1"]),
        ("project = WEB ORDER BY key DESC", ["WEB-4", "WEB-3"]),
        ("project = WEB order by key asc", ["WEB-3", "WEB-4"]),
        ("ORDER BY project ASC, updated DESC", ["APP-1", "APP-10", "APP-2", "WEB-4", "WEB-3"]),
        ("ORDER BY project DESC, created ASC", ["WEB-3", "WEB-4", "APP-1", "APP-2", "APP-10"]),
        ("status = Done OR project = WEB ORDER BY project DESC, updated ASC", ["WEB-3", "WEB-4", "APP-1"]),
        ("status = Done ORDER BY created DESC", ["WEB-3", "APP-1"]),
    ])
    def test_order_by_one_or_several_keys(self, jql, expected):
        """ORDER BY sorts by each key in turn (ASC by default); later keys break earlier ties."""
        assert expected == _keys(jql)

    def test_issues_without_the_date_sort_first_ascending(self):
        """Issues without the sort date sort as the earliest possible date."""
        issues = [{"key": "X-1", "updated": "2025-11-18T09:00:00Z"}, {"key": "X-2"},
                  {"key": "X-3", "updated": "2025-11-10"}]
        assert (["X-2", "X-3", "X-1"], ["X-1", "X-3", "X-2"]) == (_keys("ORDER BY updated", issues),
                                                                  _keys("ORDER BY updated DESC", issues))

    def test_dates_in_different_offsets_sort_by_instant(self):
        """Sorting by date compares instants, whatever offset each stamp is written in."""
        issues = [{"key": "X-1", "updated": "2025-11-18T10:00:00+09:00"},
                  {"key": "X-2", "updated": "2025-11-18T05:00:00Z"}]
        assert ["X-2", "X-1"] == _keys("ORDER BY updated DESC", issues)

    def test_priority_order_follows_priority_rank(self):
        """ORDER BY priority DESC lists High before Medium before Low."""
        assert ["APP-1", "WEB-3", "WEB-4", "APP-2", "APP-10"] == _keys("ORDER BY priority DESC")

    def test_key_order_is_numeric_within_a_project(self):
        """ORDER BY key ASC puts APP-2 before APP-10."""
        assert ["APP-1", "APP-2", "APP-10", "WEB-3", "WEB-4"] == _keys("ORDER BY key ASC")


class TestParseJqlUnsupported:
    @pytest.mark.parametrize(("jql", "expected_keys", "expected_unsupported"), [
        ("project = WEB AND sprint in openSprints()", ["WEB-3", "WEB-4"], ["sprint in openSprints()"]),
        ("labels = x AND status = Done", ["APP-1", "WEB-3"], ["labels = x"]),
        ("project = WEB ORDER BY rank", ["WEB-3", "WEB-4"], ["ORDER BY rank"]),
        ("assignee = currentUser() AND project = WEB", ["WEB-3", "WEB-4"], ["assignee = currentUser()"]),
        ("sprint in openSprints() AND labels = x ORDER BY rank, updated DESC",
         ["APP-1", "APP-10", "WEB-4", "WEB-3", "APP-2"], ["sprint in openSprints()", "labels = x", "ORDER BY rank"]),
    ])
    def test_unsupported_clauses_are_named_and_not_applied(self, jql, expected_keys, expected_unsupported):
        """A field, operator or function outside the subset is listed verbatim and leaves the rest to filter."""
        assert (expected_keys, expected_unsupported) == (_keys(jql), _unsupported(jql))

    def test_unsupported_operator_is_named_and_not_applied(self):
        """status WAS Done is a valid JQL history clause: it is named as unsupported and not applied."""
        assert (["WEB-3", "WEB-4"], ["status WAS Done"]) == (_keys("project = WEB AND status WAS Done"),
                                                             _unsupported("project = WEB AND status WAS Done"))

    @pytest.mark.parametrize(("jql", "expected"), [
        ("labels in (a, b)", ["labels in (a, b)"]),
        ('labels = "x y"', ['labels = "x y"']),
        ("ORDER BY Rank DESC", ["ORDER BY Rank DESC"]),
    ])
    def test_unsupported_clauses_are_reported_exactly_as_written(self, jql, expected):
        """The reported clause is the text the model wrote."""
        assert expected == _unsupported(jql)

    def test_unsupported_clause_under_not_is_not_applied(self):
        """NOT around an unsupported clause does not filter anything out."""
        assert ALL == _keys("NOT labels = x")

    def test_unsupported_clause_beside_or_is_not_applied(self):
        """status = Done OR labels = x filters as status = Done alone."""
        assert ["APP-1", "WEB-3"] == _keys("status = Done OR labels = x")


class TestParseJqlUnsupportedPaths:
    @pytest.mark.parametrize(("jql", "expected_keys", "expected_unsupported"), [
        # unknown fields, plain or quoted
        ("labels = x", ALL, ["labels = x"]),
        ('"Story Points" > 3', ALL, ['"Story Points" > 3']),
        ("labels is EMPTY", ALL, ["labels is EMPTY"]),
        # operators outside the subset
        ("status WAS Done", ALL, ["status WAS Done"]),
        ('status WAS NOT IN (Done, "To Do")', ALL, ['status WAS NOT IN (Done, "To Do")']),
        ("status CHANGED", ALL, ["status CHANGED"]),
        ("status changed during (startOfWeek(-1), now()) AND project = WEB", ["WEB-3", "WEB-4"],
         ["status changed during (startOfWeek(-1), now())"]),
        ("assignee is foo", ALL, ["assignee is foo"]),
        ("status > Done", ALL, ["status > Done"]),
        ("summary >= x", ALL, ["summary >= x"]),
        ("updated ~ 2025", ALL, ["updated ~ 2025"]),
        ("updated in (2025-11-18)", ALL, ["updated in (2025-11-18)"]),
        ("priority > Urgent", ALL, ["priority > Urgent"]),
        # functions outside the subset, with or without arguments
        ("assignee = currentUser()", ALL, ["assignee = currentUser()"]),
        ('assignee in membersOf("eng team")', ALL, ['assignee in membersOf("eng team")']),
        ("updated > someDay()", ALL, ["updated > someDay()"]),
        ("updated > startOfYear()", ALL, ["updated > startOfYear()"]),
        ("updated > startOfWeek(soon)", ALL, ["updated > startOfWeek(soon)"]),
        ("updated > now(-1d)", ALL, ["updated > now(-1d)"]),
        # inside OR, NOT and parentheses
        ("status = Done OR labels = x", ["APP-1", "WEB-3"], ["labels = x"]),
        ("NOT status WAS Done", ALL, ["status WAS Done"]),
        ("(labels = x OR status = Blocked) AND project = WEB", ["WEB-4"], ["labels = x"]),
        ("NOT (status changed AND project = WEB)", ["APP-1", "APP-2", "APP-10"], ["status changed"]),
        ("project = WEB AND (sprint in openSprints() OR (labels = a AND component = b))", ["WEB-3", "WEB-4"],
         ["sprint in openSprints()", "labels = a", "component = b"]),
        # ORDER BY an unknown field or direction
        ("status = Done ORDER BY Rank, cf[10010] DESC", ["APP-1", "WEB-3"],
         ["ORDER BY Rank", "ORDER BY cf[10010] DESC"]),
        ("ORDER BY updated sideways", ALL, ["ORDER BY updated sideways"]),
    ])
    def test_every_unsupported_path_is_reported(self, jql, expected_keys, expected_unsupported):
        """Unknown fields, operators and functions are reported as written wherever they stand, never matched to
        nothing."""
        assert (expected_keys, expected_unsupported) == (_keys(jql), _unsupported(jql))

    @pytest.mark.parametrize("jql", ["project = WEB && status = Done", "project = WEB and status = Done"])
    def test_symbolic_and_or(self, jql):
        """&& and || work like AND and OR."""
        assert (["WEB-3"], ["APP-1", "WEB-3", "WEB-4"]) == (_keys(jql), _keys(jql.replace("&&", "||").replace(
            " and ", " or ")))


class TestParseJqlErrors:
    @pytest.mark.parametrize(("jql", "message"), [
        ("project = ", "the JQL ends too early"),
        ("(status = Done", "the JQL ends too early"),
        ("status = Done )", "unexpected ')' after a complete condition"),
        ("status Done", "expected an operator after 'status', found 'Done'"),
        ('summary ~ "abc', "cannot read the JQL at position 9: ' \"abc'"),
        ("status in Done, x", "unexpected ',' after a complete condition"),
        ("project = APP AND", "the JQL ends too early"),
        ("status = (", "expected a value but found '('"),
        ("= Done", "expected a field name but found '='"),
        ("status in (Done", "the JQL ends too early"),
        ("updated > 2025-02-30", "the date '2025-02-30' is not a real date (February 2025 has 28 days)"),
        ('updated > "2025/11/31"', "the date '2025/11/31' is not a real date (November 2025 has 30 days)"),
        ('created >= "2025-11-20T10:00+25:00"',
         "the date '2025-11-20T10:00+25:00' has the UTC offset +25:00; offsets lie within ±14:00"),
    ])
    def test_syntax_errors_raise_jql_error(self, jql, message):
        """Malformed JQL (and a date the calendar lacks) raises JqlError saying what is wrong."""
        with pytest.raises(JqlError) as info:
            parse_jql(jql, now=NOW, tz=LONDON)
        assert message == str(info.value)


class TestJiraSearchTool:
    def test_result_shape(self):
        """Issues come back with their non-empty fields, the project key and local created/updated stamps."""
        backend = make_backend(jira={"issues": ISSUES})
        expected = {"issues": [{"key": "WEB-3", "summary": "Rollout dashboard", "status": "Done", "priority": "High",
                                "fixVersions": [{"name": "2.0"}], "project": "WEB",
                                "created": "2025-11-04T09:00:00+00:00", "updated": "2025-11-12T08:00:00+00:00"}],
                    "total": 1}
        assert expected == backend.call("Jira_SearchIssuesWithJql", {"jql": "project = WEB AND status = Done"})

    def test_project_key_from_a_project_object(self):
        """A project object is reported by its key."""
        backend = make_backend(jira={"issues": ISSUES})
        found = backend.call("Jira_SearchIssuesWithJql", {"jql": "key = APP-1"})["issues"]
        assert ["APP"] == [i["project"] for i in found]

    def test_max_results_and_total(self):
        """max_results caps the issues while total counts all that matched."""
        backend = make_backend(jira={"issues": ISSUES})
        result = backend.call("Jira_SearchIssuesWithJql", {"jql": "ORDER BY updated DESC", "max_results": 2})
        assert (["APP-1", "APP-10"], 5) == ([i["key"] for i in result["issues"]], result["total"])

    def test_unsupported_clauses_and_note(self):
        """Unsupported clauses are listed with a note saying they were not applied."""
        backend = make_backend(jira={"issues": ISSUES})
        result = backend.call("Jira_SearchIssuesWithJql",
                              {"jql": "project = WEB AND sprint in openSprints() AND labels = x ORDER BY rank"})
        assert (["WEB-3", "WEB-4"], ["sprint in openSprints()", "labels = x", "ORDER BY rank"], NOTE) == (
            [i["key"] for i in result["issues"]], result["unsupported_clauses"], result["note"])

    def test_supported_query_has_no_note(self):
        """A fully supported query carries neither unsupported_clauses nor a note."""
        result = make_backend(jira={"issues": ISSUES}).call("Jira_SearchIssuesWithJql", {"jql": "key = WEB-4"})
        assert ["issues", "total"] == sorted(result)

    @pytest.mark.parametrize(("jql", "error"), [
        ("project = ", "Jira.SearchIssuesWithJql: the JQL ends too early"),
        ("(status = Done", "Jira.SearchIssuesWithJql: the JQL ends too early"),
        ("status = Done )", "Jira.SearchIssuesWithJql: unexpected ')' after a complete condition"),
    ])
    def test_syntax_error_is_returned(self, jql, error):
        """A syntax error comes back as an error naming the tool."""
        assert {"error": error} == make_backend(jira={"issues": ISSUES}).call("Jira_SearchIssuesWithJql", {"jql": jql})
