"""The program ends right after its exit handlers, without the interpreter's teardown (``cli.run``, issue 31).

Asserted by what runs, not by time: in a child interpreter, an exit handler still runs and the exit code is
the command's, while an object that only the teardown would free is never finalized. A live non-daemon thread
(``other_threads_alive``), or an exit asked for inside the command, gets the interpreter's normal exit.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

from mpcbench_async.cli import other_threads_alive


def program(body: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run ``program_code(body)`` with ``argv`` in a new interpreter."""
    return subprocess.run([sys.executable, "-c", program_code(body), *argv], capture_output=True, text=True,
                          timeout=120)


def program_code(body: str) -> str:
    """``body`` then ``cli.run()``, with an exit handler that prints and an object ``kept`` that says when it is
    freed."""
    return textwrap.dedent("""
        import atexit, sys
        class Kept:
            def __del__(self):
                print("finalized", flush=True)
        kept = Kept()
        atexit.register(print, "exit handler", flush=True)
        sys.argv = ["mpcbench-async", *sys.argv[1:]]
    """) + textwrap.dedent(body) + "\nfrom mpcbench_async.cli import run\nrun()\n"


def test_the_exit_handlers_run_and_the_teardown_does_not():
    done = program("", "--help")
    assert (True, "exit handler\n", 0) == (done.stdout.startswith("usage: mpcbench-async"),
                                           done.stdout.rpartition("\n\n")[2][-13:], done.returncode)
    assert "finalized" not in done.stdout


def test_an_exit_asked_for_inside_the_command_is_the_normal_one():
    """``--version`` (argparse) raises ``SystemExit`` out of ``main``: the interpreter's own exit, teardown and all."""
    done = program("", "--version")
    assert ("mpcbench-async 0.1.0\nexit handler\nfinalized\n", 0) == (done.stdout, done.returncode)


def test_a_user_error_keeps_its_exit_code_and_message():
    done = program("", "sweep", "--trials", "0")
    assert ("exit handler\n", "error: --trials must be at least 1, got 0\n", 2) == (
        done.stdout, done.stderr, done.returncode)


def test_a_live_thread_gets_the_normal_exit():
    """The interpreter's exit waits for a non-daemon thread; a quick exit would cut it off, so it is not taken."""
    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    daemon = threading.Thread(target=release.wait, daemon=True)
    daemon.start()
    before = other_threads_alive()
    worker.start()
    during = other_threads_alive()
    release.set()
    worker.join()
    daemon.join()
    assert (False, True, False) == (before, during, other_threads_alive())
