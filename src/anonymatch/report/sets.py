"""Report sections of a transaction release: nonreciprocal recoding (``anonymize-sets``) and
kᵐ-anonymity (``anonymize-km``).

For a recoded release the files give the compatible published records of every transaction
(``sets.verify.set_view``: the attacker's view) and the utility figures of
``evaluate-sets`` (query error of Xue et al. §5.2 on 500 random queries, expected error rate).
Cost: O(compatible pairs · mean record size) plus the queries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from anonymatch.report import plots
from anonymatch.report.check import UNCHECKED
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
    """Risk and utility of a transaction release."""
    g = manifest.get("guarantee") or {}
    loss = manifest.get("loss") or {}
    source = manifest.get("input") or {}
    risk = Section("risk", "Re-identification and disclosure risk")
    utility = Section("utility", "Utility: what the release keeps")
    published.facts.append(("items in the input", source.get("items")))
    limits = []
    if g.get("model") == "k^m-anonymity":
        limits.append(
            f"An attacker who knows more than {g.get('m')} items of a transaction is not "
            "covered: larger itemsets may be rare."
        )
        km = (manifest.get("verification") or {}).get("km") or {}
        levels = km.get("levels") or []
        if levels:
            risk.tables.append(
                Table(
                    ["itemset size", "itemsets counted", "rare itemsets", "records at risk"],
                    [[x.get("level"), x.get("itemsets_counted"), x.get("violations"),
                      x.get("records_at_risk")] for x in levels],
                    caption="Itemsets of each size that occur in fewer than k transactions "
                    f"(the verifier's figures in the manifest: {UNCHECKED}).",
                )
            )  # fmt: skip
        utility.facts += [
            ("item NCP", f"{100 * float(loss.get('item_ncp') or 0):.2f}%"),
            ("item groups", loss.get("item_groups")),
            ("merges", loss.get("merges")),
        ]
        return kind_sections(published, risk, utility, limits)
    limits.append(
        "Sensitive labels without ℓ-diversity are released as they are: a label shown on all "
        "of a transaction's compatible records is disclosed."
        if not g.get("l")
        else "ℓ-diversity bounds the label posterior to 1/ℓ per transaction; the frequency of "
        "labels in the whole data is still published."
    )
    if loss.get("error_rate") is not None:
        utility.facts.append(("error rate (exact, from the run)", f"{loss['error_rate']:.4f}"))
        utility.paragraphs.append(
            "Error rate: for each transaction, the items in which its own published record "
            "differs from it (added or missing), divided by its number of items, averaged over "
            "the transactions (Xue et al., the error rate of their section 5.1). The run knows "
            "each record's true match and gives it exactly; from the files alone the report "
            "gives its expectation over the compatible published records. 0 means every record "
            "was published as it is."
        )
    if loss.get("mean_max_errors") is not None:
        utility.facts.append(("mean threshold t", f"{loss['mean_max_errors']:.3f}"))
    if not inputs.complete:
        risk.missing = utility.missing = NEEDS_FILES
        return kind_sections(published, risk, utility, limits)
    from anonymatch.sets.io import read_set_release, read_transactions
    from anonymatch.sets.metrics import set_utility
    from anonymatch.sets.verify import set_view

    options = inputs.options
    assert inputs.original is not None and inputs.release is not None
    t = read_transactions(
        inputs.original,
        options.get("fmt", "auto"),
        item_sep=options.get("item_sep", ","),
        id_column=options.get("id_column"),
        item_column=options.get("item_column"),
        dedupe=bool(options.get("dedupe")),
    )
    rel = read_set_release(inputs.release, t)
    view = set_view(rel, t)
    per_person = view.per_original()[view.inverse]
    keys, counts = np.unique(per_person, return_counts=True)
    histogram = {int(a): int(b) for a, b in zip(keys, counts, strict=True)}
    n = len(per_person)
    risk.facts += [
        ("compatible records per transaction: min", int(per_person.min())),
        ("median", float(np.median(per_person))),
        ("mean", f"{per_person.mean():.2f}"),
        ("transactions with fewer than k", int((per_person < (g.get("k") or 1)).sum())),
    ]
    risk.paragraphs.append(
        "A transaction's compatible records are the published records it could be: they agree "
        "with it outside their uncertain items and differ in at most their threshold of items."
    )
    risk.figures.append(
        Figure(
            "Compatible published records per transaction",
            plots.count_histogram(histogram, "compatible records", "transactions", g.get("k")),
        )
    )
    u = set_utility(t, rel, seed=0)
    utility.tables.append(
        Table(
            ["figure", "value"],
            [
                ["query error, records holding 3 given items", f"{u.query_error_type1:.4f}"],
                [
                    "query error, records holding none of 4 given items",
                    f"{u.query_error_type2:.4f}",
                ],
                ["expected error rate (from the files)", f"{u.expected_error_rate:.4f}"],
                ["mean uncertain items per record", f"{u.mean_uncertain:.2f}"],
            ],
            caption=f"{n} transactions; 500 random count queries of each kind (fixed query "
            "seed 0). Query error: |count on the original − count on the release| / "
            "transactions, averaged over the queries (Xue et al., section 5.2); 0.01 means "
            "counts off by 1% of the transactions.",
        )
    )
    sizes_o = np.diff(t.matrix.indptr)
    sizes_r = np.diff(sp_csr(rel.base).indptr)
    utility.figures.append(
        Figure(
            "Items per record",
            plots.two_histograms(sizes_o, sizes_r, ("original", "release (base items)"),
                                 "items", "Items per record"),
        )
    )  # fmt: skip
    return kind_sections(published, risk, utility, limits)


def sp_csr(matrix: Any) -> Any:
    import scipy.sparse as sp

    return sp.csr_array(matrix)
