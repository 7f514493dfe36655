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

from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.params import check_level_fits


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
def _greedy_pick(x, r, tour, records, prev, walk_state, walk, scan):  # pragma: no cover
    """Algorithm 2 (greedyPick): scan the Gray-TSP order outwards from x, two candidates per
    distance j (rank i+j and i−j); drop those matched to x in an earlier round (criterion i),
    already taken from x in this walk (ii) or carrying a label already assigned to x (iii); of
    the survivors take the one nearest to x by Hamming distance, preferring published records
    not yet entered by this walk; return the first unvisited choice, else the first visited one
    kept as the option of last resort. ``scan`` bounds how far past the last-resort option the
    scan continues (departure, see ``greedy_assignments``).

    ``tour`` = (order, rank): the Gray-TSP order and each record's position in it;
    ``records`` = (xp, xi, lab): the records' item sets (CSR) and labels; ``prev[t, x]``: x's
    match in round t < r; ``walk_state`` = (head, head_walk, link, link_y, pub_seen): the
    links already taken from each record in walk number ``walk`` (a linked list per record,
    valid where ``head_walk`` is ``walk``) and the walk that last entered each published
    record."""
    order, rank = tour
    xp, xi, lab = records
    head, head_walk, link, link_y, pub_seen = walk_state
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
    tour, records = (order, rank), (xp, xi, lab)
    walk_state = (head, head_walk, link, link_y, pub_seen)  # rebuilt when link grows
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
                y = _greedy_pick(x, r, tour, records, prev, walk_state, walk, scan)
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
                    walk_state = (head, head_walk, link, link_y, pub_seen)
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
    check_level_fits(ell, n, "ℓ", "records")
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


# ------------------------------------------------- ℓ-diversity: label-interleaved ring (ours)


@njit(cache=True, nogil=True)
def _find(ptr, p):  # pragma: no cover - compiled
    """Union-find style skip pointer: the first free slot at or after/before p."""
    root = p
    while ptr[root] != root:
        root = ptr[root]
    while ptr[p] != root:
        nxt = ptr[p]
        ptr[p] = root
        p = nxt
    return root


@njit(cache=True, nogil=True)
def _interleave(order, xp, xi, codes, n_labels, w, scan):  # pragma: no cover - compiled
    """Greedy Hamiltonian path along ``order`` (greedyPick-style: nearest free record on
    either side, the closer by Hamming distance of the two) such that no label repeats within
    ``w`` consecutive positions, cyclically (the distance to a label's first position counts
    around the end). A label whose remaining count reaches 90 % of (remaining records)/w is
    placed first. Returns (path, length); records not placed are left for insertion."""
    n = order.shape[0]
    rank = np.empty(n, np.int64)
    for p in range(n):
        rank[order[p]] = p
    # skip pointers over ranks 0..n+1 (rank r ↔ slot r+1; slots 0 and n+1 are sentinels)
    fwd = np.arange(n + 2)
    bwd = np.arange(n + 2)
    remaining = np.zeros(n_labels, np.int64)
    for r in range(n):
        remaining[codes[r]] += 1
    # per label: its records in order, with a cursor to the first unplaced one
    lab_ptr = np.zeros(n_labels + 1, np.int64)
    for r in range(n):
        lab_ptr[codes[r] + 1] += 1
    for c in range(n_labels):
        lab_ptr[c + 1] += lab_ptr[c]
    fill = lab_ptr[:-1].copy()
    lab_recs = np.empty(n, np.int64)
    for p in range(n):
        r = order[p]
        lab_recs[fill[codes[r]]] = r
        fill[codes[r]] += 1
    cursor = lab_ptr[:-1].copy()
    placed = np.zeros(n, np.bool_)
    last = np.full(n_labels, -(1 << 40), np.int64)
    first = np.full(n_labels, 1 << 40, np.int64)
    path = np.empty(n, np.int64)
    x = order[0]
    length = 0
    while True:
        # place x
        placed[x] = True
        slot = rank[x] + 1
        fwd[slot] = slot + 1
        bwd[slot] = slot - 1
        remaining[codes[x]] -= 1
        last[codes[x]] = length
        if first[codes[x]] > length:
            first[codes[x]] = length
        path[length] = x
        length += 1
        if length == n:
            break
        rest = n - length
        # a critical label goes first
        y = -1
        best_c, best_cnt = -1, 0
        for c in range(n_labels):
            if remaining[c] > best_cnt and length - last[c] >= w and first[c] + n - length >= w:
                best_c, best_cnt = c, remaining[c]
        if best_c >= 0 and 10 * best_cnt * w >= 9 * rest:
            while placed[lab_recs[cursor[best_c]]]:
                cursor[best_c] += 1
            y = lab_recs[cursor[best_c]]
        if y < 0:
            i = rank[x] + 1
            f = _find(fwd, i + 1)
            b = _find(bwd, i - 1)
            yf, yb = -1, -1
            steps = 0
            while f <= n and steps < scan and yf < 0:
                r = order[f - 1]
                c = codes[r]
                if length - last[c] >= w and first[c] + n - length >= w:
                    yf = r
                else:
                    f = _find(fwd, f + 1)
                steps += 1
            steps = 0
            while b >= 1 and steps < scan and yb < 0:
                r = order[b - 1]
                c = codes[r]
                if length - last[c] >= w and first[c] + n - length >= w:
                    yb = r
                else:
                    b = _find(bwd, b - 1)
                steps += 1
            if yf >= 0 and yb >= 0:
                hf = _hamming(x, yf, xp, xi)
                hb = _hamming(x, yb, xp, xi)
                y = yf if hf <= hb else yb
            elif yf >= 0:
                y = yf
            elif yb >= 0:
                y = yb
            elif best_c >= 0:  # nothing allowed nearby: the most frequent allowed label
                while placed[lab_recs[cursor[best_c]]]:
                    cursor[best_c] += 1
                y = lab_recs[cursor[best_c]]
        if y < 0:
            break  # every remaining label is inside the window: stuck
        x = y
    return path, length


