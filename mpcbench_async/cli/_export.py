"""``mpcbench-async export DIR --format inspect|otel``: a sweep's kept runs in the formats other tools open."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .._exceptions import InputError
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
        "eval log per agent model (OUT/mpcbench_MODEL-HASH.json; default OUT: DIR/export/inspect), one sample per "
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
        raise InputError(f"export: --out {path}: {exc}") from None
