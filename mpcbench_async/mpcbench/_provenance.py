"""What a stored score was computed with: the check code's version and the digest of a judge's input.

Why: ``verify`` re-scores a finished sweep from its records without calling a model. When a stored
score no longer reproduces it must say why — the check code changed since the run (its
``checks_version`` differs), or the judge's prompt or input did (``judge_input_digest`` differs) —
not only that it differs. The same version keys the validity certificate's cached baselines
(``sweep._baselines``), so a change to the checks or the sim baselines recomputes them.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

import orjson

from .._prompts import PromptConfig
from ._judge import judge_messages

__all__ = ["SIM_JUDGE", "baselines_version", "checks_version", "judge_input_digest", "sim_judge_scores",
           "sim_judge_version"]

_PACKAGE = Path(__file__).resolve().parent.parent
# The source run_checks depends on: the checks, how answers are read, the data and task models, the tools'
# calendar arithmetic (busy_intervals). Relative to the package.
CHECK_SOURCES = ("_answers.py", "mpcbench/_checks.py", "mpcbench/_data.py", "mpcbench/_task.py", "mpcbench/tools")
# And the sim baselines the certificate runs (sim/oracle-agent, sim/lazy-agent) with the agent loop.
BASELINE_SOURCES = (*CHECK_SOURCES, "mpcbench/_agent.py", "mpcbench/_sim/_oracle", "mpcbench/_sim/_judge_policy.py")
# The deterministic rubric judge: its rules and how it reads answers.
SIM_JUDGE = "sim/judge"
SIM_JUDGE_SOURCES = ("_answers.py", *(f"mpcbench/_sim/_judge_{part}.py"
                                      for part in ("evidence", "grounding", "policy", "rules", "stale", "text")))


def _source_digest(parts: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        path = _PACKAGE / part
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(file.relative_to(_PACKAGE).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@functools.cache
def checks_version() -> str:
    """A short hash of the check code's source: it changes whenever a check could give another result."""
    return _source_digest(CHECK_SOURCES)


@functools.cache
def baselines_version() -> str:
    """A short hash of the checks' and the sim baselines' source (the certificate's cache key part)."""
    return _source_digest(BASELINE_SOURCES)


@functools.cache
def sim_judge_version() -> str:
    """A short hash of ``sim/judge``'s rubric source: stored with its judgements, so ``verify`` can tell an edited
    score from a rubric changed since."""
    return _source_digest(SIM_JUDGE_SOURCES)


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