@njit(cache=True, nogil=True)
def _interleave_defer(order, codes, n_labels, w):  # pragma: no cover - compiled
    """Walk ``order`` forwards; a record whose label appeared within the last ``w`` − 1
    positions (or would wrap too close to its first position) is deferred, and the oldest
    deferred record whose label is allowed again goes first. A label whose remaining count
    reaches 90 % of (remaining records)/w is placed as soon as it is allowed. Records move only
    a few windows from their place in ``order``. Returns (path, length)."""
    n = order.shape[0]
    remaining = np.zeros(n_labels, np.int64)
    for r in range(n):
        remaining[codes[r]] += 1
    last = np.full(n_labels, -(1 << 40), np.int64)
    first = np.full(n_labels, 1 << 40, np.int64)
    placed = np.zeros(n, np.bool_)
    path = np.empty(n, np.int64)
    deferred = np.empty(n, np.int64)
    n_def = 0
    head = 0  # deferred[head:n_def] are waiting (compacted lazily)
    pos = 0
    length = 0
    while length < n:
        rest = n - length
        y = -1
        # 1. a critical label that is allowed: its earliest waiting or upcoming record
        best_c, best_cnt = -1, 0
        for c in range(n_labels):
            if remaining[c] > best_cnt and length - last[c] >= w and first[c] + n - length >= w:
                best_c, best_cnt = c, remaining[c]
        if best_c >= 0 and 10 * best_cnt * w >= 9 * rest:
            for q in range(head, n_def):
                r = deferred[q]
                if r >= 0 and codes[r] == best_c:
                    y = r
                    deferred[q] = -1
                    break
            if y < 0:
                for p in range(pos, n):
                    r = order[p]
                    if not placed[r] and codes[r] == best_c:
                        y = r
                        break
        # 2. the oldest deferred record that is allowed again
        if y < 0:
            for q in range(head, n_def):
                r = deferred[q]
                if r >= 0:
                    c = codes[r]
                    if length - last[c] >= w and first[c] + n - length >= w:
                        y = r
                        deferred[q] = -1
                        break
        # 3. the next record of the order, deferring those not allowed
        while y < 0 and pos < n:
            r = order[pos]
            pos += 1
            if placed[r]:
                continue
            c = codes[r]
            if length - last[c] >= w and first[c] + n - length >= w:
                y = r
            else:
                deferred[n_def] = r
                n_def += 1
        if y < 0:
            break  # stuck: the rest is inserted by the caller
        placed[y] = True
        c = codes[y]
        remaining[c] -= 1
        last[c] = length
        if first[c] > length:
            first[c] = length
        path[length] = y
        length += 1
        while head < n_def and deferred[head] < 0:
            head += 1
    return path, length


@njit(cache=True, nogil=True)
def _window_ok(seq, m, codes, w, stamp, seen, gen):  # pragma: no cover - compiled
    """True iff no label repeats within w consecutive entries of seq[:m]."""
    for q in range(m):
        c = codes[seq[q]]
        if stamp[c] == gen and q - seen[c] < w:
            return False
        stamp[c] = gen
        seen[c] = q
    return True


