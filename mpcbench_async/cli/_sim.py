"""``mpcbench-async sim serve``: run the simulated provider as a loopback server."""

from __future__ import annotations

import argparse
import signal
import sys

from .._exceptions import BenchError
from .._lazy import TYPE_CHECKING
from . import _exit
from ._commands import add_commands
from ._compare import _positive

if TYPE_CHECKING:
    from ._commands import Commands

# Heavy imports live in the handlers: building a command's parser must stay cheap for its --help (issue 13).


def add_sim(commands: Commands) -> None:
    sim = commands.add_parser("sim", description="The simulated OpenAI-compatible provider.")
    sub = add_commands(sim, dest="sim_command", metavar="SUBCOMMAND", required=True)
    sub.add_command("serve", _add_serve,
                    help="serve the sim over HTTP (POST /v1/chat/completions, GET /v1/models, GET /sim/stats)")


def _share(text: str) -> float:
    """A share of a rate: 0 <= F < 1 (the whole rate would leave nothing to the client under test)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 0 and below 1, got {text}")
    return value


def _add_serve(commands: Commands) -> None:
    serve = commands.add_parser(
        "serve",
        description="Serve the simulated provider over HTTP until interrupted. Per-model faults can "
        "also be set with a query suffix on the model name, e.g. 'sim/echo?p429=0.1&latency_ms=200'.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default: 127.0.0.1, loopback)")
    serve.add_argument("--port", type=int, default=8765, help="port; 0 picks a free one (default: 8765)")
    serve.add_argument("--seed", type=int, default=0, help="seed for faults and latency (default: 0)")
    serve.add_argument("--latency-ms", type=float, default=0.0, help="mean service time per request")
    serve.add_argument("--latency-sd-ms", type=float, default=0.0, help="standard deviation of service time")
    serve.add_argument("--rpm", type=int, default=None, help="enforce requests per minute per model (429 beyond)")
    serve.add_argument("--tpm", type=int, default=None, help="enforce tokens per minute per model (429 beyond)")
    serve.add_argument("--rate-window-s", type=_positive, default=60.0, metavar="S",
                       help="meter --rpm/--tpm in buckets of S seconds of the rate, refilled continuously "
                       "(default: 60, a minute's budget at once; 1: per second, as some providers do)")
    serve.add_argument("--rate-meter", choices=("bucket", "fixed", "log"), default="bucket",
                       help="how --rpm/--tpm are counted: a token bucket refilled continuously (bucket, default), "
                       "fixed windows of --rate-window-s whole again at each end (fixed), or at most that much "
                       "within any trailing window (log: a sliding log)")
    serve.add_argument("--rate-share", type=_share, default=0.0, metavar="F",
                       help="play another client on the same key taking this share (0 <= F < 1) of the rate the "
                       "whole time (default: 0)")
    serve.add_argument("--rate-start", choices=("full", "empty"), default="full",
                       help="each model's meter full at the start (default) or spent before the first request "
                       "(empty: a key just drained)")
    serve.add_argument("--rate-headers", choices=("openai", "anthropic", "none"), default="openai",
                       help="how replies report the --rpm/--tpm buckets: x-ratelimit-* (openai, default), "
                       "anthropic-ratelimit-* (anthropic) or not at all (none: 429s only)")
    serve.add_argument("--rate-hint", choices=("both", "ms", "seconds", "none"), default="both",
                       help="the wait a bucket's 429 asks for: retry-after-ms and Retry-After (both, default), "
                       "one of them (ms, seconds) or none")
    serve.add_argument("--tokens-per-s", type=float, default=0.0, metavar="R",
                       help="streamed replies send one token every 1/R s after the first (default: 0, all at once)")
    serve.add_argument("--output-tokens", type=int, default=None, metavar="N",
                       help="make every reply's content exactly N tokens (filler words; like vLLM's ignore_eos)")
    for kind in ("429", "500", "502", "503", "drop", "timeout", "truncate", "malformed", "cut"):
        serve.add_argument(f"--p{kind}", type=float, default=0.0, metavar="P",
                           help=f"probability of a '{kind}' fault per request")
    serve.add_argument("--retry-after-ms", type=int, default=None,
                       help="retry-after-ms header value on injected 429/503 replies")
    serve.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    import anyio

    from ..sim import FaultSpec, SimServer
    from ._loop import run as run_loop

    spec = FaultSpec(
        latency_ms=args.latency_ms, latency_sd_ms=args.latency_sd_ms, rpm=args.rpm, tpm=args.tpm,
        rate_window_s=args.rate_window_s, rate_meter=args.rate_meter, rate_share=args.rate_share,
        rate_start=args.rate_start, rate_headers=args.rate_headers, rate_hint=args.rate_hint,
        p429=args.p429, p500=args.p500, p502=args.p502, p503=args.p503, pdrop=args.pdrop,
        ptimeout=args.ptimeout, ptruncate=args.ptruncate, pmalformed=args.pmalformed, pcut=args.pcut,
        retry_after_ms=args.retry_after_ms, tokens_per_s=args.tokens_per_s, output_tokens=args.output_tokens,
    )

    async def run() -> None:
        # The signals are received before the ready line is printed: a stop sent as soon as it is read is a stop.
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with SimServer(seed=args.seed, defaults=spec, host=args.host, port=args.port) as server:
                print(f"sim listening on {server.base_url}", flush=True)
                async for _ in signals:
                    break
        print("sim stopped", file=sys.stderr)

    try:
        run_loop(run)  # uvloop unless MPCBENCH_LOOP=asyncio (cli/_loop.py)
    except OSError as exc:
        raise BenchError(f"sim serve: cannot listen on {args.host}:{args.port} ({exc.strerror or exc})") from exc
    return _exit.INTERRUPTED  # a server runs until stopped: Ctrl-C or SIGTERM, exit 130 like every command
