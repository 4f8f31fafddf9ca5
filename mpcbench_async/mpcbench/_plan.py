"""Planning MPCBench's suite: which units exist and their deterministic keys (DESIGN.md §4).

An agent-run key hashes everything that determines the run's result: the task
file's bytes, the scenario data's bytes, the model name and its reply-shaping
settings, the agent prompt and the trial index. A judge key hashes the run key,
the judge model and settings, and the judge prompt. Editing one task file
therefore changes only that task's keys; editing the judge prompt only judge keys.

``build_plan`` is where a sweep's inputs are refused, before the runner starts
and so before any call: every task file and its scenario data, the prompt
templates the run needs, the model names and their settings (``sim/...`` names:
the policy and the fault options, ``runner.sim_model_problem``). All problems are
reported in one error (up to ``MAX_LISTED``, then how many more), so a user fixes
them in one pass.
"""

from __future__ import annotations

import fnmatch
import hashlib
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec

from .._exceptions import InputError
from .._options import setting_error
from .._prompts import PromptConfig
from .._resources import workspace_path
from ..llm import ModelConfig, is_sim_model
from ..records import unit_key
from ..runner import sim_model_problem
from ._data import ScenarioData
from ._evaluate import load_task_data
from ._schemas import SOURCES
from ._task import Task, list_tasks, load_task

__all__ = ["AgentUnit", "JudgeUnit", "SweepPlan", "build_plan", "load_inputs"]

MAX_LISTED = 10  # problems shown in full in one error; the rest are counted


class AgentUnit(msgspec.Struct, kw_only=True, frozen=True):
    key: str
    task_id: str
    model: str
    trial: int


class JudgeUnit(msgspec.Struct, kw_only=True, frozen=True):
    key: str
    run_key: str
    judge_model: str


