"""``mpcbench-async view DIR`` (a local web viewer of a sweep) and ``report DIR --html`` (one shareable file)."""

from __future__ import annotations

import argparse
import signal
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .._exceptions import InputError
from .._options import sweep_dir_problem
from . import _exit
from ._paths import output_file

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..view import BackgroundIndex, SweepIndex
    from ._commands import Commands

# Heavy imports (aiohttp, sqlite, the sweep package) live in the handlers: --help must stay fast.

BUILD_AFTER_S = 1.0  # with a fresh summary.json and no request yet, the index's build starts this long after serving

_INDEX_NOTE = ("The index of the sweep's kept runs is built once and cached in DIR/.view/index.sqlite, reused while "
               "the sweep's files keep their sizes and modification times; when DIR is not writable it is kept in "
               "memory and rebuilt on every start. The sweep's own files are never modified.")


def add_view(commands: Commands) -> None:
    view = commands.add_parser(
        "view",
        description="Serve a read-only web viewer of a sweep directory on 127.0.0.1: the overview (leaderboard with "
        "95%% intervals and pass^k, model × task-family heatmap, tariff section), a paged and filterable table of "
        "runs, each run's transcript with its tool calls, checks, judgements and timings, and a paired comparison "
        "of two agent models. Prints 'viewer: http://127.0.0.1:PORT/' and serves until Ctrl-C. The overview is served "
        "at once from summary.json when it is newer than the records (a finished sweep's); the index is opened or "
        "built in the background, and until it is ready the runs, run and compare pages say how far it is and "
        "reload themselves. " + _INDEX_NOTE)
    view.add_argument("dir", type=Path, help="the sweep's output directory (the sweep's --out)")
    view.add_argument("--port", type=_port, default=0, help="port to listen on (default: 0, a free port)")
    view.add_argument("--open", action="store_true", help="open the viewer in a web browser (default: open nothing)")
    view.add_argument("--annotate", action="store_true",
                      help="let people label runs on each run page (outcome, each judge axis 1–5, each check right "
                      "or wrong, a reason), appended with --annotator's name and the time to DIR/labels.jsonl; "
                      "j or n opens the next unlabelled run in the current filter; /labels shows the judges' and "
                      "checks' agreement with the labels (default: labels are shown, never written)")
    view.add_argument("--annotator", type=_annotator, default=None, metavar="NAME",
                      help="who is labelling (needed with --annotate)")
    _cases_option(view)
    view.set_defaults(handler=cmd_view)


def add_report(commands: Commands) -> None:
    report = commands.add_parser(
        "report",
        description="Write one self-contained HTML file (inline CSS and SVG charts, no network) with a sweep's "
        "overview — leaderboard, heatmap, tariff section — and the transcripts of its N worst and N best judged "
        "runs (by mean answer-requirements score over judges, then source-grounded reasoning). " + _INDEX_NOTE)
    report.add_argument("dir", type=Path, help="the sweep's output directory")
    report.add_argument("--html", action="store_true", required=True, help="write HTML (the one format for now)")
    report.add_argument("--out", type=output_file, default=None, help="the file to write (default: DIR/report.html)")
    report.add_argument("--worst", type=_count, default=5, help="worst runs to include (default: 5)")
    report.add_argument("--best", type=_count, default=5, help="best runs to include (default: 5)")
    _cases_option(report)
    report.set_defaults(handler=cmd_report)


def _cases_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", type=Path, action="append", default=[], metavar="CASES_DIR",
                        help="a tariff or HSCodeComp suite's cases/ directory, for accuracy per HTS chapter (the "
                        "chapter comes from each case's expected code); repeat for several suites")


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 0–65535, got {port}")
    return port


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {n}")
    return n


def _annotator(text: str) -> str:
    name = text.strip()
    if not name or len(name) > 100 or not name.isprintable():
        raise argparse.ArgumentTypeError(f"an annotator is a printable name of 1–100 characters, not {text!r}")
    return name


