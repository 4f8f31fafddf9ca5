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
from ._commands import add_commands
from ._flags import flagged
from ._paths import output_dir

if TYPE_CHECKING:
    from ..tariff import TariffCaseRecord
    from ._commands import Commands

# Heavy imports live in the handlers: building a command's parser must stay cheap for its --help (issue 13).


def add_tariff(commands: Commands) -> None:
    tariff = commands.add_parser("tariff", description="HTS classification cases through the verification pipeline.")
    sub = add_commands(tariff, dest="tariff_command", metavar="SUBCOMMAND", required=True)
    sub.add_command("run", _add_run, help="run a suite and write JSON + Markdown reports")
    sub.add_command("compare", _add_compare, help="compare two JSON reports")
    sub.add_command("import", _add_import, help="convert a published dataset into a suite")
    sub.add_command("convert-fixtures", _add_convert_fixtures,
                    help="convert the original harness's fixtures for a suite")


def _add_run(commands: Commands) -> None:
    run = commands.add_parser(
        "run",
        description="Run every case of a suite through the verification pipeline (concurrently) "
        "and write reports/benchmarks/<suite>_benchmark_<timestamp>.{json,md}. Results are appended "
        "to reports/benchmarks/runs/<suite>_<mode>_<model>.jsonl as cases finish; rerunning resumes.",
        **_exit.with_epilog())
    add_run_arguments(run)
    run.set_defaults(handler=cmd_run)


def _add_compare(commands: Commands) -> None:
    compare = commands.add_parser("compare",
                                  description="Write reports/benchmarks/benchmark_diff_<timestamp>.md: improved and "
                                  "regressed cases (|Δ| ≥ 0.05), new failures, added/removed cases, average change.")
    add_compare_arguments(compare)
    compare.set_defaults(handler=cmd_compare)


def _add_import(commands: Commands) -> None:
    imports = commands.add_parser(
        "import",
        description="Convert a dataset file into tariff cases under DIR/cases/ (the whole "
        "directory is swapped in at once; case ids are stable) and copy the LICENSE and NOTICE "
        "found beside FILE into DIR. hscodecomp: the HSCodeComp test_data.jsonl.")
    imports.add_argument("format", choices=("hscodecomp",), help="dataset format")
    imports.add_argument("file", type=Path, metavar="FILE", help="the dataset file")
    imports.add_argument("--out", type=output_dir, default=None,
                         help="suite directory (default: storage/benchmarks/<format>)")
    imports.set_defaults(handler=cmd_import)


def _add_convert_fixtures(commands: Commands) -> None:
    convert = commands.add_parser(
        "convert-fixtures",
        description="Write the project fixture (FIXTURES_OUT/<case_id>.json) of every case under "
        "CASES that the original harness's fixture resolver finds an original fixture for in "
        "ORIGINAL (fixture_ch85.json, fixture_negative.json …), its proposals converted to "
        "project dossiers. Replay them with `tariff run --path SUITE --pack ORIGINAL_PACK "
        "--scoring original`.")
    convert.add_argument("original", type=Path, metavar="ORIGINAL", help="the original fixtures directory")
    convert.add_argument("--cases", type=Path, required=True, help="the suite's cases directory")
    convert.add_argument("--out", type=output_dir, required=True, metavar="FIXTURES_OUT",
                         help="where to write the project fixtures (the suite's fixtures/ directory)")
    convert.set_defaults(handler=cmd_convert_fixtures)


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
    add_scoring_argument(run)


def add_scoring_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scoring", choices=("project", "original"), default="project",
                        help="tariff scoring rules: project (default; DESIGN.md §8) or original (the original "
                        "harness's, rule for rule: the code after the lever, exact code strings, its partial credit "
                        "and its missing-evidence gate); recorded in the report and in each case's resume key")


def add_compare_arguments(compare: argparse.ArgumentParser) -> None:
    compare.add_argument("--baseline", type=Path, required=True)
    compare.add_argument("--current", type=Path, required=True)
    compare.add_argument("--out", type=output_dir, default=Path("reports/benchmarks"))
    compare.add_argument("--allow-mixed-scoring", action="store_true",
                         help="compare reports scored under different --scoring modes (refused by default)")


def _timestamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")


def cmd_run(args: argparse.Namespace) -> int:
    import anyio

    from ..sweep import TariffRunOptions, run_tariff

    options = TariffRunOptions(suite=args.suite, mode=args.mode, model=args.model, path=args.path, pack=args.pack,
                               out=args.out, config=args.config, prompts=args.prompts, concurrency=args.concurrency,
                               retry_errors=args.retry_errors, scoring=args.scoring)
    done = [0]

    def progress(record: TariffCaseRecord, cases: int) -> None:
        done[0] += 1
        score = f"{record.score.score:.2f}" if record.score else record.error_class
        print(f"[{done[0]:>3}/{cases}] {record.case_id}: {score}", file=sys.stderr, flush=True)

    result = anyio.run(run_tariff, options, progress)
    report, t = result.report, result.report.totals
    partial_run = f", partial: {report.not_run} not run" if report.not_run else ""
    answered = f"replies recorded from {result.model}" if args.mode == "fixture" else result.model
    print(f"{args.suite} ({args.mode}, {answered}, {args.scoring} scoring): {t.passed}/{t.cases} passed "
          f"({100 * t.pass_rate:.1f}%), average score {t.average_score:.3f}, {report.errors} error(s){partial_run}")
    for case_type, g in report.by_case_type.items():
        print(f"  {case_type:18} {g.passed:>3}/{g.cases:<3} passed  avg {g.average_score:.3f}")
    errors = _error_lines(result.records, result.results)
    if errors:
        print("errors by class:", *map(flagged, errors), sep="\n")
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
    diff = compare_reports(baseline, current, allow_mixed_scoring=args.allow_mixed_scoring)
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


def cmd_convert_fixtures(args: argparse.Namespace) -> int:
    from ..tariff import convert_suite, load_suite

    summary = convert_suite(load_suite(args.cases), args.original, args.out)
    for source, case_ids in sorted(summary.written.items()):
        print(f"{source}: {len(case_ids)} case(s)")
    print(f"{sum(map(len, summary.written.values()))} fixture(s) -> {args.out}/")
    if summary.unresolved:
        print(f"no original fixture for {len(summary.unresolved)} case(s): {', '.join(summary.unresolved)}",
              file=sys.stderr)
        return _exit.FAILED
    return _exit.OK