class SweepPlan:
    """Tasks × agent models × trials, plus the judges for every run."""

    def __init__(self, tasks: dict[str, Task], data: dict[str, ScenarioData], task_hashes: dict[str, str],
                 data_hashes: dict[str, str], agent_models: Sequence[str], judge_models: Sequence[str],
                 trials: int, *, config: ModelConfig, prompts: PromptConfig, max_turns: int = 12) -> None:
        self.tasks = tasks
        self.data = data
        self.agent_models = list(agent_models)
        self.judge_models = list(judge_models)
        self.trials = trials
        self.max_turns = max_turns
        self._task_hashes = task_hashes
        self._data_hashes = data_hashes
        self._fingerprints = {m: config.settings_for(m).fingerprint() for m in {*agent_models, *judge_models}}
        self._agent_prompt = prompts.digest("agent")
        self._judge_prompt = prompts.digest("judge", "repair")
        # Keys are ``unit_key`` values (tests/records pins them), computed faster: an agent key's hash of the parts
        # before the trial is shared by every trial of a task × model, a judge key's parts after the run key by
        # every run; and each agent key is computed once, kept as its 16 hex digits' integer (8 bytes a unit).
        self._judge_suffix = {m: f"\0{m}\0{self._fingerprints[m]}\0{self._judge_prompt}\0".encode()
                              for m in self.judge_models}
        self._agent_keys: array[int] | None = None

    @property
    def task_hashes(self) -> dict[str, str]:
        """Each task's file hash, by task id (what the agent-run keys hash)."""
        return dict(self._task_hashes)

    @property
    def data_hashes(self) -> dict[str, str]:
        """Each scenario's data hash, by scenario id."""
        return dict(self._data_hashes)

    @property
    def prompt_digests(self) -> dict[str, str]:
        """The digests of the agent and judge prompts the unit keys hash."""
        return {"agent": self._agent_prompt, "judge": self._judge_prompt}

    @property
    def agent_unit_count(self) -> int:
        return len(self.tasks) * len(self.agent_models) * self.trials

    @property
    def judge_unit_count(self) -> int:
        return self.agent_unit_count * len(self.judge_models)

    def agent_key(self, task_id: str, model: str, trial: int) -> str:
        task = self.tasks[task_id]
        return unit_key(self._task_hashes[task_id], self._data_hashes[task.scenario_id], model,
                        self._fingerprints[model], self._agent_prompt, str(trial), str(self.max_turns), prefix="run-")

    def judge_key(self, run_key: str, judge_model: str) -> str:
        """``unit_key(run_key, judge_model, its fingerprint, the judge prompt, prefix="judge-")``, in one hash call."""
        suffix = self._judge_suffix.get(judge_model)
        if suffix is None:  # not one of the plan's judges (a caller's own): the general path
            return unit_key(run_key, judge_model, self._fingerprints[judge_model], self._judge_prompt,
                            prefix="judge-")
        return "judge-" + hashlib.sha256(run_key.encode() + suffix).hexdigest()[:16]

    def _agent_key_values(self) -> array[int]:
        """Every agent key in ``agent_units`` order, as the integer of its 16 hex digits; computed on first use."""
        if self._agent_keys is None:
            values = array("Q")
            heads = {(task_id, model): hashlib.sha256(
                b"".join(f"{part}\0".encode() for part in (
                    self._task_hashes[task_id], self._data_hashes[task.scenario_id], model, self._fingerprints[model],
                    self._agent_prompt)))
                for task_id, task in self.tasks.items() for model in self.agent_models}
            tail = f"\0{self.max_turns}\0".encode()
            for trial in range(self.trials):
                number = str(trial).encode() + tail
                for task_id in self.tasks:
                    for model in self.agent_models:
                        digest = heads[(task_id, model)].copy()
                        digest.update(number)
                        values.append(int(digest.hexdigest()[:16], 16))
            self._agent_keys = values
        return self._agent_keys

    def agent_units(self) -> Iterator[AgentUnit]:
        """Units in an order that spreads models and tasks (trial-major), generated lazily."""
        values = iter(self._agent_key_values())
        for trial in range(self.trials):
            for task_id in self.tasks:
                for model in self.agent_models:
                    yield AgentUnit(key=f"run-{next(values):016x}", task_id=task_id, model=model, trial=trial)

    def judge_units(self, run_key: str) -> list[JudgeUnit]:
        return [JudgeUnit(key=self.judge_key(run_key, j), run_key=run_key, judge_model=j) for j in self.judge_models]

    def judge_keys(self, run_key: str) -> list[str]:
        """The keys of ``judge_units(run_key)``, without the units (a resume's scan needs only these)."""
        head = run_key.encode()
        return ["judge-" + hashlib.sha256(head + self._judge_suffix[j]).hexdigest()[:16] for j in self.judge_models]

    def digest(self) -> str:
        """A hash of everything the plan's unit keys are made of: equal digests, equal keys."""
        parts = [sorted(self._task_hashes.items()), sorted(self._data_hashes.items()),
                 {t: task.scenario_id for t, task in sorted(self.tasks.items())}, self.agent_models,
                 self.judge_models, sorted(self._fingerprints.items()), self._agent_prompt, self._judge_prompt,
                 self.trials, self.max_turns]
        return hashlib.sha256(msgspec.json.encode(parts)).hexdigest()[:16]


