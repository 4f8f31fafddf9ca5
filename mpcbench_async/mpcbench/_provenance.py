"""What a stored score was computed with: the check code's version and the digest of a judge's input.

Why: ``verify`` re-scores a finished sweep from its records without calling a model. When a stored
score no longer reproduces it must say why — the check code changed since the run (its
``checks_version`` differs), or the judge's prompt or input did (``judge_input_digest`` differs) —
not only that it differs. The same version keys the validity certificate's cached baselines
(``sweep._baselines``), so a change to the checks or the sim baselines recomputes them.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from .._prompts import PromptConfig
from ._judge import judge_messages

__all__ = ["SIM_JUDGE", "baselines_version", "checks_version", "judge_input_digest", "sim_judge_scores",
           "sim_judge_version"]

_PACKAGE = Path(__file__).resolve().parent.parent
# Where each versioned computation starts (modules, relative to the package). Its version digests these files
# and every package module they import, directly or not (read from the source, so a new helper module the
# checks come to import is covered without anyone listing it).
CHECK_ENTRY = ("mpcbench/_checks.py",)
# And the sim baselines the certificate runs (sim/oracle-agent, sim/lazy-agent) with the agent loop.
BASELINE_ENTRY = (*CHECK_ENTRY, "mpcbench/_agent.py", "mpcbench/_sim/_oracle", "mpcbench/_sim/_judge_policy.py")
# The deterministic rubric judge: its rules and how it reads answers.
SIM_JUDGE = "sim/judge"
SIM_JUDGE_ENTRY = ("mpcbench/_sim/_judge_policy.py",)
# Plumbing a score passes through but never computes (calls, records, files, the sim's HTTP server, the error
# tree, secret masking): not followed, so a transport change or a new error class does not read as "the check code
# changed" in ``verify``.
PLUMBING = frozenset({"llm", "runtime", "records", "sim", "_exceptions", "_redact"})


def _module_file(module: str) -> Path | None:
    """The package file of ``module`` (dotted, relative to the package), or None outside it."""
    base = _PACKAGE.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(file: Path) -> Iterator[Path]:
    """The package files ``file`` imports (relative imports and ``mpcbench_async.…``), lazily imported ones too."""
    package = file.parent.relative_to(_PACKAGE).parts
    for node in ast.walk(ast.parse(file.read_bytes())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = list(package[:len(package) - node.level + 1])
            elif node.module and node.module.split(".")[0] == _PACKAGE.name:
                anchor = []
            else:
                continue
            module = [*anchor, *(node.module.split(".") if node.module else [])]
            if not node.level:
                module = module[1:]
            names = [".".join(module)] + [".".join([*module, alias.name]) for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name.split(".", 1)[1] for a in node.names if a.name.startswith(_PACKAGE.name + ".")]
        else:
            continue
        for name in names:
            if name and name.split(".")[0] not in PLUMBING and (found := _module_file(name)) is not None:
                yield found


def _closure(entries: tuple[str, ...]) -> list[Path]:
    """``entries`` (files or directories) and every package file they import, transitively, sorted."""
    todo = [f for part in entries for f in (sorted((_PACKAGE / part).rglob("*.py")) if (_PACKAGE / part).is_dir()
                                               else [_PACKAGE / part])]
    seen: set[Path] = set()
    while todo:
        file = todo.pop()
        if file not in seen:
            seen.add(file)
            todo.extend(_imports(file))
    return sorted(seen)


def _source_digest(entries: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for file in _closure(entries):
        digest.update(file.relative_to(_PACKAGE).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@functools.cache
def checks_version() -> str:
    """A short hash of the check code's source: it changes whenever a check could give another result."""
    return _source_digest(CHECK_ENTRY)


@functools.cache
def baselines_version() -> str:
    """A short hash of the checks' and the sim baselines' source (the certificate's cache key part)."""
    return _source_digest(BASELINE_ENTRY)


@functools.cache
def sim_judge_version() -> str:
    """A short hash of ``sim/judge``'s rubric source: stored with its judgements, so ``verify`` can tell an edited
    score from a rubric changed since."""
    return _source_digest(SIM_JUDGE_ENTRY)


def sim_judge_scores(judge_input: dict[str, Any]) -> tuple[int, int]:
    """(ARS, SGR) that ``sim/judge`` gives ``judge_input``: its rubric is a pure function of the input, so a stored
    judgement of it can be re-scored in-process, without a model call."""
    from ._sim._judge_policy import judge_scores

    scores = judge_scores(judge_input)
    return (scores["answer_requirements_satisfaction"]["score"], scores["source_grounded_reasoning"]["score"])


def judge_input_digest(judge_input: dict[str, Any], prompts: PromptConfig) -> str:
    """A short hash of exactly what a judge's first attempt sends: its rendered system and user messages."""
    messages = [(m.role, m.content) for m in judge_messages(judge_input, prompts)]
    return hashlib.sha256(orjson.dumps(messages)).hexdigest()[:16]
