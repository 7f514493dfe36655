"""k^m-anonymization of transactions by global item generalization — the hypergraph algorithm
of Stokes' slides ("Computational anonymity and some combinatorics", §2; Stokes, PSD 2012)
with itemsets of ≤ m items as the points (Terrovitis et al. 2008).

Items are partitioned into groups; a transaction publishes the groups of its items. While some
itemset of ≤ m (grouped) items is contained in 0 < count < k transactions, the item of the
rarest such itemset is merged with the item whose merge adds the least item loss (ties broken
by the neighbourhood distance, as for tables in ``tables.methods.kl``). Merging only coarsens,
so counts never fall.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from anonymatch.core.counting import check_k
from anonymatch.core.errors import InfeasibleError, InputError

_log = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------------
# transactions (k^m)


def read_fimi(path: str) -> tuple[sp.csr_array, np.ndarray]:
    """Read a FIMI ``.dat`` file (one transaction per line, items separated by whitespace) into a
    binary transactions × items CSR matrix and the item labels (sorted as text). Duplicate items
    in a line count once; empty lines are empty transactions. Minimal reader, to be unified with
    the set-valued readers of ``io/`` (issue 4). O(file size)."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        raise InputError(f"input file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None
    return transactions_matrix([line.split() for line in lines])


def transactions_matrix(rows: list[list[str]]) -> tuple[sp.csr_array, np.ndarray]:
    """Binary CSR (transactions × items) and item labels from lists of item labels."""
    lens = np.array([len(r) for r in rows], np.int64)
    flat = np.array([x for r in rows for x in r], dtype=object)
    if len(flat):
        codes, labels = np.unique(flat.astype(str), return_inverse=True)
        labels, codes = codes, labels.reshape(-1)
    else:
        labels, codes = np.array([], dtype=str), np.empty(0, np.int64)
    ptr = np.concatenate([[0], np.cumsum(lens)])
    m = sp.csr_array(
        (np.ones(len(codes), np.int8), codes.astype(np.int64), ptr),
        shape=(len(rows), len(labels)),
    )
    m.sum_duplicates()
    m.data[:] = 1
    m.sort_indices()
    return m, np.asarray(labels, dtype=object)


@dataclass
class ItemGrouping:
    """A global generalization of items: ``group_of[item]`` = group id (smallest item code of
    the group)."""

    group_of: np.ndarray
    merges: int = 0


def group_matrix(matrix: sp.csr_array, group_of: np.ndarray) -> sp.csr_array:
    """Transactions × groups (0/1): a transaction holds a group iff it holds one of its items."""
    coo = matrix.tocoo()
    out = sp.csr_array(
        (np.ones(len(coo.row), np.int8), (coo.row, group_of[coo.col])), shape=matrix.shape
    )
    out.sum_duplicates()
    out.data[:] = 1
    out.sort_indices()
    return out


