"""A toy suite, defined here in under 60 lines, runs through the Runner and resumes (issue 13, point 1); with one
registration it is a suite of the real sweep, ``run_sweep(sweep_options(suites=[...]))`` (issue 27, point 1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Literal, NamedTuple

import msgspec
import pytest

from mpcbench_async import ModelConfig
from mpcbench_async.llm import LLMClient, MockTransport, _registry, register_transport
from mpcbench_async.records import Message, UnitRecord
from mpcbench_async.runner import SUITES, Outcome, Runner, SuiteRequest, register_suite, suite_names
from mpcbench_async.runtime import UnitFailure, read_jsonl
from mpcbench_async.sweep import run_sweep
from tests.sweep_options import sweep_options


class Word(NamedTuple):
    key: str
    model: str


class ShoutRecord(UnitRecord, kw_only=True):
    reply: str = ""
    kind: Literal["shout"] = "shout"


class ShoutSuite:
    """Ask the model to shout each word; a unit is ok when the reply is the word in capitals."""

    name, record_type, models = "shout", ShoutRecord, ["toy"]

    def __init__(self, words: list[str]) -> None:
        self.words = words

    def units(self) -> list[Word]:
        return [Word(word, "toy") for word in self.words]

    async def prepare(self) -> None:
        pass

    async def run(self, unit: Word, client: LLMClient) -> ShoutRecord:
        reply = (await client.chat("toy", [Message(role="user", content=unit.key)], key=unit.key)).content or ""
        return ShoutRecord(key=unit.key, status="ok" if reply == unit.key.upper() else "error", reply=reply)

    def failed(self, unit: Word, failure: UnitFailure) -> ShoutRecord:
        return ShoutRecord(key=unit.key, status="error", error_class=failure.error_class,
                           error_message=failure.message)

    def finish(self, records: list[ShoutRecord], out_dir: Path) -> Outcome:
        (out_dir / "shout.md").write_text("".join(f"{r.key}: {r.reply}\n" for r in records))
        ok = sum(r.status == "ok" for r in records)
        return Outcome(units=len(self.words), ok=ok, failed=len(records) - ok)


@pytest.fixture
def calls(monkeypatch) -> list[str]:
    """The words the mock model was asked to shout (``transport: "shout"`` in the config)."""
    asked: list[str] = []

    def handler(endpoint, request) -> dict:
        word = request.body["messages"][-1]["content"]
        asked.append(word)
        if word == "boom":
            raise ValueError("the toy model broke")
        return {"choices": [{"message": {"content": word.upper() if word != "mumble" else word}}]}

    monkeypatch.setattr(_registry, "_FACTORIES", dict(_registry._FACTORIES))
    register_transport("shout", lambda options: MockTransport(handler))
    return asked


async def run(out: Path, words: list[str]) -> tuple[list[Outcome], Runner]:
    config = ModelConfig.from_dict({"models": {"toy": {"transport": "shout", "retry": {"max_attempts": 1}}}})
    async with Runner(config, out_dir=out) as runner:
        return await runner.run_suites([ShoutSuite(words)]), runner


async def test_toy_suite_runs_through_the_runner_and_resumes(tmp_path, calls):
    """The first run asks once per word and writes records and report; the second asks nothing, reports the same."""
    first, runner = await run(tmp_path, ["hi", "mumble"])
    records, _ = read_jsonl(tmp_path / "shout.jsonl", type_=ShoutRecord)
    assert ([Outcome(units=2, ok=1, failed=1)], ["hi", "mumble"], (2, 0, 2, 1)) == (
        first, calls, (runner.stats.cases_total, runner.stats.cases_skipped, runner.stats.calls, runner.stats.errors))
    assert [("hi", "ok", "HI", "shout"), ("mumble", "error", "mumble", "shout")] == [
        (r.key, r.status, r.reply, r.kind) for r in records]
    again, runner = await run(tmp_path, ["hi", "mumble"])
    assert (first, ["hi", "mumble"], 2, 0) == (again, calls, runner.stats.cases_skipped, runner.stats.calls)
    assert "hi: HI\nmumble: mumble\n" == (tmp_path / "shout.md").read_text()


async def test_a_unit_that_raises_is_the_suites_error_record_and_the_others_go_on(tmp_path, calls):
    """Whatever a unit's run raises becomes ``Suite.failed``'s record, logged; a rerun leaves it (not retryable)."""
    first, _ = await run(tmp_path, ["boom", "hi"])
    second, runner = await run(tmp_path, ["boom", "hi"])
    records, _ = read_jsonl(tmp_path / "shout.jsonl", type_=ShoutRecord)
    assert [("boom", "error", "ValueError", "the toy model broke"), ("hi", "ok", None, None)] == sorted(
        (r.key, r.status, r.error_class, r.error_message) for r in records)
    assert ([Outcome(units=2, ok=1, failed=1)], first, ["boom", "hi"], 0) == (
        second, second, sorted(calls), runner.stats.calls)


@pytest.fixture
def shout_registered():
    """The toy's one registration, as a suite module beside its benchmark makes it at import (undone afterwards)."""
    register_suite("shout", lambda request: [ShoutSuite(["hi", "mumble"])])
    yield
    SUITES.pop("shout")


