"""The generation repair loop and file handling, driven by the scripted sim policy."""

from __future__ import annotations

import orjson
import pytest

from mpcbench_async._prompts import PromptTemplate
from mpcbench_async.mpcbench import DataGenerator, PromptConfig, Scenario, load_prompts, load_schemas
from mpcbench_async.mpcbench._scenario import GlobalSettings, Person
from tests.conftest import REPO

SCENARIO = Scenario(
    scenario_id="sc_test", description="test", noise_level=0.0, depth=0.0, reference_now="2026-03-25T10:00:00+00:00",
    global_settings=GlobalSettings(timezone="Europe/London"),
    people=[Person(id="p_ana", name="Ana Ruiz", email="ana@x.io", team="Eng", role="PM")],
)
GOOD_CONTACTS = {"contacts": [{"id": "c1", "name": "Ana Ruiz", "email": "ana@x.io"}]}
BAD_CONTACTS = {"contacts": [{"id": "c1", "name": "Ana Ruiz"}]}


def scripted_prompts(steps: list[dict]) -> PromptConfig:
    """The project's prompts, with a SIM_SCRIPT in the source system prompt (braces escaped for format)."""
    base = load_prompts(REPO / "prompt_config.json")
    script = orjson.dumps(steps).decode().replace("{", "{{").replace("}", "}}")
    return PromptConfig(world_state=base.world_state, repair=base.repair,
                        source=PromptTemplate(system="SIM_SCRIPT: " + script, user=base.source.user))


def generator(make_client, tmp_path, steps, *, max_repairs=3, force=False):
    client = make_client("native")
    return DataGenerator(client, model="sim/scripted", schemas=load_schemas(str(REPO / "schemas")),
                         prompts=scripted_prompts(steps), data_dir=tmp_path, max_repairs=max_repairs, force=force)


class TestRepairLoop:
    async def test_invalid_reply_is_repaired_with_the_validation_errors(self, sim, make_client, tmp_path):
        """A reply missing a required field is sent back with the error; the fixed reply is written."""
        steps = [{"content": orjson.dumps(BAD_CONTACTS).decode()},
                 {"content": "```json\n" + orjson.dumps(GOOD_CONTACTS).decode() + "\n```"}]
        gen = generator(make_client, tmp_path, steps)
        docs, generated = {}, set()
        outcome = await gen.source(SCENARIO, {"people": []}, "contacts", docs, generated)
        assert ("written", 2) == (outcome.status, outcome.calls)
        assert GOOD_CONTACTS == orjson.loads((tmp_path / "sc_test_contacts.json").read_bytes())
        assert 2 == sim.stats.total_completed

    async def test_repair_message_carries_the_path_of_each_problem(self, make_client, tmp_path, monkeypatch):
        """The repair turn lists each problem with its JSON path."""
        steps = [{"content": orjson.dumps(BAD_CONTACTS).decode()}, {"content": orjson.dumps(GOOD_CONTACTS).decode()}]
        gen = generator(make_client, tmp_path, steps)
        seen = []
        real_chat = gen.client.chat

        async def spy(model, messages, tools=None, **kw):
            seen.append([m.content for m in messages])
            return await real_chat(model, messages, tools, **kw)

        monkeypatch.setattr(gen.client, "chat", spy)
        await gen.source(SCENARIO, {"people": []}, "contacts", {}, set())
        assert ("Your JSON does not pass validation. Fix every problem below and answer with the complete "
                "corrected JSON object only.\n\nProblems:\n- $.contacts[0]: 'email' is a required property"
                ) == seen[1][-1]

    async def test_gives_up_after_the_repair_budget_with_the_problems(self, make_client, tmp_path):
        """A model that never fixes its reply fails the file after max_repairs, naming the problem; nothing is
        written."""
        gen = generator(make_client, tmp_path, [{"content": "not json at all"}], max_repairs=1)
        outcome = await gen.source(SCENARIO, {"people": []}, "contacts", {}, set())
        assert "error" == outcome.status
        assert ("sc_test contacts: model 'sim/scripted' gave invalid data after 1 repair attempts: the reply is not "
                "a JSON object (invalid literal, expected 'null': line 1 column 1 (char 0))") == outcome.error
        assert not (tmp_path / "sc_test_contacts.json").exists()

    async def test_existing_file_is_kept_unless_forced(self, sim, make_client, tmp_path):
        """A valid file on disk is loaded, not regenerated; --force regenerates it."""
        (tmp_path / "sc_test_contacts.json").write_bytes(orjson.dumps(GOOD_CONTACTS))
        other = {"contacts": [{"id": "c9", "name": "Bo Li", "email": "bo@x.io"}]}
        steps = [{"content": orjson.dumps(other).decode()}]
        kept = await generator(make_client, tmp_path, steps).source(SCENARIO, {}, "contacts", {}, set())
        assert ("skipped", 0) == (kept.status, sim.stats.total_received)
        forced = await generator(make_client, tmp_path, steps, force=True).source(SCENARIO, {}, "contacts", {}, set())
        assert "written" == forced.status
        assert other == orjson.loads((tmp_path / "sc_test_contacts.json").read_bytes())

    async def test_invalid_existing_file_asks_for_force(self, make_client, tmp_path):
        """A hand-broken file on disk is reported with its path and the fix, not silently replaced."""
        path = tmp_path / "sc_test_contacts.json"
        path.write_bytes(orjson.dumps(BAD_CONTACTS))
        outcome = await generator(make_client, tmp_path, []).source(SCENARIO, {}, "contacts", {}, set())
        assert (f"{path}: existing file is invalid ($.contacts[0]: 'email' is a required property); rerun with "
                "--force to regenerate") == outcome.error
        assert orjson.dumps(BAD_CONTACTS) == path.read_bytes()


