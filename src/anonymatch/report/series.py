"""The report's series section (issue 40): a release of a series (its manifest's ``series``
block, ``anonymize --series``) shown with its place in the series, its people (continuing, new,
changed, departed, suppressed) and the in-run check; with ``report --series DIR
--series-original …`` also the composition attacker's figures of the release joined to the
series (``tables.series.risk.series_risk``, the figures of ``risk --series``). A release that
is not in a series has no such section."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from anonymatch.core.errors import InputError
from anonymatch.core.params import param
from anonymatch.report.model import NEEDS_FILES, Inputs, Section, Table

SERIES = param("series")
"""The series directory's parameter as messages name it (the CLI: ``--series``)."""

COUNTS = ("continuing", "new", "changed", "departed", "suppressed")
"""The manifest's ``series.counts``, in the order the section shows them."""

COUNT_WORDS = {
    "continuing": "continuing (published before, value unchanged)",
    "new": "new (never published before)",
    "changed": "changed (published before with another value)",
    "departed": "departed (in the previous release, not in this input)",
    "suppressed": "suppressed (in this input, not published)",
}


def series_section(manifest: Mapping[str, Any], inputs: Inputs) -> Section | None:
    """The series section of a release's report, or None for a release outside a series.

    Parameters
    ----------
    manifest : mapping
        The release's manifest (checked); its ``series`` block is shown.
    inputs : Inputs
        The files; ``inputs.options["series"]`` (a ``cli.series.SeriesRequest``, optional)
        asks for the attacker's figures, which need the original and the release too.

    Returns
    -------
    Section or None

    Raises
    ------
    InputError
        ``series`` asked of a release whose manifest has no ``series`` block, or without the
        original and the release; whatever ``series_risk`` refuses (exit 2).

    Notes
    -----
    From the manifest: O(releases). With the attacker's figures: reading the files and
    ``verify_series`` on the series (``tables.series.verify``).
    """
    block = manifest.get("series")
    request = inputs.options.get("series")
    if not isinstance(block, Mapping):
        if request is not None:
            raise InputError(f"{SERIES}: the manifest records no release of a series")
        return None
    section = Section("series", "Release series")
    section.paragraphs.append(
        "This release belongs to a series: the same population published again. An attacker "
        "who knows a person's quasi-identifiers and which releases they are in intersects what "
        "the releases show about them (the composition attack); the series keeps the set of "
        "sensitive values of each returning person's class the same in every release "
        "(m-invariance on classes), so the intersection never narrows them below ℓ values."
    )
    previous = [str(d) for d in block.get("previous_sha256") or []]
    section.facts.append(("release number", block.get("release")))
    section.facts.append(
        ("previous releases", len(previous) if previous else "none: the series' first release")
    )
    counts = block.get("counts") or {}
    for key in COUNTS:
        if key in counts:
            section.facts.append((COUNT_WORDS[key], counts[key]))
    check = block.get("verification") or {}
    passed = check.get("passed")
    verdict = "passed" if passed is True else ("FAILED" if passed is False else "not recorded")
    section.facts.append(("in-run check of the signatures", verdict))
    section.facts.append(("how it was checked", check.get("method")))
    if check.get("continuing_checked") is not None:
        section.facts.append(("continuing people checked", check["continuing_checked"]))
    if previous:
        section.tables.append(
            Table(
                ["release", "SHA-256"],
                [[t, digest] for t, digest in enumerate(previous, start=1)],
                "The previous releases of the series, by SHA-256",
            )
        )
    if request is None:
        section.missing = (
            "the composition attacker's figures need the series: pass --series DIR "
            "--series-original … to anonymatch report (as for anonymatch risk --series)"
        )
        return section
    if not inputs.complete:
        raise InputError(f"{SERIES}: the attacker's figures {NEEDS_FILES}")
    figures = attacker_figures(manifest, inputs, request)
    _attacker(section, figures)
    return section


def attacker_figures(manifest: Mapping[str, Any], inputs: Inputs, request: Any) -> dict[str, Any]:
    """``risk --series``'s figures of the report's release (``SeriesRequest.figures``), the
    original read as the tables section reads it, the columns the manifest's. O(files +
    verify_series)."""
    from anonymatch.report.model import read_original
    from anonymatch.tables.columns.schema import Schema

    params = manifest.get("parameters") or {}
    schema = Schema.build(
        params.get("qi") or [],
        params.get("numeric") or [],
        params.get("sensitive") or [],
        params.get("identifiers") or [],
    )
    original, reading = read_original(manifest, inputs)
    assert inputs.release is not None
    figures: dict[str, Any] = request.figures(original, inputs.release, schema, reading)
    return figures


