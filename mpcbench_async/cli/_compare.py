"""``mpcbench-async compare A B``: B against A, two sweeps or two tariff reports, as Markdown and JSON; a CI gate.

The comparison itself lives in the ``compare`` package; this module parses the
arguments, writes the outputs and turns ``--fail-on-regression`` into exit code 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._lazy import TYPE_CHECKING
from . import _exit
from ._paths import output_file

if TYPE_CHECKING:
    from ._commands import Commands

# Heavy imports (numpy, the sweep reader) live in the handler: building the parser must stay cheap for --help.

DESCRIPTION = """\
Compare B against A and print the differences as Markdown (or JSON with --json).

A and B are two sweep directories (runs.jsonl / manifest.json) or two tariff
report JSON files (written by `tariff run`, or by a sweep as <suite>_<model>.json).

Sweeps: per agent model x task, over its trials (infrastructure errors are not
trials) and judges: mean ARS and SGR, check pass rate, errors, B - A. A change is
a regression or an improvement when its confidence interval excludes 0 (at least
2 trials with a value on each side: a paired bootstrap over trial indices, or
unpaired when they differ); without an interval, when a judge axis moves by at
least --min-delta points or the checks go from all passing to not (or back).
New failures: ok in A and a task-level error in B; every trial passed in A and
one failed in B. Per model: B - A paired over the tasks both have (bootstrap CI,
wins/losses/ties, sign-test p). Models and tasks on one side only are listed.

Sweeps that ran the levels suite: per level x model x split, the mean F1 over
the instances both ran, B - A paired by instance with its bootstrap CI (a CI
that excludes 0 counts), EM on each side; an instance exact in every A trial
and not in every B trial is a new failure.

Tariff reports: the `tariff compare` diff (a case score moving by at least 0.05,
pass -> fail with errors as failures, change per case type, cases added and
removed) and every shared case's score."""

EPILOG = """\
exit codes:
  0    compared (with --fail-on-regression: no regression and no new failure)
  1    --fail-on-regression and at least one regression or new failure (listed on stderr)
  2    bad input: a missing path, not a sweep or report, a sweep mixed with a report"""


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text}")
    return value


def _confidence(text: str) -> float:
    value = _positive(text)
    if not value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (e.g. 0.95), got {text}")
    return value


def add_compare(commands: Commands) -> None:
    compare = commands.add_parser("compare",
                                  description=DESCRIPTION, epilog=EPILOG,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    compare.add_argument("a", type=Path, metavar="A", help="the baseline: a sweep directory or a tariff report JSON")
    compare.add_argument("b", type=Path, metavar="B", help="the run compared against A, of the same kind")
    compare.add_argument("--out", type=output_file, default=None, metavar="FILE",
                         help="also write FILE.md and FILE.json (a .md or .json ending of FILE is dropped first)")
    compare.add_argument("--json", action="store_true", help="print the JSON instead of the Markdown")
    compare.add_argument("--fail-on-regression", action="store_true",
                         help="exit 1 when any regression or new failure is found, listing each on stderr (for CI)")
    compare.add_argument("--min-delta", type=_positive, default=1.0, metavar="POINTS",
                         help="sweeps: the smallest move of a judge axis (0-5 points) that counts when a task has no "
                         "confidence interval (under 2 trials with a value on a side); default: 1.0")
    compare.add_argument("--confidence", type=_confidence, default=0.95, metavar="LEVEL",
                         help="sweeps: confidence level of the bootstrap intervals; default: 0.95")
    compare.add_argument("--allow-mixed-scoring", action="store_true",
                         help="tariff: compare reports scored under different --scoring modes (refused by default: "
                         "their scores measure different rules)")
    compare.set_defaults(handler=cmd_compare)


def _base(path: Path) -> Path:
    return path.with_suffix("") if path.suffix in (".md", ".json") else path


def cmd_compare(args: argparse.Namespace) -> int:
    import msgspec

    from ..compare import SweepComparison, compare_paths, failure_line, finding_line, render_markdown
    from ..runtime import atomic_write_bytes

    result = compare_paths(args.a, args.b, min_delta=args.min_delta, confidence=args.confidence,
                           allow_mixed_scoring=args.allow_mixed_scoring)
    markdown = render_markdown(result)
    data = msgspec.json.format(msgspec.json.encode(result)) + b"\n"
    if args.out is not None:
        base = _base(args.out)
        atomic_write_bytes(base.parent / f"{base.name}.md", markdown.encode(), fsync=False)
        atomic_write_bytes(base.parent / f"{base.name}.json", data, fsync=False)
        print(f"compare -> {base}.md and {base}.json", file=sys.stderr)
    sys.stdout.write(data.decode() if args.json else markdown)
    differ = result.settings_differ if isinstance(result, SweepComparison) else []  # reports carry no manifest
    if differ:
        print(f"warning: the sweeps ran with different settings ({len(differ)}): {'; '.join(differ)}",
              file=sys.stderr)
    print(f"{len(result.regressions)} regression(s), {len(result.improvements)} improvement(s), "
          f"{len(result.new_failures)} new failure(s)", file=sys.stderr)
    if args.fail_on_regression and (result.regressions or result.new_failures):
        for finding in result.regressions:
            print(f"regression: {finding_line(finding)}", file=sys.stderr)
        for failure in result.new_failures:
            print(f"new failure: {failure_line(failure)}", file=sys.stderr)
        return _exit.FAILED
    return _exit.OK
