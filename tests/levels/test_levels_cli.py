"""``mpcbench-async levels``: import, check, verify, summary and generate, run in-process through ``cli.main``.

Each test pins the exit code and exact fragments of what the command prints, on the reference copy of the
original MPCBench (its 18 data files and 11 recorded GPT-4o results files) or on files written under tmp.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpcbench_async import levels
from mpcbench_async.cli import main

CHECK_ROWS = ["| level × split | instances | invalid | oracle lines | discarded | reproduced |",
              "|---|---:|---:|---:|---:|---:|",
              "| L1_test | 4 | 0 | 4 | 0 | 4/4 |",
              "| L2_test | 5 | 0 | 4 | 1 | 5/5 |",
              "| L3_test | 5 | 0 | 5 | 0 | 5/5 |",
              "| L1_exp1 | 20 | 0 | 20 | 0 | 20/20 |",
              "| L2_exp1 | 15 | 0 | 15 | 0 | 15/15 |",
              "| L3_exp1 | 10 | 0 | 10 | 0 | 10/10 |"]

VERIFY_ROWS = ["| file | lines | world matches | older world | not replayed | same tool results | same pred | "
               "same metrics |",
               "|---|---:|---:|---:|---:|---:|---:|---:|",
               "| eval_L1_exp1_gpt-4o_20260202_143441.jsonl | 5 | 5 | 0 | 0 | 20/20 | 5/5 | 5/5 |",
               "| eval_L1_gpt-4o_20260118_155321.jsonl | 4 | 4 | 0 | 0 | 18/18 | 4/4 | 4/4 |",
               "| eval_L2_exp1_gpt-4o_20260202_143539.jsonl | 5 | 0 | 5 | 0 | 0/0 | 0/0 | 0/0 |",
               "| eval_L2_exp1_gpt-4o_20260202_154055.jsonl | 5 | 5 | 0 | 0 | 20/20 | 5/5 | 5/5 |",
               "| eval_L2_gpt-4o_20260118_155356.jsonl | 5 | 5 | 0 | 0 | 30/30 | 5/5 | 5/5 |",
               "| eval_L3_exp1_gpt-4o_20260202_144409.jsonl | 5 | 0 | 5 | 0 | 0/0 | 0/0 | 0/0 |",
               "| eval_L3_exp1_gpt-4o_20260202_150024.jsonl | 5 | 0 | 5 | 0 | 0/0 | 0/0 | 0/0 |",
               "| eval_L3_exp1_gpt-4o_20260202_150645.jsonl | 5 | 0 | 5 | 0 | 0/0 | 0/0 | 0/0 |",
               "| eval_L3_exp1_gpt-4o_20260202_154154.jsonl | 5 | 0 | 5 | 0 | 0/0 | 0/0 | 0/0 |",
               "| eval_L3_exp1_gpt-4o_20260202_155426.jsonl | 5 | 5 | 0 | 0 | 94/94 | 5/5 | 5/5 |",
               "| eval_L3_gpt-4o_20260118_155451.jsonl | 5 | 5 | 0 | 0 | 73/73 | 5/5 | 5/5 |"]

L1_TEST_RUN = "eval_L1_gpt-4o_20260118_155321.jsonl"  # every line's world matches today's data


@pytest.fixture(autouse=True)
def _logging(restored_logging: None) -> None:
    """``cli.main`` configures logging: put it back after each test."""


@pytest.fixture(scope="module")
def imported(upstream: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference data imported once into a folder of its own (read-only for the tests that use it)."""
    dest = tmp_path_factory.mktemp("levels") / "lv"
    levels.import_data(upstream, dest)
    return dest


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    """``main(argv)``'s exit code with what it printed to stdout and stderr."""
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def rewrite(source: Path, dest: Path, number: int, change) -> Path:
    """A copy of the results file ``source`` in ``dest`` (same name), ``change(line)`` applied to line ``number``."""
    lines = [json.loads(raw) for raw in source.read_text(encoding="utf-8").splitlines()]
    change(lines[number - 1])
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / source.name
    target.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return target


