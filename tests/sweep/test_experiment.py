"""A sweep directory is one experiment: changed settings are refused (or kept apart), new models and tasks extend it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

from mpcbench_async.cli import main
from mpcbench_async.mpcbench import load_prompts
from mpcbench_async.sweep import Fingerprint
from mpcbench_async.sweep._experiment import ADOPTED, fingerprint_changes
from mpcbench_async.testing import write_workspace

RUN = "import sys; from mpcbench_async.cli import main; raise SystemExit(main(sys.argv[1:]))"


def sweep_args(root: Path, out: Path, *extra: str) -> list[str]:
    """``sweep`` arguments for the workspace at ``root`` (sim models served in-process) into ``out``."""
    return ["sweep", "--config", str(root / "model_config.json"), "--prompts", str(root / "prompt_config.json"),
            "--tasks-dir", str(root / "tasks"), "--data-dir", str(root / "data"),
            "--scenarios-dir", str(root / "scenarios"), "--out", str(out), "--quiet", *extra]


def lines(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def read(path: Path) -> dict:
    return orjson.loads(path.read_bytes())


def change_settings(root: Path) -> tuple[str, str]:
    """Give sim/echo a temperature and edit the agent prompt; return the agent prompt digest before and after."""
    before = load_prompts(root / "prompt_config.json").digest("agent")
    config = read(root / "model_config.json")
    config["models"] = {"sim/echo": {"params": {"temperature": 0.7}}}
    (root / "model_config.json").write_bytes(orjson.dumps(config))
    prompts = read(root / "prompt_config.json")
    prompts["agent"]["system"] += "\nBe brief."
    (root / "prompt_config.json").write_bytes(orjson.dumps(prompts))
    return before, load_prompts(root / "prompt_config.json").digest("agent")


class TestRefusal:
    def test_changed_settings_are_refused_with_what_changed_and_how_to_proceed(self, tmp_path, capsys):
        """A rerun with other max_turns, model params and agent prompt exits 2 listing each change; nothing runs."""
        root, out = write_workspace(tmp_path / "ws"), tmp_path / "out"
        assert 0 == main(sweep_args(root, out))
        capsys.readouterr()
        before, after = change_settings(root)
        calls = (out / "calls.jsonl").read_bytes()
        manifest = (out / "manifest.json").read_bytes()
        proc = subprocess.run([sys.executable, "-c", RUN, *sweep_args(root, out, "--max-turns", "8")],
                              capture_output=True, text=True)
        expected = (f"error: {out / 'manifest.json'}: this directory holds experiment 1, and this sweep changes what "
                    "its results depend on:\n"
                    "  max_turns: 12 → 8\n"
                    f"  agent prompt: changed (digest {before} → {after})\n"
                    "  model sim/echo: params.temperature: (unset) → 0.7\n"
                    "Pass a new --out to keep the experiments in separate directories, or --allow-changes to start "
                    "experiment 2 here (the summary then counts only its units).\n")
        assert (2, "", expected) == (proc.returncode, proc.stdout, proc.stderr)
        assert (calls, manifest) == ((out / "calls.jsonl").read_bytes(), (out / "manifest.json").read_bytes())

    def test_a_damaged_manifest_is_one_user_error(self, tmp_path, capsys):
        """A manifest that does not decode stops the sweep with exit 2 naming the file, before any call."""
        root, out = write_workspace(tmp_path / "ws"), tmp_path / "out"
        out.mkdir()
        (out / "manifest.json").write_text("{\"command\": \"mpcbench-async swe")  # torn by a full disk
        assert 2 == main(sweep_args(root, out))
        assert (f"error: {out / 'manifest.json'}: not a sweep manifest (Input data was truncated); move it away or "
                "pass another --out\n") == capsys.readouterr().err
        assert not (out / "calls.jsonl").exists()


    def test_a_damaged_key_list_is_one_user_error_and_nothing_is_lost(self, tmp_path):
        """Garbage in experiment_keys.txt (binary or not keys) exits 2 with one line naming the file and what to do;
        no traceback, no call, every file as it was; moving the list away rebuilds it from the sweep's units."""
        root, out = write_workspace(tmp_path / "ws"), tmp_path / "out"
        assert 0 == main(sweep_args(root, out))
        keys = (out / "experiment_keys.txt").read_bytes()
        line = len(keys.splitlines()) + 1
        for garbage, what in [(b"\xff\xfe\x00\x01garbage", "not UTF-8 text"),
                              (keys + b'{"oops": 1}\n', f"line {line} holds '{{\"oops\":', not a unit key")]:
            (out / "experiment_keys.txt").write_bytes(garbage)
            before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != ".lock"}
            proc = subprocess.run([sys.executable, "-c", RUN, *sweep_args(root, out)], capture_output=True, text=True)
            expected = (f"error: {out / 'experiment_keys.txt'}: not a list of unit keys ({what}). It names the units "
                        "of this directory's current experiment; move it away and rerun to rebuild it from this "
                        "sweep's units (records of other units in the directory then stay out of the summary), or "
                        "pass another --out\n")
            assert (2, "", expected) == (proc.returncode, proc.stdout, proc.stderr)
            assert before == {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != ".lock"}
        (out / "experiment_keys.txt").unlink()
        assert 0 == main(sweep_args(root, out))
        assert keys == (out / "experiment_keys.txt").read_bytes()


