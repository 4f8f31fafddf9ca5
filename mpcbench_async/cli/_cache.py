"""``mpcbench-async cache stats`` and ``cache prune``: look into and trim the response cache."""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from .._exceptions import InputError
from .._lazy import TYPE_CHECKING
from ._commands import add_commands

if TYPE_CHECKING:
    from ._commands import Commands

# Heavy imports live in the handlers: building a command's parser must stay cheap for its --help (issue 13).

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_LOCATION_HELP = ("the cache file, or the directory holding responses.sqlite3 (default: "
                  ".mpcbench_cache/responses.sqlite3)")


def add_cache(commands: Commands) -> None:
    cache = commands.add_parser(
        "cache",
        description="The response cache keeps model replies by a hash of everything that determines them "
        "(endpoint, model, messages, tools, params, seed, trial), so a repeated call costs nothing and sends nothing.")
    sub = add_commands(cache, dest="cache_command", metavar="SUBCOMMAND", required=True)
    sub.add_command("stats", _add_stats, help="entries, size and hits per model")
    sub.add_command("prune", _add_prune, help="delete entries by age and/or model")


def _add_stats(commands: Commands) -> None:
    stats = commands.add_parser("stats",
                                description="Show the cache's entries, size on disk and hits per model (hits are "
                                "counted by runs in readwrite mode).")
    stats.add_argument("location", nargs="?", type=Path, default=None, help=_LOCATION_HELP)
    stats.add_argument("--json", action="store_true", help="print the statistics as one JSON object")
    stats.set_defaults(handler=cmd_stats)


def _add_prune(commands: Commands) -> None:
    prune = commands.add_parser("prune",
                                description="Delete the entries older than --older-than and/or of --model (both: "
                                "entries matching both); --all deletes every entry. The file is compacted afterwards.")
    prune.add_argument("location", nargs="?", type=Path, default=None, help=_LOCATION_HELP)
    prune.add_argument("--older-than", type=_duration, default=None, metavar="AGE",
                       help="delete entries stored longer ago than AGE: a number with s, m, h or d (e.g. 30d)")
    prune.add_argument("--model", default=None, help="delete entries of this configured model name only")
    prune.add_argument("--all", action="store_true", help="delete every entry")
    prune.set_defaults(handler=cmd_prune)


def _duration(text: str) -> float:
    match = _DURATION.match(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(f"expected a duration like 30d, 12h, 45m or 90s, got {text!r}")
    return float(match.group(1)) * _UNIT_S[match.group(2)]


def _existing(location: Path | None) -> Path:
    from ..llm import cache_path

    path = cache_path(location)
    if not path.is_file():
        raise InputError(f"{path}: no response cache here (nothing cached yet, or pass the cache's location)")
    return path


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def cmd_stats(args: argparse.Namespace) -> int:
    import msgspec

    from ..llm import ResponseCache

    with ResponseCache(_existing(args.location), mode="read") as cache:
        stats = cache.stats()
    if args.json:
        print(msgspec.json.encode(stats).decode())
        return 0
    print(f"{stats.path}: {stats.entries} entries, {stats.size_bytes / 1e6:.2f} MB")
    if stats.models:
        width = max(len("model"), *(len(m.model) for m in stats.models))
        print(f"{'model':<{width}}  {'entries':>8}  {'hits':>8}  {'oldest':<16}  newest")
        for m in stats.models:
            print(f"{m.model:<{width}}  {m.entries:>8}  {m.hits:>8}  {_when(m.oldest):<16}  {_when(m.newest)}")
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    from ..llm import ResponseCache

    if args.all == (args.older_than is not None or args.model is not None):
        raise InputError("cache prune: give --older-than and/or --model, or --all to delete every entry")
    with ResponseCache(_existing(args.location), mode="readwrite") as cache:
        removed = cache.prune(older_than_s=args.older_than, model=args.model)
        left = cache.stats()
    print(f"{left.path}: deleted {removed} entries; {left.entries} left, {left.size_bytes / 1e6:.2f} MB")
    return 0
