"""A JQL subset, parsed and evaluated over in-memory issues.

Supported: ``project`` (key or name, quoted or not, any case), ``key``,
``status``, ``assignee``, ``reporter``, ``priority``, ``fixVersion``,
``summary``, ``description``, ``text``, ``issuetype`` with ``=``, ``!=``, ``~``,
``!~``, ``IN (…)``, ``NOT IN (…)``, ``IS [NOT] EMPTY`` (also ``= EMPTY``);
``priority`` also with ``> >= < <=`` (Lowest … Blocker);
``updated``/``created``/``duedate``/``resolved`` with ``= != > >= < <=``
against dates, ``-7d``/``-2w`` offsets and ``now()``, ``startOfDay()``,
``endOfDay()``, ``startOfWeek()``, ``endOfWeek()``, ``startOfMonth()``,
``endOfMonth()`` with an optional offset (``startOfWeek(-1)``,
``startOfDay("-7d")``), all relative to the scenario's reference now, and
with ``IS [NOT] EMPTY``; ``AND``/``&&``, ``OR``/``||``, ``NOT``, parentheses;
``ORDER BY f [ASC|DESC], …``.

Anything else — a field, an operator (``WAS``, ``CHANGED``, ``>`` on a text
field …) or a function (``currentUser()``, ``openSprints()`` …) outside the
subset, wherever it stands (under ``NOT``, beside ``OR``, in parentheses, in
``ORDER BY``) — is not silently dropped: the clause is left unapplied and
named, as written, in the result's ``unsupported_clauses`` so the model knows
its filter did not run.

Reading the query stops at a ``checkpoint()`` per token, running it at one per
issue and per clause tested, and ordering at one per ``ORDER BY`` field: a long
query over many issues is stopped by the tool's time limit (``tools._execution``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any

from ..._checkpoint import checkpoint
from ..._text import has_word_starting, words
from ..._validate import timestamp_problem
from .._data import parse_timestamp

__all__ = ["JqlError", "JqlQuery", "parse_jql"]

_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')|(?P<op>!=|!~|>=|<=|=|~|>|<|\(|\)|,)'
                    r'|(?P<word>[^\s=!~<>(),"\']+(?:\(\))?))')
TEXT_FIELDS = {"project", "key", "status", "assignee", "reporter", "priority", "fixversion", "summary",
               "description", "text", "issuetype", "type"}
DATE_FIELDS = {"updated", "created", "duedate", "resolved"}
ORDER_FIELDS = TEXT_FIELDS | DATE_FIELDS
_ESCAPED = re.compile(r"\\(.)")  # a backslash and the character it escapes, in a quoted value


class JqlError(ValueError):
    """The JQL cannot be parsed; the message says where."""


@dataclass
class _Ctx:
    now: datetime
    tz: tzinfo
    projects: dict[str, frozenset[str]] = field(default_factory=dict)  # any project alias -> all its aliases
    unsupported: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Operand:
    """A value as written: a quoted string, a bare word, or a function call with its arguments."""

    text: str
    kind: str  # "str" | "word" | "func"


Predicate = Callable[[dict[str, Any]], bool]


def _tokens(jql: str) -> list[tuple[str, str, int, int]]:
    """(kind, value, start, end) for each token; positions let clauses be reported as written."""
    out, pos = [], 0
    while pos < len(jql):
        checkpoint()
        if jql[pos:].strip() == "":
            break
        match = _TOKEN.match(jql, pos)
        if not match or match.end() == pos:
            raise JqlError(f"cannot read the JQL at position {pos}: {jql[pos:pos + 20]!r}")
        kind = match.lastgroup or "word"
        value = match.group(kind)
        start = match.start(kind)
        if kind == "str":
            value = _ESCAPED.sub(r"\1", value[1:-1])
        out.append((kind, value, start, match.end()))
        pos = match.end()
    return out


def _field_values(issue: dict[str, Any], name: str) -> list[str]:
    """The string values of a (case-insensitive) field, flattening Jira's nested shapes."""
    def text(value: Any) -> list[str]:
        if value is None:
            return []
        if isinstance(value, dict):
            return [str(value.get(k)) for k in ("key", "name", "displayName", "emailAddress", "email") if value.get(k)]
        if isinstance(value, list):
            return [t for item in value for t in text(item)]
        return [str(value)]

    if name == "project":
        project = issue.get("project")
        values = text(project) or [str(issue.get("key", "")).split("-")[0]]
        return values + ([str(project.get("name"))] if isinstance(project, dict) and project.get("name") else [])
    if name == "fixversion":
        return text(issue.get("fixVersions"))
    if name in ("issuetype", "type"):
        return text(issue.get("issuetype") or issue.get("type"))
    if name == "text":
        comments = [c.get("body", "") for c in issue.get("comments") or () if isinstance(c, dict)]
        return [str(issue.get("summary", "")), str(issue.get("description", "")), *comments]
    return text(issue.get(name))


