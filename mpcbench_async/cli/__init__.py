"""The ``mpcbench-async`` command line: a thin shell over the library.

One module per command group (``_sim``, ``_bench``); each registers its
sub-parser and a handler. ``main`` turns user errors (``BenchError``) into one
line on stderr and exit code 2, interrupts into 130, and never prints a raw
traceback for a user error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .._exceptions import BenchError, Interrupted
from ..runtime import configure_logging
from . import _bench, _evaluate, _generate, _profile, _sim, _sweep, _tariff

__all__ = ["build_parser", "main"]

_GROUPS = (_sweep, _generate, _evaluate, _tariff, _profile, _sim, _bench)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mpcbench-async",
        allow_abbrev=False,
        description="Asynchronous, high-throughput runner for LLM-agent benchmarks "
        "(MPCBench and tariff pack verification).",
    )
    parser.add_argument("--log-format", choices=("console", "json"), default="console",
                        help="log output format on stderr (default: console)")
    parser.add_argument("--log-level", default="warning",
                        choices=("debug", "info", "warning", "error"), help="log level (default: warning)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in _GROUPS:
        group.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.log_format, level=args.log_level)
    try:
        return int(args.handler(args) or 0)
    except Interrupted as exc:
        print(f"interrupted: {exc}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
