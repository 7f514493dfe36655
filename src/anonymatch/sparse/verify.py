"""Independent verification of a sparse binary release, from the published and original
matrices only (Esfandiari et al., Definitions 3.4 and 3.5).

Row i of the release is user i. The verifier groups users into classes of identical published
rows C_u(E′) and checks:

* anonymity: every class has at least k members;
* ``smooth`` (Definition 3.5): every published 1 (u, f) is a 1 of the original for at least
  half of u's class: |{u′ ∈ C_u(E′) : (u′, f) ∈ E}| ≥ |C_u(E′)|/2 — the paper writes E′ in
  this condition; with E′ every member of a class holds every published item trivially, so the
  only meaningful reading (the one the algorithm's majority vote guarantees and the issue asks
  for) counts the originals E;
* ``nonsmooth`` (Definition 3.4, k-anonymity by suppression): E′ ⊆ E, i.e. every published 1 of
  a class is a 1 for all of its members.

Classes are found by hashing each published row (two independent random 64-bit sums over its
columns) and then confirmed exactly (every row is compared with its class's first row); a
collision falls back to exact grouping by row content. Time O(nnz + n log n), memory O(n + nnz);
nothing n × n.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp

RULES = ("smooth", "nonsmooth")


@dataclass(frozen=True)
class SparseVerificationReport:
    """Outcome of ``verify_sparse``; ``passed`` iff shapes agree, every class has ≥ k rows and
    every published 1 has the support the rule requires."""

    passed: bool
    k: int
    rule: str
    rows: int
    classes: int
    smallest_class: int
    rows_in_small_classes: int
    published_ones: int
    unsupported_ones: int
    reason: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _csr(m: sp.spmatrix | sp.sparray) -> sp.csr_array:
    out = sp.csr_array(m)
    out.sum_duplicates()
    out.sort_indices()
    out.data[:] = 1
    out.eliminate_zeros()
    return out


def row_classes(published: sp.csr_array) -> np.ndarray:
    """Class id (0..C−1) of every row: rows get the same id iff they are identical."""
    p = _csr(published)
    n = p.shape[0]
    rng = np.random.default_rng(0x5EED)
    keys = rng.integers(0, 2**63 - 1, size=(2, max(1, p.shape[1])), dtype=np.int64)
    row_of = np.repeat(np.arange(n), np.diff(p.indptr))
    h = np.zeros((2, n), np.uint64)
    for t in range(2):
        np.add.at(h[t], row_of, keys[t][p.indices].astype(np.uint64))
    length = np.diff(p.indptr).astype(np.uint64)
    _, classes = np.unique(np.stack([h[0], h[1], length]), axis=1, return_inverse=True)
    classes = classes.ravel().astype(np.int64)
    # exact confirmation: every row equals the first row of its class
    first = np.full(int(classes.max()) + 1 if n else 0, -1, np.int64)
    order = np.arange(n)[::-1]
    first[classes[order]] = order
    rep = first[classes]
    same_len = np.diff(p.indptr)[rep] == np.diff(p.indptr)
    if same_len.all():
        lengths = np.diff(p.indptr)
        rep_starts = np.repeat(p.indptr[rep], lengths)
        offsets = np.arange(p.nnz) - np.repeat(p.indptr[:-1], lengths)
        if np.array_equal(p.indices[rep_starts + offsets], p.indices):
            return classes
    # a hash collision (astronomically unlikely): exact grouping by content
    groups: dict[bytes, int] = {}
    exact = np.empty(n, np.int64)
    for i in range(n):
        key = p.indices[p.indptr[i] : p.indptr[i + 1]].tobytes()
        exact[i] = groups.setdefault(key, len(groups))
    return exact


def verify_sparse(
    published: sp.spmatrix | sp.sparray,
    original: sp.spmatrix | sp.sparray,
    k: int,
    rule: str = "smooth",
) -> SparseVerificationReport:
    """Check a release against its original (see the module docstring)."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}")
    p, x = _csr(published), _csr(original)
    n = x.shape[0]
    if p.shape[0] != n:
        return SparseVerificationReport(
            False,
            k,
            rule,
            n,
            0,
            0,
            0,
            int(p.nnz),
            0,
            f"the release has {p.shape[0]} rows, the original {n}",
        )
    width = max(p.shape[1], x.shape[1])
    p.resize((n, width))
    x.resize((n, width))
    classes = row_classes(p)
    n_classes = int(classes.max()) + 1 if n else 0
    sizes = np.bincount(classes, minlength=n_classes)
    small = sizes < k
    in_small = int(sizes[small].sum())
    # support of every published 1 inside its class
    member = sp.csr_array((np.ones(n, np.int64), (classes, np.arange(n))), shape=(n_classes, n))
    counts = sp.csr_array(member @ x.astype(np.int64))
    first = np.full(n_classes, -1, np.int64)
    first[classes[::-1]] = np.arange(n)[::-1]
    class_rows = _csr(p[first]) if n else p
    support = sp.csr_array(class_rows.multiply(counts))
    support.sort_indices()
    row_of = np.repeat(np.arange(n_classes), np.diff(support.indptr))
    need = sizes if rule == "nonsmooth" else (sizes + 1) // 2
    ok = int(np.count_nonzero(support.data >= need[row_of]))
    unsupported_classes = class_rows.nnz - ok  # per class (published items of the class)
    # count the unsupported published ones per row
    bad_per_class = np.diff(class_rows.indptr) - np.bincount(
        row_of[support.data >= need[row_of]], minlength=n_classes
    )
    unsupported = int((bad_per_class * sizes).sum())
    reasons = []
    if small.any():
        reasons.append(
            f"{int(small.sum())} classes of identical rows have fewer than {k} members"
            f" (smallest {int(sizes.min())})"
        )
    if unsupported_classes:
        what = "half of" if rule == "smooth" else "all"
        reasons.append(
            f"{unsupported} published ones are not held by {what} their class in the original"
        )
    passed = not reasons
    return SparseVerificationReport(
        passed,
        k,
        rule,
        n,
        n_classes,
        int(sizes.min()) if n else 0,
        in_small,
        int(p.nnz),
        unsupported,
        "; ".join(reasons)
        if reasons
        else (
            f"every class has at least {k} identical rows and every published one is "
            + ("held by at least half of its class" if rule == "smooth" else "original")
        ),
    )
