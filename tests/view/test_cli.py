"""``mpcbench-async view`` and ``report --html`` as a user runs them: the printed address, exit codes, messages."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.view.dom import parse

CLI = [sys.executable, "-m", "mpcbench_async"]


@contextmanager
def viewer(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``view`` in its own process; yields it and its printed URL, then stops it with Ctrl-C (SIGINT)."""
    proc = subprocess.Popen([*CLI, "view", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("viewer: http://127.0.0.1:"), (line, proc.stderr.read() if proc.stderr else "")
        yield proc, line.removeprefix("viewer: ").strip()
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310  (loopback, our own server)
        return response.read().decode()


class TestView:
    def test_prints_its_address_serves_the_pages_and_stops_on_ctrl_c_with_130(self, sweep_dir):
        with viewer(str(sweep_dir)) as (proc, url):
            assert url.endswith("/") and int(url.rsplit(":", 1)[1].rstrip("/")) > 0
            overview = parse(fetch(url))
            assert 2 == len(overview.one("table", id="leaderboard").one("tbody").all("tr"))
            assert "page 1 of 1 (18 runs)" == parse(fetch(url + "runs")).one(id="page-info").text
        assert 130 == proc.returncode  # stopped by Ctrl-C, as every command (README: exit codes)
        assert "" == proc.stdout.read()  # one line printed
        index = sweep_dir / ".view" / "index.sqlite"
        assert f"indexing {sweep_dir} (its files are new or changed since the last index; the index is kept in " \
               f"{index} for the next start) …\n" == proc.stderr.read()
        with viewer(str(sweep_dir)) as (proc, _):
            pass
        assert (130, "") == (proc.returncode, proc.stderr.read())  # the cached index: nothing to say

    def test_listens_on_the_given_port(self, sweep_dir):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with viewer(str(sweep_dir), "--port", str(port)) as (_, url):
            assert f"http://127.0.0.1:{port}/" == url

    def test_a_busy_port_is_one_clear_error(self, sweep_dir):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen()
            port = s.getsockname()[1]
            proc = subprocess.run([*CLI, "view", str(sweep_dir), "--port", str(port)], capture_output=True,
                                  text=True, timeout=60)
        assert 2 == proc.returncode
        assert proc.stderr.startswith(f"error: view: cannot listen on 127.0.0.1:{port} (")
        assert "Traceback" not in proc.stderr

    def test_help_says_where_the_index_lives(self):
        proc = subprocess.run([*CLI, "view", "--help"], capture_output=True, text=True, timeout=30)
        assert 0 == proc.returncode
        text = " ".join(proc.stdout.split())
        assert "DIR/.view/index.sqlite" in text and "when DIR is not writable it is kept in memory" in text


class TestReport:
    def test_writes_report_html_in_the_sweep_by_default(self, sweep_dir):
        proc = subprocess.run([*CLI, "report", str(sweep_dir), "--html", "--worst", "2", "--best", "1"],
                              capture_output=True, text=True, timeout=60)
        assert 0 == proc.returncode
        assert proc.stderr.startswith(f"indexing {sweep_dir} ")
        out = sweep_dir / "report.html"
        assert f"report: {out}\n" == proc.stdout
        doc = parse(out.read_text())
        assert (2, 1) == (len(doc.one(id="worst").all(cls="run")), len(doc.one(id="best").all(cls="run")))

    def test_writes_to_out(self, sweep_dir, tmp_path):
        out = tmp_path / "x" / "shared.html"
        proc = subprocess.run([*CLI, "report", str(sweep_dir), "--html", "--out", str(out)], capture_output=True,
                              text=True, timeout=60)
        assert 0 == proc.returncode, proc.stderr
        assert 5 == len(parse(out.read_text()).one(id="worst").all(cls="run"))


class TestNotASweep:
    def test_a_directory_without_sweep_files(self, tmp_path):
        for command in (["view", str(tmp_path)], ["report", str(tmp_path), "--html"]):
            proc = subprocess.run([*CLI, *command], capture_output=True, text=True, timeout=30)
            assert (2, f"error: {tmp_path}: no runs.jsonl or manifest.json here; is it a sweep output directory?\n") \
                == (proc.returncode, proc.stderr)

    def test_a_missing_directory(self, tmp_path):
        missing = tmp_path / "nope"
        proc = subprocess.run([*CLI, "view", str(missing)], capture_output=True, text=True, timeout=30)
        assert (2, f"error: {missing}: no such directory\n") == (proc.returncode, proc.stderr)

    def test_bad_numbers_are_usage_errors(self, tmp_path: Path):
        proc = subprocess.run([*CLI, "report", str(tmp_path), "--html", "--worst", "-1"], capture_output=True,
                              text=True, timeout=30)
        assert 2 == proc.returncode
        assert "argument --worst: must be 0 or more, got -1" in proc.stderr
        proc = subprocess.run([*CLI, "view", str(tmp_path), "--port", "70000"], capture_output=True, text=True,
                              timeout=30)
        assert 2 == proc.returncode
        assert "argument --port: port must be 0–65535, got 70000" in proc.stderr


class TestOpen:
    async def test_open_shows_the_address_in_a_browser_once_serving(self, sweep_dir, monkeypatch):
        """``--open`` hands the URL to the webbrowser module (stubbed here) after the pages are served."""
        import asyncio
        import webbrowser

        from mpcbench_async.cli._view import _listen, _serve
        from mpcbench_async.view import open_index

        opened: list[str] = []

        def fake_open(url: str) -> bool:
            opened.append(url)
            task.cancel()  # the viewer is up: stop serving
            return True

        monkeypatch.setattr(webbrowser, "open", fake_open)
        index, sock = open_index(sweep_dir), _listen(0)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
        task = asyncio.ensure_future(_serve(index, {}, sock, browse=url))
        try:
            await task
        except asyncio.CancelledError:
            pass
        index.close()
        sock.close()
        assert [url] == opened
