"""Report sections of a graph release (graph k-anonymity): the figures of the run (Jaccard,
edges added and removed, degree distance), degrees before and after, and vertices per class of
identical neighbourhoods in the published graph. Cost: O(n + m)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from anonymatch.report import plots
from anonymatch.report.common import class_size_risk
from anonymatch.report.model import (
    NEEDS_FILES,
    Figure,
    Inputs,
    KindSections,
    Section,
    Table,
    kind_sections,
    label_text,
)


def sections(manifest: Mapping[str, Any], inputs: Inputs, published: Section) -> KindSections:
    g = manifest.get("guarantee") or {}
    loss = manifest.get("loss") or {}
    risk = Section("risk", "Re-identification and disclosure risk")
    utility = Section("utility", "Utility: what the release keeps")
    limits = [
        "Only the neighbourhood is protected: an attacker who knows other structure (degrees of "
        "the neighbours, paths of length two) may single a vertex out.",
        "Vertex attributes are not part of this release and not covered.",
    ]
    rows = [[label_text(k), f"{v:.4f}" if isinstance(v, float) else v] for k, v in loss.items()]
    if rows:
        utility.tables.append(
            Table(["figure", "value"], rows,
                  caption="Computed by the run on the original vertex ids.")
        )  # fmt: skip
    if not inputs.complete:
        risk.missing = NEEDS_FILES
        return kind_sections(published, risk, utility, limits)
    from anonymatch.graphs.io import read_edge_list
    from anonymatch.graphs.verify import neighbourhood_classes

    assert inputs.original is not None and inputs.release is not None
    n = inputs.options.get("n_vertices")
    before = read_edge_list(inputs.original, n)
    after = read_edge_list(inputs.release, before.n)
    deg_a = np.diff(before.adjacency.indptr)
    deg_b = np.diff(after.adjacency.indptr)
    utility.figures.append(
        Figure(
            "Degrees",
            plots.two_histograms(deg_a, deg_b, ("original", "release"), "degree", "Degrees"),
        )
    )
    closed = g.get("neighbourhoods") == "closed"
    classes = neighbourhood_classes(after.adjacency, closed)
    risk.paragraphs.append(
        "Vertices with identical neighbourhoods in the published graph cannot be told apart by "
        "an attacker who knows a person's neighbours."
    )
    class_size_risk(
        risk, classes, g.get("k"), "vertex", "vertices", "vertices with the same neighbourhood"
    )
    return kind_sections(published, risk, utility, limits)
