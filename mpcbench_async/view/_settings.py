"""The viewer's settings page: what the sweep ran with, from its ``manifest.json``.

A score means little without its settings: which agent and judge models with which parameters, which prompts (their
digests), which version of the project, and every invocation into the directory (a resumed or extended sweep has
several; ``--allow-changes`` starts a new experiment and keeps the earlier ones' settings).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .._exceptions import InputError
from ..report import esc, table
from ..sweep import Fingerprint, Manifest, read_manifest

__all__ = ["settings_body"]


def settings_body(out_dir: Path) -> str:
    """The settings page's body: the run, models and params, prompt digests, versions, the invocations."""
    try:
        manifest = read_manifest(out_dir)
    except InputError as exc:
        return f'<p id="no-settings" class="status-error">{esc(exc)}</p>'
    if manifest is None:
        return '<p id="no-settings" class="muted">No manifest.json in this directory: its settings are unknown.</p>'
    return (_run(manifest) + _models(manifest) + _prompts(manifest) + _versions(manifest)
            + _history(manifest) + _experiments(manifest))


def _rows(pairs: list[tuple[str, str]]) -> str:
    return "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in pairs)


def _run(m: Manifest) -> str:
    fp = m.fingerprint
    pairs = [("command", m.command), ("experiment", str(m.experiment)),
             ("agent models", ", ".join(m.agent_models) or "(none)"),
             ("judge models", ", ".join(m.judge_models) or "(none)"), ("trials", str(m.trials)),
             ("max turns", str(fp.max_turns) if fp else "unknown"),
             ("judge attempts", str(fp.judge_attempts) if fp else "unknown"),
             ("tasks", str(len(m.tasks))), ("units", ", ".join(f"{k} {v}" for k, v in m.units.items())),
             ("model config digest", m.config_hash), ("tariff scoring", m.tariff_scoring or "–")]
    return f'<section id="run-settings"><h2>Run</h2><table><tbody>{_rows(pairs)}</tbody></table></section>'


def _models(m: Manifest) -> str:
    models = m.fingerprint.models if m.fingerprint else {}
    rows = [f'<tr data-model="{esc(name)}"><td>{esc(name)}</td><td>{esc(_role(m, name))}</td>'
            f"<td>{esc(m.caps.get(name, '–'))}</td><td><pre>{esc(_json(settings))}</pre></td></tr>"
            for name, settings in sorted(models.items())]
    return ('<section id="models"><h2>Models and their parameters</h2>'
            + table("model-settings", ["model", "role", "max concurrency", "settings that change its replies"], rows)
            + "</section>")


def _role(m: Manifest, name: str) -> str:
    roles = [role for role, names in (("agent", m.agent_models), ("judge", m.judge_models)) if name in names]
    return " and ".join(roles) or "earlier invocation"


def _prompts(m: Manifest) -> str:
    digests = sorted((m.fingerprint.prompts if m.fingerprint else {}).items())
    rows = [f'<tr data-prompt="{esc(name)}"><td>{esc(name)}</td><td><code>{esc(digest)}</code></td></tr>'
            for name, digest in digests]
    rows.append(f'<tr data-prompt="(file)"><td>prompt config file</td><td><code>{esc(m.prompts_hash)}</code></td></tr>')
    return ('<section id="prompts"><h2>Prompt digests</h2>' + table("prompt-digests", ["prompt", "digest"], rows)
            + "</section>")


def _versions(m: Manifest) -> str:
    rows = [f'<tr data-package="{esc(k)}"><td>{esc(k)}</td><td>{esc(v)}</td></tr>'
            for k, v in sorted(m.versions.items())]
    return ('<section id="versions"><h2>Versions</h2>' + table("version-table", ["package", "version"], rows)
            + "</section>")


def _history(m: Manifest) -> str:
    rows = [f"<tr><td>{i}</td><td>{esc(h.command)}</td><td>{h.experiment}</td><td>{esc(h.started_at)}</td>"
            f"<td>{esc(h.finished_at or 'did not finish (killed?)')}</td><td>{'yes' if h.interrupted else ''}</td></tr>"
            for i, h in enumerate(m.history, start=1)]
    return ('<section id="history"><h2>Invocations</h2>'
            + table("invocations", ["#", "command", "experiment", "started", "finished", "interrupted"], rows)
            + "</section>")


def _experiments(m: Manifest) -> str:
    if not m.experiments:
        return ""
    rows = [f"<tr><td>{e.id}</td><td><pre>{esc(_json(_brief(e.fingerprint)))}</pre></td></tr>" for e in m.experiments]
    return ('<section id="experiments"><h2>Earlier experiments (their records stay out of the summary)</h2>'
            + table("earlier-experiments", ["experiment", "settings"], rows) + "</section>")


def _brief(fp: Fingerprint | None) -> object:
    """An earlier experiment's settings without its per-task hashes (hundreds of lines that say nothing to a reader)."""
    if fp is None:
        return "unknown"
    return {"max_turns": fp.max_turns, "judge_attempts": fp.judge_attempts, "prompts": fp.prompts,
            "models": fp.models}


def _json(value: object) -> str:
    return msgspec.json.format(msgspec.json.encode(value)).decode()
