"""The report's content model: what every kind's section builder returns, what the templates
render. Plain data (no HTML): the templates escape every string they are given."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from anonymatch.report.check import ClaimCheck

if TYPE_CHECKING:
    import pandas as pd

    from anonymatch.tables.columns.schema import MissingCodes
    from anonymatch.tables.io import CsvOptions


@dataclass(frozen=True)
class Figure:
    """One plot: ``uri`` is a ``data:image/svg+xml;base64,…`` URI (no file, no network)."""

    title: str
    uri: str
    caption: str = ""


@dataclass(frozen=True)
class Table:
    """A table of plain values; ``flagged`` marks rows (by index) to highlight."""

    headers: Sequence[str]
    rows: Sequence[Sequence[Any]]
    caption: str = ""
    flagged: frozenset[int] = frozenset()


@dataclass
class Section:
    """One section of the report: paragraphs, key/value facts, tables and figures, in that
    order. ``missing`` says why part of it could not be computed (e.g. no original given)."""

    id: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    facts: list[tuple[str, Any]] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    bullets: list[str] = field(default_factory=list)
    missing: str | None = None


@dataclass
class Inputs:
    """What the section builders may read besides the manifest.

    ``original`` and ``release`` are file paths (None: manifest only); ``options`` holds the
    reading options of the command that made the release (CLI parameter names: ``sep``,
    ``names``, ``na_values``, ``drop_missing``, ``item_sep``, ``adjacency``, …)."""

    original: str | None = None
    release: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    threshold: float = 0.2

    @property
    def complete(self) -> bool:
        return self.original is not None and self.release is not None


@dataclass
class KindSections:
    """A kind builder's contribution: extra facts and tables for the shared sections
    (``published``, ``guarantee``) and its own risk and utility sections, plus the kind's
    limits (what the release does not protect against)."""

    published: Section
    guarantee: Section
    risk: Section
    utility: Section
    limits: list[str] = field(default_factory=list)
    check: ClaimCheck | None = None
    """The manifest's claims re-verified from the files (None: this kind's report does not
    re-verify them; they are labelled unchecked)."""
    headline: Mapping[str, Any] | None = None
    """The utility headline measured from the files (``tables.risk.headline``; None: the
    manifest's ``loss.headline``, if any, is shown)."""


NEEDS_FILES = "needs the original and the release (pass them to anonymatch report)"
"""What a risk or utility section says when the report was given the manifest alone."""


def kind_sections(
    published: Section, risk: Section, utility: Section, limits: list[str]
) -> KindSections:
    """A kind's contribution when it adds nothing to the shared guarantee section."""
    return KindSections(published, Section("guarantee-kind", ""), risk, utility, limits)


LABELS: dict[str, str] = {
    "n_original": "people in the original",
    "n_published": "published records",
    "n_vertices": "vertices",
    "n_edges": "edges",
    "n_classes": "classes",
    "min_matches_original": "fewest matches per person",
    "min_matches_published": "fewest matches per published record",
    "min_labels_original": "fewest distinct labels per person",
    "k_factor_flow": "disjoint matches found (k-factor flow)",
    "k_factor_required": "disjoint matches required (k × people)",
    "compatible_pairs": "compatible (person, record) pairs",
    "worst_l": "smallest ℓ reached",
    "worst_emd": "largest distance to the table (t)",
    "privacy_step": "privacy step",
    "input_options": "how the input was read",
    "item_sep": "item separator",
    "id_column": "record id column",
    "item_column": "item column",
    "dedupe": "repeated rows dropped",
    "edges_before": "edges in the original",
    "edges_after": "edges in the release",
    "degree_emd": "degree distance (EMD)",
    "degree_tv": "degree distance (total variation)",
    "mean_degree_before": "mean degree, original",
    "mean_degree_after": "mean degree, release",
    "sha256": "SHA-256",
    "l": "ℓ",
    "wall": "total (wall clock)",
}
"""Words for the manifest's keys the report shows (others: the key with spaces)."""


def label_text(key: object) -> str:
    """The words for a manifest key (``min_matches_original`` → "fewest matches per person";
    an unknown key with its underscores as spaces). O(1)."""
    text = str(key)
    return LABELS.get(text, text.replace("_", " "))


def file_name(path: object) -> str:
    """A recorded path as the report shows it: the file's name only (no machine directory); a
    URL-like source (``postgresql://…``) or an empty path as it is. O(len(path))."""
    text = str(path)
    if not text or "://" in text:
        return text
    from pathlib import PureWindowsPath

    return PureWindowsPath(text).name if "\\" in text else text.rstrip("/").rsplit("/", 1)[-1]


def read_original(
    manifest: Mapping[str, Any], inputs: Inputs
) -> tuple[pd.DataFrame, tuple[CsvOptions, MissingCodes, bool]]:
    """The report's original table, read as the release's run read it (the reading options
    given to the report, the missing-value codes recorded by ``--na``, rows with a missing QI
    dropped when the run dropped some), and those reading options. O(the file)."""
    from anonymatch.tables.columns.schema import DEFAULT_NA_VALUES, MissingCodes, missing_codes
    from anonymatch.tables.io import CsvOptions, read_table

    params = manifest.get("parameters") or {}
    options = inputs.options
    csv = options.get("csv") or CsvOptions()
    na = missing_codes(options.get("na_values") or DEFAULT_NA_VALUES)
    if not na.columns and isinstance(params.get("na_codes"), dict):  # --na, as recorded
        codes = {str(c): tuple(str(v) for v in vs) for c, vs in params["na_codes"].items()}
        na = MissingCodes(na.tokens, codes)
    dropped = int((manifest.get("input") or {}).get("dropped_missing") or 0)
    drop_missing = bool(options.get("drop_missing")) or dropped > 0
    assert inputs.original is not None and inputs.release is not None
    return read_table(inputs.original, csv), (csv, na, drop_missing)
