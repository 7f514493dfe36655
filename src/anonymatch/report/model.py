"""The report's content model: what every kind's section builder returns, what the templates
render. Plain data (no HTML): the templates escape every string they are given."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from anonymatch.report.check import ClaimCheck


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
