"""The report's side-by-side table (issue 39, item 3): the release, plain draws of it and its DP
companion on the companion's own workload — what each answers, and what each promises.

Shown when the release was published with a companion (``anonymize --dp-queries``,
``dp_companion`` in the manifest) and the report has the original and the release: the truth
is counted on the original, the release answers with expected counts (each value uniform inside
its cell), five anchored draws (``tables.models.draws.plain_draws``, fresh randomness) with the
mean of their counts, and the companion with its published answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anonymatch.report.model import Section, Table

DRAWS = 5
"""Anchored draws made for the table (``anonymatch draw -m 5``)."""


def side_by_side(
    section: Section, manifest: Mapping[str, Any], original: pd.DataFrame, release_path: str
) -> None:
    """Add the side-by-side table to ``section`` (nothing without a companion in the manifest;
    a note when its file or the release's typing cannot be read). O(m·n·(q + d)) for m draws,
    n rows, q queries and d columns, plus the anchored draws' EM."""
    block = manifest.get("dp_companion")
    if not isinstance(block, Mapping):
        return
    from anonymatch.core.documents import load_json
    from anonymatch.core.errors import AnonymatchError
    from anonymatch.tables.io.release import read_release
    from anonymatch.tables.models.dp import (
        exact_answers,
        median_relative_error,
        parse_workload,
        release_answers,
    )
    from anonymatch.tables.models.draws import plain_draws

    path = Path(release_path).parent / Path(str(block.get("path") or "")).name
    try:
        doc = load_json(path, "DP companion")
        workload = parse_workload({"queries": doc["queries"]})
        typed = read_release(release_path)
        k = (manifest.get("guarantee") or {}).get("k")
        truth = exact_answers(original, workload)
        draws = plain_draws(typed, DRAWS, weights="anchored", degree=int(k)) if k else []
        drawn = np.mean([exact_answers(t, workload) for t in draws], axis=0) if draws else None
        errors = {
            "release": median_relative_error(release_answers(typed, workload), truth),
            "dp": median_relative_error([float(a) for a in doc["answers"]], truth),
        }
    except (AnonymatchError, KeyError, TypeError, ValueError) as exc:
        section.paragraphs.append(
            f"The release, its draws and its DP companion: not compared ({exc})."
        )
        return
    epsilon, delta = float(block.get("epsilon") or 0), float(block.get("delta") or 0)
    rows: list[list[Any]] = [
        ["the release (expected counts)", f"{100 * errors['release']:.1f}%",
         f"k-anonymity, k = {k}" if k else "the release's guarantee",
         "as verified above (candidates, prosecutor and sensitive figures)"],
    ]  # fmt: skip
    if drawn is not None:
        rows.append(
            [f"{DRAWS} anchored draws (mean count)",
             f"{100 * median_relative_error(list(drawn), truth):.1f}%",
             "the release's, and no more", "the release's: a draw is a function of the release"
             " and fresh randomness"]
        )  # fmt: skip
    rows.append(
        [f"the DP companion ({path.name})", f"{100 * errors['dp']:.1f}%",
         f"(ε = {epsilon:.4g}, δ = {delta:.3g})-DP, these answers only",
         "bounded for any attacker by ε, δ; the release beside it is not DP"]
    )  # fmt: skip
    section.tables.append(
        Table(
            ["published", "count error (median)", "formal promise", "risk"],
            rows,
            caption=(
                f"The release, plain draws of it and its DP companion on the companion's "
                f"{len(truth)} count queries: median |answer − truth| / truth, the truth counted "
                "on the original."
            ),
        )
    )
