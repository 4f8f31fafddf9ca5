"""What a sweep records of itself in ``manifest.json``: each invocation, the experiment and its fingerprint.

The units' records are their suites' (``mpcbench.AgentRunRecord``, ``tariff.TariffCaseRecord``, ...). New fields
get defaults so older manifests still decode.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["Experiment", "Fingerprint", "Invocation", "Manifest"]


class Fingerprint(msgspec.Struct, kw_only=True):
    """Everything a sweep's results depend on, from the same parts its unit keys hash.

    Two sweeps into one directory must agree wherever they overlap (a model, a
    task, a scenario both ran); models, tasks and trials they do not share
    extend the matrix.
    """

    max_turns: int
    prompts: dict[str, str] = {}  # "agent" / "judge" -> digest of those templates
    judge_attempts: int = 3
    models: dict[str, dict[str, Any]] = {}  # model name -> the settings that change its replies
    tasks: dict[str, str] = {}  # task id -> hash of its file
    task_scenarios: dict[str, str] = {}  # task id -> the scenario it ran against
    data: dict[str, str] = {}  # scenario id -> hash of its data files
    tariff_scoring: str | None = None  # the tariff suites' --scoring (None: no tariff suite, or before it existed)


class Invocation(msgspec.Struct, kw_only=True):
    """One ``sweep`` command run into the directory."""

    command: str
    started_at: str
    experiment: int = 1
    finished_at: str | None = None
    interrupted: bool = False
    config_hash: str = ""
    prompts_hash: str = ""


class Experiment(msgspec.Struct, kw_only=True):
    """An experiment superseded by ``--allow-changes`` (its records stay on disk, out of the summary)."""

    id: int
    fingerprint: Fingerprint | None


class Manifest(msgspec.Struct, kw_only=True):
    """What was run, with what, and when (``manifest.json``).

    The top-level command fields describe the latest invocation; ``history``
    lists every invocation, ``fingerprint`` is the current experiment's and
    ``experiments`` the earlier ones of this directory.
    """

    command: str
    config_hash: str
    prompts_hash: str
    versions: dict[str, str]
    started_at: str
    finished_at: str | None = None
    agent_models: list[str] = []
    judge_models: list[str] = []
    tasks: list[str] = []
    trials: int = 1
    units: dict[str, int] = {}
    caps: dict[str, int] = {}
    interrupted: bool = False
    experiment: int = 1
    fingerprint: Fingerprint | None = None
    experiments: list[Experiment] = []
    history: list[Invocation] = []
    tariff_scoring: str | None = None  # this invocation's tariff --scoring (None: it ran no tariff suite)
