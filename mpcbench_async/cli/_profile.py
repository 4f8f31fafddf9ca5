"""``mpcbench-async profile endpoint`` and ``profile sweep``: where throughput and time go."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._exceptions import InputError
from ..runtime import atomic_write_bytes
from ._bench import _int_list
from ._paths import output_dir

# Heavy imports live in the handlers: registering the arguments must stay cheap for --help (issue 13).


def register(commands: argparse._SubParsersAction) -> None:
    profile = commands.add_parser("profile", help="throughput profiles of endpoints and sweeps",
                                  description="Measure how fast an endpoint or a sweep runs and where the time goes.")
    sub = profile.add_subparsers(dest="profile_command", metavar="SUBCOMMAND", required=True)
    endpoint = sub.add_parser(
        "endpoint", help="requests/s, tokens/s and latency percentiles across concurrency levels",
        description="Drive a model (real or sim/) at each concurrency level for --duration seconds with retries "
        "off; report requests/s, output tokens/s, latency p50/p95/p99, error and 429 rates and the knee. Writes "
        "<out>/endpoint_<model>.{json,md,svg}.")
    endpoint.add_argument("--model", required=True)
    endpoint.add_argument("--concurrency", type=_int_list, default=[1, 4, 16, 64, 256])
    endpoint.add_argument("--duration", type=float, default=10.0, help="seconds per level (default: 10)")
    endpoint.add_argument("--prompt-tokens", type=int, default=200)
    endpoint.add_argument("--max-tokens", type=int, default=64)
    endpoint.add_argument("--config", type=Path, default=Path("model_config.json"))
    endpoint.add_argument("--out", type=output_dir, default=Path("reports/profiles"),
                          help="output directory, checked before measuring (default: reports/profiles)")
    endpoint.set_defaults(handler=cmd_endpoint)
    sweep = sub.add_parser(
        "sweep", help="where a sweep's wall time went, from its JSONL files",
        description="Read a sweep directory's calls.jsonl, runs.jsonl and manifest.json; report time waiting on "
        "each model, tool execution, limiter queueing, retry backoff, concurrency and calls/s over time, and the "
        "critical path. Writes DIR/profile.md and DIR/profile.svg.")
    sweep.add_argument("dir", type=Path)
    sweep.set_defaults(handler=cmd_sweep)


def cmd_endpoint(args: argparse.Namespace) -> int:
    import anyio
    import msgspec

    from ..llm import load_model_config
    from ..mpcbench import safe_name
    from ..perf import profile_endpoint, render_endpoint_profile

    if args.duration <= 0 or args.prompt_tokens < 1 or args.max_tokens < 1:
        raise InputError("--duration, --prompt-tokens and --max-tokens must be positive")
    config = load_model_config(args.config)

    def show(level) -> None:
        print(f"c={level.concurrency:<4d} {level.requests_per_s:8.1f} req/s  p95 {level.latency_p95_s} s  "
              f"errors {100 * level.error_rate:.1f}%", file=sys.stderr, flush=True)

    profile = anyio.run(lambda: profile_endpoint(config, args.model, concurrencies=args.concurrency,
                                                 duration=args.duration, prompt_tokens=args.prompt_tokens,
                                                 max_tokens=args.max_tokens, progress=show))
    markdown, svg = render_endpoint_profile(profile)
    base = args.out / f"endpoint_{safe_name(args.model)}"  # model names may hold dots: append, never replace
    atomic_write_bytes(base.parent / f"{base.name}.json", msgspec.json.format(msgspec.json.encode(profile)) + b"\n",
                       fsync=False)
    atomic_write_bytes(base.parent / f"{base.name}.md", markdown.encode(), fsync=False)
    atomic_write_bytes(base.parent / f"{base.name}.svg", svg.encode(), fsync=False)
    print(markdown)
    print(f"written {base}.json, .md and .svg")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from ..perf import profile_sweep, render_sweep_profile

    profile = profile_sweep(args.dir)
    markdown, svg = render_sweep_profile(profile)
    atomic_write_bytes(args.dir / "profile.md", markdown.encode(), fsync=False)
    atomic_write_bytes(args.dir / "profile.svg", svg.encode(), fsync=False)
    print(markdown)
    print(f"written {args.dir / 'profile.md'} and profile.svg")
    return 0
