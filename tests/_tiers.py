"""Which tests belong to which tier, in one table (applied at collection by ``tests/conftest.py``).

Markers, so the inner loop stays fast and each costly kind can be left out by name:

- ``ray``: needs a local Ray instance (``tests/distributed``);
- ``browser``: drives Chromium (``tests/browser``);
- ``subprocess``: launches Python or CLI child processes (``tests/test_tiers.py`` finds any file that does and
  is not listed, so the list cannot drift);
- ``slow``: the costliest tests (chaos rounds, every command × transport, the wheel build, deep properties).
  ``pytest -m "not slow"`` is the fast tier.

A table rather than a ``pytestmark`` line in each file: one place to read and to change tiers.
"""

from __future__ import annotations

TIER_MARKERS = {
    "slow": "among the costliest tests (chaos rounds, every command × transport, the wheel build, Ray, deep "
            "properties); `-m \"not slow\"` is the fast tier",
    "ray": "needs a local Ray instance (tests/distributed)",
    "browser": "drives Chromium (tests/browser)",
    "subprocess": "launches child processes (Python, the CLI, the sim)",
}

#: Directories whose every test carries the markers.
DIRECTORY_MARKERS: dict[str, tuple[str, ...]] = {
    "tests/distributed/": ("ray", "slow", "subprocess"),
    "tests/browser/": ("browser", "subprocess"),
}

#: Test files that launch child processes.
SUBPROCESS_FILES = frozenset({
    "tests/cli/test_cache_cli.py",
    "tests/cli/test_cli.py",
    "tests/cli/test_commands.py",
    "tests/cli/test_generate_runner.py",
    "tests/cli/test_output_paths.py",
    "tests/cli/test_sweep_dry_run.py",
    "tests/compare/test_cli.py",
    "tests/compare/test_real_sweeps.py",
    "tests/llm/test_transport_registry.py",
    "tests/mpcbench/test_generation_pipeline.py",
    "tests/perf/test_endpoint_modes.py",
    "tests/runtime/test_files.py",
    "tests/runtime/test_jsonl.py",
    "tests/runtime/test_pool.py",
    "tests/sim/test_provider.py",
    "tests/sim/test_rate_window.py",
    "tests/sim/test_sim_process.py",
    "tests/sim/test_sim_stream.py",
    "tests/sweep/test_exit_codes.py",
    "tests/sweep/test_experiment.py",
    "tests/sweep/test_ledger_chaos.py",
    "tests/sweep/test_lock.py",
    "tests/sweep/test_plan_validation.py",
    "tests/sweep/test_summary_report.py",
    "tests/sweep/test_summary_stats.py",
    "tests/sweep/test_sweep.py",
    "tests/sweep/test_sweep_signals.py",
    "tests/sweep/test_tool_isolation.py",
    "tests/tariff/test_compare.py",
    "tests/tariff/test_interrupt.py",
    "tests/tariff/test_original_harness.py",
    "tests/tariff/test_suite_modes.py",
    "tests/test_chaos_harness.py",
    "tests/test_no_prints.py",
    "tests/test_package.py",
    "tests/test_readme.py",
    "tests/test_secrets.py",
    "tests/test_startup.py",
    "tests/view/test_cli.py",
    "tests/view/test_index_temporary.py",
})

#: Slow tests: a whole file, or one test (``file::Class::test`` or ``file::test``, any parameters).
SLOW = frozenset({
    "tests/test_secrets.py",  # every command × both transports against an echoing server: ~1 min alone
    "tests/test_package.py",  # builds the wheel into a fresh venv (CI only)
    "tests/test_chaos_harness.py",  # bench/chaos.py --quick: some 20 sweep processes, about a minute
    "tests/sweep/test_ledger_chaos.py",
    "tests/sweep/test_sweep.py::TestKill",
    "tests/sweep/test_tool_isolation.py::TestPathologicalNeighbour",
    "tests/sweep/test_exit_codes.py::TestSweepExitCodes::test_errors_exit_1_on_every_rerun_until_fixed_and_retried",
    "tests/mpcbench/test_tool_execution.py::TestResultCap::test_any_result_is_cut_to_valid_json_within_the_cap",
    "tests/test_redact.py::TestShapes::test_base64_at_any_offset",
})


def markers_for(nodeid: str) -> set[str]:
    """The tier markers of the test ``nodeid`` (as pytest prints it, relative to the repository)."""
    path, _, rest = nodeid.partition("::")
    names = {m for directory, ms in DIRECTORY_MARKERS.items() if path.startswith(directory) for m in ms}
    if path in SUBPROCESS_FILES:
        names.add("subprocess")
    parts = rest.split("[")[0].split("::") if rest else []
    if any("::".join([path, *parts[:n]]) in SLOW for n in range(len(parts) + 1)):
        names.add("slow")
    return names