@njit(cache=True, nogil=True)
def _constrained_oropt(path, xp, xi, codes, n_labels, w, radius, passes):  # pragma: no cover
    """Or-opt on the cyclic ``path``: move one record at a time to a place at most ``radius``
    positions away when that shortens the Hamming length and keeps every label at least w
    positions from its next occurrence (checked on the local window, whose margins of w do not
    move). First improvement, up to ``passes`` sweeps. O(passes · n · radius · (L + radius + w))."""
    n = path.shape[0]
    half = radius + w
    m = 2 * half + 1
    if n <= m + 2:
        return path
    stamp = np.zeros(n_labels, np.int64)
    seen = np.zeros(n_labels, np.int64)
    gen = 0
    local = np.empty(m, np.int64)
    trial = np.empty(m, np.int64)
    for _ in range(passes):
        improved = False
        for i in range(n):
            for q in range(m):
                local[q] = path[(i - half + q) % n]
            c = half
            x = local[c]
            prev, nxt = local[c - 1], local[c + 1]
            gain = _hamming(prev, x, xp, xi) + _hamming(x, nxt, xp, xi)
            gain -= _hamming(prev, nxt, xp, xi)
            if gain <= 0:
                continue
            best_t, best_delta = -1, 0
            for t in range(c - radius - 1, c + radius + 1):
                if t == c or t == c - 1:
                    continue
                a, b = local[t], local[t + 1]
                cost = _hamming(a, x, xp, xi) + _hamming(x, b, xp, xi) - _hamming(a, b, xp, xi)
                delta = cost - gain
                if delta >= best_delta:
                    continue
                # build the moved window and check the label constraint on it
                k = 0
                for q in range(m):
                    if q == c:
                        continue
                    trial[k] = local[q]
                    k += 1
                    if q == t:
                        trial[k] = x
                        k += 1
                gen += 1
                if _window_ok(trial, m, codes, w, stamp, seen, gen):
                    best_t, best_delta = t, delta
            if best_t >= 0:
                k = 0
                for q in range(m):
                    if q == c:
                        continue
                    trial[k] = local[q]
                    k += 1
                    if q == best_t:
                        trial[k] = x
                        k += 1
                for q in range(m):
                    path[(i - half + q) % n] = trial[q]
                improved = True
        if not improved:
            break
    return path


@njit(cache=True, nogil=True)
def _constrained_two_opt(path, xp, xi, codes, n_labels, w, radius, passes):  # pragma: no cover
    """2-opt on the cyclic ``path`` restricted to reversals of at most ``radius`` records that
    shorten the Hamming length and keep every label at least w positions from its next
    occurrence (checked on the reversed stretch plus w records on each side; pairs inside the
    stretch keep their distances). First improvement. O(passes · n · radius · (L + radius + w))."""
    n = path.shape[0]
    m_max = radius + 2 * w + 2
    if n <= m_max + 2:
        return path
    stamp = np.zeros(n_labels, np.int64)
    seen = np.zeros(n_labels, np.int64)
    gen = 0
    trial = np.empty(m_max, np.int64)
    for _ in range(passes):
        improved = False
        for i in range(n):
            a = path[i]
            b = path[(i + 1) % n]
            for span in range(2, radius + 1):
                j = (i + span) % n
                c, e = path[j], path[(j + 1) % n]
                delta = _hamming(a, c, xp, xi) + _hamming(b, e, xp, xi)
                delta -= _hamming(a, b, xp, xi) + _hamming(c, e, xp, xi)
                if delta >= 0:
                    continue
                # window: w before i+1, the reversed stretch i+1..j, w after j
                m = 0
                for q in range(w, 0, -1):
                    trial[m] = path[(i + 1 - q) % n]
                    m += 1
                for q in range(span):
                    trial[m] = path[(j - q) % n]
                    m += 1
                for q in range(1, w + 1):
                    trial[m] = path[(j + q) % n]
                    m += 1
                gen += 1
                if not _window_ok(trial, m, codes, w, stamp, seen, gen):
                    continue
                lo, hi = i + 1, i + span
                while lo < hi:
                    x0, x1 = lo % n, hi % n
                    path[x0], path[x1] = path[x1], path[x0]
                    lo += 1
                    hi -= 1
                improved = True
                b = path[(i + 1) % n]
        if not improved:
            break
    return path


def _cyclic_conflicts(path: np.ndarray, codes: np.ndarray, w: int) -> np.ndarray:
    """Positions p of ``path`` whose label reappears fewer than w positions later (cyclic)."""
    n = len(path)
    lab = codes[path]
    by = np.lexsort((np.arange(n), lab))
    same = lab[by][1:] == lab[by][:-1]
    gap = np.diff(by)
    bad = by[:-1][same & (gap < w)]
    # wrap-around: last occurrence of a label versus its first
    first = np.ones(n, bool)
    first[1:] = lab[by][1:] != lab[by][:-1]
    last_idx = np.ones(n, bool)
    last_idx[:-1] = lab[by][1:] != lab[by][:-1]
    firsts, lasts = by[first], by[last_idx]
    wrap = (firsts + n - lasts < w) & (firsts != lasts)
    return np.unique(np.concatenate([bad, lasts[wrap]]))


