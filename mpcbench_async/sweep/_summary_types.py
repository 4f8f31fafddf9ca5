"""What a sweep's summary is made of (``summary.json``): the result structs alone, no computation.

Why apart from ``_summary`` and ``_statistics``: reading a summary back (the viewer's first page, a resume that
reuses it) needs these types only, not the readers, planners, suites and numpy that computing one imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

import msgspec

from ..labels import Calibration
from ..runner import cost_text
from ..stats import Interval, Paired
from ._errors import ErrorClass

if TYPE_CHECKING:
    from ..records import CallIntent, LLMCallRecord

__all__ = ["Agreement", "AxisStats", "Certificate", "Estimate", "FamilyCertificate", "JudgeCalls", "JudgeKappa",
           "JudgePair", "JudgeSpread", "JudgeView", "ModelPair", "ModelStats", "ModelSummary", "PassK", "Rate", "Spend",
           "Spread", "SuiteNote", "Summary", "TariffSummary", "Thresholds", "TrialVariance"]


class Estimate(msgspec.Struct, kw_only=True):
    """A mean over ``tasks`` tasks with its 95% bootstrap interval over tasks (None for fewer than two)."""

    tasks: int = 0
    mean: float | None = None
    ci: Interval | None = None


class PassK(msgspec.Struct, kw_only=True):
    """pass^k over the ``tasks`` tasks with at least k trials."""

    k: int
    tasks: int
    value: float | None


class TrialVariance(msgspec.Struct, kw_only=True):
    """Mean over ``tasks`` tasks (≥ 2 scored trials each) of the variance of their trials' scores."""

    tasks: int = 0
    ars: float | None = None
    sgr: float | None = None


class ModelStats(msgspec.Struct, kw_only=True):
    """One agent model's statistics over tasks."""

    ars: Estimate = msgspec.field(default_factory=Estimate)
    sgr: Estimate = msgspec.field(default_factory=Estimate)
    check_rate: Estimate = msgspec.field(default_factory=Estimate)
    pass_hat_k: list[PassK] = []
    trial_variance: TrialVariance = msgspec.field(default_factory=TrialVariance)


class ModelPair(msgspec.Struct, kw_only=True):
    """``model_b − model_a`` per axis on the same task × trial."""

    model_a: str
    model_b: str
    ars: Paired
    sgr: Paired


class Agreement(msgspec.Struct, kw_only=True):
    kappa: float | None = None  # quadratic-weighted Cohen's kappa
    spearman: float | None = None


class JudgePair(msgspec.Struct, kw_only=True):
    """Two judge models over the ``n`` runs both scored."""

    judge_a: str
    judge_b: str
    n: int
    ars: Agreement
    sgr: Agreement


class Spread(msgspec.Struct, kw_only=True):
    mean: float
    max: float


class JudgeSpread(msgspec.Struct, kw_only=True):
    """max − min of the judges' scores of one run, over the ``runs`` scored by two judges or more."""

    runs: int
    ars: Spread
    sgr: Spread


class AxisStats(msgspec.Struct, kw_only=True):
    n: int = 0
    mean: float | None = None
    stderr: float | None = None


