"""``mpcbench-async bench client``: measure the LLM transports against a sim in another process."""

from __future__ import annotations

import argparse
import shlex
import sys

from .._exceptions import InputError
from .._lazy import TYPE_CHECKING
from ._commands import add_commands
from ._paths import output_file

if TYPE_CHECKING:
    from ._commands import Commands

# Heavy imports live in the handlers: building a command's parser must stay cheap for its --help (issue 13).


def _int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from exc
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def add_bench(commands: Commands) -> None:
    bench = commands.add_parser("bench", description="Performance benchmarks of the runner itself.")
    sub = add_commands(bench, dest="bench_command", metavar="SUBCOMMAND", required=True)
    sub.add_command("client", _add_client, help="requests/s and client CPU per call, native vs openai SDK transport")


def _add_client(commands: Commands) -> None:
    client = commands.add_parser(
        "client",
        description="Run the sim in a separate process and drive it through LLMClient with each "
        "transport at each concurrency; print requests/s and client CPU µs per call (medians) and "
        "the native/SDK ratio as a Markdown table.",
    )
    client.add_argument("--concurrency", type=_int_list, default=[1, 64, 256],
                        help="comma-separated concurrency levels (default: 1,64,256)")
    client.add_argument("--requests", type=int, default=2000,
                        help="requests per run at concurrency > 1 (default: 2000; a quarter at concurrency 1)")
    client.add_argument("--repeats", type=int, default=3, help="runs per cell; medians reported (default: 3)")
    client.add_argument("--transports", default="native,openai",
                        help="comma-separated transports to measure (default: native,openai)")
    client.add_argument("--out", type=output_file, default=None,
                        help="also append the Markdown table to this file and write a .json beside it")
    client.set_defaults(handler=_client)


def _client(args: argparse.Namespace) -> int:
    import msgspec

    from ..perf import format_markdown, run_client_bench, sim_subprocess

    transports = [t.strip() for t in args.transports.split(",") if t.strip()]
    unknown = sorted(set(transports) - {"native", "openai"})
    if unknown:
        raise InputError(f"--transports: unknown transport(s) {', '.join(unknown)}; choose native, openai")
    if args.requests < 1 or args.repeats < 1:
        raise InputError("--requests and --repeats must be at least 1")
    with sim_subprocess() as base_url:
        rows = run_client_bench(
            base_url, transports=transports, concurrencies=args.concurrency, requests=args.requests,
            repeats=args.repeats, progress=lambda line: print(line, file=sys.stderr, flush=True),
        )
    command = "mpcbench-async " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    table = format_markdown(rows, command)
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a", encoding="utf-8") as fh:
            fh.write("\n" + table)
        args.out.with_suffix(".client.json").write_bytes(msgspec.json.format(msgspec.json.encode(rows)))
    return 0
