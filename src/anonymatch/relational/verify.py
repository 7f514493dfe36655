"""Independent verification of a relational-transaction release, from the published JSONL and
the original people only (never the anonymizer's graph).

Person i matches published record j iff both parts match: i's QI values lie in j's cells (the
tables' compatibility, ``anonymatch.tables.verify.grouped_compatibility``: ranges, value sets,
hierarchy nodes, ``*``) and i's items agree with j's set part (the sets' compatibility,
``anonymatch.sets.verify.set_compatibility``: i agrees with the base outside the uncertain items
and differs from it in at most ``max_errors`` items). The release is k-anonymous iff this joint
compatibility graph has a k-factor — k disjoint perfect matchings, found by max-flow
(``anonymatch.core.matching.has_k_factor``) — and has as many records as the original has
people (docs/guarantees/relational.md).

Scaling: people identical on the QIs form a table group, people with equal sets a set group; the
joint compatibility is computed once per (table group, set group) pair by intersecting the two
compatibilities, scanning the smaller side and looking the other up by binary search — never
n × n. A person without items matches no item bucket of the sets' candidate search, so the set
part is checked over the universe plus one virtual item held by every person and certain in
every published record (it changes no match: everyone holds it and every base has it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from anonymatch.core.matching import has_k_factor, k_factor_in_blocks
from anonymatch.relational.io import People, RelationalRelease
from anonymatch.sets.io import SetRelease, Transactions
from anonymatch.sets.verify import set_compatibility
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.verify import grouped_compatibility


@dataclass(frozen=True)
class RelationalVerificationReport:
    """Outcome of :func:`verify_relational`; ``passed`` iff the counts agree and the joint
    compatibility graph has a k-factor."""

    passed: bool
    k: int
    n_original: int
    n_published: int
    min_matches_original: int
    min_matches_published: int
    factor_flow: int
    factor_required: int
    compatible_pairs: int
    reason: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _with_everyone_item(
    release: SetRelease, original: Transactions
) -> tuple[SetRelease, Transactions]:
    """Both sides over the universe plus one item held by every person and certain in every
    published record (so that people without items are found by the candidate search)."""
    b = max(release.base.shape[1], original.matrix.shape[1])
    n, n_pub = original.n, release.n

    def extended(m: sp.csr_array, rows: int, fill: bool) -> sp.csr_array:
        m = sp.csr_array((m.data.astype(bool), m.indices, m.indptr), shape=(rows, b))
        if not fill:
            return sp.csr_array(sp.hstack([m, sp.csr_array((rows, 1), dtype=bool)]).tocsr())
        return sp.csr_array(sp.hstack([m, np.ones((rows, 1), bool)], format="csr"))

    items = [*release.items, *([""] * (b - len(release.items))), "\0everyone"]
    x = extended(sp.csr_array(original.matrix), n, True)
    x.sort_indices()
    base = extended(sp.csr_array(release.base), n_pub, True)
    unc = extended(sp.csr_array(release.uncertain), n_pub, False)
    return (
        SetRelease(base, unc, release.max_errors, None, items, False),
        Transactions(x, items, None, False),
    )


@njit(cache=True, nogil=True)
def _joint_pairs(jt, js, tp, ti, gp, gi, group, sp_, si):  # pragma: no cover - compiled
    """Pairs (joint group g, published row j) compatible on both parts: j in set row js[g] and
    group(j) in table row jt[g]; the smaller side is scanned, the other binary-searched."""
    n_g = jt.shape[0]
    cap = 1024
    out_g = np.empty(cap, np.int64)
    out_j = np.empty(cap, np.int64)
    size = 0
    for g in range(n_g):
        t0, t1 = tp[jt[g]], tp[jt[g] + 1]
        s0, s1 = sp_[js[g]], sp_[js[g] + 1]
        table_rows = 0
        for q in range(t0, t1):
            table_rows += gp[ti[q] + 1] - gp[ti[q]]
        need = size + min(table_rows, s1 - s0)
        if need > cap:
            cap = max(2 * cap, need)
            grown_g = np.empty(cap, np.int64)
            grown_j = np.empty(cap, np.int64)
            grown_g[:size] = out_g[:size]
            grown_j[:size] = out_j[:size]
            out_g, out_j = grown_g, grown_j
        if s1 - s0 <= table_rows:
            for q in range(s0, s1):
                j = si[q]
                want = group[j]
                pos = np.searchsorted(ti[t0:t1], want)
                if pos < t1 - t0 and ti[t0 + pos] == want:
                    out_g[size] = g
                    out_j[size] = j
                    size += 1
        else:
            for q in range(t0, t1):
                grp = ti[q]
                for r in range(gp[grp], gp[grp + 1]):
                    j = gi[r]
                    pos = np.searchsorted(si[s0:s1], j)
                    if pos < s1 - s0 and si[s0 + pos] == j:
                        out_g[size] = g
                        out_j[size] = j
                        size += 1
    return out_g[:size], out_j[:size]


def joint_compatibility(
    release: RelationalRelease, people: People, enc: EncodedQI
) -> tuple[sp.csr_array, np.ndarray, np.ndarray]:
    """The joint compatibility C (U × n_published, CSR) between the U distinct (QI vector,
    item set) pairs of the people and the published records, their counts and the inverse map
    (person i is row ``inverse[i]``). Time O(table and set candidate searches + Σ_g
    min(sides) · log); memory O(pairs of either part)."""
    cells = parse_cells(release.table, enc)
    grouped = grouped_compatibility(cells, enc)
    ext_release, ext_items = _with_everyone_item(release.sets, people.items)
    c_s, _, inverse_s = set_compatibility(ext_release, ext_items)
    c_s.sort_indices()
    c_t = sp.csr_array(grouped.c)
    c_t.sort_indices()
    n_s = c_s.shape[0]
    key = grouped.inverse.astype(np.int64) * n_s + inverse_s.astype(np.int64)
    uniq, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    jt, js = uniq // n_s, uniq % n_s
    group = grouped.group.astype(np.int64)
    n_pub = len(group)
    by_group = np.argsort(group, kind="stable")
    gp = np.zeros(int(group.max()) + 2 if n_pub else 1, np.int64)
    gp[1:] = np.cumsum(np.bincount(group, minlength=len(gp) - 1))
    g, j = _joint_pairs(
        jt.astype(np.int64),
        js.astype(np.int64),
        c_t.indptr.astype(np.int64),
        c_t.indices.astype(np.int64),
        gp,
        by_group.astype(np.int64),
        group,
        c_s.indptr.astype(np.int64),
        c_s.indices.astype(np.int64),
    )
    c = sp.csr_array((np.ones(len(g), np.int8), (g, j)), shape=(len(uniq), n_pub))
    return c, counts.astype(np.int64), inverse.reshape(-1).astype(np.int64)


def verify_relational(
    release: RelationalRelease,
    people: People,
    enc: EncodedQI,
    k: int,
    blocks: tuple[np.ndarray, np.ndarray] | None = None,
) -> RelationalVerificationReport:
    """Check k-anonymity of a relational-transaction release from the published records and
    the original people only.

    Parameters
    ----------
    release : RelationalRelease
        The published records (as read back from the JSONL text).
    people : People
        The original people.
    enc : EncodedQI
        Their encoded QIs (``anonymatch.tables.columns.schema.encode_qi``).
    k : int
        The level to check.
    blocks : tuple of numpy.ndarray, optional
        A block label per person and per published record where a k-factor may be found piece
        by piece (the anonymizer's partitions): a hint that can save time, never make a release
        pass (``core.matching.k_factor_in_blocks``; the whole graph is checked otherwise).

    Returns
    -------
    RelationalVerificationReport

    Notes
    -----
    Time: the two candidate searches, the intersection and Dinic's max-flow on O(U + n +
    pairs) edges. Reference: Doka et al., ASIACCS 2015 §2 (k-factor), Xue et al., KDD 2012 §3
    (set compatibility).
    """
    n, n_pub = people.n, release.n
    required = k * n
    if n != n_pub:
        return RelationalVerificationReport(
            False, k, n, n_pub, 0, 0, 0, required, 0,
            f"the release has {n_pub} records but the original has {n} people",
        )  # fmt: skip
    c, counts, inverse = joint_compatibility(release, people, enc)
    per_original = int(np.diff(c.indptr).min()) if n else 0
    per_published = int((counts @ c).min()) if n else 0
    enough = n and min(per_original, per_published) >= k
    if (
        enough
        and blocks is not None
        and k_factor_in_blocks(c, inverse, np.arange(n_pub), k, *blocks)
    ):
        flow = required
    else:
        flow = has_k_factor(c, counts, k) if enough else 0
    passed = flow == required
    if passed:
        reason = "ok"
    elif per_original < k:
        reason = f"a person matches only {per_original} published records (< k = {k})"
    elif per_published < k:
        reason = f"a published record matches only {per_published} people (< k = {k})"
    else:
        reason = f"no k-factor: at most {flow} of the {required} required disjoint matches exist"
    return RelationalVerificationReport(
        passed, k, n, n_pub, per_original, per_published, flow, required, int(c.nnz), reason
    )
