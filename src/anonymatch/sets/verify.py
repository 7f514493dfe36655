"""Independent verification of a set-valued release, from the published JSONL and the original
item sets only (never the internal graph). This module supplies the sets' compatibility to the
attacker's view (:func:`set_view`, ``core.view.AttackerView``), which decides the k-factor.

An original r matches a published record (base B, uncertain U, threshold t) iff r agrees with B
outside U and differs from B in at most t items (all of them in U) — the possible worlds of Xue
et al. §3. The release is k-anonymous iff this compatibility graph has a k-factor (k disjoint
perfect matchings; max-flow as in ``core.matching.has_k_factor``) and ℓ-diverse iff it has an
ℓ-factor in which the ℓ published matches of every original carry ℓ distinct labels (max-flow
with a node per (original, label) of capacity one per identical copy).

Scaling: identical originals are merged with a multiplicity. Candidate pairs never come from
all n × n pairs: for a published record, every match contains its certain base items, so the
posting list of the rarest certain item is one candidate source; and every match lies inside
B ∪ U, so its rarest item does — originals are bucketed by their rarest item and the buckets of
the items of B ∪ U are the other source. The smaller source is scanned.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.csgraph import maximum_flow

from anonymatch.core.runner import default_workers
from anonymatch.core.view import AttackerView, group_sets
from anonymatch.sets.io import SetRelease, Transactions, extend_universe


@dataclass(frozen=True)
class SetVerificationReport:
    """Outcome of ``verify_sets``; ``passed`` iff row counts agree and the factor exists."""

    passed: bool
    guarantee: str  # "k-anonymity" or "l-diversity"
    level: int
    n_original: int
    n_published: int
    min_matches_original: int
    min_matches_published: int
    min_labels_original: int | None
    k_factor_flow: int
    k_factor_required: int
    compatible_pairs: int
    reason: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@njit(cache=True, nogil=True)
def _pairs(published, originals, postings, rare, b, j0, j1):  # pragma: no cover - compiled
    """Compatible (unique original, published j0 … j1 − 1) pairs from the cheaper candidate
    source. ``published`` = (bp, bi, up, ui, t): the published records' base and uncertain
    items (CSR pointers and indices) and error budgets; ``originals`` = (xp, xi): the unique
    original sets (CSR); ``postings`` = (post_ptr, post_idx): the originals holding each item
    (CSC); ``rare`` = (rare_ptr, rare_idx): the originals bucketed by their rarest item;
    ``b`` the size of the item universe."""
    bp, bi, up, ui, t = published
    xp, xi = originals
    post_ptr, post_idx = postings
    rare_ptr, rare_idx = rare
    stamp_b = np.full(b, -1, np.int64)
    stamp_u = np.full(b, -1, np.int64)
    cap = 1024
    out_u = np.empty(cap, np.int64)
    out_j = np.empty(cap, np.int64)
    size = 0
    stamps = (stamp_b, stamp_u)
    for j in range(j0, j1):
        for p in range(bp[j], bp[j + 1]):
            stamp_b[bi[p]] = j
        for p in range(up[j], up[j + 1]):
            stamp_u[ui[p]] = j
        n_certain = 0
        best_item, best_df = -1, 1 << 62
        for p in range(bp[j], bp[j + 1]):
            it = bi[p]
            if stamp_u[it] != j:
                n_certain += 1
                d = post_ptr[it + 1] - post_ptr[it]
                if d < best_df:
                    best_item, best_df = it, d
        bucket_total = 0
        for p in range(bp[j], bp[j + 1]):
            it = bi[p]
            bucket_total += rare_ptr[it + 1] - rare_ptr[it]
        for p in range(up[j], up[j + 1]):
            it = ui[p]
            if stamp_b[it] != j:
                bucket_total += rare_ptr[it + 1] - rare_ptr[it]
        use_post = best_item >= 0 and best_df <= bucket_total
        n_cand = best_df if use_post else bucket_total
        if size + n_cand > cap:
            cap = max(2 * cap, size + n_cand)
            out_u = _grow(out_u, cap)
            out_j = _grow(out_j, cap)
        nb = bp[j + 1] - bp[j]
        if use_post:
            for q in range(post_ptr[best_item], post_ptr[best_item + 1]):
                r = post_idx[q]
                if _match(r, j, originals, stamps, n_certain, nb, t[j]):
                    out_u[size] = r
                    out_j[size] = j
                    size += 1
        else:
            for side in range(2):
                ptr, idx = (bp, bi) if side == 0 else (up, ui)
                for p in range(ptr[j], ptr[j + 1]):
                    it = idx[p]
                    if side == 1 and stamp_b[it] == j:
                        continue
                    for q in range(rare_ptr[it], rare_ptr[it + 1]):
                        r = rare_idx[q]
                        if _match(r, j, originals, stamps, n_certain, nb, t[j]):
                            out_u[size] = r
                            out_j[size] = j
                            size += 1
    return out_u[:size], out_j[:size]


@njit(cache=True, nogil=True)
def _match(r, j, originals, stamps, n_certain, nb, t):  # pragma: no cover - compiled
    # ``originals`` = (xp, xi) as in ``_pairs``; ``stamps`` = (stamp_b, stamp_u) mark j's base
    # and uncertain items.
    xp, xi = originals
    stamp_b, stamp_u = stamps
    common = 0
    certain_seen = 0
    for p in range(xp[r], xp[r + 1]):
        it = xi[p]
        if stamp_b[it] == j:
            common += 1
            if stamp_u[it] != j:
                certain_seen += 1
        elif stamp_u[it] != j:
            return False  # r holds a certain 0 of the base
    if certain_seen != n_certain:
        return False  # r lacks a certain 1 of the base
    return (xp[r + 1] - xp[r]) + nb - 2 * common <= t


@njit(cache=True, nogil=True)
def _grow(a, cap):  # pragma: no cover - compiled
    b = np.empty(cap, a.dtype)
    b[: a.shape[0]] = a
    return b


def set_view(release: SetRelease, original: Transactions) -> AttackerView:
    """The attacker's view of a set-valued release (``core.view.AttackerView``): the U
    distinct original sets (``core.view.group_sets``) × the published records (ungrouped),
    compatible iff the set lies in a possible world of the record.

    Parameters
    ----------
    release : SetRelease
        The published records (base, uncertain items, error budget).
    original : Transactions
        The original item sets.

    Returns
    -------
    AttackerView

    Notes
    -----
    Time O(Σ_j |candidates(j)| · L) with candidates(j) the cheaper of the two candidate
    sources (module docstring); memory O(U·L + pairs).

    References
    ----------
    Xue et al., KDD 2012, §3 (the possible worlds of a published record).
    """
    b = release.base.shape[1]
    x = extend_universe(original, b)
    uniq, counts, inverse = group_sets(x)
    csc = uniq.tocsc()
    csc.sort_indices()
    xp, xi = uniq.indptr.astype(np.int64), uniq.indices.astype(np.int64)
    df = np.diff(csc.indptr)
    # rarest item of every unique original, bucketed by item
    sizes = np.diff(xp)
    rare = np.full(len(sizes), -1, np.int64)
    if len(xi):  # per row: the item with the smallest (document frequency, id)
        key = df[xi].astype(np.int64) * (b + 1) + xi
        rare[sizes > 0] = np.minimum.reduceat(key, xp[:-1][sizes > 0]) % (b + 1)
    has = rare >= 0
    rare_order = np.argsort(np.where(has, rare, b), kind="stable")
    rare_order = rare_order[: int(has.sum())]
    rare_ptr = np.zeros(b + 1, np.int64)
    rare_ptr[1:] = np.cumsum(np.bincount(rare[has], minlength=b))
    base, unc = sp.csr_array(release.base), sp.csr_array(release.uncertain)
    base.sort_indices()
    unc.sort_indices()
    args = (
        (
            base.indptr.astype(np.int64),
            base.indices.astype(np.int64),
            unc.indptr.astype(np.int64),
            unc.indices.astype(np.int64),
            release.max_errors.astype(np.int64),
        ),
        (xp, xi),
        (csc.indptr.astype(np.int64), csc.indices.astype(np.int64)),
        (rare_ptr, rare_order.astype(np.int64)),
        b,
    )
    # published records in contiguous chunks on a thread pool (the kernel is nogil)
    workers = default_workers()
    cuts = np.linspace(0, release.n, 4 * workers + 1).astype(np.int64)
    chunks = [(int(a), int(z)) for a, z in zip(cuts[:-1], cuts[1:], strict=True) if z > a]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        found = list(pool.map(lambda c: _pairs(*args, c[0], c[1]), chunks))
    u = np.concatenate([f[0] for f in found]) if found else np.zeros(0, np.int64)
    j = np.concatenate([f[1] for f in found]) if found else np.zeros(0, np.int64)
    c = sp.csr_array((np.ones(len(u), np.int8), (u, j)), shape=(uniq.shape[0], release.n))
    return AttackerView.build(c, counts, inverse)


def has_diverse_factor(
    c: sp.csr_array, counts: np.ndarray, labels: np.ndarray, ell: int
) -> tuple[int, int]:
    """Max-flow source → unique original u (cap ℓ·count_u) → node (u, s) (cap count_u) →
    published j with label s (cap count_u) → sink (cap ℓ). An ℓ-factor whose ℓ matches per
    original carry distinct labels exists iff the flow is ℓ·n (integral flows split over the
    identical copies round-robin, as in ``has_k_factor``). Returns (flow, fewest distinct
    labels among any original's matches). Dinic on O(U + pairs) nodes and edges."""
    _, codes = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
    codes = codes.reshape(-1).astype(np.int64)
    n_u, n_pub = c.shape
    coo = c.tocoo()
    n_lab = int(codes.max()) + 1 if len(codes) else 1
    pair_key = coo.row.astype(np.int64) * n_lab + codes[coo.col]
    keys, pair_of_edge = np.unique(pair_key, return_inverse=True)
    pair_of_edge = pair_of_edge.reshape(-1)
    pair_u = keys // n_lab
    distinct = np.bincount(pair_u, minlength=n_u)
    n_pairs = len(keys)
    src = 0
    u0, p0 = 1, 1 + n_u
    j0 = p0 + n_pairs
    sink = j0 + n_pub
    rows = np.concatenate(
        [np.zeros(n_u, np.int64), u0 + pair_u, p0 + pair_of_edge, j0 + np.arange(n_pub)]
    )
    cols = np.concatenate(
        [u0 + np.arange(n_u), p0 + np.arange(n_pairs), j0 + coo.col, np.full(n_pub, sink)]
    )
    caps = np.concatenate(
        [ell * counts, counts[pair_u], counts[coo.row], np.full(n_pub, ell)]
    ).astype(np.int32)
    net = sp.csr_array((caps, (rows, cols)), shape=(sink + 1, sink + 1))
    flow = int(maximum_flow(net, src, sink, method="dinic").flow_value)
    return flow, int(distinct.min()) if n_u else 0


def verify_sets(
    release: SetRelease,
    original: Transactions,
    k: int | None = None,
    ell: int | None = None,
) -> SetVerificationReport:
    """Check k-anonymity (``k``) or ℓ-diversity (``ell``) of a set-valued release from the
    published records and the original sets only."""
    if (k is None) == (ell is None):
        raise ValueError("give exactly one of k and ell")
    level = int(k if k is not None else ell)  # type: ignore[arg-type]
    guarantee = "k-anonymity" if k is not None else "l-diversity"
    n, n_pub = original.n, release.n
    required = level * n

    def fail(reason: str, *figures: int, labels: int | None = None) -> SetVerificationReport:
        a, b_, f, pairs = figures if figures else (0, 0, 0, 0)
        return SetVerificationReport(
            False, guarantee, level, n, n_pub, a, b_, labels, f, required, pairs, reason
        )

    if n != n_pub:
        return fail(f"the release has {n_pub} records but the original has {n}")
    if ell is not None and release.labels is None:
        return fail("the release carries no labels, so it cannot be ℓ-diverse")
    view = set_view(release, original)
    c, counts = view.c, view.counts  # published records ungrouped: c is U × n_published
    per_original = int(view.per_original().min())
    per_published = int(view.per_published().min())
    min_labels = None
    if per_original < level or per_published < level:
        flow = 0
    elif k is not None:
        flow = view.k_factor_flow(level)
    else:
        flow, min_labels = has_diverse_factor(c, counts, release.labels, level)  # type: ignore[arg-type]
    passed = flow == required
    if passed:
        reason = "ok"
    elif per_original < level:
        reason = f"an original matches only {per_original} published records (< {level})"
    elif per_published < level:
        reason = f"a published record matches only {per_published} originals (< {level})"
    elif min_labels is not None and min_labels < level:
        reason = f"an original's matches carry only {min_labels} distinct labels (< ℓ = {level})"
    else:
        what = "k-factor" if k is not None else "label-diverse ℓ-factor"
        reason = f"no {what}: at most {flow} of the {required} required disjoint matches exist"
    return SetVerificationReport(
        passed,
        guarantee,
        level,
        n,
        n_pub,
        per_original,
        per_published,
        min_labels,
        flow,
        required,
        view.pairs(),
        reason,
    )
