"""The library's words for settings, shown as the command line's flags.

Why: the library is used without the CLI, so its messages name what a library caller
sets (``RunChoice(retry_errors=True)``, ``ProfileOptions(rates=…)``), never a flag.
A message names a setting in one of two ways: it starts with it (``max_turns must be at
least 1``; ``BenchError.setting`` says so), or it puts it in double backticks anywhere,
reStructuredText's literal (rerun with ``retry_errors=True``, pass another ``out``,
no task matches ``tasks='x*'``). ``flagged`` puts the flag in its place when the CLI
prints the text (``--max-turns``, ``--retry-errors``, ``--out``, ``--tasks 'x*'``). Double,
because msgspec's own messages put field names in single backticks (missing required
field `mode`): those stay as they are, as does any name not listed here.
"""

from __future__ import annotations

import re

__all__ = ["flag", "flagged"]

# Every setting a library message may name, mapped to its flag when that is not ``--`` and the name with dashes.
_FLAGS = {"suites": "--suite", "tariff_scoring": "--scoring", "ledger_fsync": "--ledger-sync",
          "certificate": "--no-certificate", "stream": "--no-stream"}
_SETTINGS = frozenset({
    *_FLAGS, "allow_changes", "allow_mixed_scoring", "batch", "cache", "concurrency", "config", "cooldown",
    "dry_run", "duration", "executor", "force", "format", "history", "levels", "logs_dir", "max_concurrency",
    "max_cost", "max_tokens", "max_turns", "mode", "model", "models", "out", "pack", "path", "prompt_tokens",
    "rates", "retry_errors", "scenario_id", "scoring", "slo", "sweep_points", "tasks", "trials", "warmup",
    "workers",
})
_TOKEN = re.compile(r"``([a-z][a-z0-9_]*)(?:=([^`]*))?``")


def flag(setting: str) -> str:
    """The flag that sets ``setting`` (``max_turns`` → ``--max-turns``, ``suites`` → ``--suite``)."""
    return _FLAGS.get(setting, "--" + setting.replace("_", "-"))


def flagged(text: str, setting: str | None = None) -> str:
    """``text`` with the settings it names shown as flags: its leading ``setting``, and each known setting in
    double backticks (``name`` → ``--name``; ``name=True`` → ``--name``; ``name=value`` → ``--name value``; a switch
    that turns a default off, ``certificate=False`` → ``--no-certificate``)."""
    if setting and text.startswith(setting):
        text = flag(setting) + text[len(setting):]
    return _TOKEN.sub(_as_flag, text) if "``" in text else text


def _as_flag(match: re.Match[str]) -> str:
    name, value = match.groups()
    if name not in _SETTINGS:
        return match.group(0)
    shown = flag(name)
    if value in (None, "True") or (value == "False" and shown.startswith("--no-")):
        return shown  # a switch: retry_errors=True → --retry-errors; certificate=False → --no-certificate
    return f"{shown} {value}"
