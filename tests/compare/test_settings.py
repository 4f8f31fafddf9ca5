"""Compare names the settings the two sweeps ran with where they differ, from their manifests: exact lines."""

from __future__ import annotations

from mpcbench_async.cli import main
from mpcbench_async.compare import compare_sweeps, render_markdown
from mpcbench_async.sweep import Fingerprint, Manifest
from mpcbench_async.sweep._experiment import write_manifest

from .sweeps import sweep_a, sweep_b


def manifest(*, judges: list[str], max_turns: int, temperature: float, version: str, digest: str) -> Manifest:
    fingerprint = Fingerprint(max_turns=max_turns, prompts={"agent": "a1", "judge": digest},
                              models={"m": {"params": {"temperature": temperature}}})
    return Manifest(command="sweep", config_hash="c", prompts_hash=f"p-{digest}", started_at="2026-11-28T00:00:00Z",
                    versions={"mpcbench-async": version, "python": "3.11.7"}, agent_models=["m"],
                    judge_models=judges, fingerprint=fingerprint)


def test_every_difference_is_named_before_the_deltas(tmp_path, capsys):
    a, b = sweep_a(tmp_path / "A"), sweep_b(tmp_path / "B")
    write_manifest(a, manifest(judges=["j1"], max_turns=8, temperature=0.0, version="0.1.0", digest="d1"))
    write_manifest(b, manifest(judges=["j1", "j2"], max_turns=12, temperature=0.7, version="0.2.0", digest="d2"))
    differ = ["judge models: j1 → j1, j2", "prompt config: digest p-d1 → p-d2",
              "version of mpcbench-async: 0.1.0 → 0.2.0", "max_turns: 8 → 12",
              "judge prompt: changed (digest d1 → d2)", "model m: params.temperature: 0.0 → 0.7"]
    comparison = compare_sweeps(a, b)
    assert (differ, []) == (comparison.settings_differ, comparison.settings_unknown)
    text = render_markdown(comparison)
    expected = ["## Settings that differ (6)", "", "A delta below may come from these rather than from the model.", "",
                *(f"- {line}" for line in differ), "", "## Regressions (2)"]
    start = text.splitlines().index("## Settings that differ (6)")
    assert expected == text.splitlines()[start:start + len(expected)]
    assert 0 == main(["compare", str(a), str(b)])
    assert f"warning: the sweeps ran with different settings (6): {'; '.join(differ)}\n" in capsys.readouterr().err


def test_the_same_settings_and_unknown_ones_are_said(tmp_path):
    a, b = sweep_a(tmp_path / "A"), sweep_b(tmp_path / "B")
    unknown = render_markdown(compare_sweeps(a, b))
    assert "Settings not compared: A and B have no readable manifest.json." in unknown.splitlines()
    same = manifest(judges=["j1"], max_turns=8, temperature=0.0, version="0.1.0", digest="d1")
    write_manifest(a, same)
    (b / "manifest.json").write_text("{not json")
    assert ([], ["B"]) == (compare_sweeps(a, b).settings_differ, compare_sweeps(a, b).settings_unknown)
    write_manifest(b, same)
    assert ("Both sweeps ran with the same settings (models' parameters, prompts, max_turns, judges, versions)."
            in render_markdown(compare_sweeps(a, b)).splitlines())