class TestImportAndCheck:
    def test_import_checks_every_set_and_copies_the_18_files(self, upstream, tmp_path, capsys):
        """``levels import`` of the checkout: exit 0; the table lists the six level × split rows with every oracle
        line reproduced (L2_test: 4 lines plus the one discard, 5/5); the 18 files are copied byte for byte."""
        dest = tmp_path / "lv"
        code, out, err = run(capsys, "levels", "import", upstream, "--dest", dest)
        assert (0, "") == (code, err)
        assert CHECK_ROWS + ["", f"wrote 18 files to {dest}"] == out.splitlines()
        source = upstream / "generate" / "output"
        assert sorted(p.name for p in source.iterdir()) == sorted(p.name for p in dest.iterdir())
        assert all((dest / p.name).read_bytes() == p.read_bytes() for p in source.iterdir())

    def test_check_passes_on_the_import_and_names_an_edited_oracle_line(self, upstream, tmp_path, capsys):
        """``levels check`` exits 0 on the imported data; once the first candidate of one oracle line is edited it
        exits 1, its row says 19/20 and stderr names the level × split and the instance whose label differs."""
        data = tmp_path / "lv"
        levels.import_data(upstream, data)
        code, out, err = run(capsys, "levels", "check", "--data", data)
        assert (0, CHECK_ROWS, "") == (code, out.splitlines(), err)

        oracle = data / "oracle_level1_exp1.jsonl"
        lines = oracle.read_text(encoding="utf-8").splitlines()
        first = json.loads(lines[0])
        first["feasible_candidates"][0]["start"] = "2026-01-20T08:45:00+09:00"
        oracle.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
        code, out, err = run(capsys, "levels", "check", "--data", data)
        assert 1 == code
        assert "| L1_exp1 | 20 | 0 | 20 | 0 | 19/20 |" in out.splitlines()
        assert [line for line in CHECK_ROWS if "L1_exp1" not in line] == [
            line for line in out.splitlines() if "L1_exp1" not in line]
        assert 1 == len(err.splitlines())
        assert err.startswith("L1_exp1 instance_level1_exp1_000: oracle differs: ours [")
        assert "2026-01-20T08:45:00+09:00" in err


