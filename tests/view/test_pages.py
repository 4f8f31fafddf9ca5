"""The viewer's pages over HTTP on loopback (aiohttp's test server): rows, transcripts, paging, filters, 404."""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer

from mpcbench_async.stats import paired_difference
from mpcbench_async.sweep import kept_runs, summarize
from mpcbench_async.view import make_app, open_index
from tests.view.conftest import AGENTS, ERROR_KEY, HOSTILE, INFRA_KEY, JUDGES
from tests.view.dom import Element, parse


@pytest.fixture
async def client(sweep_dir) -> AsyncIterator[TestClient]:
    index = open_index(sweep_dir)
    async with TestClient(TestServer(make_app(index))) as client:
        yield client
    index.close()


async def get(client: TestClient, path: str, status: int = 200) -> Element:
    response = await client.get(path)
    assert status == response.status
    assert "text/html" == response.content_type
    return parse(await response.text())


def row_keys(doc: Element) -> list[str]:
    return [tr.attrs["data-key"] for tr in doc.one("table", id="runs").one("tbody").all("tr")]


class TestEveryPage:
    @pytest.mark.parametrize("path", ["/", "/runs", "/compare", "/settings", f"/run/{ERROR_KEY}"])
    async def test_has_a_title_a_nav_and_no_external_reference(self, client, path):
        response = await client.get(path)
        text = await response.text()
        doc = parse(text)
        assert doc.one("head").one("title").text
        assert ["/", "/runs", "/compare", "/settings"] == [a.attrs["href"] for a in doc.one("nav").all("a")]
        assert not any(e.attrs.get(a, "").startswith(("http:", "https:", "//"))
                       for e in doc.all() for a in ("src", "href", "action"))


