"""The ``mpcbench-async`` command line: a thin shell over the library.

One module per command group (``_sim``, ``_bench``); each builds its sub-parsers
and holds their handlers. ``COMMANDS`` lists every command with its one-line help
and the function that builds its parser, which runs only when the command is used
(``_commands``): ``--help`` builds one parser and imports no command module
(issue 31). ``main`` turns user errors (``BenchError``) into one line on stderr and
exit code 2, interrupts into 130, and never prints a raw traceback for a user
error. The exit codes are listed in ``_exit`` and in ``--help``.
"""

from __future__ import annotations

import errno
import sys

from .._lazy import TYPE_CHECKING
from ._help import cached_help

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import NoReturn

__all__ = ["COMMANDS", "build_parser", "main", "other_threads_alive", "run"]

# Every command: its name, the builder of its parser ("_module:function", imported when the command is used) and
# the one-line help the top-level --help lists. A command module adds its flags in its builder.
COMMANDS = (
    ("sweep", "_sweep:add_sweep", "every task × agent model × trial, judged by every judge model (the main job)"),
    ("summarize", "_sweep:add_summarize", "rebuild a sweep's summary from its JSONL files"),
    ("verify", "_sweep:add_verify",
     "re-score a finished sweep from its stored records, no model call: every stored score reproduced, or why not"),
    ("generate", "_generate:add_generate", "generate MPCBench world states and source data"),
    ("run-task", "_evaluate:add_run_task", "run one agent model on one task"),
    ("judge-input", "_evaluate:add_judge_input", "build a judge input from a run log"),
    ("judge", "_evaluate:add_judge", "score a judge input with a judge model"),
    ("run-and-judge", "_evaluate:add_run_and_judge", "every agent × judge model on one task, concurrently"),
    ("tariff", "_tariff:add_tariff", "the tariff pack verification benchmark"),
    ("levels", "_levels:add_levels",
     "the three-level MPCBench scheduling benchmark: import, check, verify, summary, generate"),
    ("profile", "_profile:add_profile", "throughput profiles of endpoints and sweeps"),
    ("sim", "_sim:add_sim", "the simulated OpenAI-compatible provider"),
    ("bench", "_bench:add_bench", "performance benchmarks"),
    ("compare", "_compare:add_compare", "compare two sweeps or two tariff reports (regressions, CI gate)"),
    ("view", "_view:add_view", "browse a sweep in a local web viewer (read-only)"),
    ("report", "_view:add_report", "write a sweep's results as one self-contained HTML file"),
    ("export", "_export:add_export", "write a sweep's runs as Inspect AI logs or OpenTelemetry GenAI traces"),
    ("labels", "_export:add_labels", "people's labels of a sweep's runs (view --annotate): export a calibration set"),
    ("cache", "_cache:add_cache", "inspect and prune the response cache"),
)


def build_parser() -> argparse.ArgumentParser:
    """The program's parser; a command's own parser is built when the command is parsed (``_commands``)."""
    import argparse

    from . import _exit
    from ._commands import add_commands

    parser = argparse.ArgumentParser(
        prog="mpcbench-async",
        allow_abbrev=False,
        description="Asynchronous, high-throughput runner for LLM-agent benchmarks "
        "(MPCBench and tariff pack verification). Inputs default to the working directory (model_config.json, "
        "prompt_config.json, schemas/, storage/packs/, tasks/ with data/ and scenarios/); one missing there is read "
        "from the copy shipped inside the package (tariff suites under storage/benchmarks/ are not shipped).",
        **_exit.with_epilog(),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}",
                        help="print the version and exit")
    parser.add_argument("--log-format", choices=("console", "json"), default="console",
                        help="log output format on stderr (default: console)")
    parser.add_argument("--log-level", default="warning",
                        choices=("debug", "info", "warning", "error"), help="log level (default: warning)")
    commands = add_commands(parser, dest="command", metavar="COMMAND", required=True)
    for name, build, help in COMMANDS:
        commands.add_command(name, build, help=help)
    return parser


def _version() -> str:
    """The package's one version string (``pyproject.toml`` reads it too), already in memory: no metadata lookup."""
    from .. import __version__

    return __version__


def run() -> NoReturn:
    """The program (the console script, ``python -m mpcbench_async``): ``main``, then exit without the teardown.

    Why: once a command is done, the interpreter's finalization frees every module and object one by one — 0.1–0.5 s
    after a 10k-unit sweep (``bench/sweep_timeline.py``: its ``atexit`` to its exit), wall time nobody uses (issue
    31). So the exit handlers run (logging's flush among them), stdout and stderr are flushed, and the process ends
    there (``os._exit``). Only when no other non-daemon thread is alive (the normal exit would wait for it: then
    it is taken), and not for an exception escaping ``main`` (its traceback and exit code 1 as usual).
    """
    code = main()
    if other_threads_alive():
        sys.exit(code)
    import atexit
    import os

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can reach it
            pass
    os._exit(code)


def other_threads_alive() -> bool:
    """Whether a non-daemon thread other than the main one is alive (the interpreter's exit would wait for it)."""
    threading = sys.modules.get("threading")  # never started a thread if never imported
    return threading is not None and any(t.is_alive() and not t.daemon and t is not threading.main_thread()
                                         for t in threading.enumerate())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` (default: the process's arguments); return the exit code (``_exit``)."""
    if (text := cached_help(sys.argv[1:] if argv is None else argv)) is not None:
        sys.stdout.write(text)  # what argparse prints for --help, stored (``_help``): no parser, no argparse
        return 0
    from . import _exit

    parser = build_parser()
    args = parser.parse_args(argv)
    from .._exceptions import BenchError, Interrupted  # after parsing, as logging: --help never loads them
    from ..runtime import configure_logging

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
        print(f"error: {_flagged(exc)}", file=sys.stderr)
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
        messages = list(dict.fromkeys(_os_error(e) if isinstance(e, OSError) else _flagged(e) for e in leaves))
        more = f" (and {len(messages) - 1} more error(s) like it)" if len(messages) > 1 else ""
        print(f"error: {messages[0]}{more}", file=sys.stderr)
        return _exit.USER_ERROR


# Operating-system errors a user causes and can fix (a full disk, a path that is a file, no permission).
_USER_OS_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.EISDIR,
                   errno.EEXIST, errno.EROFS, errno.ENOENT}


def _os_error(exc: OSError) -> str:
    where = exc.filename if exc.filename is not None else "output"
    return f"{where}: {exc.strerror or exc}"


def _flagged(exc: BaseException) -> str:
    """A library error's text as the CLI's user should read it: the settings it names shown as flags (``_flags``)."""
    from ._flags import flagged

    return flagged(str(exc), getattr(exc, "setting", None))


def _is_user_error(exc: BaseException) -> bool:
    from .._exceptions import BenchError

    return isinstance(exc, BenchError) or (isinstance(exc, OSError) and exc.errno in _USER_OS_ERRORS)


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    """The non-group exceptions inside ``group``, however deeply nested."""
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out
