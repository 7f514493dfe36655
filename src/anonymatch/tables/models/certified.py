"""The sensitive models of a ring release, checked from the release, the original and the ring
certificate of its manifest — for every draw of the privacy step.

A ring release (``methods.circulant``) publishes, in its manifest, the **certificate**
``{"k": k, "rings": [[row, …], …]}``: the rings' published rows (0-based positions in the
release) in ring order. The rows of no ring form classes. The generalization graph it
certifies: the person placed at ring position p is joined to the rows at positions p, p−1, …,
p−k+1 of the ring, and every other person to the rows of their class. The privacy step drew
one of the ring's k shifts (``circulant.shift_assignment``), so the values on a ring's rows are
its people's values rotated, and under *any* shift the k rows of a person show k consecutive
values of that rotation. The set of cyclic windows of a sequence is the same for all its
rotations; hence every draw keeps every person's neighbours within the model **iff every
cyclic window of k consecutive published rows of every ring does** — a condition on the
release alone (docs/guarantees/sensitive.md §6).

``check_certified`` verifies, from the published cells and values and the original only:

1. the certificate's shape: rings of ≥ k distinct rows, no row in two rings;
2. that the certified graph exists on the original's people: a perfect matching between the
   people and the slots — every ring position p (a person there must be compatible with all of
   the rows p, p−1, …, p−k+1) and every row in no ring (compatible) — so the graph that the
   model is checked on is a generalization graph of this table (Hopcroft–Karp, scipy);
3. every cyclic window of k rows of every ring, and every group of identical published rows
   outside the rings (a union of classes: its members' rows), satisfies each model — with the
   class-based definitions of ``models.sensitive``, through ``check_model`` with one unit per
   window and per row outside the rings (as many units as people).

Complexity: the attacker's view (``verify.attacker_view``) plus O(pairs·k) for the slot graph,
O(pairs·√n) for the matching, O(n·k) for the windows; memory O(pairs·k).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from anonymatch.core.errors import InputError
from anonymatch.core.params import param
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.models.disclosure import SensitiveModel
from anonymatch.tables.models.sensitive import (
    SensitiveCheck,
    check_model,
    check_release,
    encode_sensitive,
)
from anonymatch.tables.recode import GeneralizedQI, published_groups


def ring_certificate(k: int, rings: Sequence[np.ndarray]) -> dict[str, object]:
    """The manifest's certificate: ``k`` and each ring's release rows (0-based) in ring order."""
    return {"k": int(k), "rings": [[int(r) for r in ring] for ring in rings]}


def parse_certificate(
    certificate: Mapping[str, object], n_rows: int
) -> tuple[int, list[np.ndarray]]:
    """``k`` and the rings of a certificate. Raises InputError naming ``certificate`` if it is
    malformed: k not a positive integer, a ring shorter than k, a row out of range or in two
    rings. O(n)."""
    k = certificate.get("k")
    rings = certificate.get("rings")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1 or not isinstance(rings, list):
        raise InputError(f"{param('certificate')} needs an integer `k` >= 1 and a list `rings`")
    out = []
    seen = np.zeros(n_rows, dtype=bool)
    for ring in rings:
        if not isinstance(ring, list) or not all(
            isinstance(r, int) and not isinstance(r, bool) for r in ring
        ):
            raise InputError(f"{param('certificate')}: every ring is a list of row numbers")
        rows = np.asarray(ring, dtype=np.int64)
        if len(rows) < k:
            raise InputError(f"{param('certificate')}: a ring of {len(rows)} rows < k = {k}")
        if len(rows) and (rows.min() < 0 or rows.max() >= n_rows):
            raise InputError(f"{param('certificate')}: a row number outside the release")
        if seen[rows].any() or len(np.unique(rows)) != len(rows):
            raise InputError(f"{param('certificate')}: a row in two places")
        seen[rows] = True
        out.append(rows)
    return k, out


def units(published: GeneralizedQI, k: int, rings: list[np.ndarray]) -> sp.csr_array:
    """Unit × published-row 0/1 matrix: one unit per cyclic window of k rows of each ring (the
    rows a person's neighbours show under some draw), one per row in no ring (its group of
    identical published rows). n units in all. O(n·k + n log n)."""
    n = published.n
    rows, cols = [], []
    unit = 0
    for ring in rings:
        m = len(ring)
        start = np.arange(m)
        for a in range(k):
            rows.append(unit + start)
            cols.append(ring[(start + a) % m])
        unit += m
    free = np.ones(n, dtype=bool)
    for ring in rings:
        free[ring] = False
    outside = np.flatnonzero(free)
    if len(outside):
        _, group, _ = published_groups(published.take(outside))
        sort = np.argsort(group, kind="stable")
        members = outside[sort]
        g = group[sort]
        starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        sizes = np.diff(np.r_[starts, len(g)])
        for s, z in zip(starts.tolist(), sizes.tolist(), strict=True):
            block = members[s : s + z]
            rows.append(unit + np.repeat(np.arange(z), z))
            cols.append(np.tile(block, z))
            unit += z
    r = np.concatenate(rows) if rows else np.empty(0, np.int64)
    c = np.concatenate(cols) if cols else np.empty(0, np.int64)
    out = sp.csr_array((np.ones(len(r), np.int8), (r, c)), shape=(unit, n))
    out.sum_duplicates()
    out.sort_indices()
    return out


def structure_exists(
    published: GeneralizedQI, original: EncodedQI, k: int, rings: list[np.ndarray]
) -> bool:
    """Whether the certified graph exists on these people: a perfect matching of people to
    slots (ring positions, whose person must be compatible with the k rows p, p−1, …, p−k+1,
    and rows in no ring). Solved on the groups of the attacker's view
    (``verify.attacker_view``): people with
    identical QIs are one node of capacity their number, and the rows in no ring one slot
    node per group of identical rows, of capacity their number (a person compatible with one
    of them is compatible with all, so a perfect matching of the expanded graph is a flow of
    value n here and back); a maximum flow (Dinic) decides. O(U·G) pairs between groups plus
    O(ring positions·k) for the ring slots; never the person × row matrix of a class (issue 25:
    Σ class² pairs on Adult at t = 0.2)."""
    from scipy.sparse.csgraph import maximum_flow

    from anonymatch.tables.verify import attacker_view

    view = attacker_view(published, original)
    c = sp.csr_array(view.c, dtype=np.int32)
    counts, group = view.counts, view.group
    n, n_u, n_g = published.n, c.shape[0], c.shape[1]
    if int(counts.sum()) != n:
        return False
    # ring slots: slot of ring position p needs rows p − a (a < k), counted by their group
    srow, scol = [], []
    slot = 0
    in_ring = np.zeros(n, dtype=bool)
    for ring in rings:
        m = len(ring)
        pos = np.arange(m)
        for a in range(k):
            srow.append(group[ring[(pos - a) % m]])
            scol.append(slot + pos)
        slot += m
        in_ring[ring] = True
    need = np.full(slot, k, np.int64)
    if slot:
        slots = sp.csr_array(
            (
                np.ones(len(np.concatenate(srow)), np.int32),
                (np.concatenate(srow), np.concatenate(scol)),
            ),
            shape=(n_g, slot),
        )
        hits = (c @ slots).tocoo()  # unique people × slots: how many required rows fit
        keep = hits.data == need[hits.col]
        ring_u, ring_s = hits.row[keep].astype(np.int64), hits.col[keep].astype(np.int64)
    else:
        ring_u = ring_s = np.empty(0, np.int64)
    # the rows in no ring: one slot per group, of capacity its rows in no ring
    free = np.bincount(group[~in_ring], minlength=n_g).astype(np.int64)
    coo = sp.coo_array(c)
    fits = free[coo.col] > 0
    free_u, free_g = coo.row[fits].astype(np.int64), coo.col[fits].astype(np.int64)
    # nodes: source 0, people 1..U, ring slots, group slots, sink
    ring0, group0 = 1 + n_u, 1 + n_u + slot
    sink = group0 + n_g
    net = sp.csr_array(
        (
            np.concatenate(
                [
                    counts,
                    np.ones(len(ring_u)),
                    np.minimum(counts[free_u], free[free_g]),
                    np.ones(slot),
                    free,
                ]
            ).astype(np.int32),
            (
                np.concatenate(
                    [
                        np.zeros(n_u, np.int64),
                        1 + ring_u,
                        1 + free_u,
                        ring0 + np.arange(slot),
                        group0 + np.arange(n_g),
                    ]
                ),
                np.concatenate(
                    [1 + np.arange(n_u), ring0 + ring_s, group0 + free_g, np.full(slot + n_g, sink)]
                ),
            ),
        ),
        shape=(sink + 1, sink + 1),
    )
    net.eliminate_zeros()
    return int(maximum_flow(net, 0, sink, method="dinic").flow_value) == n


def check_certified(
    published: GeneralizedQI,
    original: EncodedQI,
    published_table: pd.DataFrame,
    original_table: pd.DataFrame,
    models: Sequence[SensitiveModel],
    certificate: Mapping[str, object],
) -> list[SensitiveCheck]:
    """Check every model on a ring release for every draw (module docstring), from the release,
    the original and ``certificate``. Raises InputError for a malformed certificate, a missing
    sensitive column or values that are not the original's. Cost: see the module docstring."""
    k, rings = parse_certificate(certificate, published.n)
    exists = structure_exists(published, original, k, rings)
    cand = units(published, k, rings)
    checks = []
    for model in models:
        if model.column not in published_table.columns:
            raise InputError(f"the release has no sensitive column {model.column!r}")
        sens = encode_sensitive(
            model.column, published_table[model.column], original_table[model.column], model.ordered
        )
        if not exists:
            reason = "the certified ring graph does not fit the release and the original"
            checks.append(SensitiveCheck.failed(model, original.n, reason))
            continue
        check = check_model(cand, sens, model)
        if not check.passed:
            windows = check.reason.replace("people", "ring windows or classes")
            check = dataclasses.replace(check, reason="some draw fails: " + windows)
        checks.append(check)
    return checks


@dataclass(frozen=True)
class SensitiveView:
    """What the sensitive models are checked on (``disclosure.SensitiveModels.check``): the
    release's parsed QI cells and table, the original's encoded QIs and table, and a ring
    release's certificate (None: each person's candidates in the attacker's view,
    ``core.view``)."""

    cells: GeneralizedQI
    original: EncodedQI
    published_table: pd.DataFrame
    original_table: pd.DataFrame
    certificate: Mapping[str, Any] | None = None

    def checks(self, models: Sequence[SensitiveModel]) -> list[SensitiveCheck]:
        """Each model's check: for every draw of the certificate (:func:`check_certified`),
        else on each person's candidates (``sensitive.check_release``)."""
        if self.certificate is not None:
            return check_certified(
                self.cells, self.original, self.published_table, self.original_table, models,
                self.certificate,
            )  # fmt: skip
        return check_release(
            self.cells, self.original, self.published_table, self.original_table, models
        )
