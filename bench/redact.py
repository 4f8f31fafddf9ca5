"""What masking registered secrets costs on the hot path: every reply's content goes through ``mask_secrets``.

Three made-up random keys are registered (an ``sk-proj-`` key, a 32-character alphanumeric one and a
32-character hex one, as a sweep with three providers has), then ``mask_secrets`` runs over texts of the
sizes replies have — 2 KB and 1 MB — of four kinds: English-like prose (this repository's README), JSON
(MPCBench source data), a base64 blob (random bytes, as an image in a reply) and percent-heavy text (a
table of percentages and URL-encoded links); plus the same 1 MB prose with the key quoted once in each of
its eleven shapes (the path that masks). Also: building the matcher, the old masking (full value and cut
prefix only) for comparison, and ``decode_completion`` of a 1 MB reply with and without registered keys.
CPU time per call (``time.process_time``, so other processes' load does not count), medians of ``--repeats``
samples taken interleaved (new, old, new, old …).
"""

from __future__ import annotations

import argparse
import base64
import random
import statistics
import string
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from mpcbench_async import _redact
from mpcbench_async.llm._wire import decode_completion
from mpcbench_async.sim._leaks import key_shapes

REPO = Path(__file__).resolve().parent.parent
MB = 1_000_000


def _keys() -> tuple[str, str, str]:
    rng = random.Random(2025)
    alnum = string.ascii_letters + string.digits
    return ("sk-proj-" + "".join(rng.choice(alnum) for _ in range(40)), "".join(rng.choice(alnum) for _ in range(32)),
            "".join(rng.choice("0123456789abcdef") for _ in range(32)))


def _fill(seed: str, size: int) -> str:
    return (seed * (size // max(1, len(seed)) + 1))[:size]


def _texts(size: int) -> dict[str, str]:
    rng = random.Random(size)
    prose = (REPO / "README.md").read_text(encoding="utf-8")
    data = "".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "data").glob("*.json"))[:20])
    blob = base64.b64encode(rng.randbytes(size)).decode()
    percent = "".join(f"| row {i} | {rng.randint(0, 100)}% | https://x.test/q?s=a%20b%2Fc&n={i} |\n"
                      for i in range(size // 40))
    return {"prose": _fill(prose, size), "json": _fill(data, size), "base64": blob[:size],
            "percent": _fill(percent, size)}


def _per_call_s(work: Callable[[], object]) -> Callable[[], float]:
    """A sampler of ``work``'s CPU time per call (``time.process_time``: other processes' load does not count),
    looping enough calls for a ~20 ms sample."""
    start = time.process_time()
    work()
    loops = max(1, int(0.02 / max(time.process_time() - start, 1e-6)))

    def sample() -> float:
        begin = time.process_time()
        for _ in range(loops):
            work()
        return (time.process_time() - begin) / loops

    return sample


def _medians(repeats: int, *works: Callable[[], object]) -> list[float]:
    """Median CPU seconds per call of each of ``works``, sampled interleaved (A B A B …)."""
    samplers = [_per_call_s(work) for work in works]
    samples: list[list[float]] = [[] for _ in works]
    for _ in range(repeats):
        for sampler, into in zip(samplers, samples, strict=True):
            into.append(sampler())
    return [statistics.median(into) for into in samples]


def _old_mask(values: tuple[str, ...]) -> Callable[[str], str]:
    """The masking before issue 25: each full value, then any 8-character prefix of one followed by key chars."""
    import re

    starts = re.compile(f"(?:{'|'.join(re.escape(v[:8]) for v in values)})[A-Za-z0-9._~+/=-]*")

    def mask(text: str) -> str:
        for value in values:
            if value in text:
                text = text.replace(value, "***")
        return starts.sub("***", text)

    return mask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    keys = _keys()

    rows: list[tuple[str, str]] = []
    (build,) = _medians(args.repeats, lambda: _redact._Matcher(keys))
    rows.append(("build the matcher for 3 keys", f"{build * 1e3:.2f} ms"))
    old = _old_mask(keys)
    for key in keys:
        _redact.register_secret(key)
    matcher = _redact._registry.matcher
    assert matcher is not None
    windows = sum(len(found) for found in matcher.windows.values())
    rows.append(("windows / 4-grams in the matcher", f"{windows} / {len(matcher.grams)}"))

    for size, unit, scale in ((2_000, "µs", 1e6), (MB, "ms", 1e3)):
        for kind, text in _texts(size).items():
            new_s, old_s = _medians(args.repeats, lambda text=text: _redact.mask_secrets(text),
                                    lambda text=text: old(text))
            rows.append((f"{size // 1000} KB {kind}, no key: mask_secrets (old masking)",
                         f"{new_s * scale:.1f} {unit} ({old_s * scale:.1f} {unit})"))
    prose = _texts(MB)["prose"]
    quoted = prose[:MB // 2] + " ".join(key_shapes(keys[0]).values()) + prose[MB // 2:]
    (leak_s,) = _medians(args.repeats, lambda: _redact.mask_secrets(quoted))
    rows.append(("1 MB prose quoting the key in 11 shapes: mask_secrets", f"{leak_s * 1e3:.1f} ms"))
    (redact_s,) = _medians(max(3, args.repeats // 3), lambda: _redact.redact_text(prose))
    rows.append(("1 MB prose: redact_text (adds the shape rules; errors and logs only)", f"{redact_s * 1e3:.1f} ms"))

    registry = _redact._registry
    empty = _redact._Registry()
    call = {"id": "c1", "function": {"name": "search", "arguments": '{"query": "weekly report"}'}}
    for label, content, unit, scale in (("2 KB reply with a tool call", _texts(2_000)["prose"], "µs", 1e6),
                                        ("1 MB reply", prose, "ms", 1e3)):
        body = orjson.dumps({"choices": [{"message": {"role": "assistant", "content": content, "tool_calls": [call]}}]})

        def decode(with_keys: bool, body: bytes = body) -> None:
            _redact._registry = registry if with_keys else empty
            decode_completion(body, model="m", endpoint="e")

        with_keys, without = _medians(args.repeats, lambda: decode(True), lambda: decode(False))
        rows.append((f"decode a {label}: 3 keys registered / none",
                     f"{with_keys * scale:.1f} {unit} / {without * scale:.1f} {unit}"))

    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
