"""Labelling runs in the viewer: the form on a run page, the POST that appends to labels.jsonl (same origin and
this start's token only, and only with an annotator), the next unlabelled run, and the calibration page."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from urllib.parse import unquote

import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer

from mpcbench_async.labels import read_labels
from mpcbench_async.view import make_app, open_index
from tests.view.dom import parse

ARS, SGR = "axis:answer_requirements_satisfaction", "axis:source_grounded_reasoning"


async def _client(sweep_dir, annotator: str | None) -> AsyncIterator[TestClient]:
    index = open_index(sweep_dir)
    async with TestClient(TestServer(make_app(index, annotator=annotator))) as client:
        yield client
    index.close()


@pytest.fixture
async def annotating(sweep_dir) -> AsyncIterator[TestClient]:
    async for client in _client(sweep_dir, "Ada"):
        yield client


@pytest.fixture
async def reading(sweep_dir) -> AsyncIterator[TestClient]:
    async for client in _client(sweep_dir, None):
        yield client


def kept_oracle_runs(sweep_dir) -> list[dict]:
    runs = [orjson.loads(line) for line in (sweep_dir / "runs.jsonl").read_bytes().splitlines()]
    return sorted((r for r in runs if r["model"] == "sim/oracle-agent"), key=lambda r: (r["task_id"], r["trial"]))


async def form_of(client: TestClient, key: str) -> dict[str, str]:
    """The run page's hidden fields (token, filters) and where it posts."""
    html = await (await client.get(f"/run/{key}")).text()
    found = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', html))
    found["action"] = re.search(r'<form id="label-form" method="post" action="([^"]+)">', html).group(1)
    return found


def origin(client: TestClient) -> dict[str, str]:
    return {"Origin": f"http://{client.server.host}:{client.server.port}"}


async def test_a_label_is_appended_with_who_and_when_and_the_records_stay_as_they_were(annotating, sweep_dir):
    run = kept_oracle_runs(sweep_dir)[0]
    check = run["checks"][0]["name"] if run["checks"] else None
    before = {name: (sweep_dir / name).read_bytes() for name in ("runs.jsonl", "judgements.jsonl")}
    form = await form_of(annotating, run["key"])
    assert f"/run/{run['key']}/labels" == form["action"]
    data = {"token": form["token"], "outcome": "wrong", ARS: "2", "reason": "the slot overlaps a meeting",
            "then": "stay", **({f"check:{check}": "wrong"} if check else {})}
    response = await annotating.post(form["action"], data=data, headers=origin(annotating), allow_redirects=False)
    assert (303, f"/run/{run['key']}#labels") == (response.status, response.headers["Location"])
    lines = [orjson.loads(line) for line in (sweep_dir / "labels.jsonl").read_bytes().splitlines()]
    assert sorted(["outcome", ARS, *([f"check:{check}"] if check else [])]) == sorted(line["item"] for line in lines)
    assert {("Ada", "the slot overlaps a meeting", run["key"])} == {(x["annotator"], x["reason"], x["run_key"])
                                                                    for x in lines}
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", x["at"]) for x in lines)
    assert before == {name: (sweep_dir / name).read_bytes() for name in before}
    page = parse(await (await annotating.get(f"/run/{run['key']}")).text())
    shown = {tr.attrs["data-item"]: tr.all("td")[1].text for tr in page.one(id="labels-latest").all("tr")
             if "data-item" in tr.attrs}
    assert {"outcome": "wrong", ARS: "2"}.items() <= shown.items()
    # the same form again changes nothing: no line appended; a changed score appends just that item
    await annotating.post(form["action"], data=data, headers=origin(annotating), allow_redirects=False)
    await annotating.post(form["action"], data={**data, ARS: "3"}, headers=origin(annotating), allow_redirects=False)
    labels = read_labels(sweep_dir)
    assert (len(lines) + 1, 3) == (labels.lines, labels.latest[(run["key"], ARS)].value)