class _Parser:
    """Recursive descent; an unsupported clause parses to ``None`` and drops out of its AND/OR/NOT."""

    def __init__(self, tokens: list[tuple[str, str, int, int]], ctx: _Ctx, source: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.ctx = ctx
        self.source = source

    def peek(self, offset: int = 0) -> tuple[str, str] | None:
        index = self.pos + offset
        return self.tokens[index][:2] if index < len(self.tokens) else None

    def is_word(self, *words_: str, offset: int = 0) -> bool:
        token = self.peek(offset)
        return token is not None and token[0] == "word" and token[1].lower() in words_

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise JqlError("the JQL ends too early")
        self.pos += 1
        return token

    def text(self, start: int) -> str:
        """The source text of tokens ``start`` .. the current position, exactly as written."""
        return self.source[self.tokens[start][2]:self.tokens[self.pos - 1][3]]

    def expect(self, value: str) -> None:
        token = self.take()
        if token[1] != value:
            raise JqlError(f"expected {value!r} but found {token[1]!r}")

    # expr := term (OR term)*
    def expr(self) -> Predicate | None:
        parts = [self.term()]
        while self.is_word("or", "||"):
            self.take()
            parts.append(self.term())
        applied = [p for p in parts if p is not None]
        if len(applied) <= 1:
            return applied[0] if applied else None

        def either(issue: dict[str, Any]) -> bool:
            # Loops, not any()/all() over a generator, which costs a resumption per clause (issue 31).
            for p in applied:  # noqa: SIM110
                if p(issue):
                    return True
            return False

        return either

    def term(self) -> Predicate | None:
        parts = [self.factor()]
        while self.is_word("and", "&&"):
            self.take()
            parts.append(self.factor())
        applied = [p for p in parts if p is not None]
        if len(applied) <= 1:
            return applied[0] if applied else None

        def both(issue: dict[str, Any]) -> bool:
            for p in applied:  # noqa: SIM110
                if not p(issue):
                    return False
            return True

        return both

    def factor(self) -> Predicate | None:
        token = self.peek()
        if token == ("op", "("):
            self.take()
            inner = self.expr()
            self.expect(")")
            return inner
        if self.is_word("not") and not self.is_word("in", offset=1):
            self.take()
            inner = self.factor()
            return None if inner is None else (lambda issue: not inner(issue))
        return self.clause()

    def _operand(self) -> _Operand:
        """One value; a word followed by ``(`` is a function call, read up to its matching ``)``."""
        start = self.pos
        kind, value = self.take()
        if kind == "op":
            raise JqlError(f"expected a value but found {value!r}")
        if kind == "word" and self.peek() == ("op", "("):
            depth = 0
            while True:
                inner_kind, token = self.take()
                if inner_kind == "op":
                    depth += {"(": 1, ")": -1}.get(token, 0)
                if depth == 0:
                    break
        is_call = kind == "word" and (value.endswith("()") or self.pos - start > 1)
        return _Operand(self.text(start) if is_call else value, "func" if is_call else kind)

    def _values(self) -> list[_Operand]:
        """The operand of IN / NOT IN: a parenthesised list, or one value (a function such as openSprints())."""
        if self.peek() != ("op", "("):
            return [self._operand()]
        self.take()
        values = [self._operand()]
        while self.peek() == ("op", ","):
            self.take()
            values.append(self._operand())
        self.expect(")")
        return values

    def clause(self) -> Predicate | None:
        start = self.pos
        kind, name = self.take()
        if kind == "op":
            raise JqlError(f"expected a field name but found {name!r}")
        if self.is_word("not") and self.is_word("in", offset=1):
            self.pos += 2
            op, values = "not in", self._values()
        elif self.is_word("in"):
            self.take()
            op, values = "in", self._values()
        elif self.is_word("is"):
            self.take()
            negate = self.is_word("not")
            if negate:
                self.take()
            op, values = ("is not" if negate else "is"), [self._operand()]
        elif self.is_word(*HISTORY_OPERATORS):
            # A history operator outside the subset (WAS, CHANGED …): skip its operands and predicates.
            while self.peek() is not None and not self.is_word("and", "or", "&&", "||") and self.peek() != ("op", ")"):
                self._values()
            self.ctx.unsupported.append(self.text(start))
            return None
        else:
            kind, op = self.take()
            if kind != "op" or op in ("(", ")", ","):
                raise JqlError(f"expected an operator after {name!r}, found {op!r}")
            values = [self._operand()]
        predicate = self._predicate(name.lower(), op, values)
        if predicate is None:
            self.ctx.unsupported.append(self.text(start))
        return predicate

    def _predicate(self, name: str, op: str, values: list[_Operand]) -> Predicate | None:
        """The test for one supported clause; None when the field, operator or a value is outside the subset."""
        if op in ("=", "!=") and values[0].kind == "word" and values[0].text.lower() in ("empty", "null"):
            op = "is" if op == "=" else "is not"
        if op in ("is", "is not"):
            return self._presence(name, op, values[0])
        if name in DATE_FIELDS:
            return self._on_date(name, op, values)
        if name not in TEXT_FIELDS or any(v.kind == "func" for v in values):
            return None
        if name == "priority" and op in COMPARE:
            return _priority_compare(op, values[0].text)
        wanted = {v.text.lower() for v in values}
        if name == "project":
            wanted |= {alias for w in wanted for alias in self.ctx.projects.get(w, ())}
        if op in ("=", "!=", "in", "not in"):
            def equal(issue: dict[str, Any]) -> bool:
                checkpoint()
                for v in _field_values(issue, name):  # noqa: SIM110 — a loop, as in ``either``
                    if v.lower() in wanted:
                        return True
                return False

            return equal if op in ("=", "in") else (lambda issue: not equal(issue))
        if op in ("~", "!~"):
            terms = words(values[0].text)

            def contains(issue: dict[str, Any]) -> bool:
                checkpoint()
                text = " ".join(_field_values(issue, name))
                for term in terms:
                    checkpoint()
                    if not has_word_starting(text, term):
                        return False
                return bool(terms)

            return contains if op == "~" else (lambda issue: not contains(issue))
        return None

    def _presence(self, name: str, op: str, value: _Operand) -> Predicate | None:
        """IS [NOT] EMPTY: a text field has a value, a date field a readable date."""
        if value.kind != "word" or value.text.lower() not in ("empty", "null") or name not in ORDER_FIELDS:
            return None
        tz = self.ctx.tz
        if name in DATE_FIELDS:
            present: Predicate = lambda issue: parse_timestamp(issue.get(name), tz) is not None  # noqa: E731
        else:
            present = lambda issue: bool(_field_values(issue, name))  # noqa: E731
        return present if op == "is not" else (lambda issue: not present(issue))

    def _on_date(self, name: str, op: str, values: list[_Operand]) -> Predicate | None:
        """A comparison against a date, an offset from now or a date function; None for other operators."""
        if op not in COMPARE and op not in ("=", "!="):
            return None
        bound = _date_value(values[0], self.ctx)
        if bound is None:
            return None
        tz = self.ctx.tz
        compare = {"=": lambda a, b: a.astimezone(tz).date() == b.astimezone(tz).date(),
                   "!=": lambda a, b: a.astimezone(tz).date() != b.astimezone(tz).date(),
                   ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
                   "<": lambda a, b: a < b, "<=": lambda a, b: a <= b}[op]

        def on_date(issue: dict[str, Any]) -> bool:
            checkpoint()
            stamp = parse_timestamp(issue.get(name), tz)
            return stamp is not None and compare(stamp, bound)

        return on_date


_DATE_FUNCTION = re.compile(r"^(?i:(now|start|end)(?:of(day|week|month))?)"  # name, then an optional offset
                            r"\(\s*[\"']?(?:([+-]?\d+)([dwhmM]?))?[\"']?\s*\)$")
OFFSET_UNITS = {"d": "days", "w": "weeks", "h": "hours", "m": "minutes"}


def _add_months(day: date, months: int) -> date:
    """The first of the month ``months`` after ``day``'s month (``day`` is a first of the month)."""
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _function_date(text: str, ctx: _Ctx) -> datetime | None:
    """now(), startOf/endOf Day|Week|Month with an optional offset (its own unit when none is given)."""
    match = _DATE_FUNCTION.match(text.replace(" ", ""))
    if match is None:
        return None
    edge, period, amount, unit = match.groups()
    if edge.lower() == "now":
        return ctx.now if period is None and amount is None else None
    if period is None:
        return None
    period, count = period.lower(), int(amount or 0)
    unit = unit or {"day": "d", "week": "w", "month": "M"}[period]
    today = ctx.now.date()
    first = {"day": today, "week": today - timedelta(days=today.weekday()), "month": today.replace(day=1)}[period]
    if unit == "M":
        if period != "month":
            return None
        first = _add_months(first, count)
    elif unit in ("d", "w"):
        first += timedelta(days=count * (7 if unit == "w" else 1))
    if edge.lower() == "end":
        first = _add_months(first, 1) if period == "month" else first + timedelta(days=7 if period == "week" else 1)
    moment = datetime.combine(first, time(0), tzinfo=ctx.tz)
    return moment + timedelta(**{OFFSET_UNITS[unit]: count}) if unit in ("h", "m") else moment


def _date_value(value: _Operand, ctx: _Ctx) -> datetime | None:
    """A JQL date operand as an aware datetime, relative ones against the reference now."""
    if value.kind == "func":
        return _function_date(value.text, ctx)
    text = value.text.strip()
    match = re.fullmatch(r"([+-]?)(\d+)([mhdw])", text.lower())
    if match:
        sign, amount, unit = match.groups()
        delta = timedelta(**{OFFSET_UNITS[unit]: int(amount)})
        return ctx.now - delta if sign == "-" else ctx.now + delta
    text = text.replace("/", "-")
    if re.match(r"\d{4}-\d{2}-\d{2}", text) and (problem := timestamp_problem(text)) is not None:
        raise JqlError(f"the date {value.text.strip()!r} {problem}")  # 2025-02-30, +25:00: a mistake, not a subset gap
    return parse_timestamp(text, ctx.tz)


COMPARE = (">", ">=", "<", "<=")
HISTORY_OPERATORS = ("was", "changed")
PRIORITY_RANK = {"lowest": 1, "low": 2, "medium": 3, "high": 4, "highest": 5, "critical": 5, "blocker": 6}


def _priority_compare(op: str, value: str) -> Predicate | None:
    """priority > High and the like, by rank (Lowest … Blocker); None for a priority name outside the ranks."""
    bound = PRIORITY_RANK.get(value.lower())
    if bound is None:
        return None
    compare = {">": int.__gt__, ">=": int.__ge__, "<": int.__lt__, "<=": int.__le__}[op]
    return lambda issue: compare(_priority_rank(issue), bound)


def _priority_rank(issue: dict[str, Any]) -> int:
    """The issue's priority as a rank (0 when it has none or an unknown one)."""
    return PRIORITY_RANK.get(" ".join(_field_values(issue, "priority")).lower(), 0)


def _key_order(issue: dict[str, Any]) -> tuple[str, int]:
    """Jira orders keys by project, then issue number (APP-2 before APP-10)."""
    project, _, number = str(issue.get("key", "")).partition("-")
    return project, int(number) if number.isdigit() else 0


@dataclass
class JqlQuery:
    """A parsed query: a predicate, the ordering, and the clauses it could not apply."""

    predicate: Predicate
    order_by: list[tuple[str, bool]]
    unsupported: list[str]

    def run(self, issues: list[dict[str, Any]], tz: tzinfo) -> list[dict[str, Any]]:
        selected = []
        for issue in issues:
            checkpoint()
            if isinstance(issue, dict) and self.predicate(issue):
                selected.append(issue)
        for name, descending in reversed(self.order_by):
            checkpoint()
            if name in DATE_FIELDS:
                epoch = datetime.min.replace(tzinfo=tz)
                selected.sort(key=lambda i: parse_timestamp(i.get(name), tz) or epoch, reverse=descending)
            elif name == "key":
                selected.sort(key=_key_order, reverse=descending)
            elif name == "priority":
                selected.sort(key=_priority_rank, reverse=descending)
            else:
                selected.sort(key=lambda i: " ".join(_field_values(i, name)).lower(), reverse=descending)
        return selected


def _project_aliases(projects: Iterable[Any]) -> dict[str, frozenset[str]]:
    """Each project's key, name and id (lower-cased), so ``project = "API Launch"`` finds issues keyed APP."""
    aliases: dict[str, frozenset[str]] = {}
    for project in projects:
        if isinstance(project, dict):
            names = frozenset(str(project[k]).lower() for k in ("key", "name", "id") if project.get(k))
            aliases.update((name, names | aliases.get(name, frozenset())) for name in names)
    return aliases


def parse_jql(jql: str, *, now: datetime, tz: tzinfo, projects: Iterable[Any] = ()) -> JqlQuery:
    """Parse ``jql``; raise ``JqlError`` for syntax errors, collect unsupported clauses as written.

    ``projects`` (the Jira source's ``projects``: key, name) lets a project be named by its name.
    """
    ctx = _Ctx(now=now, tz=tz, projects=_project_aliases(projects))
    tokens = _tokens(jql)
    order_at = next((i for i in range(len(tokens) - 1) if tokens[i][0] == tokens[i + 1][0] == "word"
                     and tokens[i][1].lower() == "order" and tokens[i + 1][1].lower() == "by"), len(tokens))
    where, order = tokens[:order_at], tokens[order_at + 2:]
    predicate: Predicate | None = None
    if where:
        parser = _Parser(where, ctx, jql)
        predicate = parser.expr()
        if parser.peek() is not None:
            raise JqlError(f"unexpected {parser.peek()[1]!r} after a complete condition")  # type: ignore[index]
    order_by: list[tuple[str, bool]] = []
    groups: list[list[tuple[str, str, int, int]]] = [[]]
    for token in order:
        if token[1] == "," and token[0] == "op":
            groups.append([])
        else:
            groups[-1].append(token)
    for group in (g for g in groups if g):
        name = group[0][1].lower()
        direction = group[1][1].lower() if len(group) > 1 else "asc"
        if name in ORDER_FIELDS and len(group) <= 2 and direction in ("asc", "desc"):
            order_by.append((name, direction == "desc"))
        else:
            ctx.unsupported.append("ORDER BY " + jql[group[0][2]:group[-1][3]])
    return JqlQuery(predicate=predicate or (lambda issue: True), order_by=order_by, unsupported=ctx.unsupported)
