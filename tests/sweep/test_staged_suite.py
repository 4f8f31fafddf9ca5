"""A two-stage toy suite, defined here in under 60 lines, runs through the Runner's one loop and resumes.

Drafts (stage 0) feed reviews (stage 1) as MPCBench's runs feed judges: every ok draft is reviewed by each
reviewer, an error draft by none; a stored draft is reviewed only by the reviewers it lacks (issue 13, point 1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Literal, NamedTuple

import pytest

from mpcbench_async import ModelConfig
from mpcbench_async.llm import LLMClient, MockTransport, _registry, register_transport
from mpcbench_async.records import Message, UnitRecord
from mpcbench_async.runner import Outcome, Runner
from mpcbench_async.runtime import UnitFailure, read_jsonl


class Note(UnitRecord, kw_only=True):
    """A draft's or a review's record: what the model replied."""

    reply: str = ""
    kind: Literal["note"] = "note"


class Draft(NamedTuple):
    key: str
    model: str = "writer"


class Review(NamedTuple):
    key: str
    model: str
    draft: Note


class AskStage:
    """Asks each unit's model about ``text(unit)``; the record is ok when ``good(unit, reply)``."""

    def __init__(self, name: str, record_type: type, text: Callable, good: Callable) -> None:
        self.name, self.record_type, self.text, self.good = name, record_type, text, good

    async def run(self, unit: Draft | Review, client: LLMClient) -> UnitRecord:
        reply = (await client.chat(unit.model, [Message(role="user", content=self.text(unit))], key=unit.key)).content
        return self.record_type(key=unit.key, status="ok" if self.good(unit, reply) else "error", reply=reply)

    def failed(self, unit: Draft | Review, failure: UnitFailure) -> UnitRecord:
        return self.record_type(key=unit.key, status="error", error_class=failure.error_class)


class EditorialSuite:
    """Words drafted in capitals by ``writer``; each ok draft reviewed by every reviewer."""

    stages = (AskStage("drafts", Note, lambda u: u.key, lambda u, reply: reply == u.key.upper()),
              AskStage("reviews", Note, lambda u: u.draft.reply, lambda u, reply: True))

    def __init__(self, words: list[str], reviewers: list[str]) -> None:
        self.words, self.reviewers, self.models = words, reviewers, ["writer", *reviewers]

    def units(self) -> list[Draft]:
        return [Draft(word) for word in self.words]

    def follow_up_keys(self, stage: int, key: str) -> list[str]:
        return [f"{key}/{reviewer}" for reviewer in self.reviewers]

    def follow_ups(self, stage: int, record: Note) -> list[Review]:
        return [Review(f"{record.key}/{reviewer}", reviewer, record) for reviewer in self.reviewers]

    async def prepare(self) -> None:
        pass

    def finish(self, out_dir: Path) -> Outcome:
        ok = {r.key for stage in self.stages for r in read_jsonl(out_dir / f"{stage.name}.jsonl",
                                                                 type_=stage.record_type)[0] if r.status == "ok"}
        return Outcome(units=len(self.words) * (1 + len(self.reviewers)), ok=len(ok))


@pytest.fixture
def calls(monkeypatch) -> Counter[tuple[str, str]]:
    """(model, text) of every request the mock models answered: ``writer`` shouts, reviewers say ``fine``."""
    asked: Counter[tuple[str, str]] = Counter()

    def handler(endpoint, request) -> dict:
        text = request.body["messages"][-1]["content"]
        asked[endpoint.model, text] += 1
        reply = "fine" if endpoint.model != "writer" else text if text == "mumble" else text.upper()
        return {"choices": [{"message": {"content": reply}}]}

    monkeypatch.setattr(_registry, "_FACTORIES", dict(_registry._FACTORIES))
    register_transport("toy", lambda options: MockTransport(handler))
    return asked


async def run(out: Path, words: list[str], reviewers: list[str]) -> tuple[list[Outcome], Runner]:
    models = {name: {"transport": "toy", "retry": {"max_attempts": 1}} for name in ["writer", "r1", "r2"]}
    async with Runner(ModelConfig.from_dict({"models": models}), out_dir=out) as runner:
        return await runner.run_suites([EditorialSuite(words, reviewers)]), runner


def counters(runner: Runner) -> tuple[int, int, int, int]:
    s = runner.stats
    return s.cases_total, s.cases_skipped, s.cases_done, s.calls


async def test_drafts_feed_reviews_and_a_second_run_makes_no_call(tmp_path, calls):
    """Run 1: two drafts, the ok one reviewed by r1 and r2, the error one by none (its 2 reviews skipped).
    Run 2 of the same suite: every unit skipped, no call, the same outcome."""
    first, runner = await run(tmp_path, ["hi", "mumble"], ["r1", "r2"])
    assert ([Outcome(units=6, ok=3)], (6, 2, 4, 4)) == (first, counters(runner))
    assert Counter({("writer", "hi"): 1, ("writer", "mumble"): 1, ("r1", "HI"): 1, ("r2", "HI"): 1}) == calls
    drafts, _ = read_jsonl(tmp_path / "drafts.jsonl", type_=Note)
    reviews, _ = read_jsonl(tmp_path / "reviews.jsonl", type_=Note)
    assert [("hi", "ok", "HI"), ("mumble", "error", "mumble")] == sorted((r.key, r.status, r.reply) for r in drafts)
    assert [("hi/r1", "fine", "ok"), ("hi/r2", "fine", "ok")] == sorted(
        (r.key, r.reply, r.status) for r in reviews)
    again, runner = await run(tmp_path, ["hi", "mumble"], ["r1", "r2"])
    assert (first, (6, 6, 0, 0), 4) == (again, counters(runner), calls.total())


async def test_a_stored_draft_gets_only_the_reviews_it_lacks_and_a_new_draft_gets_all(tmp_path, calls):
    """Run 1 reviews with r1 only; run 2 adds reviewer r2 and the word ``yo``: ``hi`` is not drafted again and
    only r2 reviews it (from the stored draft), while the fresh ``yo`` is reviewed by r1 and r2."""
    await run(tmp_path, ["hi"], ["r1"])
    calls.clear()
    outcomes, runner = await run(tmp_path, ["hi", "yo"], ["r1", "r2"])
    assert Counter({("r2", "HI"): 1, ("writer", "yo"): 1, ("r1", "YO"): 1, ("r2", "YO"): 1}) == calls
    assert ([Outcome(units=6, ok=6)], (6, 2, 4, 4)) == (outcomes, counters(runner))
    reviews, _ = read_jsonl(tmp_path / "reviews.jsonl", type_=Note)
    assert ["hi/r1", "hi/r2", "yo/r1", "yo/r2"] == sorted(r.key for r in reviews)