@pytest.mark.parametrize(("headers", "token", "why"), [
    ({}, None, "403: a label must be sent from this viewer's own page (Origin or Sec-Fetch-Site differs)"),
    ({"Origin": "http://evil.example", "Sec-Fetch-Site": "same-origin"}, None,
     "403: a label must be sent from this viewer's own page (Origin or Sec-Fetch-Site differs)"),
    ({"Origin": "null"}, None,
     "403: a label must be sent from this viewer's own page (Origin or Sec-Fetch-Site differs)"),
    ({"Origin": "null", "Sec-Fetch-Site": "cross-site"}, None,
     "403: a label must be sent from this viewer's own page (Origin or Sec-Fetch-Site differs)"),
    (None, "forged", "403: this form is not from this viewer's current start: reload the run page"),
])
async def test_a_cross_site_or_tokenless_post_is_refused_and_writes_nothing(annotating, sweep_dir, headers, token, why):
    run = kept_oracle_runs(sweep_dir)[0]
    form = await form_of(annotating, run["key"])
    response = await annotating.post(form["action"], data={"token": token or form["token"], "outcome": "wrong"},
                                     headers=origin(annotating) if headers is None else headers,
                                     allow_redirects=False)
    assert (403, why) == (response.status, (await response.text()).strip())
    assert not (sweep_dir / "labels.jsonl").exists()


@pytest.mark.parametrize("headers", [{"Sec-Fetch-Site": "same-origin"},
                                     {"Origin": "null", "Sec-Fetch-Site": "same-origin"}])
async def test_same_origin_fetch_metadata_stands_in_for_a_missing_or_null_origin(annotating, sweep_dir, headers):
    """A browser sends ``Origin: null`` for a form POST from a page with ``Referrer-Policy: no-referrer``."""
    run = kept_oracle_runs(sweep_dir)[0]
    form = await form_of(annotating, run["key"])
    response = await annotating.post(form["action"], data={"token": form["token"], "outcome": "unsure"},
                                     headers=headers, allow_redirects=False)
    assert 303 == response.status
    assert "unsure" == read_labels(sweep_dir).latest[(run["key"], "outcome")].value


@pytest.mark.parametrize(("field", "value", "why"), [
    (ARS, "0", "400: axis:answer_requirements_satisfaction must be a whole score 1–5, not 0"),
    (SGR, "six", "400: axis:source_grounded_reasoning must be a whole score 1–5, not 'six'"),
    ("outcome", "great", "400: outcome must be one of correct, wrong, unsure, not 'great'"),
    ("check:no.such.check", "right", "400: check:no.such.check: this run has no such check"),
    ("speed", "fast", "400: unknown item 'speed' (outcome, axis:<answer_requirements_satisfaction | "
                      "source_grounded_reasoning> or check:<name>)"),
])
async def test_a_bad_label_is_one_clear_message_and_writes_nothing(annotating, sweep_dir, field, value, why):
    run = kept_oracle_runs(sweep_dir)[0]
    form = await form_of(annotating, run["key"])
    response = await annotating.post(form["action"], data={"token": form["token"], "outcome": "wrong", field: value},
                                     headers=origin(annotating), allow_redirects=False)
    assert (400, why) == (response.status, (await response.text()).strip())
    assert not (sweep_dir / "labels.jsonl").exists()


async def test_without_an_annotator_labels_are_shown_and_never_written(reading, sweep_dir):
    run = kept_oracle_runs(sweep_dir)[0]
    page = parse(await (await reading.get(f"/run/{run['key']}")).text())
    assert [] == page.all(id="label-form")
    assert "Read-only: start the viewer with --annotate --annotator NAME" in page.one(id="labels").text
    response = await reading.post(f"/run/{run['key']}/labels", data={"outcome": "wrong"}, headers=origin(reading))
    assert (403, "403: labels are read-only in this viewer: start it with --annotate --annotator NAME") == (
        response.status, (await response.text()).strip())
    assert not (sweep_dir / "labels.jsonl").exists()


async def test_next_unlabelled_run_follows_the_filter_skips_labelled_runs_and_wraps(annotating, sweep_dir):
    runs = [r["key"] for r in sorted(kept_oracle_runs(sweep_dir), key=lambda r: (r["task_type"], r["task_id"],
                                                                                 r["trial"], r["key"]))]
    first, second, third = runs[:3]
    form = await form_of(annotating, first)
    data = {"token": form["token"], "outcome": "correct", "model": "sim/oracle-agent", "then": "next"}
    response = await annotating.post(f"/run/{second}/labels", data=data, headers=origin(annotating),
                                     allow_redirects=False)
    assert f"/labels/next?after={second}&model=sim/oracle-agent" == unquote(response.headers["Location"])
    nxt = await annotating.get(response.headers["Location"], allow_redirects=False)
    assert f"/run/{third}?model=sim/oracle-agent#labels" == unquote(nxt.headers["Location"])
    last = await annotating.get(f"/labels/next?after={runs[-1]}&model=sim/oracle-agent", allow_redirects=False)
    assert f"/run/{first}?model=sim/oracle-agent#labels" == unquote(last.headers["Location"])  # wraps, skips `second`
    page = parse(await (await annotating.get(f"/run/{first}?model=sim/oracle-agent")).text())
    assert f"/labels/next?after={first}&model=sim%2Foracle-agent" == page.one(id="labels-next").attrs["href"]
    assert {"model": "sim/oracle-agent"} == {i.attrs["name"]: i.attrs["value"]
                                             for i in page.one(id="label-form").all("input", type="hidden")
                                             if i.attrs["name"] != "token"}


