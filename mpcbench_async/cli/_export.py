"""``mpcbench-async export DIR --format inspect|otel`` (a sweep's kept runs in the formats other tools open) and
``labels export DIR`` (people's labels of them as a judge calibration set)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .._exceptions import InputError
from ._commands import add_commands
from ._paths import output_dir, output_file, sweep_dir

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._commands import Commands

# The export package (and Inspect AI, which it imports to write its logs) is imported in the handler: --help stays fast.


def add_export(commands: Commands) -> None:
    export = commands.add_parser(
        "export",
        description="Write the runs a sweep's summary counts (the kept record per unit, with its kept judgements) "
        "in a format other tools open; the sweep's own files are never modified. --format inspect: one Inspect AI "
        "eval log per agent model (OUT/START_mpcbench_MODEL-HASH.json; default OUT: DIR/export/inspect), one sample "
        "per "
        "run with the trial as its epoch: the messages with tool calls and results, scores (checks, and each judge "
        "axis as ars@JUDGE / sgr@JUDGE), model usage and times; open them with `inspect view --log-dir OUT`. Needs "
        "the export extra (pip install 'mpcbench-async[export]'). --format otel: one OTLP JSON file (an "
        "ExportTraceServiceRequest; default OUT: DIR/export/otel.json) of OpenTelemetry GenAI spans (gen_ai.*), "
        "one trace per unit: each agent run (invoke_agent, with a chat span per model call and an execute_tool "
        "span per tool call) and each judgement (chat, with gen_ai.evaluation.result events, linked to its run).")
    export.add_argument("dir", type=sweep_dir, help="the sweep's output directory")
    export.add_argument("--format", choices=("inspect", "otel"), required=True, help="inspect or otel")
    export.add_argument("--out", type=Path, default=None,
                        help="where to write: a directory for inspect, a file for otel (defaults above)")
    export.set_defaults(handler=cmd_export)


def add_labels(commands: Commands) -> None:
    labels = commands.add_parser("labels", description="People's labels of a sweep's runs: DIR/labels.jsonl, "
                                 "appended by `view DIR --annotate --annotator NAME`.")
    sub = add_commands(labels, dest="labels_command", metavar="SUBCOMMAND", required=True)
    sub.add_command("export", _add_labels_export, help="write the labelled runs as a judge calibration set")


def _add_labels_export(commands: Commands) -> None:
    export = commands.add_parser(
        "export",
        description="Write the runs people labelled with an answer_requirements_satisfaction score as a judge "
        "calibration set, in the format of the project's labelled judge set (tests/mpcbench/judge_cases.json): "
        "per run a base (its judge input, rebuilt from the run's record and its task file) and a case (the "
        "person's band: >=4, 3 or <=2, and the final answer), both named by the run key, plus 'labels': who "
        "labelled each, when, why, and the judges' scores. Each label or line left out is one warning line on "
        "stderr: torn or foreign lines, labels of runs the sweep does not keep, runs without a person's score.")
    export.add_argument("dir", type=sweep_dir, help="the sweep's output directory")
    export.add_argument("--out", type=Path, default=None,
                        help="the JSON file to write (default: DIR/export/calibration_set.json)")
    export.add_argument("--tasks-dir", default="tasks", help="the sweep's tasks directory (default: tasks; when "
                        "the working directory has none, the shipped tasks)")
    export.add_argument("--scenario-id", default=None, help="the scenario of tasks that name none (as for sweep)")
    export.set_defaults(handler=cmd_labels_export)


def cmd_labels_export(args: argparse.Namespace) -> int:
    import orjson

    from ..export import calibration_set
    from ..runtime import atomic_write_bytes

    out = _out(output_file, args.out or args.dir / "export" / "calibration_set.json")
    found, warnings = calibration_set(args.dir, tasks_dir=args.tasks_dir, scenario_id=args.scenario_id)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out, orjson.dumps(found, option=orjson.OPT_INDENT_2) + b"\n")
    print(f"labels export: {len(found['cases'])} case(s) in {out} ({len(warnings)} warning(s))", file=sys.stdout)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    if args.format == "inspect":
        from ..export import export_inspect

        out = _out(output_dir, args.out or args.dir / "export" / "inspect")
        written = export_inspect(args.dir, out)
        print(f"export: {len(written)} Inspect log(s) in {out} (open them with: inspect view --log-dir {out})",
              file=sys.stdout)
    else:
        from ..export import export_otel

        out = _out(output_file, args.out or args.dir / "export" / "otel.json")
        traces = export_otel(args.dir, out)
        print(f"export: {traces} trace(s) in {out}", file=sys.stdout)
    return 0


def _out(check: Callable[[str], Path], path: Path) -> Path:
    """``--out`` (or its default under DIR) checked before any work: one line naming it when it cannot be written."""
    try:
        return check(str(path))
    except argparse.ArgumentTypeError as exc:
        raise InputError(f"--out {path}: {exc}") from None
