"""A real browser on the viewer and the HTML report: Debian's headless Chromium, driven by Playwright.

One sweep is made for the whole package with the sim and the real ``mpcbench-async sweep`` (2 agent
models, one of which calls tools, × 2 judges × 4 tasks × 2 trials, and two tariff cases), ``mpcbench-async
view`` serves it from a child process on a free loopback port, and each test gets a fresh page whose
console errors, uncaught exceptions and requests are recorded (``Watched``). The tests skip, saying why,
when ``/usr/bin/chromium`` or Playwright is missing: ``.ci/run`` installs chromium, and Playwright is a dev
extra. Playwright's own browser download (``playwright install``) is never used: it cannot work offline.
"""

from __future__ import annotations

import importlib.util
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from mpcbench_async.sim import SimServer
from mpcbench_async.testing import write_workspace
from tests.conftest import REPO

CHROMIUM = Path("/usr/bin/chromium")
REBOUND = "rebound.test"  # a name the browser resolves to 127.0.0.1, as a DNS-rebinding attacker's would
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1"]
CLI = "import sys; from mpcbench_async.cli import main; raise SystemExit(main(sys.argv[1:]))"
AGENTS = ("sim/lazy-agent", "sim/oracle-agent")
JUDGES = ("sim/judge", "sim/judge?latency_ms=1")  # the same rubric under two names: two judges that agree
TARIFF_CASES = ("positive/tariff_pos_01_cotton_crew_tshirt.json", "positive/tariff_pos_02_denim_jeans.json")
TRIALS = 2
# Put into task t1's prompt, which sim/lazy-agent quotes in its answer: markup from a sweep must show as text.
INJECTED = '<script>window.injected = 1</script><img src="https://example.invalid/x.png" onerror="window.injected = 2">'


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not CHROMIUM.exists():
        return f"Debian's chromium is not installed at {CHROMIUM} (apt-get install chromium; .ci/run does)"
    if importlib.util.find_spec("playwright") is None:
        return "Playwright for Python is not installed (a dev extra: pip install -e '.[dev]')"
    return None


def records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


@dataclass
class Sweep:
    """The fixture sweep's directory and its records, read back from its files."""

    out: Path
    runs: list[dict[str, Any]]
    judgements: list[dict[str, Any]]
    summary: dict[str, Any]

    def run(self, key: str) -> dict[str, Any]:
        return next(r for r in self.runs if r["key"] == key)


@dataclass
class Watched:
    """A page with every console error, uncaught exception and request it made recorded."""

    page: Any
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.page.on("console", lambda msg: self.errors.append(f"console: {msg.text}") if msg.type == "error" else None)
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        self.page.on("request", lambda request: self.requests.append(request.url))

    def foreign_requests(self, *allowed: str) -> list[str]:
        """Requests whose URL starts with none of ``allowed`` (e.g. the viewer's origin, ``file://``)."""
        return [url for url in self.requests if not url.startswith(("data:", "about:", *allowed))]


def _make_sweep(tmp: Path) -> Path:
    """Run the real ``mpcbench-async sweep`` (MPCBench and tariff suites) against an in-process sim."""
    async def build() -> Path:
        async with SimServer(seed=7) as sim:
            root = write_workspace(tmp / "ws", base_url=sim.base_url, agent_models=AGENTS, judge_models=JUDGES,
                                   defaults={"retry": {"initial_backoff": 0.01, "max_backoff": 0.05}, "timeout_s": 5})
            task = root / "tasks" / "email_reply" / "t1.json"
            spec = orjson.loads(task.read_bytes())
            task.write_bytes(orjson.dumps({**spec, "user_prompt": f"{spec['user_prompt']} {INJECTED}"}))
            config = orjson.loads((root / "model_config.json").read_bytes())
            (root / "model_config.json").write_bytes(orjson.dumps({**config, "tariff_models": ["sim/tariff"]}))
            for name in TARIFF_CASES:
                target = tmp / "suite" / "cases" / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(REPO / "storage" / "benchmarks" / "tariff" / "cases" / name, target)
            out = tmp / "sweep"
            proc = await anyio.run_process([
                sys.executable, "-c", CLI, "sweep", "--suite", "mpcbench,tariff", "--tariff-path", str(tmp / "suite"),
                "--pack", str(REPO / "storage" / "packs" / "tariff"), "--config", str(root / "model_config.json"),
                "--prompts", str(root / "prompt_config.json"), "--tasks-dir", str(root / "tasks"),
                "--data-dir", str(root / "data"), "--scenarios-dir", str(root / "scenarios"), "--out", str(out),
                "--trials", str(TRIALS), "--quiet"], check=False)
            assert 0 == proc.returncode, proc.stderr.decode()
            return out

    with ThreadPoolExecutor(1) as thread:  # Playwright's sync API holds an event loop in this thread
        return thread.submit(anyio.run, build).result()


@pytest.fixture(scope="package")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Sweep:
    out = _make_sweep(tmp_path_factory.mktemp("browser-sweep"))
    return Sweep(out=out, runs=records(out / "runs.jsonl"), judgements=records(out / "judgements.jsonl"),
                 summary=orjson.loads((out / "summary.json").read_bytes()))


@pytest.fixture(scope="package")
def viewer(sweep: Sweep, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``mpcbench-async view DIR --port 0`` in a child process; its base URL, from the line it prints."""
    with serve_viewer(sweep.out, tmp_path_factory.mktemp("viewer")) as url:
        yield url


@contextmanager
def serve_viewer(out: Path, logs: Path, *flags: str) -> Iterator[str]:
    """``mpcbench-async view OUT --port 0 FLAGS…`` in a child process (stderr in ``logs``), stopped with Ctrl-C after;
    its base URL, from the line it prints."""
    stderr = logs / "stderr.txt"
    with stderr.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-c", CLI, "view", str(out), "--port", "0", *flags],
                                stdout=subprocess.PIPE, stderr=err)
    assert proc.stdout is not None
    try:
        line = _first_line(proc.stdout, deadline=time.monotonic() + 60)
        prefix = "viewer: http://127.0.0.1:"
        assert line.startswith(prefix) and line.endswith("/"), (line, stderr.read_text())
        yield line.removeprefix("viewer: ")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def _first_line(stream: Any, *, deadline: float) -> str:
    """The child's first stdout line ('' if it exits first), waiting at most until ``deadline``."""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
            raise AssertionError("the viewer printed no line within 60 s")
    return stream.readline().decode().strip()


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """Debian's Chromium under Playwright, launched once for this package and closed after it: Playwright's sync
    API marks an event loop as running in this thread while it is open, which later async tests cannot share."""
    missing = browser_missing()
    if missing:
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield Watched(context.new_page())
    finally:
        context.close()