async def test_every_run_labelled_says_so(annotating, sweep_dir):
    runs = kept_oracle_runs(sweep_dir)
    form = await form_of(annotating, runs[0]["key"])
    for run in runs:
        await annotating.post(f"/run/{run['key']}/labels", data={"token": form["token"], "outcome": "wrong"},
                              headers=origin(annotating), allow_redirects=False)
    response = await annotating.get("/labels/next?model=sim/oracle-agent")
    assert "Every run in this filter has a label." in parse(await response.text()).one(id="labels-done").text


async def test_the_calibration_page_counts_labels_and_reports_bad_lines(annotating, sweep_dir):
    runs = kept_oracle_runs(sweep_dir)
    form = await form_of(annotating, runs[0]["key"])
    for i, run in enumerate(runs):
        await annotating.post(f"/run/{run['key']}/labels", data={"token": form["token"], ARS: str(1 + i % 5)},
                              headers=origin(annotating), allow_redirects=False)
    with (sweep_dir / "labels.jsonl").open("ab") as fh:
        fh.write(b'{"run_key": "run-gone", "item": "outcome", "value": "wrong", "annotator": "x", "at": "t"}\n'
                 b"not json\n{\"torn")
    page = parse(await (await annotating.get("/labels")).text())
    assert (f"{len(runs)} labelled run(s), {len(runs) + 1} label line(s) in labels.jsonl (the latest per run and item "
            "counts); skipped: 1 torn and 1 foreign line(s), and 1 label(s) of runs this sweep does not keep.") in \
        page.one(id="labels-counts").text
    rows = {(tr.attrs["data-judge"], tr.attrs["data-axis"]): [td.text for td in tr.all("td")]
            for tr in page.one(id="calibration-judges").all("tr") if "data-judge" in tr.attrs}
    assert {("sim/judge", "answer_requirements_satisfaction"),
            ("sim/judge?latency_ms=1", "answer_requirements_satisfaction")} == set(rows)
    assert all(cells[2] == str(len(runs)) for cells in rows.values())
    assert 3 == len(page.one(id="labels-warnings").all("li"))


async def test_the_labels_script_is_served_from_the_viewer(annotating):
    response = await annotating.get("/static/labels.js")
    assert (200, "text/javascript") == (response.status, response.content_type)
    assert "labels-next" in await response.text()


@pytest.mark.parametrize("flags", [["--annotate"], ["--annotator", "Ada"]])
def test_annotate_and_annotator_go_together(sweep_dir, capsys, flags):
    from mpcbench_async.cli import main

    assert 2 == main(["view", str(sweep_dir), *flags])
    assert ("error: view: --annotate and --annotator NAME go together (labels are written with who made them)"
            in capsys.readouterr().err)


def test_an_annotator_is_a_printable_name(sweep_dir, capsys):
    from mpcbench_async.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["view", str(sweep_dir), "--annotate", "--annotator", " "])
    assert 2 == exited.value.code
    assert "an annotator is a printable name of 1–100 characters, not ' '" in capsys.readouterr().err


async def test_the_calibration_page_starts_labelling_in_a_filter(annotating, sweep_dir):
    page = parse(await (await annotating.get("/labels")).text())
    form = page.one(id="labels-start")
    assert ("get", "/labels/next") == (form.attrs["method"], form.attrs["action"])
    assert ["model", "task", "family", "status"] == [s.attrs["name"] for s in form.all("select")]
    response = await annotating.get("/labels/next?model=sim/oracle-agent&status=ok", allow_redirects=False)
    location = unquote(response.headers["Location"])
    assert location.startswith("/run/run-") and location.endswith("?model=sim/oracle-agent&status=ok#labels")
    assert "sim/oracle-agent" == run_model(sweep_dir, location.removeprefix("/run/").split("?")[0])


def run_model(sweep_dir, key: str) -> str:
    return next(orjson.loads(line)["model"] for line in (sweep_dir / "runs.jsonl").read_bytes().splitlines()
                if orjson.loads(line)["key"] == key)