def _file_hash(*paths: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        try:
            digest.update(path.read_bytes())
        except OSError as exc:
            raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    return digest.hexdigest()[:16]


def _one_error(problems: list[str]) -> InputError:
    """One error for every problem: a single one as it is, several as an indented list capped at ``MAX_LISTED``."""
    if len(problems) == 1:
        return InputError(problems[0])
    shown = "\n".join("  " + p.replace("\n", "\n  ") for p in problems[:MAX_LISTED])
    more = f"\n  … and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
    return InputError(f"{len(problems)} problems in the sweep's inputs; nothing was run:\n{shown}{more}")


def _load_tasks(paths: list[Path], scenario_id: str | None,
                problems: list[str]) -> tuple[dict[str, Task], dict[str, str]]:
    """Every loadable task and its file hash, by task id; each bad file adds its problems to ``problems``."""
    tasks: dict[str, Task] = {}
    task_hashes: dict[str, str] = {}
    files: dict[str, Path] = {}
    for path in paths:
        try:
            task = load_task(path, scenario_id=scenario_id)
            if task.task_id in tasks:
                raise InputError(f"{path}: $.task_id {task.task_id!r} is also used by {files[task.task_id]}")
            task_hashes[task.task_id] = _file_hash(path)
        except InputError as exc:
            problems.append(str(exc))
            continue
        tasks[task.task_id] = task
        files[task.task_id] = path
    return tasks, task_hashes


def build_plan(
    *,
    config: ModelConfig,
    prompts: PromptConfig,
    tasks_dir: str | Path = "tasks",
    data_dir: str | Path = "data",
    scenarios_dir: str | Path = "scenarios",
    task_glob: str = "*",
    agent_models: Sequence[str] | None = None,
    judge_models: Sequence[str] | None = None,
    trials: int = 1,
    max_turns: int = 12,
    scenario_id: str | None = None,
) -> SweepPlan:
    """Load and validate every input of the sweep up front, then describe the units.

    ``scenario_id`` is the scenario of tasks that name none (original MPCBench files).
    Raises one ``InputError`` listing every problem found (see the module docstring). Relative directories
    the working directory lacks are the shipped benchmark's (``mpcbench_async._resources.workspace_path``).
    """
    tasks_dir, data_dir, scenarios_dir = (workspace_path(d) for d in (tasks_dir, data_dir, scenarios_dir))
    agents = list(agent_models or config.agent_models)
    judges = list(judge_models if judge_models is not None else config.judge_models)
    if not agents:
        raise InputError(f"{config.source}: $.agent_models is empty (or pass ``models``)")
    if trials < 1:
        raise setting_error("trials", f"trials must be at least 1, got {trials}")
    if max_turns < 1:
        raise setting_error("max_turns", f"max_turns must be at least 1, got {max_turns}")
    prompts.require("agent", *(["judge"] if judges else []))
    problems = [p for m in dict.fromkeys([*agents, *judges]) if is_sim_model(m)
                and (p := sim_model_problem(m)) is not None]
    tasks, data, task_hashes, data_hashes = load_inputs(tasks_dir, data_dir, scenarios_dir, task_glob=task_glob,
                                                        scenario_id=scenario_id, problems=problems)
    return SweepPlan(tasks, data, task_hashes, data_hashes, agents, judges, trials, config=config, prompts=prompts,
                     max_turns=max_turns)


Inputs = tuple[dict[str, Task], dict[str, ScenarioData], dict[str, str], dict[str, str]]


def load_inputs(tasks_dir: Path, data_dir: Path, scenarios_dir: Path, *, task_glob: str = "*",
                scenario_id: str | None = None, problems: list[str] | None = None) -> Inputs:
    """The tasks matching ``task_glob`` and their scenarios' data, with the hashes the unit keys use: (tasks,
    data, task hashes, data hashes) by task / scenario id. One ``InputError`` lists every problem (``problems``
    found earlier first). Shared by the plan and ``verify``, which must hash the files exactly as the sweep did."""
    problems = list(problems or [])
    paths = [p for p in list_tasks(tasks_dir) if fnmatch.fnmatch(p.stem, task_glob)
             or fnmatch.fnmatch(f"{p.parent.name}/{p.stem}", task_glob)]
    if not paths:
        raise InputError(f"{tasks_dir}: no task matches ``tasks={task_glob!r}``")
    tasks, task_hashes = _load_tasks(paths, scenario_id, problems)
    data: dict[str, ScenarioData] = {}
    data_hashes: dict[str, str] = {}
    for task in {t.scenario_id: t for t in tasks.values()}.values():  # one task per scenario: each loaded once
        try:
            data[task.scenario_id] = load_task_data(task, data_dir, scenarios_dir)
            files = [Path(data_dir) / f"{task.scenario_id}_{n}.json" for n in ("world_state", *SOURCES)]
            data_hashes[task.scenario_id] = _file_hash(*files)
        except InputError as exc:
            problems.append(str(exc))
    if problems:
        raise _one_error(problems)
    return tasks, data, task_hashes, data_hashes
