"""What a table release really keeps and leaks, in words: the lines the CLI prints on stderr,
the report's top card and the web app's result page show (issue 25).

Everything here reads a manifest (``anonymatch-manifest/1``): its ``leakage`` block
(``tables.risk.leakage``) and its ``loss.headline`` (``tables.risk.headline``), so the three
front ends say the same thing with the same figures. Manifests written before these blocks
existed give no lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from anonymatch.tables.risk.headline import USELESS_LOSS, WARN_LOSS
from anonymatch.tables.risk.leakage import LeakageReport


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _leakage(manifest: Mapping[str, Any]) -> LeakageReport | None:
    """The manifest's ``leakage`` block as the check's report, or None (none, or of another
    shape)."""
    block = manifest.get("leakage")
    try:
        return LeakageReport.from_dict(block) if isinstance(block, Mapping) else None
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def leakage_lines(manifest: Mapping[str, Any]) -> list[str]:
    """One sentence per flagged kept column: what it gives away, and the role to give it."""
    report = _leakage(manifest)
    return report.lines() if report is not None else []


def flagged_columns(manifest: Mapping[str, Any]) -> dict[str, str]:
    """The flagged kept columns and the role proposed for each (``qi`` or ``identifier``)."""
    report = _leakage(manifest)
    return {c.column: c.proposed_role for c in report.flagged} if report is not None else {}


def headline_of(manifest: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The manifest's utility headline (``loss.headline``), or None."""
    loss = manifest.get("loss")
    block = loss.get("headline") if isinstance(loss, Mapping) else None
    return block if isinstance(block, Mapping) else None


def headline_text(manifest: Mapping[str, Any]) -> str | None:
    """The utility headline in one line, or None without one."""
    h = headline_of(manifest)
    if h is None:
        return None
    return (
        f"exact cells {_pct(float(h['exact_cells']))}, rows fully generalized "
        f"{_pct(float(h['rows_fully_generalized']))}, codes merged "
        f"{_pct(float(h['codes_merged']))} of {int(h['codes']):,}, loss on the values present "
        f"{_pct(float(h['loss_present']))}"
    )


def utility_warning(manifest: Mapping[str, Any]) -> str | None:
    """A warning when the release keeps little (``loss_present`` ≥ WARN_LOSS) or nothing
    (≥ USELESS_LOSS, or every row fully generalized), else None."""
    h = headline_of(manifest)
    if h is None:
        return None
    verdict = h.get("verdict")
    loss = float(h["loss_present"])
    if verdict == "useless":
        return (
            f"the release is useless: its QI cells lose {_pct(loss)} of the values present "
            f"(≥ {_pct(USELESS_LOSS)}) and {_pct(float(h['rows_fully_generalized']))} of the "
            "rows say nothing about their QIs; lower k or the sensitive model's level, or "
            "drop QIs"
        )
    if verdict == "poor":
        return (
            f"the release keeps little: its QI cells lose {_pct(loss)} of the values present "
            f"(warning from {_pct(WARN_LOSS)}); only {_pct(float(h['exact_cells']))} of the "
            "cells are exact"
        )
    return None


def insider_warning(manifest: Mapping[str, Any]) -> str | None:
    """The insider weakness of a release made of sensitive rings (``structure`` ``rings``:
    ``guarantee.insider_weakness``, docs/guarantees/sensitive.md §6), else None."""
    guarantee = manifest.get("guarantee")
    if not isinstance(guarantee, Mapping):
        return None
    weakness = guarantee.get("insider_weakness")
    if guarantee.get("construction") == "rings":
        return f"this release is made of sensitive {weakness if weakness else 'rings'}"
    return f"this release is made of {weakness}" if weakness else None


def unprotected_warning(manifest: Mapping[str, Any]) -> str | None:
    """The sensitive columns published without protection (``l = 1`` asked for:
    ``guarantee.unprotected``; a named sensitive column otherwise gets distinct ℓ = 2), else
    None."""
    guarantee = manifest.get("guarantee")
    columns = guarantee.get("unprotected") if isinstance(guarantee, Mapping) else None
    if not columns:
        return None
    names = ", ".join(repr(str(c)) for c in columns)
    return (
        f"sensitive column {names} published without protection (l = 1): a person whose "
        "candidate rows all show one value of it has that value disclosed"
    )


def default_model_note(manifest: Mapping[str, Any]) -> str | None:
    """The sensitive columns protected by the default distinct ℓ = 2 (named with neither
    ``l`` nor ``t``: ``guarantee.sensitive[].default``), in words, else None."""
    guarantee = manifest.get("guarantee")
    models = guarantee.get("sensitive") if isinstance(guarantee, Mapping) else None
    columns = [
        str(m.get("column")) for m in models or () if isinstance(m, Mapping) and m.get("default")
    ]
    if not columns:
        return None
    names = ", ".join(repr(c) for c in columns)
    return (
        f"sensitive column {names}: distinct ℓ = 2 applied by default (no person's candidate "
        "rows all show one value; l = 1 publishes it unprotected)"
    )


def warnings_of(manifest: Mapping[str, Any]) -> list[str]:
    """Every warning of a release: leakage, a sensitive column published unprotected, the
    rings' insider weakness, utility."""
    lines = leakage_lines(manifest)
    unprotected = unprotected_warning(manifest)
    insider = insider_warning(manifest)
    useless = utility_warning(manifest)
    return (
        lines
        + ([unprotected] if unprotected else [])
        + ([insider] if insider else [])
        + ([useless] if useless else [])
    )
