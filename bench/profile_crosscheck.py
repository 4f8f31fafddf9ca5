"""Cross-check ``profile endpoint`` against an independent client and established serving benchmarks (issue 17).

One sim in its own process serves a streaming model whose figures are known from its settings
(``sim/echo?latency_ms=100&tokens_per_s=200&output_tokens=8``: first token after 100 ms, then one
token every 5 ms, 8 tokens; so a request lasts 135 ms and concurrency C completes at most
C / 0.135 requests/s). At each load point (closed loop at concurrency 4 and 16 by default) the same
endpoint is measured by:

- ``mpcbench-async``: ``profile_endpoint`` (the library call behind ``profile endpoint``), streaming;
- ``minimal``: ``bench/stream_client.py`` (raw aiohttp, its own SSE parsing and statistics);
- the peers given by path (each installed in its own venv, never in the project's):
  GuideLLM (``--guidellm``), NVIDIA AIPerf (``--aiperf``), vLLM's ``bench serve`` (``--vllm``),
  ModelScope's ``evalscope perf`` (``--evalscope``).
  None can reach a model hub here: each is handed a tiny word-level tokenizer written to a
  directory by that peer's own Python (``tokenizers`` + ``transformers``); output tokens are the
  server's usage counts where the tool allows it.

Each tool warms up for ``--warmup`` s and measures for about ``--duration`` s with its own
windowing (so the requests/s differ by up to about one request per worker over the window).
Printed: a Markdown table with requests/s, output tokens/s, TTFT p50 and mean, mean E2E and the
concurrency kept up (requests/s × mean E2E) per tool and load point, the deltas of the first four
against ``mpcbench-async`` in %, and pass/fail at ``--tolerance`` (5%) on all four. Without peers it
runs in under a minute; each peer adds its own start-up (bench/RESULTS.md has the install lines).

    .venv/bin/python bench/profile_crosscheck.py --guidellm /tmp/peers-guidellm/bin/guidellm \\
        --aiperf /tmp/peers-aiperf/bin/aiperf --vllm /tmp/peers-vllm/bin/vllm \\
        --evalscope /tmp/peers-evalscope/bin/evalscope --out /tmp/crosscheck.md
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import stream_client  # noqa: E402  (this directory)

from mpcbench_async.llm import ModelConfig  # noqa: E402
from mpcbench_async.perf import ProfileOptions, profile_endpoint, sim_subprocess  # noqa: E402

OURS = "mpcbench-async"

# Written by the peer's own Python: a word-level tokenizer that transformers.AutoTokenizer loads from a directory.
TOKENIZER_CODE = r'''
import sys
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
words = ["<unk>", "<s>", "</s>"] + [f"w{i}" for i in range(1000)] + "the quick brown fox jumps over lazy dog".split()
tok = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(words)}, unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
tok.decoder = decoders.WordPiece(prefix="##")
fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>",
                               model_max_length=1_000_000)
fast.chat_template = "{% for m in messages %}{{ m['content'] }} {% endfor %}"  # evalscope applies one
fast.save_pretrained(sys.argv[1])
'''


@dataclass
class Row:
    tool: str
    concurrency: int
    requests_per_s: float
    output_tokens_per_s: float
    ttft_p50_ms: float
    ttft_mean_ms: float
    e2e_mean_ms: float


@dataclass
class Setup:
    url: str  # the sim's OpenAI base URL, ending in /v1
    model: str
    loads: list[int]
    duration: float
    warmup: float
    prompt_tokens: int
    output_tokens: int
    work: Path


class PeerError(Exception):
    """A peer tool that could not run; the message says why."""


def _run(cmd: Sequence[str], log: Path, env: dict[str, str] | None = None, timeout: float = 600) -> None:
    with log.open("w") as out:
        proc = subprocess.run(list(cmd), stdout=out, stderr=subprocess.STDOUT, env=env, timeout=timeout, check=False)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        raise PeerError(f"exit {proc.returncode}: {' | '.join(line.strip() for line in tail)} (log: {log})")


def _tokenizer(exe: str, setup: Setup, name: str) -> Path:
    path = setup.work / f"tokenizer-{name}"
    _run([str(Path(exe).parent / "python"), "-c", TOKENIZER_CODE, str(path)], setup.work / f"tokenizer-{name}.log")
    return path


# -- the tools -----------------------------------------------------------------------------------------------------
def measure_ours(setup: Setup) -> list[Row]:
    rows = []
    for c in setup.loads:
        cooldown = 0.5  # sending goes on past the window, so the window ends in steady state
        profile = asyncio.run(profile_endpoint(
            ModelConfig(), setup.model, concurrencies=[c], duration=setup.warmup + setup.duration + cooldown,
            prompt_tokens=setup.prompt_tokens, max_tokens=setup.output_tokens, sim_base_url=setup.url,
            options=ProfileOptions(warmup=setup.warmup, cooldown=cooldown)))
        level = profile.levels[0]
        assert level.ttft is not None and level.e2e is not None
        rows.append(Row(OURS, c, level.requests_per_s, level.output_tokens_per_s, level.ttft.p50 * 1000,
                        level.ttft.mean * 1000, level.e2e.mean * 1000))
    return rows


def measure_minimal(setup: Setup) -> list[Row]:
    rows = []
    for c in setup.loads:
        run = asyncio.run(stream_client.run(setup.url, setup.model, concurrency=c, duration=setup.duration,
                                            warmup=setup.warmup, max_tokens=setup.output_tokens))
        assert run.ttft_p50_s is not None and run.ttft_mean_s is not None and run.e2e_mean_s is not None
        rows.append(Row("minimal", c, run.requests_per_s, run.output_tokens_per_s, run.ttft_p50_s * 1000,
                        run.ttft_mean_s * 1000, run.e2e_mean_s * 1000))
    return rows


def measure_guidellm(exe: str, setup: Setup) -> list[Row]:
    """One ``guidellm run`` with a scenario file: a concurrent benchmark per load point."""
    tokenizer = _tokenizer(exe, setup, "guidellm")
    out = setup.work / "guidellm.json"
    scenario = {
        "spec": {
            "backend": {"kind": "openai_http", "target": setup.url.removesuffix("/v1"), "model": setup.model,
                        "validate_backend": False},  # it would GET /health, which an OpenAI endpoint need not have
            "tokenizer": {"kind": "huggingface_auto", "model": str(tokenizer)},
            "profile": {"kind": "concurrent", "warmup": {"value": setup.warmup}},
            "constraints": [{"kind": "max_duration", "seconds": setup.warmup + setup.duration}],
            "data": [{"kind": "synthetic_text", "prompt_tokens": setup.prompt_tokens,
                      "output_tokens": setup.output_tokens}],
            "outputs": [{"kind": "json", "path": str(out)}],
        },
        "benchmarks": [{"profile.streams": c} for c in setup.loads],
    }
    path = setup.work / "guidellm-scenario.json"
    path.write_text(json.dumps(scenario))
    _run([exe, "run", "-c", str(path), "--disable-progress"], setup.work / "guidellm.log",
         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    rows = []
    for bench in json.loads(out.read_text())["benchmarks"]:
        m = bench["metrics"]
        ttft = m["time_to_first_token_ms"]["successful"]
        rows.append(Row("GuideLLM", bench["config"]["strategy"]["streams"],
                        m["requests_per_second"]["successful"]["mean"],
                        m["output_tokens_per_second"]["successful"]["mean"], ttft["median"], ttft["mean"],
                        m["request_latency"]["successful"]["mean"] * 1000))
    return rows


def measure_aiperf(exe: str, setup: Setup) -> list[Row]:
    """One ``aiperf profile`` sweeping the concurrency list; server-reported token counts."""
    tokenizer = _tokenizer(exe, setup, "aiperf")
    out = setup.work / "aiperf"
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    # (with HF_HUB_OFFLINE set, aiperf 0.13 looks a tokenizer path up in the hub cache and fails)
    _run([exe, "profile", "--model", setup.model, "--url", setup.url.removesuffix("/v1"), "--endpoint-type", "chat",
          "--streaming", "--tokenizer", str(tokenizer), "--concurrency", ",".join(map(str, setup.loads)),
          "--benchmark-duration", f"{setup.duration:g}", "--warmup-duration", f"{setup.warmup:g}",
          "--prompt-input-tokens-mean", str(setup.prompt_tokens), "--prompt-output-tokens-mean",
          str(setup.output_tokens), "--use-server-token-count", "--use-legacy-max-tokens",
          "--output-artifact-dir", str(out), "--ui", "none", "--no-server-metrics", "--no-gpu-telemetry"],
         setup.work / "aiperf.log", env=env)
    rows = []
    for c in setup.loads:
        found = out / f"concurrency_{c}" / "profile_export_aiperf.json"
        data = json.loads((found if found.exists() else out / "profile_export_aiperf.json").read_text())
        ttft = data["time_to_first_token"]
        rows.append(Row("AIPerf", c, data["request_throughput"]["avg"], data["output_token_throughput"]["avg"],
                        ttft["p50"], ttft["avg"], data["request_latency"]["avg"]))
    return rows


def measure_vllm(exe: str, setup: Setup, request_s: float) -> list[Row]:
    """``vllm bench serve`` per load point: a fixed number of prompts, about ``duration`` s of them."""
    tokenizer = _tokenizer(exe, setup, "vllm")
    rows = []
    for c in setup.loads:
        prompts = max(c, round(c * setup.duration / request_s))
        name = f"vllm-c{c}.json"
        _run([exe, "bench", "serve", "--backend", "openai-chat", "--base-url", setup.url.removesuffix("/v1"),
              "--endpoint", "/v1/chat/completions", "--model", setup.model, "--tokenizer", str(tokenizer),
              "--dataset-name", "random", "--random-input-len", str(setup.prompt_tokens), "--random-output-len",
              str(setup.output_tokens), "--max-concurrency", str(c), "--num-prompts", str(prompts),
              "--num-warmups", str(max(c, round(c * setup.warmup / request_s))),
              "--percentile-metrics", "ttft,tpot,itl,e2el", "--save-result",
              "--result-dir", str(setup.work), "--result-filename", name],
             setup.work / f"vllm-c{c}.log", env={**os.environ, "HF_HUB_OFFLINE": "1"})
        data = json.loads((setup.work / name).read_text())
        rows.append(Row("vLLM bench serve", c, data["request_throughput"], data["output_throughput"],
                        data["median_ttft_ms"], data["mean_ttft_ms"], data["mean_e2el_ms"]))
    return rows


def measure_evalscope(exe: str, setup: Setup, request_s: float) -> list[Row]:
    """One ``evalscope perf`` over the load points: a fixed number of prompts each, about ``duration`` s of them."""
    tokenizer = _tokenizer(exe, setup, "evalscope")
    out = setup.work / "evalscope"
    numbers = [max(c, round(c * setup.duration / request_s)) for c in setup.loads]
    _run([exe, "perf", "--url", setup.url + "/chat/completions", "--api", "openai", "--model", setup.model,
          "--tokenizer-path", str(tokenizer), "--dataset", "random", "--min-prompt-length", str(setup.prompt_tokens),
          "--max-prompt-length", str(setup.prompt_tokens), "--prefix-length", "0", "--min-tokens",
          str(setup.output_tokens), "--max-tokens", str(setup.output_tokens), "--stream", "--no-test-connection",
          "--parallel", *map(str, setup.loads), "--number", *map(str, numbers),
          "--warmup-num", str(max(setup.loads)), "--outputs-dir", str(out)],
         setup.work / "evalscope.log", env={**os.environ, "HF_HUB_OFFLINE": "1"})
    rows = []
    for c in setup.loads:
        found = sorted(out.glob(f"*/*/parallel_{c}_number_*"))
        if not found:
            raise PeerError(f"no results for concurrency {c} under {out}")
        summary = json.loads((found[-1] / "benchmark_summary.json").read_text())
        percentiles = {p["Percentiles"]: p for p in json.loads((found[-1] / "benchmark_percentile.json").read_text())}
        rows.append(Row("evalscope perf", c, summary["Req Throughput (req/s)"], summary["Output Throughput (tok/s)"],
                        percentiles["50%"]["TTFT (ms)"], summary["Avg TTFT (ms)"], summary["Avg Latency (s)"] * 1000))
    return rows


# -- the table -----------------------------------------------------------------------------------------------------
def medians(rows: list[Row]) -> list[Row]:
    """One row per (tool, load point): the median of each figure over the tool's repeated runs."""
    groups: dict[tuple[str, int], list[Row]] = {}
    for row in rows:
        groups.setdefault((row.tool, row.concurrency), []).append(row)
    return [Row(tool, c, *(statistics.median(getattr(r, f) for r in runs) for f in _FIGURES))
            for (tool, c), runs in groups.items()]


