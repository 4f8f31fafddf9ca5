"""Which tests belong to which tier, in one table (applied at collection by ``tests/conftest.py``).

Markers, so the inner loop stays fast and each costly kind can be left out by name:

- ``ray``: needs a local Ray instance (``tests/distributed``);
- ``browser``: drives Chromium (``tests/browser``);
- ``subprocess``: launches Python or CLI child processes (``tests/test_tiers.py`` finds any file that does and
  is not listed, so the list cannot drift);
- ``slow``: the costliest tests (chaos rounds, every command × transport, the wheel build, Ray, Chromium, child
  sweeps with signals and kills, real-time pacing, CLI twins of in-process tests). ``pytest -m "not slow"`` is the
  fast tier: each package and behaviour keeps at least one test in it (the reason beside an entry names it).

A table rather than a ``pytestmark`` line in each file: one place to read and to change tiers.
"""

from __future__ import annotations

TIER_MARKERS = {
    "slow": "among the costliest tests (chaos rounds, every command × transport, the wheel build, Ray, Chromium, "
            "child sweeps and signals, real-time pacing); `-m \"not slow\"` is the fast tier",
    "ray": "needs a local Ray instance (tests/distributed)",
    "browser": "drives Chromium (tests/browser)",
    "subprocess": "launches child processes (Python, the CLI, the sim)",
}

#: Directories whose every test carries the markers.
DIRECTORY_MARKERS: dict[str, tuple[str, ...]] = {
    "tests/distributed/": ("ray", "slow", "subprocess"),
    "tests/browser/": ("browser", "slow", "subprocess"),  # Chromium's start-up; tests/view covers the pages' data
}