class TestOverview:
    async def test_errors_by_class_come_right_after_the_counts(self, client, sweep_dir):
        """The sweep's two kept errors, as the summary groups them: class, model, count, infrastructure, the
        message and what to do; the section sits between the counts and the leaderboard."""
        doc = await get(client, "/")
        section = doc.one("section", id="errors")
        rows = [[td.text for td in tr.all("td")] for tr in section.one("tbody").all("tr")]
        assert [[e.error_class, e.model, str(e.count), str(e.retryable), e.example, e.hint]
                for e in summarize(sweep_dir).errors] == rows
        assert {("ContentFilterError", "the reply was filtered"), ("RateLimitError", "429 after 10 attempts")} == {
            (row[0], row[4]) for row in rows}
        html = await (await client.get("/")).text()
        assert html.index('id="counts"') < html.index('id="errors"') < html.index('id="leaderboard"')

    async def test_the_validity_certificate_is_the_summarys(self, client, sweep_dir):
        """The overview shows the certificate: its verdict (no baselines here: unknown, and why), one row per family
        and one for all with the summary's figures, and its notes."""
        cert = summarize(sweep_dir).certificate
        section = (await get(client, "/")).one("section", id="certificate")
        assert "unknown" == section.attrs["data-status"]
        assert "Validity certificate: unknown: the sweep wrote no baselines (certificate_baselines.json)" == (
            section.one("h2").text)
        rows = [[td.text for td in tr.all("td")] for tr in section.one("tbody").all("tr")]
        assert [f.family for f in cert.families] == [row[0] for row in rows]
        assert [[str(f.tasks), str(f.tasks_without_check), "–", "–", "–"] for f in cert.families] == [
            row[1:6] for row in rows]
        assert any(li.text.startswith("judge–judge agreement: sim/judge vs ") for li in section.all("li"))

    async def test_leaderboard_has_one_row_per_agent_model_with_the_summarys_figures(self, client, sweep_dir):
        """Every cell is the summary's: both axes and the check rate with their CIs, pass^k, counts, spend."""
        doc = await get(client, "/")
        board = doc.one("table", id="leaderboard")
        header = [th.text for th in board.one("thead").all("th")]
        assert ["agent model", "ARS (0–5) [95% CI]", "SGR (0–5) [95% CI]", "check pass rate [95% CI]",
                "pass^1", "tasks checked", "unverified", "runs", "errors", "infra errors", "tokens (kept)",
                "cost USD (kept)",
                "latency p50 / p95 s", "trial variance ARS / SGR"] == header
        rows = board.one("tbody").all("tr")
        assert list(AGENTS) == [tr.attrs["data-model"] for tr in rows]
        summary = summarize(sweep_dir)

        def estimate(e, show=lambda v: f"{v:.2f}"):
            return show(e.mean) + (f" [{show(e.ci.low)}, {show(e.ci.high)}]" if e.ci else "")

        for tr, m in zip(rows, summary.models, strict=True):
            passes = {p.k: f"{100 * p.value:.1f}%" for p in m.stats.pass_hat_k}
            assert [m.model, estimate(m.stats.ars), estimate(m.stats.sgr), "–",
                    passes.get(1, "–"), f"{m.tasks_checked} of {m.tasks}", str(m.unverified), str(m.runs),
                    str(m.errors), str(m.infra_errors),
                    str(m.kept.tokens), f"{m.kept.cost_usd:.4f}",
                    f"{m.latency_p50_s:.2f} / {m.latency_p95_s:.2f}",
                    f"{m.stats.trial_variance.ars:.2f} / {m.stats.trial_variance.sgr:.2f}"] == [
                td.text for td in tr.all("td")]
        echo = [td.text for td in doc.one("tr", data_model="sim/echo").all("td")]
        assert ("10", "1", "1") == tuple(echo[7:10])
        assert ("1 of 4", "8") == tuple(echo[5:7])  # no task has a check: only the errored task is a (failed) trial

    async def test_bar_charts_of_both_axes_with_ci_whiskers(self, client, sweep_dir):
        charts = (await get(client, "/")).one(id="leaderboard-section").all("svg")
        assert 2 == len(charts)
        summary = summarize(sweep_dir)
        for chart in charts:
            assert list(AGENTS) == [t.text for t in chart.all("text", cls="bar-label")]
            assert sum(m.stats.ars.ci is not None for m in summary.models) == len(chart.all("g", cls="whisker"))

    async def test_paired_differences_and_judge_agreement_from_the_summary(self, client, sweep_dir):
        doc = await get(client, "/")
        summary = summarize(sweep_dir)
        pair = summary.paired[0]
        row = doc.one("table", id="model-pairs").one("tr", data_axis="ars")
        assert [pair.model_a, pair.model_b, "ARS", str(pair.ars.n)] == [td.text for td in row.all("td")][:4]
        agreement = summary.judge_agreement[0]
        row = doc.one("table", id="agreement").one("tr", data_axis="ars")
        assert [*JUDGES, "ARS", str(agreement.n)] == [td.text for td in row.all("td")][:4]

    async def test_heatmap_is_an_svg_of_models_by_task_family_with_axis_labels(self, client, sweep_dir):
        section = (await get(client, "/")).one("section", id="heatmap")
        svg = section.one("svg")
        assert list(AGENTS) == [t.text for t in svg.all("text", cls="row-label")]
        families = sorted({r.task_type for r in kept_runs(sweep_dir)})
        assert families == [t.text for t in svg.all("text", cls="column-label")]
        assert ["task family (task_type)", "agent model"] == [t.text for t in svg.all("text", cls="axis-label")]
        cell = svg.one("g", cls="cell", data_row="sim/oracle-agent", data_column="planning")
        rows = [r for r in kept_runs(sweep_dir) if (r.agent_model, r.task_type) == ("sim/oracle-agent", "planning")]
        means = [sum(s[0] for s in r.scores.values()) / len(r.scores) for r in rows]
        assert f"{sum(means) / len(means):.2f}" == cell.one("text").text

    async def test_no_tariff_section_without_tariff_reports(self, client):
        assert [] == (await get(client, "/")).all("section", id="tariff")


