"""``sim/oracle-agent``: a rule-based MPCBench agent that works only from what a model would see.

It reads the system prompt (the reference now), the user's request and the tool results already
in the conversation — never the data files — and decides the next tool calls the way a careful
human would, without relying on how any one generator phrases its data. The request's wording
says which task it is; each task has its module: planning (``_planning``), e-mail reply
(``_email``), weekly report (``_report``); ``_state`` is the conversation as seen so far and
``_people`` reads the names in it.
"""

from __future__ import annotations

import re
from typing import Any

from ....sim import Reply
from ._email import email_reply
from ._planning import plan_meeting
from ._report import weekly_report
from ._state import State, final

__all__ = ["oracle_agent"]


def _task_type(prompt: str) -> str:
    """``report``, ``email`` or ``planning`` from the request's wording."""
    lowered = prompt.lower()
    if re.search(r"\b(report|status update|weekly update|digest|recap|summary of (?:this|the) week"
                 r"|week['’]s (?:update|status|summary|recap))\b", lowered):
        return "report"
    replying = re.search(r"\b(reply|respond|answer|write back|get back to|draft (?:an? )?e-?mail)\b", lowered)
    if re.search(r"\b(slots?|meeting|meet|sync|syncing|chat|call|catch[- ]?up|availability|schedule|"
                 r"find (?:a |some |a few )?times?)\b", lowered) and not replying:
        return "planning"
    if replying or re.search(r"\b(e-?mail|customer|client|release|ship|eta)\b", lowered):
        return "email"
    return "planning"


def oracle_agent(request: dict[str, Any]) -> Reply:
    state = State(request)
    kind = _task_type(state.prompt)
    if state.turn >= 8:
        return final("I could not complete the task within my step budget.", "Stopped early.")
    return {"planning": plan_meeting, "email": email_reply, "report": weekly_report}[kind](state)
