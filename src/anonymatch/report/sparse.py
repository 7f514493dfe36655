"""Report sections of a sparse binary release (smooth / nonsmooth k-anonymity, Mondrian,
randomized response): the figures of ``evaluate-sparse`` (Jaccard, suppressed and created
entries), users per class of identical published rows, and ones per row before and after.
Cost: O(nnz log nnz)."""

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
)


def sections(manifest: Mapping[str, Any], inputs: Inputs, published: Section) -> KindSections:
    g = manifest.get("guarantee") or {}
    loss = manifest.get("loss") or {}
    risk = Section("risk", "Re-identification and disclosure risk")
    utility = Section("utility", "Utility: what the release keeps")
    rr = g.get("model") == "randomized-response"
    limits = (
        [
            "Randomized response hides each entry up to ε; rows are published one per user, so "
            "a user with many distinctive ones may still stand out statistically."
        ]
        if rr
        else [
            "Rows are published per user in classes; an attacker who knows ones a user holds "
            "that the class vote dropped learns nothing from them, but ones the class shares "
            "are disclosed for everyone in it (homogeneity)."
        ]
    )
    for key, label in (("jaccard", "Jaccard similarity"), ("suppressed", "ones suppressed"),
                       ("created", "ones created")):  # fmt: skip
        if loss.get(key) is not None:
            utility.facts.append((f"{label} (from the run)", f"{100 * float(loss[key]):.2f}%"))
    if not inputs.complete:
        risk.missing = utility.missing = NEEDS_FILES
        return kind_sections(published, risk, utility, limits)
    from anonymatch.sparse.io import read_sparse, sparse_format
    from anonymatch.sparse.metrics import edge_metrics
    from anonymatch.sparse.verify import row_classes

    options = inputs.options
    assert inputs.original is not None and inputs.release is not None
    x = read_sparse(inputs.original, options.get("fmt", "auto"), options.get("adjacency", "none"))
    p = read_sparse(inputs.release)
    if sparse_format(inputs.release) != "mtx":
        p.resize((max(p.shape[0], x.shape[0]), max(p.shape[1], x.shape[1])))
    m = edge_metrics(x, p).to_dict()
    utility.tables.append(
        Table(
            ["figure", "value"],
            [[k, f"{v:.4f}" if isinstance(v, float) else v] for k, v in m.items()],
            caption="The figures of evaluate-sparse, from the files.",
        )
    )
    utility.figures.append(
        Figure(
            "Ones per row",
            plots.two_histograms(np.diff(x.indptr), np.diff(p.indptr), ("original", "release"),
                                 "ones per row", "Ones per row"),
        )
    )  # fmt: skip
    if not rr:
        classes = row_classes(p[: x.shape[0]])
        risk.paragraphs.append(
            "Users whose published rows are identical cannot be told apart from the release: "
            "each user's class size is the number of rows an attacker must choose from."
        )
        class_size_risk(
            risk, classes, g.get("k"), "user", "users", "users with the same published row"
        )
    else:
        risk.paragraphs.append(
            "Randomized response gives ε-differential privacy per entry; there are no classes "
            "to count."
        )
    return kind_sections(published, risk, utility, limits)