class TestRuns:
    async def test_first_page_lists_every_run_in_model_family_task_trial_order(self, client, sweep_dir):
        doc = await get(client, "/runs")
        expected = sorted(kept_runs(sweep_dir), key=lambda r: (r.agent_model, r.task_type, r.task_id, r.trial, r.key))
        assert [r.key for r in expected] == row_keys(doc)
        assert "page 1 of 1 (18 runs)" == doc.one(id="page-info").text

    async def test_a_row_shows_model_task_family_trial_status_scores_and_checks(self, client, sweep_dir):
        want = next(r for r in kept_runs(sweep_dir) if r.agent_model == "sim/oracle-agent")
        tr = (await get(client, "/runs")).one("tr", data_key=want.key)
        cells = [td.text for td in tr.all("td")]
        assert [want.key, want.agent_model, want.task_id, want.task_type, str(want.trial), "ok", ""] == cells[:7]
        assert f"/run/{want.key}" == tr.one("a").attrs["href"]
        judges = "; ".join(f"{j}: {s[0]}/{s[1]}" for j, s in sorted(want.scores.items()))
        assert judges == cells[9]
        assert ("–", "unverified") == (cells[10], cells[11])  # the workspace's tasks have nothing to check

    async def test_an_error_row_names_its_class(self, client):
        cells = [td.text for td in (await get(client, "/runs")).one("tr", data_key=ERROR_KEY).all("td")]
        assert ("error", "ContentFilterError") == (cells[5], cells[6])

    async def test_sorting_by_a_column_and_back(self, client, sweep_dir):
        kept = kept_runs(sweep_dir)
        doc = await get(client, "/runs?sort=trial&desc=1")
        trials = {r.key: r.trial for r in kept}
        assert sorted(trials.values(), reverse=True) == [trials[k] for k in row_keys(doc)]
        header = doc.one("table", id="runs").one("th", data_sort="trial")
        assert ("trial ▼", "/runs?sort=trial") == (header.text, header.one("a").attrs["href"])
        errors = row_keys(await get(client, "/runs?sort=error&desc=1"))
        assert {ERROR_KEY, INFRA_KEY} == set(errors[:2])  # classes before the runs without one
        assert "/runs?sort=model" == doc.one("th", data_sort="model").one("a").attrs["href"]

    async def test_search_over_the_final_answers(self, client, sweep_dir):
        """The newer record's answer is the kept one of its run: searching its words finds exactly that run."""
        doc = await get(client, "/runs?q=NEWER+record")
        [newer] = [r.key for r in kept_runs(sweep_dir) if (r.agent_model, r.task_id, r.trial) == ("sim/echo", "t0", 0)]
        assert [newer] == row_keys(doc)
        assert "page 1 of 1 (1 runs)" == doc.one(id="page-info").text
        assert "NEWER record" == doc.one("input", name="q").attrs["value"]
        assert [] == row_keys(await get(client, "/runs?q=no+answer+says+this"))

    async def test_paging_by_per_page(self, client):
        everything = row_keys(await get(client, "/runs"))
        first = await get(client, "/runs?per_page=5")
        assert "page 1 of 4 (18 runs)" == first.one(id="page-info").text
        assert everything[:5] == row_keys(first)
        assert "/runs?per_page=5&page=2" == first.one(id="next-page").attrs["href"]
        assert "href" not in first.one(id="prev-page").attrs
        last = await get(client, "/runs?per_page=5&page=4")
        assert everything[15:] == row_keys(last)
        assert "page 4 of 4 (18 runs)" == last.one(id="page-info").text
        assert "/runs?per_page=5&page=3" == last.one(id="prev-page").attrs["href"]
        assert "href" not in last.one(id="next-page").attrs

    async def test_a_page_past_the_end_or_malformed_shows_a_real_page(self, client):
        assert "page 4 of 4 (18 runs)" == (await get(client, "/runs?per_page=5&page=99")).one(id="page-info").text
        assert "page 1 of 1 (18 runs)" == (await get(client, "/runs?page=x&per_page=0")).one(id="page-info").text

    async def test_fifty_per_page_by_default(self, client):
        doc = await get(client, "/runs?per_page=50")
        assert 18 == len(row_keys(doc))

    @pytest.mark.parametrize(("query", "count"), [("model=sim/echo", 10), ("model=sim/oracle-agent", 8),
                                                  ("task=t1", 6), ("family=planning", 8), ("status=error", 1),
                                                  ("status=infra", 1), ("status=ok", 16),
                                                  ("model=sim/echo&task=t1&status=infra", 1), ("task=nope", 0)])
    async def test_filters(self, client, sweep_dir, query, count):
        doc = await get(client, f"/runs?{query}")
        keys = row_keys(doc)
        assert count == len(keys)
        assert f"page 1 of 1 ({count} runs)" == doc.one(id="page-info").text
        wanted = dict(part.split("=") for part in query.split("&"))
        for key in keys:
            cells = [td.text for td in doc.one("tr", data_key=key).all("td")]
            assert wanted.get("model", cells[1]) == cells[1]
            assert wanted.get("task", cells[2]) == cells[2]
            assert wanted.get("family", cells[3]) == cells[3]

    async def test_the_filter_form_keeps_the_choices_and_paging_keeps_the_filters(self, client):
        doc = await get(client, "/runs?model=sim/echo&per_page=3")
        form = doc.one("form", id="filters")
        chosen = {s.attrs["name"]: next((o.attrs["value"] for o in s.all("option") if "selected" in o.attrs), "")
                  for s in form.all("select")}
        assert {"model": "sim/echo", "task": "", "family": "", "status": ""} == chosen
        assert "/runs?model=sim%2Fecho&per_page=3&page=2" == doc.one(id="next-page").attrs["href"]
        assert ["", *AGENTS] == [o.attrs["value"] for o in form.one("select", name="model").all("option")]


