"""The ``mpcbench-async`` command line: a thin shell over the library.

One module per command group (``_sim``, ``_bench``); each registers its
sub-parser and a handler. ``main`` turns user errors (``BenchError``) into one
line on stderr and exit code 2, interrupts into 130, and never prints a raw
traceback for a user error. The exit codes are listed in ``_exit`` and in
``--help``.
"""

from __future__ import annotations

import argparse
import errno
import sys
from collections.abc import Sequence

from .._exceptions import BenchError, Interrupted
from . import _bench, _cache, _compare, _evaluate, _exit, _generate, _levels, _profile, _sim, _sweep, _tariff, _view

__all__ = ["build_parser", "main"]

_GROUPS = (_sweep, _generate, _evaluate, _tariff, _levels, _profile, _sim, _bench, _compare, _view, _cache)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mpcbench-async",
        allow_abbrev=False,
        description="Asynchronous, high-throughput runner for LLM-agent benchmarks "
        "(MPCBench and tariff pack verification). Inputs default to the working directory (model_config.json, "
        "prompt_config.json, schemas/, storage/packs/, tasks/ with data/ and scenarios/); one missing there is read "
        "from the copy shipped inside the package (tariff suites under storage/benchmarks/ are not shipped).",
        **_exit.with_epilog(),
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
    from ..runtime import configure_logging  # after parsing: --help and usage errors never load logging

    configure_logging(args.log_format, level=args.log_level)
    try:
        return int(args.handler(args) or 0)
    except Interrupted as exc:
        print(f"interrupted: {exc}", file=sys.stderr)
        return _exit.INTERRUPTED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return _exit.INTERRUPTED
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return _exit.USER_ERROR
    except OSError as exc:
        if exc.errno not in _USER_OS_ERRORS:
            raise
        print(f"error: {_os_error(exc)}", file=sys.stderr)
        return _exit.USER_ERROR
    except BaseExceptionGroup as group:  # raised inside a task group: report its user errors as one line
        leaves = _leaves(group)
        if any(isinstance(e, (Interrupted, KeyboardInterrupt)) for e in leaves):
            print("interrupted", file=sys.stderr)
            return _exit.INTERRUPTED
        if not all(_is_user_error(e) for e in leaves):
            raise
        messages = list(dict.fromkeys(_os_error(e) if isinstance(e, OSError) else str(e) for e in leaves))
        more = f" (and {len(messages) - 1} more error(s) like it)" if len(messages) > 1 else ""
        print(f"error: {messages[0]}{more}", file=sys.stderr)
        return _exit.USER_ERROR


# Operating-system errors a user causes and can fix (a full disk, a path that is a file, no permission).
_USER_OS_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.EISDIR,
                   errno.EEXIST, errno.EROFS, errno.ENOENT}


def _os_error(exc: OSError) -> str:
    where = exc.filename if exc.filename is not None else "output"
    return f"{where}: {exc.strerror or exc}"


def _is_user_error(exc: BaseException) -> bool:
    return isinstance(exc, BenchError) or (isinstance(exc, OSError) and exc.errno in _USER_OS_ERRORS)


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    """The non-group exceptions inside ``group``, however deeply nested."""
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out