async def test_a_registered_suite_runs_through_the_sweep_entry_point(tmp_path, calls, shout_registered):
    """Adding a suite is one module and one registration: ``suites=["shout"]`` is then a sweep like any other, with
    its records, its report, its manifest and the sweep's outcome; a rerun resumes, asking the model nothing."""
    config = tmp_path / "models.json"
    config.write_text('{"models": {"toy": {"transport": "shout", "retry": {"max_attempts": 1}}}}')
    options = sweep_options(config=config, out=tmp_path / "out", suites=["shout"], handle_signals=False)
    first = await run_sweep(options)
    again = await run_sweep(options)
    records, _ = read_jsonl(tmp_path / "out" / "shout.jsonl", type_=ShoutRecord)
    assert ([("hi", "ok"), ("mumble", "error")], ["hi", "mumble"]) == ([(r.key, r.status) for r in records], calls)
    assert (Outcome(units=2, ok=1, failed=1), Outcome(units=2, ok=1, failed=1), False) == (
        first.outcome, again.outcome, first.interrupted)
    assert "hi: HI\nmumble: mumble\n" == (tmp_path / "out" / "shout.md").read_text()
    assert (tmp_path / "out" / "manifest.json").is_file()


def test_the_registry_refuses_a_name_taken_by_another_suite(shout_registered):
    """One name, one suite: a second factory under a registered name is a mistake, said at once."""
    with pytest.raises(ValueError, match=r"^suite 'shout' is already registered$"):
        register_suite("shout", lambda request: [])
    assert {"mpcbench", "tariff", "hscodecomp", "levels", "shout"} <= set(suite_names())
    assert callable(SUITES["shout"]) and SuiteRequest._fields == ("config", "prompts", "run", "limits", "inputs")


def test_every_record_kind_shares_the_unit_fields():
    """Agent runs, judgements and tariff cases are UnitRecords, each tagged with its own kind."""
    from mpcbench_async.mpcbench import AgentRunRecord, JudgeRecord
    from mpcbench_async.tariff import TariffCaseRecord

    kinds = [(issubclass(t, UnitRecord), t.__struct_fields__[:8],
              next(f.default for f in msgspec.structs.fields(t) if f.name == "kind"))
             for t in (AgentRunRecord, JudgeRecord, TariffCaseRecord)]
    base = ("key", "status", "retryable", "error_class", "error_message", "started_at", "finished_at", "kind")
    assert [(True, base, "agent_run"), (True, base, "judge"), (True, base, "tariff_case")] == kinds


def test_a_suite_is_imported_only_when_it_is_looked_up_and_each_loader_registers_what_it_declares():
    """The built-in loaders declare their suites' names (issue 31: a sweep of MPCBench alone imports neither the
    tariff nor the levels suites): ``suite_names`` lists them without importing any, ``suite_factory`` imports only
    the one asked for, and once every loader has run the registry holds exactly the declared names."""
    code = """
import sys
from mpcbench_async.runner import SUITES, _registry, suite_factory, suite_names
suites = ("mpcbench_async.mpcbench._suite", "mpcbench_async.levels._suite", "mpcbench_async.tariff._suite")
loaded = lambda: [m for m in suites if m in sys.modules]
names = suite_names()
print(names, loaded())
suite_factory("mpcbench")
print(loaded())
for name in [n for _, declared in list(_registry._loaders) for n in declared]:
    suite_factory(name)
print(sorted(SUITES) == names, loaded() == list(suites), _registry._loaders)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert [
        "['hscodecomp', 'levels', 'mpcbench', 'tariff'] []",
        "['mpcbench_async.mpcbench._suite']",
        "True True []",
    ] == out.stdout.splitlines()
