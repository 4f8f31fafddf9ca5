"""``mpcbench-async tariff run``, ``tariff compare`` and ``tariff import``: the tariff pack verification benchmark."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .._exceptions import Interrupted
from ..runtime import atomic_write_bytes
from . import _exit
from ._paths import output_dir

if TYPE_CHECKING:
    from ..tariff import TariffCaseRecord

# Heavy imports live in the handlers: registering the arguments must stay cheap for --help (issue 13).


def register(commands: argparse._SubParsersAction) -> None:
    tariff = commands.add_parser("tariff", help="the tariff pack verification benchmark",
                                 description="HTS classification cases through the verification pipeline.")
    sub = tariff.add_subparsers(dest="tariff_command", metavar="SUBCOMMAND", required=True)
    run = sub.add_parser("run", help="run a suite and write JSON + Markdown reports",
                         description="Run every case of a suite through the verification pipeline (concurrently) "
                         "and write reports/benchmarks/<suite>_benchmark_<timestamp>.{json,md}. Results are appended "
                         "to reports/benchmarks/runs/<suite>_<mode>_<model>.jsonl as cases finish; rerunning resumes.",
                         **_exit.with_epilog())
    add_run_arguments(run)
    run.set_defaults(handler=cmd_run)
    compare = sub.add_parser("compare", help="compare two JSON reports",
                             description="Write reports/benchmarks/benchmark_diff_<timestamp>.md: improved and "
                             "regressed cases (|Δ| ≥ 0.05), new failures, added/removed cases, average change.")
    add_compare_arguments(compare)
    compare.set_defaults(handler=cmd_compare)
    imports = sub.add_parser("import", help="convert a published dataset into a suite",
                             description="Convert a dataset file into tariff cases under DIR/cases/ (the whole "
                             "directory is swapped in at once; case ids are stable) and copy the LICENSE and NOTICE "
                             "found beside FILE into DIR. hscodecomp: the HSCodeComp test_data.jsonl.")
    imports.add_argument("format", choices=("hscodecomp",), help="dataset format")
    imports.add_argument("file", type=Path, metavar="FILE", help="the dataset file")
    imports.add_argument("--out", type=output_dir, default=None,
                         help="suite directory (default: storage/benchmarks/<format>)")
    imports.set_defaults(handler=cmd_import)


def add_run_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument("--suite", default="tariff", help="suite name (default: tariff)")
    run.add_argument("--mode", choices=("fixture", "live", "record"), default="fixture",
                     help="fixture: recorded replies, offline (default); live: a model; record: live + write fixtures")
    run.add_argument("--model", default=None,
                     help="model for live/record modes (default: tariff_models[0] or sim/tariff)")
    run.add_argument("--path", type=Path, default=None,
                     help="suite directory with cases/ and fixtures/ (default: storage/benchmarks/<suite>)")
    run.add_argument("--pack", type=Path, default=None, help="pack directory (default: storage/packs/<pack_id>)")
    run.add_argument("--out", type=output_dir, default=Path("reports/benchmarks"), help="default: reports/benchmarks")
    run.add_argument("--config", type=Path, default=Path("model_config.json"))
    run.add_argument("--prompts", type=Path, default=Path("prompt_config.json"))
    run.add_argument("--concurrency", type=int, default=16)
    run.add_argument("--retry-errors", action="store_true", help="also rerun cases that ended in an error")


def add_compare_arguments(compare: argparse.ArgumentParser) -> None:
    compare.add_argument("--baseline", type=Path, required=True)
    compare.add_argument("--current", type=Path, required=True)
    compare.add_argument("--out", type=output_dir, default=Path("reports/benchmarks"))


def _timestamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")


def cmd_run(args: argparse.Namespace) -> int:
    import anyio

    from ..sweep import TariffRunOptions, run_tariff

    options = TariffRunOptions(suite=args.suite, mode=args.mode, model=args.model, path=args.path, pack=args.pack,
                               out=args.out, config=args.config, prompts=args.prompts, concurrency=args.concurrency,
                               retry_errors=args.retry_errors)
    done = [0]

    def progress(record: TariffCaseRecord, cases: int) -> None:
        done[0] += 1
        score = f"{record.score.score:.2f}" if record.score else record.error_class
        print(f"[{done[0]:>3}/{cases}] {record.case_id}: {score}", file=sys.stderr, flush=True)

    result = anyio.run(run_tariff, options, progress)
    report, t = result.report, result.report.totals
    partial_run = f", partial: {report.not_run} not run" if report.not_run else ""
    print(f"{args.suite} ({args.mode}, {result.model}): {t.passed}/{t.cases} passed ({100 * t.pass_rate:.1f}%), "
          f"average score {t.average_score:.3f}, {report.errors} error(s){partial_run}")
    for case_type, g in report.by_case_type.items():
        print(f"  {case_type:18} {g.passed:>3}/{g.cases:<3} passed  avg {g.average_score:.3f}")
    errors = _error_lines(result.records, result.results)
    if errors:
        print("errors by class:", *errors, sep="\n")
    print(f"report -> {result.report_base.parent / result.report_base.name}.json and .md")
    if result.interrupted:
        raise Interrupted(f"tariff run stopped with {report.not_run} of {result.cases} case(s) not run; finished cases "
                          f"are saved in {result.results} — rerun the same command to resume")
    return _exit.FAILED if report.errors else _exit.OK


def _error_lines(records: list[TariffCaseRecord], results: Path) -> list[str]:
    """Each error class of the run's cases, most frequent first, with one example and what to do."""
    from ..sweep import hint_for

    groups: dict[str, list[TariffCaseRecord]] = {}
    for record in records:
        if record.status == "error":
            groups.setdefault(record.error_class or "Error", []).append(record)
    ranked = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return [f"  {name} × {len(found)}, e.g. {found[0].case_id}: {found[0].error_message}\n    what to do: "
            f"{hint_for(name, retryable=found[0].retryable, file=str(results))}" for name, found in ranked]


def cmd_compare(args: argparse.Namespace) -> int:
    from ..tariff import compare_reports, load_report, render_diff

    baseline, current = load_report(args.baseline), load_report(args.current)
    diff = compare_reports(baseline, current)
    out = args.out / f"benchmark_diff_{_timestamp()}.md"
    atomic_write_bytes(out, render_diff(diff, str(args.baseline), str(args.current)).encode(), fsync=False)
    print(f"improved {len(diff.improved)}, regressed {len(diff.regressed)}, new failures {len(diff.new_failures)} "
          f"(errors included), added {len(diff.added)}, removed {len(diff.removed)}, average change "
          f"{diff.average_change:+.4f} over the {diff.shared} cases in both runs (errors score 0)")
    print(f"diff -> {out}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from ..tariff import read_hscodecomp, write_hscodecomp

    out = args.out or Path("storage/benchmarks") / args.format
    cases = read_hscodecomp(args.file)
    summary = write_hscodecomp(cases, out, license_dir=args.file.parent)
    print(f"{summary.cases} cases -> {summary.cases_dir}/")
    if summary.copied:
        print(f"copied {' and '.join(summary.copied)} -> {out}/")
    if summary.missing:
        print(f"warning: no {' or '.join(summary.missing)} beside {args.file}; the dataset's license requires them "
              f"to travel with any copy: add them to {out}/", file=sys.stderr)
    return 0