def _check_sweep(directory: Path) -> None:
    """A directory that is not a sweep is a user error, found before any work."""
    if (problem := sweep_dir_problem(directory)) is not None:  # the library's rule (open_index applies it too)
        raise InputError(problem)


def _building(directory: Path) -> Callable[[], None]:
    """What to say on stderr when the index has to be built (reading a large sweep takes a while)."""
    def say() -> None:
        print(f"indexing {directory} (its files are new or changed since the last index; the index is kept in "
              f"{directory / '.view' / 'index.sqlite'} for the next start) …", file=sys.stderr, flush=True)

    return say


def _listen(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (a busy port is a user error, found before the index is built)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise InputError(f"view: cannot listen on 127.0.0.1:{port} ({exc.strerror or exc})") from exc
    return sock


def cmd_view(args: argparse.Namespace) -> int:
    """Listen and print the address at once, then serve while the index is opened (or built) in the background.

    The overview is served at once from a fresh summary.json (a finished sweep's); the pages that need the
    index say how far its build is, reloading themselves until it is ready.
    """
    import asyncio

    from ..view import BackgroundIndex, case_chapters

    _check_sweep(args.dir)
    if args.annotate != (args.annotator is not None):
        raise InputError("view: --annotate and --annotator NAME go together (labels are written with who made them)")
    chapters = case_chapters(args.cases)
    sock = _listen(args.port)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    # A Ctrl-C before the pages are served is noted and acted on once serving (``_serve``): one clean way to
    # stop, rather than an interrupt inside the event loop's own setup.
    early: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: early.append(signum))
    try:
        print(f"viewer: {url}", flush=True)
        index = BackgroundIndex(args.dir, on_build=_building(args.dir))  # started once serving
        try:
            asyncio.run(_serve(index, chapters, sock, browse=url if args.open else None, interrupted=early,
                               annotator=args.annotator))
        finally:
            index.close()
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except KeyboardInterrupt:
        pass  # the Ctrl-C that stops the served viewer is below; one before serving lands here
    finally:
        sock.close()
    return _exit.INTERRUPTED  # a viewer runs until Ctrl-C: exit 130, as every command on an interrupt


async def _serve(index: BackgroundIndex | SweepIndex, chapters: dict[str, str], sock: socket.socket, *,
                 browse: str | None, interrupted: list[int] | None = None, annotator: str | None = None) -> None:
    """Serve on ``sock`` until Ctrl-C (or cancelled); ``browse``: a URL to open in a web browser once serving;
    ``interrupted``: non-empty when a Ctrl-C came before serving (then it stops at once, cleanly); ``annotator``: who
    labels runs (None: labels are not written)."""
    import asyncio

    from aiohttp import web

    from ..view import BackgroundIndex, make_app

    if not isinstance(index, BackgroundIndex):
        index = BackgroundIndex(index.out_dir, index=index)  # already open: nothing to build
    runner = web.AppRunner(make_app(index, chapters, bound_host=sock.getsockname()[0], annotator=annotator),
                           access_log=None)
    await runner.setup()
    stop, loop = asyncio.Event(), asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, stop.set)
    try:
        await web.SockSite(runner, sock).start()
        # The build's thread competes with the first page for the interpreter: with a fresh summary.json the
        # overview needs no index, so the build starts once it has been rendered, when a page needs the index, or
        # after BUILD_AFTER_S with no request; without one the overview waits for the build, which starts now.
        if index.has_summary:
            loop.call_later(BUILD_AFTER_S, index.start)
        else:
            index.start()
        if browse is not None:
            import webbrowser

            webbrowser.open(browse)
        if interrupted:
            stop.set()
        await stop.wait()
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        await runner.cleanup()


def cmd_report(args: argparse.Namespace) -> int:
    from ..view import case_chapters, open_index, write_report

    _check_sweep(args.dir)
    chapters = case_chapters(args.cases)
    index = open_index(args.dir, on_build=_building(args.dir))
    out = args.out or args.dir / "report.html"

    try:
        write_report(index, out, worst=args.worst, best=args.best, chapters=chapters)
    finally:
        index.close()
    print(f"report: {out}", file=sys.stdout)
    return 0
