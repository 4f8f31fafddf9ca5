"""The validity certificate as a section of the terminal summary and ``summary.md`` (built by ``sweep``).

One row per task family and one for all, then a note: the verdict's reasons, the
thresholds, judge–judge agreement and the suites it does not apply to. Left out when
the sweep has no MPCBench run and no other suite to speak of.
"""

from __future__ import annotations

from ..sweep import Certificate, FamilyCertificate, Rate, Summary
from ._stats import Section, pct

__all__ = ["certificate_notes", "certificate_sections", "certificate_status"]

_WHY_UNKNOWN = {"skipped": "its baselines were skipped (``certificate=False``)",
                "missing": "the sweep wrote no baselines (certificate_baselines.json)"}


def certificate_status(cert: Certificate) -> str:
    """``VALID``, ``INVALID`` or ``unknown: why``."""
    if cert.status == "unknown":
        return f"unknown: {_WHY_UNKNOWN.get(cert.baselines, cert.baselines)}"
    if cert.status == "not applicable":
        return "not applicable (no MPCBench run)"
    return cert.status.upper()


def certificate_sections(summary: Summary) -> list[Section]:
    cert = summary.certificate
    if not cert.families and not cert.suites:
        return []
    about = ("how far these scores can be trusted, per task family: oracle ceiling and lazy floor = share of "
             "checked tasks sim/oracle-agent and sim/lazy-agent pass (run on this sweep's tasks); vacuous = checks "
             "non-answers pass, of those that applied; no check = tasks no run had a check apply to; check ✗ "
             "judge ≥ 4 = runs failing a check the judges rated ARS ≥ 4 (mean), check ✓ judge < 4 the reverse; "
             "judges ARS κ = quadratic-weighted kappa of two judges' ARS over the runs both scored (the lowest "
             "pair's with several)")
    header = ["family", "tasks", "no check", "oracle ceiling", "lazy floor", "vacuous", "check ✗ judge ≥ 4",
              "check ✓ judge < 4", "judges ARS κ"]
    rows = [_row(f) for f in cert.families]
    return [Section(f"Validity certificate: {certificate_status(cert)}", about, header, rows, right=set(range(1, 9)),
                    note="; ".join(certificate_notes(cert)))]


def certificate_notes(cert: Certificate) -> list[str]:
    """What follows the table: the verdict's reasons, the thresholds, judge–judge agreement, other suites."""
    limits = cert.thresholds
    notes = [f"thresholds: oracle ≥ {pct(limits.min_oracle)}, lazy ≤ {pct(limits.max_lazy)}, vacuous passes ≤ "
             f"{limits.max_vacuous_passes} (model config $.certificate)"]
    notes += [f"not valid: {p}" for p in cert.problems]
    if cert.judge_agreement:
        notes += ["judge–judge agreement: " + "; ".join(
            f"{j.judge_a} vs {j.judge_b} over {j.runs} runs: ARS κ {_num(j.ars_kappa)}, SGR κ {_num(j.sgr_kappa)}"
            for j in cert.judge_agreement)]
    else:
        notes.append("judge–judge agreement: not applicable (no run was scored by two judges)")
    notes += [f"{s.suite}: {s.status} — {s.why}" for s in cert.suites]
    return notes


def _row(f: FamilyCertificate) -> list[str]:
    vacuous = "–" if f.vacuous_passes is None else f"{f.vacuous_passes} of {f.vacuous_checks}"
    return [f.family, str(f.tasks), str(f.tasks_without_check), _rate(f.oracle), _rate(f.lazy), vacuous,
            f"{f.check_fail_judge_high} of {f.compared_runs}", f"{f.check_pass_judge_low} of {f.compared_runs}",
            _kappas(f)]


def _kappas(f: FamilyCertificate) -> str:
    """``0.80 (n 9)`` for one pair of judges, ``min 0.64 (3 pairs)`` for more, ``–`` with one judge."""
    pairs = f.judge_agreement
    if not pairs:
        return "–"
    values = [p.ars_kappa for p in pairs if p.ars_kappa is not None]
    if len(pairs) == 1:
        return f"{_num(pairs[0].ars_kappa)} (n {pairs[0].runs})"
    return f"min {_num(min(values)) if values else '–'} ({len(pairs)} pairs)"


def _rate(rate: Rate | None) -> str:
    if rate is None:
        return "–"
    return f"{pct(rate.rate)} ({rate.passed}/{rate.of})" if rate.of else "– (0 checked)"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