@pytest.mark.parametrize("reply", ["{}", '{"contacts": []}'])
async def test_schema_minimums_are_enforced(make_client, tmp_path, reply):
    """An empty contacts list or object never passes."""
    gen = generator(make_client, tmp_path, [{"content": reply}], max_repairs=0)
    outcome = await gen.source(SCENARIO, {}, "contacts", {}, set())
    assert "error" == outcome.status


class TestCrossSourceRepair:
    async def test_calendar_attendee_missing_from_contacts_is_repaired(self, sim, make_client, tmp_path):
        """After all six sources, a calendar attendee who is not a contact is sent back and the fix is written."""
        others = {
            "slack": {"channels": [{"id": "C1", "name": "g"}],
                      "users": [{"id": "U1", "name": "Ana", "email": "ana@x.io"}],
                      "messages": []},
            "gmail": {"threads": []},
            "contacts": GOOD_CONTACTS,
            "jira": {"projects": [{"key": "AB", "name": "A"}], "issues": []},
            "drive": {"files": [{"id": "f1", "name": "n", "mimeType": "text/plain", "content": "c",
                                 "modifiedTime": "2026-03-25T10:00:00+00:00"}]},
        }
        for name, doc in others.items():
            (tmp_path / f"sc_test_{name}.json").write_bytes(orjson.dumps(doc))

        def calendar(email):
            return {"calendars": [{"id": "cal1", "email": "ana@x.io"}],
                    "events": [{"id": "e1", "title": "Sync", "start": "2026-03-30T10:00:00+01:00",
                                "end": "2026-03-30T10:30:00+01:00", "attendees": [{"email": email}]}]}

        steps = [{"content": orjson.dumps(calendar("ghost@x.io")).decode()},
                 {"content": orjson.dumps(calendar("ana@x.io")).decode()}]
        gen = generator(make_client, tmp_path, steps)
        outcomes = await gen.sources(SCENARIO, {"people": []})
        written = [(o.name, o.status, o.calls) for o in outcomes if o.status == "written"]
        assert [("calendar", "written", 1), ("calendar", "written", 1)] == written
        assert calendar("ana@x.io") == orjson.loads((tmp_path / "sc_test_calendar.json").read_bytes())
        assert 2 == sim.stats.total_completed