class TestRun:
    async def test_transcript_shows_each_tool_call_with_its_arguments_and_result(self, client, sweep_dir):
        index = open_index(sweep_dir)
        row = index.runs("model = 'sim/oracle-agent' AND task = 't1'")[0]
        record = index.record(row)
        assert record.run.raw_tool_calls, "the oracle agent calls tools"
        doc = await get(client, f"/run/{row['key']}")
        transcript = doc.one(id="transcript")
        calls = transcript.all(cls="tool-call")
        assert [c.tool_name for c in record.run.raw_tool_calls] == [c.one(cls="tool-name").text for c in calls]
        for call, shown in zip(record.run.raw_tool_calls, calls, strict=True):
            assert call.arguments == orjson.loads(shown.one(cls="tool-args").one("pre").text)
            assert call.result == orjson.loads(shown.one(cls="tool-result").one("pre").text)
        roles = [m.attrs["data-role"] for m in transcript.all(cls="message")]
        assert ["user", *["assistant"] * len(calls), "assistant"] == roles
        assert record.run.user_prompt == transcript.one(cls="message", data_role="user").one("pre").text
        assert record.run.final_answer == doc.one(id="final-answer").one("pre").text

    async def test_checks_judgements_and_timings(self, client, sweep_dir):
        index = open_index(sweep_dir)
        row = index.runs("model = 'sim/oracle-agent'")[0]
        record = index.record(row)
        doc = await get(client, f"/run/{row['key']}")
        checks = doc.one("table", id="checks").one("tbody").all("tr")
        assert [(c.name, c.status, c.detail) for c in record.checks] == [
            tuple(td.text for td in tr.all("td")) for tr in checks]
        judged = doc.one(id="judgements").all(cls="judgement")
        assert list(JUDGES) == [j.attrs["data-judge"] for j in judged]
        for shown, kept in zip(judged, index.judgements(row), strict=True):
            scores = kept.judgement.scores
            assert str(scores.answer_requirements_satisfaction.score) == shown.one(cls="score-ars").text
            assert str(scores.source_grounded_reasoning.score) == shown.one(cls="score-sgr").text
            assert scores.source_grounded_reasoning.justification in shown.one(cls="rationale").text
        timings = {tr.one("th").text: tr.one("td").text for tr in doc.one("table", id="timings").all("tr")}
        assert f"{record.run.usage.prompt_tokens} / {record.run.usage.completion_tokens} / " \
               f"{record.run.usage.total_tokens}" == timings["tokens (prompt / completion / total)"]
        assert f"{record.run.cost_usd:.6f}" == timings["cost USD"]
        assert str(len(record.run.raw_tool_calls)) == timings["tool calls"]

    async def test_model_output_is_escaped(self, client, sweep_dir):
        """The echoed ``<script>`` arrives as text, never as an element."""
        index = open_index(sweep_dir)
        row = index.runs("model = 'sim/echo' AND task = 't0' AND trial = 1")[0]
        response = await client.get(f"/run/{row['key']}")
        text = await response.text()
        assert '<script>alert("pwned")</script>' not in text
        assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in text
        doc = parse(text)
        assert HOSTILE in doc.one(id="final-answer").text
        assert 1 == len(doc.all("script"))  # the page's own

    async def test_an_error_run_says_why_and_has_no_transcript(self, client):
        doc = await get(client, f"/run/{ERROR_KEY}")
        assert "ContentFilterError: the reply was filtered" in doc.one(id="transcript").text
        assert [] == doc.one(id="judgements").all(cls="judgement")
        assert "infra error" in (await get(client, f"/run/{INFRA_KEY}")).one(cls="run-meta").text

    async def test_unknown_key_and_unknown_page_are_404_pages(self, client):
        doc = await get(client, "/run/run-nope", status=404)
        assert "No kept run with key run-nope in this sweep." == doc.one(id="not-found").text
        assert "No page at /nowhere." == (await get(client, "/nowhere", status=404)).one(id="not-found").text


