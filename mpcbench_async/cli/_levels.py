"""``mpcbench-async levels``: the three-level MPCBench — import its data, check labels, replay runs, tabulate.

Running models on it is ``sweep --suite levels`` (same runner, limits, resume,
cache, budgets and summary as every suite); this group holds what is particular
to the benchmark. Every handler parses, calls the ``levels`` package and prints.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .._resources import workspace_path
from . import _exit
from ._bench import _int_list
from ._commands import add_commands
from ._paths import output_dir, output_file

if TYPE_CHECKING:
    from ..levels import FileVerdict, LabelCheck
    from ._commands import Commands

# Heavy imports live in the handlers: building a command's parser must stay cheap for its --help.

DATA = Path("storage/levels")  # where import and generate write, and verify, check and the sweep read
DATA_HELP = ("folder of the data: a checkout of the original MPCBench repository, a folder of its generate/output "
             "files, or what 'levels import' / 'levels generate' wrote (default: storage/levels)")

VERIFY_EPILOG = """\
exit codes:
  0    every recorded line whose world matches today's data reproduced: same tool results, pred and metrics
  1    some such line differs (each difference is named under the table)
  2    bad input: a missing or unreadable results file or data folder, a line without a trace"""


def add_levels(commands: Commands) -> None:
    group = commands.add_parser(
        "levels",
        description="The current MPCBench (three levels, exact oracle, set-F1 scoring). Its data is not shipped: "
        "import it from a checkout of the original repository. Run models on it with "
        "'mpcbench-async sweep --suite levels'.")
    sub = add_commands(group, dest="levels_command", metavar="SUBCOMMAND", required=True)
    sub.add_command("import", _add_import, help="check a checkout's data and copy it into storage/levels")
    sub.add_command("check", _add_check, help="recompute every oracle line of a data folder and compare")
    sub.add_command("verify", _add_verify, help="replay recorded runs (eval_L*.jsonl) through this project and compare")
    sub.add_command("summary", _add_summary, help="the results table of recorded runs beside the published one")
    sub.add_command("generate", _add_generate, help="new worlds, instances and oracle labels (a fresh held-out set)")


def _add_import(commands: Commands) -> None:
    imp = commands.add_parser(
        "import",
        description="Read every world_level{N}_{split}.json with its instances and oracle files from "
        "DIR (a checkout of MPCBench, or a folder of its generate/output files), check each world and "
        "instance, recompute every oracle line, and copy the files into --dest. Exit 1 when an oracle "
        "line is not reproduced or an instance is invalid (the files are still copied).",
        **_exit.with_epilog())
    imp.add_argument("dir", type=Path)
    imp.add_argument("--dest", type=output_dir, default=DATA,
                     help="where the files go (default: storage/levels)")
    imp.set_defaults(handler=cmd_import)


def _add_check(commands: Commands) -> None:
    check = commands.add_parser("check",
                                description="Recompute every instance's oracle label and compare it with "
                                "oracle_level{N}_{split}.jsonl (candidates, order, meta, explanation keys); list the "
                                "invalid instances. Exit 1 on any difference.", **_exit.with_epilog())
    check.add_argument("--data", type=Path, default=DATA, help=DATA_HELP)
    check.set_defaults(handler=cmd_check)


def _add_verify(commands: Commands) -> None:
    verify = commands.add_parser(
        "verify",
        description="Replay every line of the original's recorded results files: the recorded assistant turns are "
        "this project's model replies, its tools answer the tool calls from today's data, its parser reads the final "
        "message and its scorer scores it. Prints, per file: lines, lines whose world matches today's data, same "
        "tool results, same pred, same metrics. Lines recorded against an older world (instance gone, another gold, "
        "another prompt, tool results quoting data that no longer exists) are reported as such and do not decide "
        "the exit code.", epilog=VERIFY_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    verify.add_argument("results", type=Path, nargs="+", metavar="RESULTS.jsonl")
    verify.add_argument("--data", type=Path, default=DATA, help=DATA_HELP)
    verify.add_argument("--project-tools", action="store_true",
                        help="replay with this project's tools, its fixes on (offsets of each date, list tables); by "
                        "default the original tools' behaviour, bugs included, which made the recordings")
    verify.add_argument("--head-policy-doc", action="store_true",
                        help="read_policy_document as the original's latest code shapes it (doc_id, title, text)")
    verify.add_argument("--normalize", action="store_true",
                        help="score instants rather than strings (+09:00 vs Z, seconds); the original compares strings")
    verify.add_argument("--json", type=output_file, default=None, metavar="PATH",
                        help="also write every line's verdict as JSON to PATH")
    verify.set_defaults(handler=cmd_verify)


def _add_summary(commands: Commands) -> None:
    summary = commands.add_parser(
        "summary",
        description="Mean F1 with a 95%% bootstrap CI, EM rate and pass^k per level × model × split of recorded "
        "results files (eval_L<level>_[<split>_]<model>_<time>.jsonl), each beside the original README's published "
        "cell, with whether the runs can support it. A sweep writes the same table for its own runs.")
    summary.add_argument("results", type=Path, nargs="+", metavar="RESULTS.jsonl")
    summary.add_argument("--model", default=None, help="the model of every file (default: read from the file names)")
    summary.add_argument("--current-only", action="store_true",
                         help="leave out the lines recorded against an older world (as 'levels verify' classes them, "
                         "against --data); by default every line counts, as the files hold them")
    summary.add_argument("--data", type=Path, default=DATA, help=DATA_HELP)
    summary.add_argument("--out", type=output_dir, default=None,
                         help="also write levels_summary.md and levels_summary.json there")
    summary.add_argument("--pass-k", type=_int_list, default=None, metavar="K,K,...",
                         help="the k of pass^k, comma-separated, e.g. 1,2,3,5 (default: 1, 2, 4, 8, … and the most "
                         "trials of an instance)")
    summary.set_defaults(handler=cmd_summary)


def _add_generate(commands: Commands) -> None:
    generate = commands.add_parser(
        "generate",
        description="Write a new world, COUNT instances and their oracle labels for one level, deterministic by "
        "--seed, with the original's discard-and-resample rule (no instance with fewer feasible candidates than it "
        "asks for), plus validity_level{N}_{split}.json (solvable share, candidate counts, constraint mix). Refuses "
        "to overwrite.", **_exit.with_epilog())
    generate.add_argument("--level", type=int, choices=(1, 2, 3), required=True)
    generate.add_argument("--count", type=int, required=True)
    generate.add_argument("--seed", type=int, required=True)
    generate.add_argument("--split", default=None, help="split name (default: gen_s<SEED>)")
    generate.add_argument("--timezone", default="Asia/Seoul", help="IANA zone of the world (default: Asia/Seoul)")
    generate.add_argument("--start-date", default="2026-01-19", help="Monday of the world's week (default: 2026-01-19)")
    generate.add_argument("--out", type=output_dir, default=DATA,
                          help="where the files go (default: storage/levels)")
    generate.set_defaults(handler=cmd_generate)


def _data(path: Path) -> Path:
    return workspace_path(path) if not path.is_absolute() else path


def cmd_import(args: argparse.Namespace) -> int:
    from ..levels import import_data

    checks, written = import_data(args.dir, args.dest)
    _print_checks(checks)
    print(f"\nwrote {len(written)} files to {args.dest}")
    return _exit.OK if all(c.ok for c in checks) else _exit.FAILED


def cmd_check(args: argparse.Namespace) -> int:
    from ..levels import check_labels, load_all

    checks = [check_labels(s) for s in load_all(_data(args.data))]
    _print_checks(checks)
    return _exit.OK if all(c.ok for c in checks) else _exit.FAILED


def _print_checks(checks: list[LabelCheck]) -> None:
    print("| level × split | instances | invalid | oracle lines | discarded | reproduced |")
    print("|---|---:|---:|---:|---:|---:|")
    for c in checks:
        print(f"| {c.name} | {c.instances} | {c.invalid} | {c.oracle_lines} | {c.discarded} | "
              f"{c.reproduced}/{c.instances} |")
    for c in checks:
        for line in c.differences:
            print(line, file=sys.stderr)


def cmd_verify(args: argparse.Namespace) -> int:
    import anyio
    import msgspec

    from .._prompts import load_prompts
    from ..levels import ToolOptions, instance_index, load_all, render_verdicts, verify_file

    index = instance_index(load_all(_data(args.data)))
    prompts = load_prompts(workspace_path("prompt_config.json"))
    prompts.require("levels_agent")
    options = ToolOptions() if args.project_tools else ToolOptions.original()
    if args.head_policy_doc:
        options = msgspec.structs.replace(options, head_policy_doc=True)

    async def verify_all() -> list[FileVerdict]:
        return [await verify_file(path, index, prompts, tool_options=options, normalize=args.normalize)
                for path in args.results]

    verdicts = anyio.run(verify_all)
    print(render_verdicts(verdicts))
    if args.json is not None:
        args.json.write_bytes(msgspec.json.format(msgspec.json.encode(verdicts)) + b"\n")
    return _exit.OK if all(v.ok for v in verdicts) else _exit.FAILED


def cmd_summary(args: argparse.Namespace) -> int:
    from ..levels import level_rows, read_results, render_levels_table, scored_results, write_levels_summary

    current = _current_lines(args) if args.current_only else None
    runs = []
    for path in args.results:
        lines = [line for number, line in read_results(path) if current is None or (path, number) in current]
        runs += scored_results(path, lines, model=args.model) if lines else []
    rows = level_rows(runs, pass_k=args.pass_k)
    title = "MPCBench levels: recorded runs" + (" (lines whose world matches today's data)" if current else "")
    print(render_levels_table(rows, title=title))
    if args.out is not None:
        write_levels_summary(args.out, rows, title=title)
    return _exit.OK


def _current_lines(args: argparse.Namespace) -> set[tuple[Path, int]]:
    """(file, line number) of every recorded line whose world matches today's data (``levels verify``'s verdict)."""
    import anyio

    from .._prompts import load_prompts
    from ..levels import instance_index, load_all, verify_file

    index = instance_index(load_all(_data(args.data)))
    prompts = load_prompts(workspace_path("prompt_config.json"))

    async def classify() -> set[tuple[Path, int]]:
        found = set()
        for path in args.results:
            verdict = await verify_file(path, index, prompts)
            found |= {(path, line.line) for line in verdict.matching}
        return found

    return anyio.run(classify)


def cmd_generate(args: argparse.Namespace) -> int:
    from .._exceptions import InputError
    from ..levels import generate_level, render_validity, write_generated

    if args.count < 1:
        raise InputError("--count must be at least 1")
    generated = generate_level(args.level, args.count, args.seed, split=args.split, timezone=args.timezone,
                               start_date=args.start_date)
    written = write_generated(generated, args.out)
    print(render_validity([generated.report]))
    print(f"wrote {', '.join(str(p) for p in written)}")
    return _exit.OK
