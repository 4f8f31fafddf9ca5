"""What the two sweeps of a comparison were run with, where they differ: read before any delta is believed.

A regression between two sweeps run with another ``max_turns``, another judge or another prompt is no regression of
the model. Each side's ``manifest.json`` holds its settings (the experiment fingerprint: ``max_turns``, judge
attempts, prompt digests, each model's reply settings, tasks and data) and its invocation (agent and judge models,
trials, package versions); the differences are listed in the comparison, one readable line each, with the rules of
the refusal a rerun meets (``sweep.fingerprint_changes``). A side without a manifest says so: its settings are
unknown, not equal.
"""

from __future__ import annotations

from pathlib import Path

from .._exceptions import InputError
from ..sweep import Manifest, fingerprint_changes, read_manifest

__all__ = ["setting_differences"]


def setting_differences(a: Path, b: Path) -> tuple[list[str], list[str]]:
    """Each setting sweep ``b`` ran with that differs from sweep ``a``'s, as ``what: A → B`` lines, and the sides
    (``A``, ``B``) whose settings are unknown (no readable ``manifest.json``: nothing is compared then)."""
    old, new = _manifest(a), _manifest(b)
    unknown = [side for side, manifest in (("A", old), ("B", new)) if manifest is None]
    if old is None or new is None:
        return [], unknown
    lines = _invocation(old, new)
    if old.fingerprint is not None and new.fingerprint is not None:
        lines += fingerprint_changes(old.fingerprint, new.fingerprint)
    return lines, []


def _manifest(out_dir: Path) -> Manifest | None:
    try:
        return read_manifest(out_dir)
    except InputError:  # damaged: the comparison of the records still stands, its settings are unknown
        return None


def _invocation(old: Manifest, new: Manifest) -> list[str]:
    lines = [f"{what}: {_names(getattr(old, field))} → {_names(getattr(new, field))}"
             for what, field in (("judge models", "judge_models"), ("agent models", "agent_models"))
             if sorted(getattr(old, field)) != sorted(getattr(new, field))]
    if old.trials != new.trials:
        lines.append(f"trials: {old.trials} → {new.trials}")
    if old.prompts_hash != new.prompts_hash:
        lines.append(f"prompt config: digest {old.prompts_hash[:12]} → {new.prompts_hash[:12]}")
    for package in sorted(old.versions.keys() | new.versions.keys()):
        was, now = old.versions.get(package, "(none)"), new.versions.get(package, "(none)")
        if was != now:
            lines.append(f"version of {package}: {was} → {now}")
    return lines


def _names(models: list[str]) -> str:
    return ", ".join(models) or "(none)"