def published_mask(
    manifest: Mapping[str, Any], data: pd.DataFrame, options: Mapping[str, Any], n: int
) -> np.ndarray | None:
    """For a series release that suppressed people, which rows of ``data`` (its input) it
    publishes: by the series directory's private map (``report --series DIR``, the steward's
    copy; ``PublishedSeries.people``). None when the release is not in a series, suppressed
    nobody, no ``--series`` was given or the map does not give ``n`` rows. O(rows + map)."""
    block = manifest.get("series")
    request = options.get("series")
    if not isinstance(block, Mapping) or n >= len(data):
        return None
    if request is None:
        raise InputError(
            f"the release publishes {n} of the input's {len(data)} people (a series release "
            f"that suppressed some): anonymatch report {SERIES} DIR reads them from DIR's "
            "private map"
        )
    from anonymatch.tables.series.risk import open_published

    series = open_published(request.directory)
    number = series.position(str((manifest.get("output") or {}).get("sha256") or "") or None)
    if number is None:
        return None
    marked = data.assign(**{"\x00row": np.arange(len(data))})
    kept = series.people(number, marked, n)
    if len(kept) != n:
        return None
    mask = np.zeros(len(data), bool)
    mask[kept["\x00row"].to_numpy()] = True
    return mask


def _attacker(section: Section, figures: Mapping[str, Any]) -> None:
    """The attacker's figures as facts and a per-release table (the JSON of ``risk
    --series``, key by key)."""
    strong, weak = figures["strong"], figures["weak"]
    after, mine = figures["after_intersection"], figures["this_release"]
    narrow = figures["candidates_after_intersection"]
    section.paragraphs.append(
        f"The composition attacker's figures of this release joined to the series "
        f"{figures['directory']} (release {figures['release']} of {len(figures['releases'])}"
        + ("" if figures["in_directory"] else ", joined after the directory's releases")
        + "), from the releases and each release's people only: the strong attacker "
        "intersects the values of each release's candidate rows of a person, the weak one "
        "those of the rows compatible with their quasi-identifiers."
    )
    post, share = strong["largest_posterior"], strong["largest_share"]

    def text(value: float | None) -> str:
        return "—" if value is None else f"{value:.4f}"

    def pair(side: Mapping[str, Any]) -> str:
        return "—" if side["fewest"] is None else f"{side['fewest']} / {side['median']:g}"

    section.tables.append(
        Table(
            ["figure", "value"],
            [
                ["verdict", "passed" if figures["passed"] else f"FAILED: {figures['reason']}"],
                ["k, ℓ", f"{figures['k']}, {figures['l']}"],
                ["people in the series", figures["people"]],
                ["people in two releases or more", figures["in_two_or_more"]],
                ["fewest candidate rows, any release", figures["min_candidates"]],
                ["values after intersection, candidates: fewest / median", pair(after["strong"])],
                ["values after intersection, compatible rows: fewest / median",
                 pair(after["weak"])],
                ["below ℓ on candidates (strong)", strong["below_l"]],
                ["homogeneous on candidates (one value)", strong["certain"]],
                ["below ℓ on compatible rows (weak)", weak["below_l"]],
                ["homogeneous on compatible rows (one value)", weak["certain"]],
                ["below k after intersection (candidates)", narrow["below_k"]],
                ["candidates after intersection: fewest / median",
                 "—" if narrow["min"] is None else f"{narrow['min']} / {narrow['median']:g}"],
                ["largest posterior (strong)", text(post)],
                ["largest share (strong)", text(share)],
                ["changed value, counted apart", figures["changed"]],
                ["changed value and below ℓ", figures["changed_below_l"]],
                ["changed value and below k after intersection", narrow["changed_below_k"]],
                ["this release's people", mine["people"]],
                ["… in an earlier release", mine["in_an_earlier_release"]],
                ["… below ℓ on candidates", mine["strong_below_l"]],
                ["… below ℓ on compatible rows", mine["weak_below_l"]],
                ["… below k after intersection", mine["below_k_after_intersection"]],
            ],
            "The composition attacker (people whose value is unchanged; posterior and share "
            "as docs/guarantees/series.md defines them)",
            frozenset({0}) if not figures["passed"] else frozenset(),
        )
    )  # fmt: skip
    section.tables.append(
        Table(
            ["release", "people", "fewest candidates", "below k", "fewest compatible rows",
             "perfect matching"],
            [[r["release"], r["people"], r["min_candidates"], r["below_k"], r["min_compatible"],
              "yes" if r["matching"] else "no"] for r in figures["releases"]],
            "Each release of the series as the attacker sees it",
        )
    )  # fmt: skip