def _support_rows(csc: sp.csc_array, group_of: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Mask of the transactions holding every group of ``groups``. O(Σ item supports)."""
    n = csc.shape[0]
    mask = np.ones(n, bool)
    for g in groups.tolist():
        items = np.flatnonzero(group_of == g)
        has = np.zeros(n, bool)
        for it in items.tolist():
            has[csc.indices[csc.indptr[it] : csc.indptr[it + 1]]] = True
        mask &= has
    return mask


def _best_item_merge(
    gm: sp.csr_array, point: np.ndarray, group_of: np.ndarray, occ: np.ndarray
) -> tuple[int, int] | None:
    """For a rare itemset p (groups), the merge (g ∈ p, h) to make: for each g, the h whose
    q = p − g + h has the closest neighbourhood (N(x) = multiset of the other groups in the
    transactions holding x; h ranges over the groups co-occurring with p − g, including the
    other groups of p, which collapses p onto p − g); across the g, the merge adding the least
    item NCP, then the least distance (as for tables)."""
    n_items = gm.shape[1]
    size = np.bincount(group_of, minlength=n_items)
    g_occ = np.bincount(group_of, weights=occ, minlength=n_items)
    best: tuple[float, float, int, int, int] | None = None
    for g in point.tolist():
        rest = [x for x in point.tolist() if x != g]
        if rest:
            agree = np.asarray(gm[:, rest].sum(axis=1)).reshape(-1) == len(rest)
            sub = gm[np.flatnonzero(agree)]
        else:
            sub = gm
        colsum = np.asarray(sub.sum(axis=0)).reshape(-1)
        cand = np.array([h for h in np.flatnonzero(colsum).tolist() if h != g], np.int64)
        if not len(cand):
            continue
        # co-occurrence rows of g and the candidates within the transactions agreeing off g
        cols = np.concatenate([[g], cand])
        co = (sub[:, cols].T @ sub).tocsr().astype(np.float64)  # (1+|cand|) × groups
        excl = np.zeros(n_items, bool)
        excl[rest] = True
        p_row = co[[0]].toarray().reshape(-1)
        p_row[excl] = 0
        p_row[g] = 0
        q = co[1:].tocoo()
        keep = ~excl[q.col] & (q.col != cand[q.row])
        qr, qc, qv = q.row[keep], q.col[keep], q.data[keep]
        # Σ_x |p(x) − q(x)| = Σ p + Σ_{x ∈ supp q} (|q(x) − p(x)| − p(x)), with p(g) = 0 and
        # q's own group h excluded (``keep``); q(g) counts (g is not in q).
        corr = np.bincount(qr, weights=np.abs(qv - p_row[qc]) - p_row[qc], minlength=len(cand))
        dist = p_row.sum() + corr
        deg = colsum[cand]
        c = int(np.lexsort((cand, deg, dist))[0])
        h = int(cand[c])
        cost = float(g_occ[g] * size[h] + g_occ[h] * size[g])
        score = (cost, float(dist[c]), int(deg[c]), int(g), h)
        if best is None or score < best:
            best = score
    if best is None:
        return None
    return best[3], best[4]


def km_anonymize(
    matrix: sp.csr_array,
    k: int,
    m: int,
    progress: Callable[[str], None] | None = None,
) -> ItemGrouping:
    """Group items globally so that every itemset of ≤ m (generalized) items is contained in 0
    or ≥ k transactions — the hypergraph algorithm with itemsets as points (module docstring).

    Departures: candidates q differ from p in one item (p − g + h, h co-occurring with p − g,
    possibly another item of p, which collapses p onto the frequent p − g); across the items g
    of p the merge adding the least NCP is made (see ``_best_item_merge``). Raises
    InfeasibleError if fewer than k transactions are non-empty (then the single item group would
    still be rare).
    Complexity: per merge O(nnz of the transactions agreeing with p off one item); levels
    counted by Apriori (``core.counting.rare_itemsets``).
    Reference: Stokes slides §2; Terrovitis et al. VLDB 2008 (k^m-anonymity).
    """
    from anonymatch.core.counting import rare_itemsets

    k = check_k(k)
    if isinstance(m, bool) or not isinstance(m, int | np.integer) or m < 1:
        raise InputError(f"m must be a positive integer, got {m!r}")
    n, n_items = matrix.shape
    nonempty = int(np.count_nonzero(np.diff(sp.csr_array(matrix).indptr)))
    if 0 < nonempty < k:
        raise InfeasibleError(
            f"infeasible: only {nonempty} non-empty transactions, fewer than k = {k}"
        )
    grouping = ItemGrouping(np.arange(n_items, dtype=np.int64))
    csc = sp.csc_array(matrix)
    occ = np.diff(csc.indptr).astype(np.float64)  # occurrences of every item
    for s in range(1, int(m) + 1):
        gm = group_matrix(matrix, grouping.group_of)
        found, _, _ = rare_itemsets(gm, k, s)
        rare = [f for f in found if f.codes.shape[1] == s]
        if not rare:
            continue
        codes = np.concatenate([f.codes for f in rare])
        counts = np.concatenate([f.counts for f in rare])
        (progress or _log.info)(f"level {s}: {len(counts)} rare itemsets")
        for rep in codes[np.argsort(counts, kind="stable")]:
            while True:
                point = np.unique(grouping.group_of[rep])
                if len(point) < s:
                    break  # collapsed onto a smaller (frequent) itemset
                deg = int(_support_rows(csc, grouping.group_of, point).sum())
                if deg == 0 or deg >= k:
                    break
                choice = _best_item_merge(gm, point, grouping.group_of, occ)
                if choice is None:
                    if len(point) < 2:
                        raise InfeasibleError("no item group to merge a rare item with")
                    choice = (int(point[0]), int(point[1]))
                g, h = choice
                lo, hi = min(g, h), max(g, h)
                grouping.group_of[grouping.group_of == hi] = lo
                grouping.merges += 1
                gm = group_matrix(matrix, grouping.group_of)
    return grouping


def group_labels(labels: np.ndarray, group_of: np.ndarray) -> np.ndarray:
    """Text of every item's group: its items' labels sorted and joined by ``|`` (escaped as in
    the table release format); a single item keeps its label."""
    from anonymatch.core.cells import escape_label

    out = np.empty(len(group_of), dtype=object)
    for g in np.unique(group_of).tolist():
        members = np.flatnonzero(group_of == g)
        names = sorted(escape_label(str(labels[i])) for i in members.tolist())
        text = "|".join(names)
        out[members] = text
    return out


def item_ncp(matrix: sp.csr_array, group_of: np.ndarray) -> float:
    """Information loss of an item grouping: the mean over item occurrences of
    (|group| − 1)/(|I| − 1) — NCP without a hierarchy (Terrovitis et al.'s NCP with a flat tree
    whose internal nodes are the groups). O(nnz)."""
    n_items = len(group_of)
    if n_items <= 1 or matrix.nnz == 0:
        return 0.0
    size = np.bincount(group_of, minlength=n_items)[group_of]
    occ = np.asarray(sp.csr_array(matrix).sum(axis=0)).reshape(-1)
    return float((occ * (size - 1)).sum() / (occ.sum() * (n_items - 1)))