#: Test files that launch child processes.
SUBPROCESS_FILES = frozenset({
    "tests/cli/test_cache_cli.py",
    "tests/cli/test_cli.py",
    "tests/cli/test_commands.py",
    "tests/cli/test_generate_runner.py",
    "tests/cli/test_help_cache.py",
    "tests/cli/test_loop.py",
    "tests/cli/test_output_paths.py",
    "tests/cli/test_quick_exit.py",
    "tests/cli/test_sweep_dry_run.py",
    "tests/cli/test_sweep_malloc.py",
    "tests/cli/test_sweep_process_settings.py",
    "tests/compare/test_cli.py",
    "tests/compare/test_real_sweeps.py",
    "tests/llm/test_transport_registry.py",
    "tests/mpcbench/test_generation_pipeline.py",
    "tests/perf/test_endpoint_errors.py",
    "tests/perf/test_endpoint_modes.py",
    "tests/runtime/test_files.py",
    "tests/runtime/test_jsonl.py",
    "tests/runtime/test_logging.py",
    "tests/runtime/test_pool.py",
    "tests/sim/test_provider.py",
    "tests/sim/test_rate_window.py",
    "tests/sim/test_registry.py",
    "tests/sim/test_sim_process.py",
    "tests/sim/test_sim_stream.py",
    "tests/sweep/test_batch_sweep.py",
    "tests/sweep/test_exit_codes.py",
    "tests/sweep/test_experiment.py",
    "tests/sweep/test_ledger_chaos.py",
    "tests/sweep/test_lock.py",
    "tests/sweep/test_plan_validation.py",
    "tests/sweep/test_sim_launched_early.py",
    "tests/sweep/test_suite_protocol.py",
    "tests/sweep/test_summary_prefetch.py",
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
    # Whole sweeps, child processes and real-time pacing whose behaviour a cheaper fast-tier test also covers
    # (named after the reason):
    "tests/sweep/test_sweep.py::TestFaults",  # a sweep under 20% mixed faults; retries: tests/llm, tests/sweep
    "tests/sweep/test_sweep_cache.py::TestSweepCache::test_the_cli_flag_fills_a_cache_directory_and_a_second_sweep_"
    "sends_nothing",  # two CLI sweeps; the library path is the file's other tests
    "tests/sweep/test_sweep_signals.py",  # SIGINT to a child sweep of two suites; tests/tariff/test_interrupt stays
    "tests/sweep/test_lock.py::TestOneSweepPerDirectory",  # two child sweeps and a SIGKILL; TestDirLock stays
    "tests/sweep/test_tool_isolation.py::TestExit",  # a child sweep of ten timed-out searches
    "tests/sweep/test_exit_codes.py::TestSweepExitCodes::test_tariff_suite_alone_exits_1_when_its_cases_error",
    "tests/sweep/test_experiment.py::TestRefusal::test_a_damaged_key_list_is_one_user_error_and_nothing_is_lost",
    "tests/sweep/test_summary_report.py::TestWallTime::test_summarize_command_with_a_corrupt_manifest_exits_0",
    "tests/cli/test_cli.py::TestBenchClient",  # the client benchmark, every transport
    "tests/cli/test_cli.py::TestSimServe::test_busy_port_is_one_clear_error",  # tests/view's busy port is alike
    "tests/cli/test_cli.py::TestCtrlC",  # Ctrl-C to three CLI children; sim serve's Ctrl-C test stays
    "tests/cli/test_generate_runner.py::TestConsole::test_force_regenerates_and_a_crashing_scenario_fails_alone",
    "tests/cli/test_generate_runner.py::TestInterrupt",  # Ctrl-C to a child; the first-run console test stays
    "tests/cli/test_sweep_budget_cli.py::TestSweepMaxCost",  # CLI sweeps; tests/sweep/test_budget_sweep stays
    "tests/cli/test_cache_cli.py::test_prune_by_model_then_by_age",  # CLI processes; tests/llm's cache tests stay
    "tests/mpcbench/test_generation_pipeline.py::TestResumeAfterKill",  # SIGKILL of a child generation
    "tests/llm/test_rate_limit_modes.py::test_headers_alone_pace_an_unconfigured_model",  # real-time pacing (2.5 s);
    "tests/llm/test_rate_limit_modes.py::test_429s_alone_drive_an_adaptive_rate",  # the per-minute bucket stays
    "tests/llm/test_rate_limit_modes.py::test_a_configured_rpm_never_bursts_past_a_one_second_bucket",
    "tests/llm/test_rate_limit_headers.py::test_per_second_bucket_rejects_under_one_percent",  # real-time, 2.5 s
    "tests/tariff/test_oracle_ceiling.py::TestOracleCeiling",  # the oracle over every acceptance case
    "tests/tariff/test_suite_modes.py::TestTariffRunCommand::test_the_shipped_suite_in_fixture_mode_writes_its_"
    "results_and_report_only",  # the CLI run; tests/sweep/test_job runs the same suite in-process
    "tests/tariff/test_compare.py::TestScoringModes::test_both_compare_commands_exit_2_naming_the_files_and_accept_"
    "the_flag",  # four CLI processes
    "tests/view/test_cli.py::TestView",  # serving: a child on a port, Ctrl-C; TestReport and tests/view stay
    "tests/test_no_prints.py::TestSource::test_only_the_logging_setup_uses_structlog",  # a second scan of the source
    "tests/cli/test_generate_runner.py::TestConsole",  # child generation runs; tests/mpcbench's generation stays
    "tests/cli/test_sweep_budget_cli.py::TestLedgerSync",  # CLI sweeps; tests/sweep/test_ledger_sweep stays
    "tests/test_readme.py::test_sweep_example_runs",  # a CLI sweep, as tests/cli's TestSweepCommand
    "tests/test_startup.py::test_openai_sdk_waits_for_its_transport",  # a child importing the SDK
    "tests/levels/test_generate.py::test_ten_times_the_original_sizes_are_valid_and_labelled_by_the_oracle",
    "tests/sweep/test_sweep_v1_tasks.py::TestCommandLine",  # the CLI twin of TestLibrary
    "tests/llm/test_transport_registry.py::TestConfig::test_cli_exits_2_on_an_unknown_transport",  # a CLI child
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