class TestAllowChanges:
    def test_allow_changes_starts_a_new_experiment_that_the_summary_keeps_apart(self, tmp_path, capsys):
        """--allow-changes records experiment 2 and the summary counts only its 8 runs (k=1), leaving out the 16
        records of experiment 1; going back to experiment 1's settings is refused again."""
        root, out = write_workspace(tmp_path / "ws"), tmp_path / "out"
        assert 0 == main(sweep_args(root, out))
        assert 0 == main(sweep_args(root, out, "--max-turns", "8", "--allow-changes"))
        capsys.readouterr()
        summary, manifest = read(out / "summary.json"), read(out / "manifest.json")
        assert (16, 8, 8, 16) == (len(lines(out / "runs.jsonl")), summary["runs"], summary["judgements"],
                                  summary["other_experiments"])
        assert [(4, 4), (4, 4)] == [(m["runs"], m["tasks"]) for m in summary["models"]]
        assert (2, [(1, 12)], [1, 2], 8) == (
            manifest["experiment"], [(e["id"], e["fingerprint"]["max_turns"]) for e in manifest["experiments"]],
            [h["experiment"] for h in manifest["history"]], manifest["fingerprint"]["max_turns"])
        assert ("16 record(s) of earlier experiments in this directory are not counted (see manifest.json)"
                in (out / "summary.md").read_text())
        assert 2 == main(sweep_args(root, out))
        assert "  max_turns: 8 → 12\n" in capsys.readouterr().err


class TestExtension:
    def test_new_models_tasks_and_trials_extend_the_matrix_without_touching_results(self, tmp_path, capsys):
        """One model on 2 tasks, then 2 models on 4 tasks with 2 trials: no refusal, the first 2 records stay as
        they were, 16 runs are counted, and the manifest keeps both invocations of one experiment."""
        out = tmp_path / "out"
        root = write_workspace(tmp_path / "ws", tasks=2)
        assert 0 == main(sweep_args(root, out, "--models", "sim/echo"))
        first = (out / "runs.jsonl").read_bytes()
        write_workspace(tmp_path / "ws", tasks=4)
        assert 0 == main(sweep_args(root, out, "--trials", "2"))
        capsys.readouterr()
        summary, manifest = read(out / "summary.json"), read(out / "manifest.json")
        assert (2, True) == (len(first.splitlines()), (out / "runs.jsonl").read_bytes().startswith(first))
        assert (16, 16, 0) == (len(lines(out / "runs.jsonl")), summary["runs"], summary["other_experiments"])
        assert (["sim/echo", "sim/judge", "sim/lazy-agent"], ["t0", "t1", "t2", "t3"], [1, 1], 1) == (
            sorted(manifest["fingerprint"]["models"]), sorted(manifest["fingerprint"]["tasks"]),
            [h["experiment"] for h in manifest["history"]], manifest["experiment"])
        assert manifest["history"][0]["finished_at"] and manifest["history"][1]["finished_at"]

    def test_a_manifest_without_fingerprint_adopts_the_current_one_with_a_warning(self, tmp_path, capsys):
        """A directory from before fingerprints takes the rerun's fingerprint (with a warning) instead of refusing."""
        root, out = write_workspace(tmp_path / "ws"), tmp_path / "out"
        assert 0 == main(sweep_args(root, out))
        legacy = {k: v for k, v in read(out / "manifest.json").items()
                  if k not in {"experiment", "fingerprint", "experiments", "history"}}
        (out / "manifest.json").write_bytes(orjson.dumps(legacy))
        capsys.readouterr()
        assert 0 == main(sweep_args(root, out, "--max-turns", "8"))
        err = capsys.readouterr().err
        manifest, summary = read(out / "manifest.json"), read(out / "summary.json")
        [warning] = [line.split("] ", 1)[1] for line in err.splitlines() if "manifest.fingerprint_adopted" in line]
        assert f'manifest.fingerprint_adopted detail="{ADOPTED}" manifest={out / "manifest.json"}' == " ".join(
            warning.split())
        assert (8, 1, 1) == (manifest["fingerprint"]["max_turns"], manifest["experiment"], len(manifest["history"]))
        assert (8, 16) == (summary["runs"], summary["other_experiments"])