_FIGURES = ("requests_per_s", "output_tokens_per_s", "ttft_p50_ms", "ttft_mean_ms", "e2e_mean_ms")


def delta(value: float, ours: float) -> float:
    return (value - ours) / ours * 100 if ours else math.inf


def table(rows: list[Row], tolerance: float, ideal: Callable[[int], tuple[float, float, float, float]]) -> str:
    """Markdown: the sim's ideal figures, then each tool's row with its deltas against ``mpcbench-async``.

    ``in flight`` is requests/s × mean E2E (Little's law): the concurrency the tool actually kept
    up. Below the load point, the tool's own load generator idled between requests (its CPU
    cost per request on this machine), so it offered less load, and its requests/s is lower for
    that reason, not because it measured the same load differently.
    """
    ours = {r.concurrency: r for r in rows if r.tool == OURS}
    lines = ["| tool | load | req/s | out tok/s | TTFT p50 ms | TTFT mean ms | E2E mean ms | in flight | Δ req/s "
             f"| Δ tok/s | Δ TTFT p50 | Δ TTFT mean | within ±{tolerance:g}% |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for c in sorted(ours):
        rps, tps, ttft, e2e = ideal(c)
        lines.append(f"| sim settings (no overhead) | c={c} | {rps:.1f} | {tps:.0f} | {ttft:.1f} | {ttft:.1f} "
                     f"| {e2e:.1f} | {c} | | | | | |")
        for r in sorted((r for r in rows if r.concurrency == c), key=lambda r: (r.tool != OURS, r.tool)):
            if r.tool == OURS:
                cells = ["", "", "", "", "(reference)"]
            else:
                ref = ours[c]
                ds = [delta(r.requests_per_s, ref.requests_per_s),
                      delta(r.output_tokens_per_s, ref.output_tokens_per_s),
                      delta(r.ttft_p50_ms, ref.ttft_p50_ms), delta(r.ttft_mean_ms, ref.ttft_mean_ms)]
                cells = [f"{d:+.1f}%" for d in ds] + ["pass" if all(abs(d) <= tolerance for d in ds) else "FAIL"]
            in_flight = r.requests_per_s * r.e2e_mean_ms / 1000  # Little's law: the load the tool kept up
            lines.append(f"| {r.tool} | c={c} | {r.requests_per_s:.1f} | {r.output_tokens_per_s:.0f} | "
                         f"{r.ttft_p50_ms:.1f} | {r.ttft_mean_ms:.1f} | {r.e2e_mean_ms:.1f} | {in_flight:.1f} | "
                         + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", default="4,16", help="concurrency levels (closed loop), comma-separated")
    parser.add_argument("--duration", type=float, default=8.0, help="measured seconds per load point and tool")
    parser.add_argument("--warmup", type=float, default=1.0, help="warm-up seconds before each measurement")
    parser.add_argument("--latency-ms", type=float, default=100.0, help="the sim's time to first token")
    parser.add_argument("--tokens-per-s", type=float, default=200.0, help="the sim's token pace after the first")
    parser.add_argument("--output-tokens", type=int, default=8, help="tokens in every reply")
    parser.add_argument("--tolerance", type=float, default=5.0, help="pass when every delta is within this, %%")
    parser.add_argument("--repeats", type=int, default=1,
                        help="measure mpcbench-async and the minimal client this many times, alternating; medians")
    parser.add_argument("--guidellm", help="path to a guidellm executable (its venv needs transformers)")
    parser.add_argument("--aiperf", help="path to an aiperf executable")
    parser.add_argument("--vllm", help="path to a vllm executable (for `vllm bench serve`)")
    parser.add_argument("--evalscope", help="path to an evalscope executable (for `evalscope perf`)")
    parser.add_argument("--out", type=Path, help="also write the table and notes to this Markdown file")
    args = parser.parse_args()

    request_s = args.latency_ms / 1000 + (args.output_tokens - 1) / args.tokens_per_s
    model = (f"sim/echo?latency_ms={args.latency_ms:g}&tokens_per_s={args.tokens_per_s:g}"
             f"&output_tokens={args.output_tokens}")
    notes: list[str] = []
    rows: list[Row] = []
    started, load_before = time.perf_counter(), os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="crosscheck-") as tmp, sim_subprocess(["--seed", "0"]) as url:
        setup = Setup(url=url, model=model, loads=[int(c) for c in args.loads.split(",")], duration=args.duration,
                      warmup=args.warmup, prompt_tokens=16, output_tokens=args.output_tokens, work=Path(tmp))
        tools: list[tuple[str, Callable[[], list[Row]]]] = [
            (OURS, lambda: measure_ours(setup)), ("minimal", lambda: measure_minimal(setup))] * args.repeats
        if args.guidellm:
            tools.append(("GuideLLM", lambda: measure_guidellm(args.guidellm, setup)))
        if args.aiperf:
            tools.append(("AIPerf", lambda: measure_aiperf(args.aiperf, setup)))
        if args.vllm:
            tools.append(("vLLM bench serve", lambda: measure_vllm(args.vllm, setup, request_s)))
        if args.evalscope:
            tools.append(("evalscope perf", lambda: measure_evalscope(args.evalscope, setup, request_s)))
        for name, measure in tools:
            t0 = time.perf_counter()
            try:
                rows += measure()
                notes.append(f"{name}: ran in {time.perf_counter() - t0:.0f} s")
            except (PeerError, OSError, KeyError, ValueError, subprocess.TimeoutExpired) as exc:
                notes.append(f"{name}: did not run: {type(exc).__name__}: {exc}")
            print(notes[-1], file=sys.stderr, flush=True)
    text = "\n".join([
        f"Model `{model}`; {args.warmup:g} s warm-up + {args.duration:g} s measured per load point and tool; "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average before/after: {load_before:.1f}/{os.getloadavg()[0]:.1f}; "
        f"total {time.perf_counter() - started:.0f} s.", "",
        table(medians(rows), args.tolerance, lambda c: (c / request_s, c * args.output_tokens / request_s,
                                               args.latency_ms, request_s * 1000)),
        "", *(f"- {note}" for note in notes)])
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
