"""MPCBench's records: one line per finished unit in ``runs.jsonl`` / ``judgements.jsonl``.

Every record is a ``records.UnitRecord``: its unit ``key``, ``status`` (``ok`` |
``error``), ``retryable`` (true for infrastructure failures — rate limits, 5xx,
timeouts, connections — which a resume runs again), the error, the times and
the ``kind`` tag. New fields get defaults so older logs still decode.
"""

from __future__ import annotations

from typing import Literal

from ..records import UnitRecord
from ._agent import RunLog
from ._checks import CheckResult
from ._judge import Judgement

__all__ = ["AgentRunRecord", "JudgeRecord"]


class AgentRunRecord(UnitRecord, kw_only=True):
    """One agent run of one task by one model in one trial."""

    task_id: str
    task_type: str
    scenario_id: str
    model: str
    trial: int
    run: RunLog | None = None
    checks: list[CheckResult] = []
    checks_version: str = ""  # mpcbench.checks_version() of the code that ran the checks ("" before issue 26)
    kind: Literal["agent_run"] = "agent_run"


class JudgeRecord(UnitRecord, kw_only=True):
    """One judge model's verdict on one agent run (``unscored`` is an ``ok`` record)."""

    run_key: str
    task_id: str
    task_type: str
    agent_model: str
    judge_model: str
    trial: int
    judgement: Judgement | None = None
    input_digest: str = ""  # mpcbench.judge_input_digest of what the judge was sent ("" before issue 26)
    rubric_version: str = ""  # sim/judge only: mpcbench.sim_judge_version() of the rubric that scored it
    kind: Literal["judge"] = "judge"

    @property
    def unscored(self) -> bool:
        return bool(self.judgement and self.judgement.verdict == "unscored")
