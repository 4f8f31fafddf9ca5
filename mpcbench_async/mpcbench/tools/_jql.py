"""A JQL subset, parsed and evaluated over in-memory issues.

Supported: ``project``, ``key``, ``status``, ``assignee``, ``reporter``,
``priority``, ``fixVersion``, ``summary``, ``description``, ``text`` with ``=``,
``!=``, ``~``, ``!~``, ``IN (…)``, ``NOT IN (…)``; ``updated``/``created`` with
``= != > >= < <=`` against dates, ``-7d``/``-2w`` offsets and ``now()``,
``startOfDay()``, ``startOfWeek()``, ``endOfWeek()`` (relative to the scenario's
reference now); ``AND``, ``OR``, ``NOT``, parentheses; ``ORDER BY f [ASC|DESC], …``.

Anything else (a field, operator or function outside the subset) is not
silently dropped: the clause is left unapplied and named in the result's
``unsupported_clauses`` so the model knows its filter did not run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta, tzinfo
from typing import Any

from .._data import parse_timestamp
from ..._text import words

__all__ = ["JqlError", "JqlQuery", "parse_jql"]

_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')|(?P<op>!=|!~|>=|<=|=|~|>|<|\(|\)|,)'
                    r'|(?P<word>[^\s=!~<>(),"\']+(?:\(\))?))')
TEXT_FIELDS = {"project", "key", "status", "assignee", "reporter", "priority", "fixversion", "summary",
               "description", "text", "issuetype", "type"}
DATE_FIELDS = {"updated", "created", "duedate", "resolved"}
ORDER_FIELDS = TEXT_FIELDS | DATE_FIELDS


class JqlError(ValueError):
    """The JQL cannot be parsed; the message says where."""


@dataclass
class _Ctx:
    now: datetime
    tz: tzinfo
    unsupported: list[str] = field(default_factory=list)


Predicate = Callable[[dict[str, Any]], bool]


def _tokens(jql: str) -> list[tuple[str, str, int, int]]:
    """(kind, value, start, end) for each token; positions let clauses be reported as written."""
    out, pos = [], 0
    while pos < len(jql):
        if jql[pos:].strip() == "":
            break
        match = _TOKEN.match(jql, pos)
        if not match or match.end() == pos:
            raise JqlError(f"cannot read the JQL at position {pos}: {jql[pos:pos + 20]!r}")
        kind = match.lastgroup or "word"
        value = match.group(kind)
        start = match.start(kind)
        if kind == "str":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
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
        while self.is_word("or"):
            self.take()
            parts.append(self.term())
        applied = [p for p in parts if p is not None]
        if len(applied) <= 1:
            return applied[0] if applied else None
        return lambda issue: any(p(issue) for p in applied)

    def term(self) -> Predicate | None:
        parts = [self.factor()]
        while self.is_word("and"):
            self.take()
            parts.append(self.factor())
        applied = [p for p in parts if p is not None]
        if len(applied) <= 1:
            return applied[0] if applied else None
        return lambda issue: all(p(issue) for p in applied)

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

    def _values(self) -> list[str]:
        if self.peek() is not None and self.peek()[0] == "word":  # type: ignore[index]
            return [self.take()[1]]  # a function such as openSprints(): kept for the unsupported report
        self.expect("(")
        values = []
        while True:
            kind, value = self.take()
            if value == ")" and kind == "op":
                break
            if value != ",":
                values.append(value)
        return values

    def clause(self) -> Predicate | None:
        start = self.pos
        _, name = self.take()
        field_name = name.lower()
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
            _, empty = self.take()
            op, values = ("is not" if negate else "is"), [empty]
        else:
            kind, op = self.take()
            if kind != "op" and op.lower() not in HISTORY_OPERATORS:
                raise JqlError(f"expected an operator after {name!r}, found {op!r}")
            if kind != "op":  # a history operator outside the subset (WAS, CHANGED): skip its operands
                while self.peek() is not None and not self.is_word("and", "or", "order") and self.peek() != ("op", ")"):
                    if self.peek() == ("op", "("):
                        self._values()
                    else:
                        self.take()
                self.ctx.unsupported.append(self.text(start))
                return None
            _, value = self.take()
            values = [value]
        predicate = self._predicate(field_name, op, values)
        if predicate is None:
            self.ctx.unsupported.append(self.text(start))
        return predicate

    def _predicate(self, name: str, op: str, values: list[str]) -> Predicate | None:
        if name in DATE_FIELDS and op in ("=", "!=", ">", ">=", "<", "<="):
            bound = _date_value(values[0], self.ctx)
            if bound is None:
                return None
            tz_ = self.ctx.tz
            compare = {"=": lambda a, b: a.astimezone(tz_).date() == b.astimezone(tz_).date(),
                       "!=": lambda a, b: a.astimezone(tz_).date() != b.astimezone(tz_).date(),
                       ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
                       "<": lambda a, b: a < b, "<=": lambda a, b: a <= b}[op]
            tz = self.ctx.tz

            def on_date(issue: dict[str, Any]) -> bool:
                stamp = parse_timestamp(issue.get(name), tz)
                return stamp is not None and compare(stamp, bound)

            return on_date
        if name not in TEXT_FIELDS or any(v.endswith("()") for v in values):
            return None
        wanted = [v.lower() for v in values]
        if op in ("=", "!=", "in", "not in"):
            def equal(issue: dict[str, Any]) -> bool:
                have = {v.lower() for v in _field_values(issue, name)}
                return any(w in have for w in wanted)

            return equal if op in ("=", "in") else (lambda issue: not equal(issue))
        if op in ("~", "!~"):
            terms = words(values[0])

            def contains(issue: dict[str, Any]) -> bool:
                vocabulary = set(words(" ".join(_field_values(issue, name))))
                return bool(terms) and all(t in vocabulary or any(w.startswith(t) for w in vocabulary)
                                           for t in terms)

            return contains if op == "~" else (lambda issue: not contains(issue))
        if op in ("is", "is not") and wanted[0] in ("empty", "null"):
            present: Predicate = lambda issue: bool(_field_values(issue, name))  # noqa: E731
            return present if op == "is not" else (lambda issue: not present(issue))
        return None


def _date_value(value: str, ctx: _Ctx) -> datetime | None:
    """A JQL date operand as an aware datetime, relative ones against the reference now."""
    text = value.strip().lower()
    now = ctx.now
    start_of_day = datetime.combine(now.date(), time(0), tzinfo=ctx.tz)
    functions = {"now()": now, "startofday()": start_of_day,
                 "startofweek()": start_of_day - timedelta(days=now.weekday()),
                 "endofweek()": start_of_day + timedelta(days=7 - now.weekday())}
    if text in functions:
        return functions[text]
    match = re.fullmatch(r"([+-]?)(\d+)([mhdw])", text)
    if match:
        sign, amount, unit = match.groups()
        delta = timedelta(**{{"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[unit]: int(amount)})
        return now - delta if sign == "-" else now + delta
    parsed = parse_timestamp(value.replace("/", "-").replace(" ", "T"), ctx.tz)
    return parsed


HISTORY_OPERATORS = {"was", "changed"}
PRIORITY_RANK = {"lowest": 1, "low": 2, "medium": 3, "high": 4, "highest": 5, "critical": 5, "blocker": 6}


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
        selected = [issue for issue in issues if isinstance(issue, dict) and self.predicate(issue)]
        for name, descending in reversed(self.order_by):
            if name in DATE_FIELDS:
                epoch = datetime.min.replace(tzinfo=tz)
                selected.sort(key=lambda i: parse_timestamp(i.get(name), tz) or epoch, reverse=descending)
            elif name == "key":
                selected.sort(key=_key_order, reverse=descending)
            elif name == "priority":
                selected.sort(key=lambda i: PRIORITY_RANK.get(" ".join(_field_values(i, name)).lower(), 0),
                              reverse=descending)
            else:
                selected.sort(key=lambda i: " ".join(_field_values(i, name)).lower(), reverse=descending)
        return selected


def parse_jql(jql: str, *, now: datetime, tz: tzinfo) -> JqlQuery:
    """Parse ``jql``; raise ``JqlError`` for syntax errors, collect unsupported clauses as written."""
    ctx = _Ctx(now=now, tz=tz)
    tokens = _tokens(jql)
    order_at = next((i for i in range(len(tokens) - 1)
                     if tokens[i][1].lower() == "order" and tokens[i + 1][1].lower() == "by"), len(tokens))
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
