"""The whole ``tariff run`` command as one library call: ``await run_tariff(TariffRunOptions(...))``.

It checks the inputs (the suite's cases, its fixtures in fixture mode, one
pack, the prompts and, live, the model config), then runs the suite as one
``TariffSuite`` through a ``Runner`` on ``OUT/runs/`` (locked while it runs;
each case's record appended to ``<suite>_<mode>_<model>.jsonl`` as it ends, so
a rerun resumes) and writes the report to
``OUT/<suite>_benchmark_<timestamp>.json`` and ``.md``. Fixture mode replays
the recorded replies through the client (``tariff.FixtureTransport``), as a
live run: its limits, retries and accounting. The CLI prints the progress
lines (``on_record``), the report's totals and errors, and the exit code.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from .._exceptions import InputError
from .._options import checked_options
from .._prompts import load_prompts
from ..llm import ModelConfig, Transport, load_model_config
from ..runner import Runner, check_models
from ..runtime import safe_name
from ..tariff import (
    BenchmarkReport,
    FixtureTransport,
    Mode,
    ScoringMode,
    TariffCaseRecord,
    TariffSuite,
    load_pack,
    load_suite,
    recorded_models,
)

__all__ = ["TariffRunOptions", "TariffRunResult", "run_tariff"]


class TariffRunOptions(msgspec.Struct, kw_only=True):
    """What ``mpcbench-async tariff run`` takes, as plain values (its ``--help`` explains each; the defaults match).

    ``model`` (live and record modes) defaults to the config's first ``tariff_models``, else ``sim/tariff``;
    ``path`` to ``storage/benchmarks/<suite>`` (in a clone: suites are not shipped in the package);
    ``pack`` to ``storage/packs/<the cases' pack_id>``; ``out`` to ``reports/benchmarks`` (ignored by git).
    """

    suite: str = "tariff"
    mode: Mode = "fixture"
    model: str | None = None
    path: Path | None = None
    pack: Path | None = None
    out: Path = Path("reports/benchmarks")
    config: Path = Path("model_config.json")
    prompts: Path = Path("prompt_config.json")
    concurrency: int = 16
    retry_errors: bool = False
    scoring: ScoringMode = "project"
    handle_signals: bool = True


class TariffRunResult(msgspec.Struct, kw_only=True):
    """How a tariff run ended: its report (written to ``report_base`` + ``.json`` / ``.md``), each case's latest
    record and the suite's number of cases; ``results`` is the JSONL file of every record, ``interrupted``
    whether a signal stopped it. ``model`` is the model that answered: in fixture mode, the one(s) whose
    recorded replies were replayed (``"fixture"`` when the fixtures name none)."""

    report: BenchmarkReport
    records: list[TariffCaseRecord]
    model: str
    cases: int
    results: Path
    report_base: Path
    interrupted: bool


async def run_tariff(options: TariffRunOptions,
                     on_record: Callable[[TariffCaseRecord, int], None] | None = None) -> TariffRunResult:
    """Check the inputs, run the suite and write its report (see the module docstring).

    ``on_record`` sees each case's record as the case ends, with the number of cases in the suite. Raises
    ``InputError`` for a bad input, before any call (first each setting's type, ``checked_options``: a path may
    be text).
    """
    options = checked_options(options)
    suite_dir = options.path or Path("storage/benchmarks") / options.suite
    if options.path is None and not suite_dir.is_dir():
        raise InputError(f"{suite_dir}: no such suite directory. Tariff suites are not shipped in the package (a "
                         "clone of the repository has them under storage/benchmarks/): run from a clone, or set the "
                         "suite's directory, one holding cases/ and fixtures/ (``path``)")
    cases = load_suite(suite_dir / "cases")
    if not cases:
        raise InputError(f"{suite_dir / 'cases'}: no cases")
    fixtures = suite_dir / "fixtures"
    if options.mode == "fixture" and not any(fixtures.glob("*.json")):
        raise InputError(f"{fixtures}: no recorded fixtures for suite {options.suite!r}; run it live with "
                         "``mode=live`` ``model=M`` (or record fixtures with ``mode=record`` ``model=M``)")
    packs = {c.pack_id for c in cases}
    if len(packs) != 1 and options.pack is None:
        raise InputError(f"{suite_dir}: cases use several packs ({', '.join(sorted(packs))}); pass ``pack``")
    pack = load_pack(options.pack or Path("storage/packs") / packs.pop())
    prompts = load_prompts(options.prompts)
    model, config = "fixture", ModelConfig()
    answered_by = model
    transport: Transport | None = None
    if options.mode == "fixture":  # replay through the client, as a live run: its limits, retries and accounting
        transport = FixtureTransport(fixtures)
        answered_by = _names(recorded_models(fixtures)) or model
    else:
        prompts.require("tariff_proposer", "tariff_critique")
        config = load_model_config(options.config)
        model = answered_by = options.model or (config.tariff_models[0] if config.tariff_models else "sim/tariff")
        await check_models(config, [model])  # a missing key fails here, before --out is taken: it stays as it was
    scored = "" if options.scoring == "project" else f"_{options.scoring}"  # project-scored runs keep their old file
    name = f"{safe_name(options.suite)}_{options.mode}_{safe_name(model)}{scored}"
    results = options.out / "runs" / f"{name}.jsonl"
    # suite names may hold dots: append, never replace
    base = options.out / f"{safe_name(options.suite)}_benchmark_{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%fZ')}"
    suite = TariffSuite(options.suite, cases, pack=pack, prompts=prompts, model=model, config=config,
                        mode=options.mode, fixtures_dir=fixtures, name=name, report_base=base, scoring=options.scoring,
                        answered_by=answered_by,
                        on_record=None if on_record is None else lambda record: on_record(record, len(cases)))
    runner = Runner(config, out_dir=results.parent, concurrency=options.concurrency,
                    retry_errors=options.retry_errors, handle_signals=options.handle_signals,
                    transport=transport, log_calls=False)
    async with runner:
        await runner.run_suites([suite])
    assert suite.report is not None  # run_suites ends with the suite's finish
    return TariffRunResult(report=suite.report, records=suite.records, model=answered_by, cases=len(cases),
                           results=results, report_base=base, interrupted=runner.stats.interrupted)



def _names(models: list[str], shown: int = 3) -> str:
    """``a, b, c and 4 more``: a fixture suite may hold replies of many recorders (the original's one per chapter)."""
    more = f" and {len(models) - shown} more" if len(models) > shown else ""
    return ", ".join(models[:shown]) + more