class Spend(msgspec.Struct, kw_only=True):
    """LLM calls and what they cost.

    ``cost_usd`` sums the calls whose price is known; ``unpriced_calls`` counts the others, so a reader shows
    ``unknown`` (all unpriced) or ``X + unknown`` (some), never an unknown price as $0. ``cached_calls`` were
    answered by the response cache (they spent $0); ``value_usd`` is what every priced call was worth, a cached
    one at what it cost when first fetched. ``calls`` and ``tokens`` are those of the call records.

    ``unsettled_calls`` were sent and never recorded (their intent is in ``ledger.jsonl``, no call record settles
    it: the process was killed while they were in flight), so the provider may have billed them: ``cost_usd``
    counts each at its worst case, ``unsettled_usd`` of it, and the text shows the sum as a bound (``≤X``);
    ``unsettled_unbounded`` of them had no worst case (no known price or no output cap) and make it ``+ unknown``.
    """

    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    cached_calls: int = 0
    value_usd: float = 0.0
    unsettled_calls: int = 0
    unsettled_usd: float = 0.0
    unsettled_unbounded: int = 0

    def add(self, call: LLMCallRecord) -> None:
        self.calls += 1
        self.tokens += call.usage.total_tokens
        self.unpriced_calls += call.cost_usd is None
        self.cost_usd += call.cost_usd or 0.0
        self.cached_calls += call.cached
        self.value_usd += (call.value_usd if call.cached else call.cost_usd) or 0.0

    def add_unsettled(self, intent: CallIntent) -> None:
        """Count a call sent and never recorded at its worst case (unknown when it has none)."""
        self.unsettled_calls += 1
        if intent.worst_usd is None:
            self.unsettled_unbounded += 1
        else:
            self.unsettled_usd += intent.worst_usd
            self.cost_usd += intent.worst_usd

    def cost_text(self) -> str:
        """The cost for people: ``X``, ``X + unknown`` or ``unknown`` (``sweep._cost.cost_text``); ``≤X`` when it
        counts unsettled calls at their worst case."""
        text = cost_text(self.cost_usd, calls=self.calls + self.unsettled_calls,
                         unpriced=self.unpriced_calls + self.unsettled_unbounded)
        return f"≤{text}" if self.unsettled_calls and text != "unknown" else text

    def unsettled_text(self) -> str:
        """``unsettled: N calls, ≤ $X`` (``≤ $X + unknown`` when some have no bound); empty when there are none."""
        if not self.unsettled_calls:
            return ""
        bound = cost_text(self.unsettled_usd, calls=self.unsettled_calls, unpriced=self.unsettled_unbounded)
        calls = f"{self.unsettled_calls} call{'s' if self.unsettled_calls != 1 else ''}"
        return f"unsettled: {calls}, " + ("cost unknown" if bound == "unknown" else f"≤ ${bound}")

    def round_sums(self) -> None:
        """Sums to 6 decimals (micro-dollars), so summary.json is byte-stable."""
        self.cost_usd, self.value_usd = round(self.cost_usd, 6), round(self.value_usd, 6)
        self.unsettled_usd = round(self.unsettled_usd, 6)


class JudgeView(msgspec.Struct, kw_only=True):
    """One judge's scores of one agent model."""

    judge_model: str
    scored: int = 0
    unscored: int = 0
    errors: int = 0  # task-level errors
    infra_errors: int = 0
    ars: AxisStats = msgspec.field(default_factory=AxisStats)
    sgr: AxisStats = msgspec.field(default_factory=AxisStats)
    by_task_type: dict[str, dict[str, AxisStats]] = {}


class ModelSummary(msgspec.Struct, kw_only=True):
    model: str
    runs: int = 0  # kept run records: ok + errors + infra_errors
    ok: int = 0
    errors: int = 0  # task-level errors: failed trials
    infra_errors: int = 0  # infrastructure errors: not trials, left out of pass^k
    max_turns: int = 0
    checks_passed: int = 0
    checks_total: int = 0  # checks that applied (n/a excluded)
    check_pass_rate: float | None = None
    unverified: int = 0  # ok runs no check applied to: neither a pass nor a trial of pass^k
    tasks: int = 0  # tasks with at least one run that is not an infrastructure error
    tasks_checked: int = 0  # of those, tasks with a verified trial (the denominator of pass^k)
    k: int = 0  # the fewest verified trials of any checked task
    pass_at_k: float | None = None
    judges: list[JudgeView] = []
    kept: Spend = msgspec.field(default_factory=Spend)
    spent: Spend = msgspec.field(default_factory=Spend)
    latency_p50_s: float | None = None
    latency_p95_s: float | None = None
    stats: ModelStats = msgspec.field(default_factory=ModelStats)  # over tasks, with 95% bootstrap CIs


class JudgeCalls(msgspec.Struct, kw_only=True):
    model: str
    kept: Spend = msgspec.field(default_factory=Spend)
    spent: Spend = msgspec.field(default_factory=Spend)
    latency_p50_s: float | None = None
    latency_p95_s: float | None = None