class TestCompare:
    async def test_pickers_only_until_two_models_are_chosen(self, client):
        doc = await get(client, "/compare")
        assert ["a", "b"] == [s.attrs["name"] for s in doc.one("form", id="pickers").all("select")]
        assert [] == doc.all("table", id="paired")

    async def test_per_task_rows_and_the_paired_difference(self, client, sweep_dir):
        a, b = AGENTS
        doc = await get(client, f"/compare?a={a}&b={b}")
        rows = doc.one("table", id="paired").one("tbody").all("tr")
        assert ["t0", "t1", "t2", "t3"] == [tr.attrs["data-task"] for tr in rows]
        links = [a.attrs["href"] for a in doc.one("tr", data_task="t2").all("a")]
        # every cell opens the runs it stands for: the task, each model's trials of it (ARS, then SGR)
        by_model = [f"/runs?model={m.replace('/', '%2F')}&task=t2" for m in (a, b)]
        assert ["/runs?task=t2", *by_model, "/runs?task=t2", *by_model, "/runs?task=t2"] == links
        kept = [r for r in kept_runs(sweep_dir) if r.status == "ok"]

        def ars(r):
            return sum(s[0] for s in r.scores.values()) / len(r.scores)

        by = {(r.agent_model, r.task_id, r.trial): ars(r) for r in kept}
        t2 = [td.text for td in doc.one("tr", data_task="t2").all("td")]
        mean_a = (by[(a, "t2", 0)] + by[(a, "t2", 1)]) / 2
        mean_b = (by[(b, "t2", 0)] + by[(b, "t2", 1)]) / 2
        assert ["t2", f"{mean_a:.2f}", f"{mean_b:.2f}", f"{mean_b - mean_a:.2f}"] == t2[:4]
        pairs = sorted((t, trial) for m, t, trial in by if m == a and (b, t, trial) in by)
        expected = paired_difference([by[(a, *p)] for p in pairs], [by[(b, *p)] for p in pairs])
        shown = [td.text for td in doc.one(id="paired-summary").one("tr", data_axis="ars").all("td")]
        assert str(expected.n) == shown[1] == "8"
        assert f"{expected.wins}/{expected.losses}/{expected.ties}" == shown[3]
        assert shown[2].startswith(f"{expected.mean_diff:.2f}")