def _insert(path: list[int], r: int, codes: np.ndarray, w: int) -> bool:
    """Insert record r into the cyclic ``path`` at a place where its label does not repeat
    within w positions (inserting never breaks the constraint for the others)."""
    n = len(path)
    lab = codes[np.asarray(path, np.int64)]
    pos = np.flatnonzero(lab == codes[r])
    if len(pos) == 0:
        path.insert(0, r)
        return True
    gaps = np.diff(np.concatenate([pos, [pos[0] + n]]))
    ok = np.flatnonzero(gaps >= 2 * w - 1)
    if len(ok) == 0:
        return False
    at = int(pos[ok[0]]) + w
    if at > n:  # the wrap-around gap: insert near the front
        at -= n
    path.insert(at, r)
    return True


def ring_length_of(order: np.ndarray, m: sp.csr_array) -> int:
    from anonymatch.sets.order import ring_length

    return ring_length(m, order)


def interleaved_order(
    matrix: sp.csr_array,
    labels: np.ndarray,
    order: np.ndarray,
    window: int,
    scan: int = 256,
    strategy: str = "defer",
    polish: int = 0,
) -> np.ndarray:
    """A cyclic order close to ``order`` in which no label repeats within ``window``
    consecutive positions (cyclically).

    ``strategy="defer"`` (default): walk the order and defer a record whose label is too
    recent until it is allowed again (records move a few windows at most, which keeps the
    ring neighbourhoods of the order together). ``strategy="greedy"``: a greedyPick-like walk
    (Xue Alg. 2) that takes the nearest allowed record on either side, the closer of the two by
    Hamming distance. Both place labels that would otherwise run out of room first; records
    left over are inserted into gaps wide enough for them. ``polish`` > 0 adds that many
    rounds of label-preserving 2-opt/Or-opt: it shortens the ring's Hamming length but, on
    chess and pumsb, raises the error rate of the ring graph (which depends on whole windows,
    not adjacent pairs), so it is off by default.

    Raises InfeasibleError if the labels are not ``window``-eligible or no gap is left.
    Time O(n·(|labels| + w)) for "defer", O(n·(|labels| + scan·L)) for "greedy", plus
    O(polish · n · w · (L + w)); memory O(n).
    """
    n = matrix.shape[0]
    check_eligible(labels, window)
    values, codes = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
    codes = codes.reshape(-1).astype(np.int64)
    if window <= 1 or n <= 1:
        return np.asarray(order, np.int64)
    m = sp.csr_array(matrix)
    m.sort_indices()
    if strategy == "defer":
        path, length = _interleave_defer(np.asarray(order, np.int64), codes, len(values), window)
    else:
        path, length = _interleave(
            np.asarray(order, np.int64),
            m.indptr.astype(np.int64),
            m.indices.astype(np.int64),
            codes,
            len(values),
            window,
            scan,
        )
    seq = path[:length]
    placed = np.zeros(n, bool)
    placed[seq] = True
    pending = np.flatnonzero(~placed).tolist()
    out = seq.tolist()
    for r in pending:  # leftovers: into gaps (an insertion never breaks other labels)
        if not _insert(out, int(r), codes, window):
            raise InfeasibleError(
                f"could not place every record so that labels do not repeat within {window}"
                " consecutive positions"
            )
    # The walk checked the wrap-around assuming all n records placed; with leftovers inserted
    # elsewhere a label may repeat too soon across the seam: move such records into gaps.
    result = np.asarray(out, np.int64)
    for _ in range(4 * n):
        conflicts = _cyclic_conflicts(result, codes, window)
        if len(conflicts) == 0:
            break
        out = result.tolist()
        r = out.pop(int(conflicts[-1]))
        if not _insert(out, r, codes, window):
            raise InfeasibleError(
                f"could not place every record so that labels do not repeat within {window}"
                " consecutive positions"
            )
        result = np.asarray(out, np.int64)
    else:  # pragma: no cover - defensive
        raise InfeasibleError("label interleaving failed")
    if polish:
        for _ in range(polish):
            before = ring_length_of(result, m)
            result = _constrained_two_opt(
                result,
                m.indptr.astype(np.int64),
                m.indices.astype(np.int64),
                codes,
                len(values),
                window,
                4 * window,
                1,
            )
            result = _constrained_oropt(
                result,
                m.indptr.astype(np.int64),
                m.indices.astype(np.int64),
                codes,
                len(values),
                window,
                2 * window,
                1,
            )
            if ring_length_of(result, m) >= before:
                break
        result = _constrained_oropt(
            result,
            m.indptr.astype(np.int64),
            m.indices.astype(np.int64),
            codes,
            len(values),
            window,
            2 * window,
            polish,
        )
        if len(_cyclic_conflicts(result, codes, window)):  # pragma: no cover - defensive
            raise InfeasibleError("label interleaving failed")
    return result
