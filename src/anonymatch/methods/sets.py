"""Nonreciprocal anonymization of set-valued data (Xue, Karras, Raïssi, Vaidya, Tan, KDD 2012).

- k-anonymity: the ring generalization graph over a cyclic order (§2.2, after Wong et al.):
  every record matches itself and its k−1 successors.
- ℓ-diversity: greedy assignment extraction on the complete graph (§4.4): ℓ rounds of the
  closed walk (Algorithm 1) whose next hop is chosen by greedyPick (Algorithm 2) along the
  Gray-TSP order; the union of the ℓ disjoint assignments is the ℓ-regular graph.
- Publication (§4, step 5): bit voting over the preimages of every published record.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from ..errors import InfeasibleError, InputError
from ..graph import GeneralizationGraph


def ring_graph(order: np.ndarray, k: int) -> GeneralizationGraph:
    """Ring generalization (Xue §2.2, Wong et al.): the original at position p of the cyclic
    ``order`` matches the published records at positions p, p+1, …, p+k−1 (mod n) — itself
    and its k−1 successors; published record j is the anonymized form of original j. The graph
    is k-regular for k ≤ n. O(k·n)."""
    n = len(order)
    if not 1 <= k <= n:
        raise InputError(f"k must be between 1 and the {n} records, got {k}")
    order = np.asarray(order, np.int64)
    rows = np.tile(order, k)
    cols = np.concatenate([np.roll(order, -t) for t in range(k)])
    return GeneralizationGraph.from_edges(rows, cols, n)


# ----------------------------------------------------------------------------- bit voting


@njit(cache=True, nogil=True)
def _bit_vote(mp, mi, xp, xi, b):  # pragma: no cover - compiled
    """For published j with preimages mi[mp[j]:mp[j+1]] over records (xp, xi): item counts,
    base = items held by more than half of the preimages (a tie gives 0), uncertain = items
    held by some but not all, t = max Hamming distance from the base to a preimage."""
    n_pub = mp.shape[0] - 1
    count = np.zeros(b, np.int64)
    touched = np.empty(b, np.int64)
    in_base = np.zeros(b, np.bool_)
    base_ptr = np.zeros(n_pub + 1, np.int64)
    unc_ptr = np.zeros(n_pub + 1, np.int64)
    base_idx = np.empty(1024, np.int64)
    unc_idx = np.empty(1024, np.int64)
    nb_all, nu_all = 0, 0
    t = np.zeros(n_pub, np.int64)
    for j in range(n_pub):
        m = mp[j + 1] - mp[j]
        nt = 0
        for q in range(mp[j], mp[j + 1]):
            r = mi[q]
            for p in range(xp[r], xp[r + 1]):
                it = xi[p]
                if count[it] == 0:
                    touched[nt] = it
                    nt += 1
                count[it] += 1
        sel = touched[:nt].copy()
        sel.sort()
        if nb_all + nt > base_idx.shape[0]:
            base_idx = _grow(base_idx, 2 * (nb_all + nt))
        if nu_all + nt > unc_idx.shape[0]:
            unc_idx = _grow(unc_idx, 2 * (nu_all + nt))
        nb = 0
        for s in range(nt):
            it = sel[s]
            if 2 * count[it] > m:
                base_idx[nb_all] = it
                nb_all += 1
                in_base[it] = True
                nb += 1
            if count[it] < m:
                unc_idx[nu_all] = it
                nu_all += 1
        base_ptr[j + 1] = nb_all
        unc_ptr[j + 1] = nu_all
        worst = 0
        for q in range(mp[j], mp[j + 1]):
            r = mi[q]
            shared = 0
            for p in range(xp[r], xp[r + 1]):
                if in_base[xi[p]]:
                    shared += 1
            h = nb + (xp[r + 1] - xp[r]) - 2 * shared
            if h > worst:
                worst = h
        t[j] = worst
        for s in range(nt):
            count[sel[s]] = 0
            in_base[sel[s]] = False
    return base_ptr, base_idx[:nb_all].copy(), unc_ptr, unc_idx[:nu_all].copy(), t


@njit(cache=True, nogil=True)
def _grow(a, cap):  # pragma: no cover - compiled
    b = np.empty(cap, a.dtype)
    b[: a.shape[0]] = a
    return b


def bit_vote(
    matrix: sp.csr_array, graph: GeneralizationGraph
) -> tuple[sp.csr_array, sp.csr_array, np.ndarray]:
    """Bit voting (Xue §4 step 5): for every published record j, its base bitmap (the majority
    bit of its preimages per item; ties resolved to 0 — the paper leaves ties arbitrary), its
    distance bitmap (items on which the preimages disagree) and threshold t_j = max Hamming
    distance between the base and a preimage. Returns (base, uncertain, t), row j = published
    record j. O(Σ_j Σ_{preimages} |r|) time, O(b) scratch memory — never n × b dense."""
    m = sp.csr_array(matrix)
    m.sort_indices()
    members = graph.published_members()
    n, b = m.shape
    bp, bi, up, ui, t = _bit_vote(
        members.indptr.astype(np.int64),
        members.indices.astype(np.int64),
        m.indptr.astype(np.int64),
        m.indices.astype(np.int64),
        b,
    )
    base = sp.csr_array((np.ones(len(bi), bool), bi, bp), shape=(graph.n, b))
    unc = sp.csr_array((np.ones(len(ui), bool), ui, up), shape=(graph.n, b))
    return base, unc, t


# --------------------------------------------------------------- ℓ-diversity: greedy extraction


@njit(cache=True, nogil=True)
def _hamming(a, b, xp, xi):  # pragma: no cover - compiled
    pa, ea, pb, eb = xp[a], xp[a + 1], xp[b], xp[b + 1]
    common = 0
    while pa < ea and pb < eb:
        if xi[pa] == xi[pb]:
            common += 1
            pa += 1
            pb += 1
        elif xi[pa] < xi[pb]:
            pa += 1
        else:
            pb += 1
    return (xp[a + 1] - xp[a]) + (xp[b + 1] - xp[b]) - 2 * common


@njit(cache=True, nogil=True)
def _greedy_pick(
    x, r, order, rank, xp, xi, lab, prev, head, head_walk, link, link_y, pub_seen, walk, scan
):  # pragma: no cover - compiled
    """Algorithm 2 (greedyPick): scan the Gray-TSP order outwards from x, two candidates per
    distance j (rank i+j and i−j); drop those matched to x in an earlier round (criterion i),
    already taken from x in this walk (ii) or carrying a label already assigned to x (iii); of
    the survivors take the one nearest to x by Hamming distance, preferring published records
    not yet entered by this walk; return the first unvisited choice, else the first visited one
    kept as the option of last resort. ``scan`` bounds how far past the last-resort option the
    scan continues (departure, see ``greedy_assignments``)."""
    n = order.shape[0]
    i = rank[x]
    last = -1
    last_j = 0
    for j in range(0, n // 2 + 2):
        if last >= 0 and j - last_j > scan:
            break
        best, best_h, best_fresh = -1, 0, False
        for side in range(2):
            if j == 0 and side == 1:
                break
            pos = (i + j) % n if side == 0 else (i - j) % n
            p = order[pos]
            ok = True
            for t in range(r):  # criteria (i) and (iii)
                q = prev[t, x]
                if q == p or lab[q] == lab[p]:
                    ok = False
                    break
            if not ok:
                continue
            if head_walk[x] == walk:  # criterion (ii)
                e = head[x]
                while e >= 0:
                    if link_y[e] == p:
                        ok = False
                        break
                    e = link[e]
            if not ok:
                continue
            fresh = pub_seen[p] != walk
            h = _hamming(x, p, xp, xi)
            if best < 0 or (fresh and not best_fresh) or (fresh == best_fresh and h < best_h):
                best, best_h, best_fresh = p, h, fresh
        if best < 0:
            continue
        if best_fresh:
            return best
        if last < 0:
            last = best
            last_j = j
    return last


@njit(cache=True, nogil=True)
def _greedy_rounds(order, xp, xi, lab, n_rounds, rng, scan):  # pragma: no cover - compiled
    n = order.shape[0]
    rank = np.empty(n, np.int64)
    for p in range(n):
        rank[order[p]] = p
    prev = np.full((n_rounds, n), -1, np.int64)
    head = np.full(n, -1, np.int64)
    head_walk = np.zeros(n, np.int64)
    pub_seen = np.zeros(n, np.int64)
    cap = 4 * n + 16
    link = np.empty(cap, np.int64)
    link_y = np.empty(cap, np.int64)
    next_hop = np.full(n, -1, np.int64)
    cycle = np.empty(n, np.int64)
    walk = 0
    steps = 0
    for r in range(n_rounds):
        match = np.arange(n)
        inv = np.arange(n)
        pool = np.arange(n)
        where = np.arange(n)
        n_pool = n
        while n_pool > 0:
            start = pool[rng.integers(0, n_pool)]
            walk += 1
            target = match[start]
            x = start
            n_links = 0
            while True:
                y = _greedy_pick(
                    x, r, order, rank, xp, xi, lab, prev, head, head_walk, link, link_y,
                    pub_seen, walk, scan,
                )  # fmt: skip
                if y < 0:
                    return prev, -1
                steps += 1
                if n_links >= cap:
                    cap *= 2
                    new_link = np.empty(cap, np.int64)
                    new_y = np.empty(cap, np.int64)
                    new_link[:n_links] = link[:n_links]
                    new_y[:n_links] = link_y[:n_links]
                    link, link_y = new_link, new_y
                if head_walk[x] != walk:
                    head_walk[x] = walk
                    head[x] = -1
                link[n_links] = head[x]
                link_y[n_links] = y
                head[x] = n_links
                n_links += 1
                pub_seen[y] = walk
                next_hop[x] = y
                if y == target:
                    break
                x = inv[y]
            # the walk with its deviant cycles erased: last exits from the start
            length = 0
            x = start
            while True:
                cycle[length] = x
                length += 1
                y = next_hop[x]
                if y == target:
                    break
                x = inv[y]
            for c in range(length):
                x = cycle[c]
                y = next_hop[x]
                match[x] = y
                inv[y] = x
                p = where[x]
                if p >= 0:
                    last = pool[n_pool - 1]
                    pool[p] = last
                    where[last] = p
                    where[x] = -1
                    n_pool -= 1
        prev[r] = match
    return prev, steps


def check_eligible(labels: np.ndarray, ell: int) -> None:
    """ℓ-eligibility (Machanavajjhala et al.): no label on more than n/ℓ records. Raises
    InfeasibleError naming the most frequent label otherwise."""
    n = len(labels)
    values, counts = np.unique(np.asarray(labels, dtype=str), return_counts=True)
    top = int(np.argmax(counts))
    if counts[top] * ell > n:
        raise InfeasibleError(
            f"the input is not {ell}-eligible: label {values[top]!r} is on {counts[top]} of "
            f"{n} records (more than n/ℓ = {n / ell:.1f})"
        )


def greedy_assignments(
    matrix: sp.csr_array,
    labels: np.ndarray,
    order: np.ndarray,
    ell: int,
    rng: np.random.Generator,
    scan: int | None = None,
    attempts: int = 5,
) -> np.ndarray:
    """Greedy assignment extraction for ℓ-diversity (Xue §4.4): ℓ rounds of the closed walk
    (Algorithm 1) on the complete graph with greedyPick (Algorithm 2) along ``order``. Returns
    an (ℓ, n) array of disjoint perfect matchings (row 0 is the identity: the self-edge is
    every record's nearest candidate); in every row the published records matched to an
    original carry pairwise distinct labels, so original i's ℓ matches p have distinct s_p.

    Departure: greedyPick keeps scanning for an unvisited candidate up to n/2 positions away
    after it has found a visited one (the option of last resort); we stop ``scan`` positions
    past it (default 2ℓ + 64), which bounds the cost of a pick and changes nothing else. If a
    walk finds no candidate at all (possible in principle: the complete graph minus the
    constraints is not balanced) the round set is redone with fresh randomness.

    Time: O(ℓ · n · (W + L)) for walks of average length W and scans of length L; worst case
    O(ℓ n²). Memory O(ℓ n)."""
    n = matrix.shape[0]
    check_eligible(labels, ell)
    if ell > n:
        raise InputError(f"ℓ = {ell} exceeds the {n} records")
    _, codes = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
    m = sp.csr_array(matrix)
    m.sort_indices()
    width = scan if scan is not None else 2 * ell + 64
    for _ in range(attempts):
        rounds, status = _greedy_rounds(
            np.asarray(order, np.int64),
            m.indptr.astype(np.int64),
            m.indices.astype(np.int64),
            codes.reshape(-1).astype(np.int64),
            ell,
            rng,
            width,
        )
        if status >= 0:
            return rounds
        width = max(width * 4, n)
    raise InfeasibleError(f"greedy extraction of {ell} label-diverse assignments failed")
