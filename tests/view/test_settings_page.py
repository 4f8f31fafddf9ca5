"""The settings page: what the sweep ran with, read from its manifest.json (models and params, prompt digests,
versions, every invocation and earlier experiment)."""

from __future__ import annotations

from aiohttp.test_utils import TestClient, TestServer

from mpcbench_async.sweep import Fingerprint, Manifest
from mpcbench_async.sweep._experiment import write_manifest
from mpcbench_async.sweep._records import Experiment, Invocation
from mpcbench_async.view import make_app, open_index
from tests.view.dom import parse


async def settings_page(sweep_dir):
    index = open_index(sweep_dir)
    try:
        async with TestClient(TestServer(make_app(index))) as client:
            response = await client.get("/settings")
            assert 200 == response.status
            return parse(await response.text())
    finally:
        index.close()


async def test_models_params_prompts_versions_and_history(sweep_dir):
    fingerprint = Fingerprint(max_turns=8, prompts={"agent": "a1b2", "judge": "c3d4"},
                              models={"gpt-x": {"params": {"temperature": 0}}, "judge-y": {"params": {}}})
    history = [Invocation(command="sweep", started_at="2026-11-28T10:00:00+00:00",
                          finished_at="2026-11-28T10:05:00+00:00"),
               Invocation(command="sweep --trials 2", started_at="2026-11-28T11:00:00+00:00", interrupted=True)]
    write_manifest(sweep_dir, Manifest(
        command="sweep --trials 2", config_hash="cfg123", prompts_hash="prm456",
        versions={"mpcbench-async": "0.1.0", "python": "3.11.7"}, started_at="2026-11-28T11:00:00+00:00",
        agent_models=["gpt-x"], judge_models=["judge-y"], trials=2, caps={"gpt-x": 64}, fingerprint=fingerprint,
        history=history, experiment=2, experiments=[Experiment(id=1, fingerprint=Fingerprint(max_turns=4))]))
    doc = await settings_page(sweep_dir)
    assert "Settings" in [a.text for a in doc.one(id="nav").all("a")]
    gpt = [td.text for td in doc.one("tr", data_model="gpt-x").all("td")]
    assert ["gpt-x", "agent", "64"] == gpt[:3] and '"temperature": 0' in gpt[3]
    assert ["judge-y", "judge", "–"] == [td.text for td in doc.one("tr", data_model="judge-y").all("td")][:3]
    assert [["agent", "a1b2"], ["judge", "c3d4"], ["prompt config file", "prm456"]] == [
        [td.text for td in tr.all("td")] for tr in doc.one("table", id="prompt-digests").one("tbody").all("tr")]
    assert ["mpcbench-async", "0.1.0"] == [td.text for td in doc.one("tr", data_package="mpcbench-async").all("td")]
    invocations = [[td.text for td in tr.all("td")] for tr in doc.one("table", id="invocations").one("tbody").all("tr")]
    assert [["1", "sweep", "1", "2026-11-28T10:00:00+00:00", "2026-11-28T10:05:00+00:00", ""],
            ["2", "sweep --trials 2", "1", "2026-11-28T11:00:00+00:00", "did not finish (killed?)", "yes"]] \
        == invocations
    assert '"max_turns": 4' in doc.one("table", id="earlier-experiments").text


async def test_without_a_manifest_it_says_the_settings_are_unknown(sweep_dir):
    doc = await settings_page(sweep_dir)
    assert "No manifest.json in this directory: its settings are unknown." == doc.one(id="no-settings").text
    (sweep_dir / "manifest.json").write_text("{torn")
    assert "not a sweep manifest" in (await settings_page(sweep_dir)).one(id="no-settings").text
