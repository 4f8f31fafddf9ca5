"""Chaos scenario 5: a provider echoes the API key back in every shape; no shape of it reaches a file or a stream.

A sim in its own process plays careless providers: the leaky agent and judge answer every call with HTTP 500 or
400 whose body quotes the request's credentials, the bare key and the key in eleven shapes (``echo_auth`` and
``echo_shapes``: full, without its prefix, an 8-character part, split by spaces, by punctuation and by newlines,
percent-encoded, base64 at its three alignments, base64url); the quoting ones answer 200 with content that quotes
the key in those shapes (``quote_key``: the twelfth variant, stored as model content). Each trial draws three
fresh keys from the seed — an ``sk-proj-`` one (in the environment), one with no recognisable shape (in the
environment) and a hex one written literally into a configured ``api-key`` header — and runs ``sweep --log-level
debug`` with a response cache, alternating the native and openai-SDK transports. Every file under the sweep
directory (records, ledger, summaries, the SQLite cache) and the child's stdout and stderr are searched for key
material in any of those shapes (``mpcbench_async.testing.Scanner``). A trial held when nothing is found, and
the search is not blind: the masked echo and the masked quote are both in ``runs.jsonl``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from _chaos_common import MAIN, Row, run_child, sweep_args, traceback_in

from mpcbench_async.perf import sim_subprocess
from mpcbench_async.testing import Scanner, random_keys, write_workspace

LEAK = "fail_first=1000000&echo_auth=true&echo_shapes=true"
QUOTE = "quote_key=true"
TRANSPORTS = ("native", "openai")


def config(base_url: str, transport: str, header_key: str) -> dict[str, object]:
    """Every model calls the echoing sim: agents with the ``sk-`` key, judges with the plain one, the tariff-free
    third pair with the hex key in a header."""
    sk, plain, header = ({"api_key_env": "MPCB_CHAOS_SK_KEY"}, {"api_key_env": "MPCB_CHAOS_PLAIN_KEY"},
                         {"api_key_env": None, "headers": {"api-key": header_key}})
    models = {"leaky-agent": {"model": f"sim/oracle-agent?fault=500&{LEAK}", **sk},
              "quoting-agent": {"model": f"sim/oracle-agent?{QUOTE}", **sk},
              "header-agent": {"model": f"sim/oracle-agent?fault=400&{LEAK}", **header},
              "leaky-judge": {"model": f"sim/judge?fault=400&{LEAK}", **plain},
              "quoting-judge": {"model": f"sim/judge?{QUOTE}", **plain},
              "header-judge": {"model": f"sim/judge?{QUOTE}", **header}}
    return {"agent_models": ["leaky-agent", "quoting-agent", "header-agent"],
            "judge_models": ["leaky-judge", "quoting-judge", "header-judge"],
            "defaults": {"transport": transport, "base_url": base_url,
                         "retry": {"max_attempts": 2, "initial_backoff": 0.001, "max_backoff": 0.001}},
            "models": models}


async def run(tmp: Path, seed: int, rounds: int) -> Row:
    row = Row("server echoing the key in 12 shapes")
    rng = random.Random(seed)
    scanned_files = scanned_bytes = found = 0
    with sim_subprocess() as base_url:
        for trial in range(rounds):
            keys = random_keys(rng.randrange(1 << 30))
            transport = TRANSPORTS[trial % len(TRANSPORTS)]
            root = write_workspace(tmp / f"t{trial}" / "ws", tasks=2)
            (root / "model_config.json").write_text(json.dumps(config(base_url, transport, keys[2])))
            out = tmp / f"t{trial}" / "out"
            child = await run_child([*MAIN, "--log-level", "debug", *sweep_args(root, out, "--cache",
                                                                                  str(out / "cache"))],
                                    env={"MPCB_CHAOS_SK_KEY": keys[0], "MPCB_CHAOS_PLAIN_KEY": keys[1]})
            scanner = Scanner(keys)
            texts = {"<stdout>": child.stdout, "<stderr>": child.stderr}
            for path in sorted(p for p in out.rglob("*") if p.is_file()):
                data = path.read_bytes()
                scanned_files += 1
                scanned_bytes += len(data)
                texts[str(path.relative_to(out))] = data.decode("utf-8", "replace")
            leaks = {where: hits for where, text in texts.items() if (hits := scanner.find(text))}
            found += sum(len(hits) for hits in leaks.values())
            problems = traceback_in(child) + [f"{where}: {', '.join(hits)}" for where, hits in leaks.items()]
            runs = texts.get("runs.jsonl", "")
            if "shapes: full=***" not in runs or "Your key, quoted back:" not in runs:
                problems.append("the echo or the quote is missing from runs.jsonl: the search would be blind")
            row.trial(problems, f"trial {trial} ({transport})")
    row.worst = (f"{found} findings of key material in {scanned_files} files ({scanned_bytes / 1e6:.1f} MB) and "
                 f"{2 * row.tried} streams")
    return row