class TariffSummary(msgspec.Struct, kw_only=True):
    """One tariff-pipeline suite run by one model in the sweep (errored cases score 0, as in its report)."""

    suite: str
    model: str
    scoring: str = "project"  # the cases' --scoring (one per suite × model: the mode is in the case keys)
    cases: int = 0
    passed: int = 0
    pass_rate: float | None = None
    average_score: float | None = None
    errors: int = 0
    infra_errors: int = 0
    kept: Spend = msgspec.field(default_factory=Spend)  # calls of cases with a kept record
    spent: Spend = msgspec.field(default_factory=Spend)


# -- the validity certificate (computed by ``_certificate``) ----------------------------------------------


class Thresholds(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """What a valid certificate needs (model config ``$.certificate``; these are the defaults)."""

    min_oracle: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.95
    max_lazy: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.10
    max_vacuous_passes: Annotated[int, msgspec.Meta(ge=0)] = 0


class Rate(msgspec.Struct, kw_only=True):
    passed: int = 0
    of: int = 0
    rate: float | None = None


class FamilyCertificate(msgspec.Struct, kw_only=True):
    """One task family's figures (``family`` "all": every family together)."""

    suite: str = "mpcbench"
    family: str
    tasks: int = 0
    tasks_without_check: int = 0
    oracle: Rate | None = None  # None: no baselines
    lazy: Rate | None = None
    vacuous_passes: int | None = None
    vacuous_checks: int | None = None
    vacuous_examples: list[str] = []  # the first few: "task: check on 'non-answer'"
    compared_runs: int = 0  # kept runs with an applied check and a judge score
    check_fail_judge_high: int = 0  # some check failed, mean ARS ≥ 4
    check_pass_judge_low: int = 0  # every check passed, mean ARS < 4
    judge_agreement: list[JudgeKappa] = []  # per two judges, over this family's runs both scored


class JudgeKappa(msgspec.Struct, kw_only=True):
    judge_a: str
    judge_b: str
    runs: int
    ars_kappa: float | None
    sgr_kappa: float | None


class SuiteNote(msgspec.Struct, kw_only=True):
    suite: str
    status: str
    why: str


class Certificate(msgspec.Struct, kw_only=True):
    status: Literal["valid", "invalid", "unknown", "not applicable"] = "unknown"  # n/a: no MPCBench run
    baselines: str = "missing"  # computed | skipped (--no-certificate) | missing
    thresholds: Thresholds = msgspec.field(default_factory=Thresholds)
    families: list[FamilyCertificate] = []
    judge_agreement: list[JudgeKappa] = []  # empty: fewer than two judges scored a run
    suites: list[SuiteNote] = []
    problems: list[str] = []


class Summary(msgspec.Struct, kw_only=True):
    out_dir: str
    models: list[ModelSummary]
    judge_calls: list[JudgeCalls] = []
    tariff: list[TariffSummary] = []
    errors: list[ErrorClass] = []
    runs: int = 0
    judgements: int = 0
    tariff_cases: int = 0
    calls: int = 0  # calls of the plan's units, redone attempts included (unsettled ones not)
    directory_calls: Spend = msgspec.field(default_factory=Spend)  # every call in calls.jsonl, and unsettled ones
    other_experiments: int = 0  # records of earlier experiments in the directory, not counted
    duplicates_ignored: int = 0
    stale_judgements: int = 0
    orphan_judgements: int = 0
    skipped_lines: dict[str, int] = {}  # file -> lines that did not decode as their record type
    wall_s: float | None = None  # summed over the invocations that finished; None when unknown
    last_wall_s: float | None = None
    invocations: int = 0
    unfinished_invocations: int = 0  # killed: no finish time, not in wall_s
    paired: list[ModelPair] = []  # model_b − model_a on the same task × trial, per axis
    judge_agreement: list[JudgePair] = []
    judge_spread: JudgeSpread | None = None  # None: no run was scored by two judges
    warnings: list[str] = []  # data warnings of the sweep's scenarios (data_warnings.json), file and row each
    certificate: Certificate = msgspec.field(default_factory=Certificate)  # how far the scores can be trusted
    # Agreement with people's labels (labels.jsonl); UNSET (left out of summary.json) when there is no labels file.
    calibration: Calibration | msgspec.UnsetType = msgspec.UNSET