class TestVerify:
    def test_every_world_matching_line_of_the_11_files_reproduces(self, results, imported, tmp_path, capsys):
        """``levels verify`` of the 11 recorded files: exit 0 and exactly this table (older-world lines counted
        apart); ``--json`` writes every file's verdict, 11 of them, 54 lines in all."""
        assert 11 == len(results)
        report = tmp_path / "verdicts.json"
        code, out, err = run(capsys, "levels", "verify", *results, "--data", imported, "--json", report)
        assert (0, "") == (code, err)
        assert VERIFY_ROWS == out.splitlines()[:13]
        assert "MISMATCH" not in out
        verdicts = json.loads(report.read_bytes())
        assert [str(p) for p in results] == [v["path"] for v in verdicts]
        assert 54 == sum(len(v["lines"]) for v in verdicts)

    def test_a_changed_pred_is_a_mismatch_naming_file_line_and_instance(self, results, imported, tmp_path, capsys):
        """A copy of a world-matching file whose line 2 records another ``pred``: exit 1, that row says 3/4 same
        pred, and a MISMATCH line names ``file:2 instance_id`` and the difference."""
        source = next(p for p in results if p.name == L1_TEST_RUN)
        tampered = rewrite(source, tmp_path / "t", 2, lambda line: line["pred"].reverse())
        code, out, err = run(capsys, "levels", "verify", tampered, "--data", imported)
        assert (1, "") == (code, err)
        assert f"| {L1_TEST_RUN} | 4 | 4 | 0 | 0 | 18/18 | 3/4 | 4/4 |" in out.splitlines()
        mismatches = [line for line in out.splitlines() if line.startswith("MISMATCH")]
        assert 1 == len(mismatches)
        assert mismatches[0].startswith(f"MISMATCH     {L1_TEST_RUN}:2 instance_level1_test_B: pred differs: ours ")

    def test_a_reordered_tool_result_is_a_mismatch_not_an_older_world(self, results, imported, tmp_path, capsys):
        """Line 2's recorded calendar of person_004 with its two events swapped (every value still in today's data):
        the line's world still matches, 17/18 tool results are the same, exit 1, and the MISMATCH line names
        ``file:2 instance_id`` and the tool call."""
        source = next(p for p in results if p.name == L1_TEST_RUN)

        def swap(line):
            message = next(m for m in line["trace"] if m["role"] == "tool" and "person_004" in m["content"])
            content = json.loads(message["content"])
            content["events"].reverse()
            message["content"] = json.dumps(content)

        tampered = rewrite(source, tmp_path / "t", 2, swap)
        code, out, err = run(capsys, "levels", "verify", tampered, "--data", imported)
        assert (1, "") == (code, err)
        assert f"| {L1_TEST_RUN} | 4 | 4 | 0 | 0 | 17/18 | 4/4 | 4/4 |" in out.splitlines()
        mismatches = [line for line in out.splitlines() if line.startswith("MISMATCH")]
        assert 1 == len(mismatches)
        assert mismatches[0].startswith(f"MISMATCH     {L1_TEST_RUN}:2 instance_level1_test_B: tool call "
                                        "call_RCdndt3G0lMU74KaxwWhCQ5R: result differs: ours ")

    def test_a_missing_results_file_is_one_error_line(self, imported, tmp_path, capsys):
        """A results file that does not exist: exit 2 and one ``error:`` line on stderr naming it."""
        missing = tmp_path / "eval_L1_gpt-4o_20260118_000000.jsonl"
        code, out, err = run(capsys, "levels", "verify", missing, "--data", imported)
        assert (2, "") == (code, out)
        assert [f"error: {missing}: cannot read (No such file or directory)"] == err.splitlines()

    def test_a_line_without_a_trace_is_refused_naming_file_line_and_field(self, results, imported, tmp_path, capsys):
        """Line 3 without ``trace`` (and no recorded error): exit 2, one ``error:`` line naming ``file:3`` and
        ``$.trace``."""
        source = next(p for p in results if p.name == L1_TEST_RUN)
        tampered = rewrite(source, tmp_path / "t", 3, lambda line: line.pop("trace"))
        code, out, err = run(capsys, "levels", "verify", tampered, "--data", imported)
        assert (2, "") == (code, out)
        assert [f"error: {tampered}:3: $.trace: missing or not a list (a run without its trace cannot be "
                "replayed)"] == err.splitlines()

    def test_a_line_whose_run_raised_is_listed_as_not_replayed(self, results, imported, tmp_path, capsys):
        """Line 3 as the original writes a run that raised (``error`` set, no ``trace``): it is counted apart and
        listed as not replayed (its own column: it is neither a match nor an older world), and the other three lines (12
        tool calls) still decide the verdict: exit 0."""
        source = next(p for p in results if p.name == L1_TEST_RUN)

        def raised(line):
            del line["trace"]
            line.update(error="rate limited", metrics=None, pred=None, gold=None)

        tampered = rewrite(source, tmp_path / "t", 3, raised)
        code, out, err = run(capsys, "levels", "verify", tampered, "--data", imported)
        assert (0, "") == (code, err)
        assert f"| {L1_TEST_RUN} | 4 | 3 | 0 | 1 | 12/12 | 3/3 | 3/3 |" in out.splitlines()
        assert (f"not replayed {L1_TEST_RUN}:3 instance_level1_test_C: recorded error without a trace: rate limited"
                in out.splitlines())


