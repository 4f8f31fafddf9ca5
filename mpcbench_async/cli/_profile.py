"""``mpcbench-async profile endpoint`` and ``profile sweep``: where throughput and time go."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._exceptions import InputError
from .._lazy import TYPE_CHECKING
from ..runtime import atomic_write_bytes
from ._bench import _int_list
from ._commands import add_commands
from ._flags import flagged
from ._paths import output_dir

if TYPE_CHECKING:
    from ._commands import Commands

# Heavy imports live in the handlers: building a command's parser must stay cheap for its --help (issue 13).


def add_profile(commands: Commands) -> None:
    profile = commands.add_parser("profile",
                                  description="Measure how fast an endpoint or a sweep runs and where the time goes.")
    sub = add_commands(profile, dest="profile_command", metavar="SUBCOMMAND", required=True)
    sub.add_command("endpoint", _add_endpoint,
                    help="throughput, TTFT/TPOT/ITL/E2E latency and goodput across concurrency levels or request rates")
    sub.add_command("sweep", _add_sweep, help="where a sweep's wall time went, from its JSONL files")


def _add_endpoint(commands: Commands) -> None:
    endpoint = commands.add_parser(
        "endpoint",
        description="Drive a model (real or sim/) with retries off, streamed, at each level for --duration seconds: "
        "closed-loop concurrency levels (--mode concurrency), open-loop request rates (--mode rate: Poisson or "
        "constant arrivals), or a sweep (--mode sweep: concurrency 1 and --max-concurrency, then --sweep-points "
        "rates between, stopping at the first over-saturated rate). Reports requests/s, output tokens/s, "
        "TTFT/TPOT/ITL/E2E p50/p90/p95/p99 (TPOT: first to last token per further token; the time from the last "
        "token to the stream's end is reported apart), errors and 429s (the commonest error classes of each level "
        "with the provider's message), goodput under --slo, the knee; exits 1 when every request failed. Writes "
        "<out>/endpoint_<model>.{json,md,svg} and endpoint_<model>_ttft.svg (TTFT distribution).")
    endpoint.add_argument("--model", required=True)
    endpoint.add_argument("--mode", choices=["concurrency", "rate", "sweep"], default="concurrency",
                          help="concurrency levels, request rates or a sweep (default: concurrency)")
    endpoint.add_argument("--concurrency", type=_int_list, default=[1, 4, 16, 64, 256],
                          help="concurrency levels of --mode concurrency (default: 1,4,16,64,256)")
    endpoint.add_argument("--rates", help="request rates (requests/s) of --mode rate, e.g. 1,5,10")
    endpoint.add_argument("--arrivals", choices=["poisson", "constant"], default="poisson",
                          help="arrival process of rate levels (default: poisson)")
    endpoint.add_argument("--seed", type=int, default=0, help="seed of the Poisson arrivals (default: 0)")
    endpoint.add_argument("--max-concurrency", type=int, default=256,
                          help="cap on requests in flight at a rate level (counted when hit) and the sweep's "
                          "throughput level (default: 256)")
    endpoint.add_argument("--sweep-points", type=int, default=5,
                          help="rates measured between the synchronous and saturation rates (default: 5)")
    endpoint.add_argument("--duration", type=float, default=10.0, help="seconds per level (default: 10)")
    endpoint.add_argument("--warmup", type=float, default=0.0,
                          help="exclude requests started in the first S seconds of each level; below 1, a fraction "
                          "of --duration (default: 0)")
    endpoint.add_argument("--cooldown", type=float, default=0.0,
                          help="exclude requests ended in the last S seconds of each level's --duration; below 1, "
                          "a fraction of it (default: 0)")
    endpoint.add_argument("--slo", default="",
                          help="limits in seconds for goodput, any of ttft, tpot, e2e: e.g. ttft=0.5,tpot=0.05,e2e=10")
    endpoint.add_argument("--no-stream", dest="stream", action="store_false",
                          help="send non-streamed requests (end-to-end latency only; no TTFT/TPOT/ITL)")
    endpoint.add_argument("--prompt-tokens", type=int, default=200)
    endpoint.add_argument("--max-tokens", type=int, default=64)
    endpoint.add_argument("--config", type=Path, default=Path("model_config.json"))
    endpoint.add_argument("--out", type=output_dir, default=Path("reports/profiles"),
                          help="output directory, checked before measuring (default: reports/profiles)")
    endpoint.set_defaults(handler=cmd_endpoint)


def _add_sweep(commands: Commands) -> None:
    sweep = commands.add_parser(
        "sweep",
        description="Read a sweep directory's calls.jsonl, runs.jsonl and manifest.json; report time waiting on "
        "each model, tool execution, limiter queueing, retry backoff, concurrency and calls/s over time, and the "
        "critical path. Writes DIR/profile.md and DIR/profile.svg.")
    sweep.add_argument("dir", type=Path)
    sweep.set_defaults(handler=cmd_sweep)


def _rates(text: str | None) -> tuple[float, ...]:
    """``--rates 1,5,10`` as numbers (their values are checked by ``ProfileOptions``)."""
    if text is None:
        return ()
    try:
        rates = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise InputError(f"--rates: expected comma-separated requests/s, e.g. 1,5,10, got {text!r}") from None
    if not rates:
        raise InputError("--rates: give at least one rate (requests/s), e.g. --rates 1,5,10")
    return rates


def _slo(text: str) -> dict[str, float]:
    """``--slo ttft=0.5,e2e=10`` as a mapping (its keys and values are checked by ``ProfileOptions``)."""
    slo: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        try:
            slo[key.strip()] = float(value) if sep else float("nan")
        except ValueError:
            sep = ""
        if not sep:
            raise InputError(f"--slo: expected KEY=SECONDS pairs (keys ttft, tpot, e2e), got {item!r}")
    return slo


def cmd_endpoint(args: argparse.Namespace) -> int:
    import anyio
    import msgspec

    from ..llm import load_model_config
    from ..perf import LevelResult, ProfileOptions, profile_endpoint, render_endpoint_profile, render_ttft_cdf
    from ..runtime import safe_name

    def seconds(value: float) -> float:  # --warmup/--cooldown below 1: a fraction of --duration
        return value * args.duration if 0 < value < 1 else value

    options = ProfileOptions(mode=args.mode, rates=_rates(args.rates), arrivals=args.arrivals, seed=args.seed,
                             max_concurrency=args.max_concurrency, sweep_points=args.sweep_points,
                             warmup=seconds(args.warmup), cooldown=seconds(args.cooldown), slo=_slo(args.slo),
                             stream=args.stream)
    config = load_model_config(args.config)

    def show(level: LevelResult) -> None:
        ttft = f"  TTFT p50 {level.ttft.p50} s" if level.ttft else ""
        print(f"{level.load:<12} {level.requests_per_s:8.2f} req/s  E2E p95 {level.e2e.p95 if level.e2e else '–'} s"
              f"{ttft}  errors {100 * level.error_rate:.1f}%{'  over-saturated' if level.oversaturated else ''}",
              file=sys.stderr, flush=True)
        for error in level.error_classes:
            print(f"{'':<12} {error.error_class} ×{error.count}: {flagged(error.message)}", file=sys.stderr, flush=True)

    profile = anyio.run(lambda: profile_endpoint(config, args.model, concurrencies=args.concurrency,
                                                 duration=args.duration, prompt_tokens=args.prompt_tokens,
                                                 max_tokens=args.max_tokens, progress=show, options=options))
    markdown, svg = render_endpoint_profile(profile)
    base = args.out / f"endpoint_{safe_name(args.model)}"  # model names may hold dots: append, never replace
    atomic_write_bytes(base.parent / f"{base.name}.json", msgspec.json.format(msgspec.json.encode(profile)) + b"\n",
                       fsync=False)
    atomic_write_bytes(base.parent / f"{base.name}.md", markdown.encode(), fsync=False)
    atomic_write_bytes(base.parent / f"{base.name}.svg", svg.encode(), fsync=False)
    atomic_write_bytes(base.parent / f"{base.name}_ttft.svg", render_ttft_cdf(profile).encode(), fsync=False)
    print(markdown)
    print(f"written {base}.json, .md, .svg and _ttft.svg")
    if profile.all_failed:
        print(f"error: every request to {args.model} failed; nothing was measured (why: the error classes above)",
              file=sys.stderr)
        return 1
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
