"""Independent verification of a table release: from the published cells and the original QIs.

It never sees the internal graph. It rebuilds the compatibility graph an attacker would build
(original i is compatible with published row j iff every published cell of j contains i's value,
``*`` containing everything) and checks that this graph has a k-factor — k disjoint perfect
matchings, i.e. a k-regular spanning subgraph — by maximum flow. That is the condition under
which the release can be k-anonymous in the nonreciprocal sense (Doka §2.2, §3; Wong et al.).

Scaling: identical originals are merged into one node with a multiplicity; candidate pairs come
from per-attribute indexes (sorted values for numeric QIs, value buckets for categorical ones),
scanning for each published row only the originals allowed by its most selective cell, so no
n × n structure is ever built.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from anonymatch.core.matching import has_k_factor
from anonymatch.tables.recode import GeneralizedQI
from anonymatch.tables.schema import EncodedQI


@dataclass(frozen=True)
class VerificationReport:
    """Outcome of ``verify``. ``passed`` iff the row counts agree and a k-factor exists (and,
    when sensitive models were checked, every one of ``sensitive`` passed)."""

    passed: bool
    k: int
    n_original: int
    n_published: int
    min_matches_original: int
    min_matches_published: int
    k_factor_flow: int
    k_factor_required: int
    compatible_pairs: int
    reason: str
    sensitive: tuple[dict[str, object], ...] = ()

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["sensitive"] = list(self.sensitive)
        return out


@njit(cache=True, nogil=True)
def _compatible_pairs(  # pragma: no cover - compiled
    unum,
    ucat,
    lo,
    hi,
    num_star,
    cat_star,
    set_ptr,
    set_idx,
    set_off,
    num_order,
    num_sorted,
    cat_ptr,
    cat_members,
    cat_off,
):
    """All (unique original u, published j) compatible pairs, as two arrays."""
    n_u, dn = unum.shape
    dc = ucat.shape[1]
    n_pub = lo.shape[0]
    stamp = np.full(set_off[-1], -1, np.int64)
    cap = max(16, 4 * n_pub)
    out_u = np.empty(cap, np.int64)
    out_j = np.empty(cap, np.int64)
    size = 0
    for j in range(n_pub):
        # mark the labels of j's categorical cells
        for a in range(dc):
            if not cat_star[j, a]:
                for p in range(set_ptr[a, j], set_ptr[a, j + 1]):
                    stamp[set_off[a] + set_idx[p]] = j
        # choose the most selective attribute as the candidate source
        best_kind, best_a, best_count, best_lo = -1, -1, n_u + 1, 0
        for a in range(dn):
            if num_star[j, a]:
                continue
            s = np.searchsorted(num_sorted[a], lo[j, a], side="left")
            t = np.searchsorted(num_sorted[a], hi[j, a], side="right")
            if t - s < best_count:
                best_kind, best_a, best_count, best_lo = 0, a, t - s, s
        for a in range(dc):
            if cat_star[j, a]:
                continue
            c = 0
            for p in range(set_ptr[a, j], set_ptr[a, j + 1]):
                code = set_idx[p]
                if code < cat_off[a + 1] - cat_off[a]:
                    c += cat_ptr[cat_off[a] + code + 1] - cat_ptr[cat_off[a] + code]
            if c < best_count:
                best_kind, best_a, best_count = 1, a, c
        if best_kind == -1:
            best_count = n_u
        if size + best_count > cap:
            cap = max(2 * cap, size + best_count)
            out_u = _grow(out_u, cap)
            out_j = _grow(out_j, cap)
        if best_kind == 1:  # walk the buckets of the chosen categorical cell
            a = best_a
            for p in range(set_ptr[a, j], set_ptr[a, j + 1]):
                code = set_idx[p]
                if code >= cat_off[a + 1] - cat_off[a]:
                    continue
                base = cat_off[a] + code
                for q in range(cat_ptr[base], cat_ptr[base + 1]):
                    u = cat_members[q]
                    if _matches(u, j, unum, ucat, lo, hi, num_star, cat_star, stamp, set_off):
                        out_u[size] = u
                        out_j[size] = j
                        size += 1
        else:
            for q in range(best_count):
                u = num_order[best_a, best_lo + q] if best_kind == 0 else q
                if _matches(u, j, unum, ucat, lo, hi, num_star, cat_star, stamp, set_off):
                    out_u[size] = u
                    out_j[size] = j
                    size += 1
    return out_u[:size], out_j[:size]


@njit(cache=True, nogil=True)
def _grow(a, cap):  # pragma: no cover - compiled
    b = np.empty(cap, a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def _matches(u, j, unum, ucat, lo, hi, num_star, cat_star, stamp, set_off):  # pragma: no cover
    for a in range(unum.shape[1]):
        if not num_star[j, a]:
            v = unum[u, a]
            if v < lo[j, a] or v > hi[j, a]:
                return False
    for a in range(ucat.shape[1]):
        if not cat_star[j, a] and stamp[set_off[a] + ucat[u, a]] != j:
            return False
    return True


def compatibility(
    published: GeneralizedQI, original: EncodedQI
) -> tuple[sp.csr_array, np.ndarray, np.ndarray]:
    """Compatibility between unique original QI vectors and published rows.

    Returns (C, counts, inverse): C is a U × n_published 0/1 CSR matrix over the U distinct
    original QI vectors, ``counts[u]`` their multiplicities and ``inverse[i]`` the unique vector
    of original i. Time O(Σ_j |candidates(j)| · d) with candidates(j) the originals allowed by
    j's most selective cell; memory O(U·d + pairs).
    """
    from anonymatch.tables.reuse import cached, compatibility_key

    c, counts, inverse = cached(
        lambda: compatibility_key(published, original),
        lambda: _compatibility(published, original),
    )
    return c.copy(), counts.copy(), inverse.copy()  # callers may change theirs


def _compatibility(
    published: GeneralizedQI, original: EncodedQI
) -> tuple[sp.csr_array, np.ndarray, np.ndarray]:
    keys = np.hstack([original.num, original.cat.astype(np.float64)])
    uniq, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    dn = original.num.shape[1]
    unum = np.ascontiguousarray(uniq[:, :dn])
    ucat = np.ascontiguousarray(uniq[:, dn:]).astype(np.int64)
    n_u, n_pub = len(uniq), published.n
    dc = ucat.shape[1]
    # published categorical sets: one flat index array, per-attribute row pointers into it
    set_ptr = np.zeros((dc, n_pub + 1), np.int64)
    widths, flat, base = [], [], 0
    for a, sets in enumerate(published.cat_sets):
        set_ptr[a] = sets.indptr + base
        flat.append(sets.indices.astype(np.int64))
        base += len(sets.indices)
        widths.append(max(int(sets.shape[1]), int(original.cat_card[a])))
    set_idx = np.concatenate(flat) if flat else np.empty(0, np.int64)
    set_off = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
    # indexes over the unique originals: sorted values per numeric QI, buckets per label
    num_order = np.argsort(unum, axis=0, kind="stable").T.copy()
    num_sorted = np.take_along_axis(unum, num_order.T, axis=0).T.copy()
    card = original.cat_card.astype(np.int64)
    cat_off = np.concatenate([[0], np.cumsum(card)]).astype(np.int64)
    bucket_ptr = np.zeros(int(cat_off[-1]) + 1, np.int64)
    members = []
    for a in range(dc):
        sizes = np.bincount(ucat[:, a], minlength=int(card[a]))
        bucket_ptr[cat_off[a] + 1 : cat_off[a + 1] + 1] = np.cumsum(sizes) + a * n_u
        members.append(np.argsort(ucat[:, a], kind="stable"))
    cat_members = np.concatenate(members) if members else np.empty(0, np.int64)
    u, j = _compatible_pairs(
        unum,
        ucat,
        np.ascontiguousarray(published.num_lo),
        np.ascontiguousarray(published.num_hi),
        np.ascontiguousarray(published.num_star),
        np.ascontiguousarray(published.cat_star),
        set_ptr,
        set_idx,
        set_off,
        num_order,
        num_sorted,
        bucket_ptr,
        cat_members.astype(np.int64),
        cat_off,
    )
    c = sp.csr_array((np.ones(len(u), np.int8), (u, j)), shape=(n_u, n_pub))
    return c, counts.astype(np.int64), inverse


def verify(published: GeneralizedQI, original: EncodedQI, k: int) -> VerificationReport:
    """Check the k-anonymity guarantee of a table release from published cells + original QIs.

    Passes iff the release has as many rows as the original and the compatibility graph has a
    k-factor. Also reports the fewest matches of any original and of any published row."""
    n, n_pub = original.n, published.n
    if n != n_pub:
        return VerificationReport(
            False,
            k,
            n,
            n_pub,
            0,
            0,
            0,
            k * n,
            0,
            f"the release has {n_pub} rows but the original has {n}",
        )
    c, counts, _ = compatibility(published, original)
    per_original = int(np.diff(c.indptr).min()) if n else 0
    per_published = int((counts @ c).min()) if n else 0
    flow = has_k_factor(c, counts, k) if n and min(per_original, per_published) >= k else 0
    passed = flow == k * n
    if passed:
        reason = "ok"
    elif per_original < k:
        reason = f"an original record matches only {per_original} published rows (< k = {k})"
    elif per_published < k:
        reason = f"a published row matches only {per_published} original records (< k = {k})"
    else:
        reason = f"no k-factor: at most {flow} of the {k * n} required disjoint matches exist"
    return VerificationReport(
        passed, k, n, n_pub, per_original, per_published, flow, k * n, int(c.nnz), reason
    )


@dataclass(frozen=True)
class AdaptiveVerificationReport:
    """Outcome of ``verify_adaptive``. ``passed`` iff the row counts agree, the compatibility
    graph has a perfect matching, every original i has ≥ δᵢ compatible published rows that lie
    in some perfect matching, and (uniform δ only) a δ-factor exists."""

    passed: bool
    n_original: int
    n_published: int
    uniform_k: int | None
    perfect_matching: bool
    min_slack: int
    short_records: int
    k_factor_flow: int | None
    compatible_pairs: int
    reason: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def verify_adaptive(
    published: GeneralizedQI, original: EncodedQI, delta: np.ndarray
) -> AdaptiveVerificationReport:
    """Check adaptive anonymity (Choromanski et al. §2, Lemma 4.2) from published cells and
    original QIs: every original i must have at least δᵢ compatible published rows each of
    which is its partner in some perfect matching of the compatibility graph (edges outside all
    perfect matchings cannot be the true match, so an attacker discards them). Rows lying in a
    perfect matching: Dulmage–Mendelsohn via strongly connected components, O(n + pairs) after
    Hopcroft–Karp O(pairs·√n). For uniform δ = k the k-factor of ``verify`` is required too.
    """
    from anonymatch.core.matching import matchable_degrees, perfect_matching

    delta = np.asarray(delta, np.int64)
    n, n_pub = original.n, published.n
    uniform = int(delta[0]) if n and np.all(delta == delta[0]) else None
    if n != n_pub:
        reason = f"the release has {n_pub} rows but the original has {n}"
        return AdaptiveVerificationReport(False, n, n_pub, uniform, False, 0, n, None, 0, reason)
    c_unique, counts, inverse = compatibility(published, original)
    c = sp.csr_array(c_unique[inverse])
    match = perfect_matching(c)
    if match is None:
        reason = "the compatibility graph has no perfect matching"
        return AdaptiveVerificationReport(
            False, n, n_pub, uniform, False, 0, n, None, int(c.nnz), reason
        )
    slack = matchable_degrees(c, match) - delta
    short = int((slack < 0).sum())
    flow = None
    if uniform is not None and short == 0:
        flow = has_k_factor(c_unique, counts, uniform)
    required = (uniform or 0) * n
    passed = short == 0 and (flow is None or flow == required)
    if passed:
        reason = "ok"
    elif short:
        i = int(np.argmin(slack))
        reason = (
            f"{short} records have fewer matchable published rows than their level; "
            f"record {i + 1} has {int(slack[i] + delta[i])} < {int(delta[i])}"
        )
    else:
        reason = f"no {uniform}-factor: at most {flow} of the {required} required matches"
    return AdaptiveVerificationReport(
        passed,
        n,
        n_pub,
        uniform,
        True,
        int(slack.min()) if n else 0,
        short,
        flow,
        int(c.nnz),
        reason,
    )