class TestSummary:
    def test_the_recorded_runs_beside_the_published_table(self, results, tmp_path, capsys):
        """``levels summary`` of the 11 files: exit 0; the level-1 exp1 row (5 instances, mean F1 0.90 with its CI,
        EM 80%) says it cannot support the published cell; the published cells with no runs are listed; with
        ``--out`` the same table is written as levels_summary.md with its .json."""
        out_dir = tmp_path / "summary"
        code, out, err = run(capsys, "levels", "summary", *results, "--out", out_dir)
        assert (0, "") == (code, err)
        [row] = [line for line in out.splitlines() if line.startswith("| 1 | gpt-4o | exp1 |")]
        assert row.startswith("| 1 | gpt-4o | exp1 | 5 | 5 | 0.90 [")
        assert "| 80% |" in row
        assert row.endswith("| cannot support: EM 70% needs a multiple of 10 instances, these runs hold 5 |")
        missing = out[out.index("Published cells with no runs here"):].splitlines()
        assert "- L1 o4-mini: F1 1.00, EM 100% (-)" in missing
        assert "- L3 gpt-5: F1 1.00, EM 100% (-)" in missing
        assert not any(line.startswith("- L1 gpt-4o") for line in missing)
        assert ["levels_summary.json", "levels_summary.md"] == sorted(p.name for p in out_dir.iterdir())
        assert row in (out_dir / "levels_summary.md").read_text(encoding="utf-8").splitlines()
        written = json.loads((out_dir / "levels_summary.json").read_bytes())
        [cell] = [r for r in written["rows"] if (r["level"], r["model"], r["split"]) == (1, "gpt-4o", "exp1")]
        assert (5, 5, 0.8) == (cell["instances"], cell["runs"], cell["em_rate"])

    def test_pass_k_at_the_ks_asked_for(self, results, capsys):
        """The level-3 exp1 files hold five trials per instance: pass^1, 2, 4 and 5 by default; ``--pass-k 3``."""
        code, out, _ = run(capsys, "levels", "summary", *results)
        [row] = [line for line in out.splitlines() if line.startswith("| 3 | gpt-4o | exp1 |")]
        assert (0, True) == (code, "| 8% | pass^1 0.08, pass^2 0.02, pass^4 0.00, pass^5 0.00 |" in row)
        code, out, _ = run(capsys, "levels", "summary", *results, "--pass-k", "3")
        [row] = [line for line in out.splitlines() if line.startswith("| 3 | gpt-4o | exp1 |")]
        assert (0, True) == (code, "| 8% | pass^3 0.00 |" in row)


class TestGenerate:
    def test_generate_writes_four_files_and_refuses_to_overwrite_them(self, tmp_path, capsys):
        """``levels generate --level 2 --count 12 --seed 3``: exit 0 and the four files of split gen_s3; the same
        command again exits 2 with one error line and leaves them as they were; ``--count 0`` exits 2 and writes
        nothing."""
        out = tmp_path / "gen"
        code, stdout, err = run(capsys, "levels", "generate", "--level", 2, "--count", 12, "--seed", 3, "--out", out)
        assert (0, "") == (code, err)
        names = ["world_level2_gen_s3.json", "instances_level2_gen_s3.jsonl", "oracle_level2_gen_s3.jsonl",
                 "validity_level2_gen_s3.json"]
        assert sorted(names) == sorted(p.name for p in out.iterdir())
        assert f"wrote {', '.join(str(out / n) for n in names)}" == stdout.splitlines()[-1]
        assert "### Level 2 · gen_s3" in stdout.splitlines()
        assert 12 == len((out / "instances_level2_gen_s3.jsonl").read_text(encoding="utf-8").splitlines())
        before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.iterdir()}

        code, stdout, err = run(capsys, "levels", "generate", "--level", 2, "--count", 12, "--seed", 3, "--out", out)
        assert (2, "") == (code, stdout)
        assert 1 == len(err.splitlines())
        assert err.startswith(f"error: {out}: refusing to overwrite world_level2_gen_s3.json")
        assert before == {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.iterdir()}

        empty = tmp_path / "none"
        code, stdout, err = run(capsys, "levels", "generate", "--level", 2, "--count", 0, "--seed", 3, "--out", empty)
        assert (2, "", ["error: --count must be at least 1"]) == (code, stdout, err.splitlines())
        assert not empty.exists()

    def test_generated_data_passes_check(self, tmp_path, capsys):
        """What ``levels generate`` writes is a data folder ``levels check`` reproduces line for line: exit 0."""
        out = tmp_path / "gen"
        assert 0 == run(capsys, "levels", "generate", "--level", 3, "--count", 5, "--seed", 8, "--out", out)[0]
        code, stdout, err = run(capsys, "levels", "check", "--data", out)
        assert (0, "") == (code, err)
        assert "| L3_gen_s8 | 5 | 0 | 5 | 0 | 5/5 |" in stdout.splitlines()


@pytest.mark.parametrize("argv", [["levels"], ["levels", "import"], ["levels", "check"], ["levels", "verify"],
                                  ["levels", "summary"], ["levels", "generate"]])
def test_help_exits_0(argv, capsys):
    """``mpcbench-async levels --help`` and each subcommand's ``--help`` print their usage and exit 0."""
    with pytest.raises(SystemExit) as caught:
        main([*argv, "--help"])
    assert 0 == caught.value.code
    assert capsys.readouterr().out.startswith(f"usage: mpcbench-async {' '.join(argv)} ")