class TestChanges:
    def test_changes_name_each_parameter_prompt_task_and_scenario(self):
        """Nested params, a removed param, the judge prompt, a task's content and scenario, and a scenario's data
        each get one line; models and tasks only one side has are no change."""
        old = Fingerprint(max_turns=12, prompts={"agent": "a1", "judge": "j1"},
                          models={"m": {"model": None, "params": {"extra_body": {"top_k": 5}, "seed": 1}},
                                  "only-old": {}},
                          tasks={"t1": "h1", "t2": "h2", "gone": "x"}, task_scenarios={"t1": "sc", "t2": "sc"},
                          data={"sc": "d1"})
        new = Fingerprint(max_turns=12, prompts={"agent": "a1", "judge": "j2"}, judge_attempts=5,
                          models={"m": {"model": "gpt-x", "params": {"extra_body": {"top_k": 7}}}, "only-new": {}},
                          tasks={"t1": "h1", "t2": "h3", "new": "y"}, task_scenarios={"t1": "sc_b", "t2": "sc"},
                          data={"sc": "d2"})
        assert ["judge attempts: 3 → 5",
                "judge prompt: changed (digest j1 → j2)",
                "model m: model: null → \"gpt-x\"",
                "model m: params.extra_body.top_k: 5 → 7",
                "model m: params.seed: 1 → (unset)",
                "task t2: file content changed",
                "task t1: scenario sc → sc_b",
                "scenario sc: data files changed"] == fingerprint_changes(old, new)


class TestFingerprintSecrets:
    def test_a_key_pasted_into_base_url_is_masked_in_the_fingerprint(self, tmp_path):
        """The manifest's model settings never hold a key written into ``base_url`` (``?api-key=…``)."""
        from mpcbench_async.llm import load_model_config
        from mpcbench_async.mpcbench import build_plan
        from mpcbench_async.sweep._experiment import plan_fingerprint

        root = write_workspace(tmp_path)
        config = read(root / "model_config.json")
        config["models"] = {"sim/echo": {"base_url": "https://proxy.example/v1?api-key=SECRETVALUE123456"}}
        (root / "model_config.json").write_bytes(orjson.dumps(config))
        model_config = load_model_config(root / "model_config.json")
        plan = build_plan(config=model_config, prompts=load_prompts(root / "prompt_config.json"),
                          tasks_dir=root / "tasks", data_dir=root / "data", scenarios_dir=root / "scenarios",
                          agent_models=["sim/echo"], judge_models=[])
        fingerprint = plan_fingerprint(plan, model_config)
        assert "SECRETVALUE123456" not in orjson.dumps(fingerprint.models).decode()
        assert fingerprint.models["sim/echo"]["base_url"].startswith("https://proxy.example/v1?api-key=")
