"""(k,ℓ)-anonymity of tables and k^m-anonymity of transactions: Apriori-pruned checkers.

A table is (k,ℓ)-anonymous when it is k-anonymous w.r.t. every set of at most ℓ attributes:
every combination of values of ≤ ℓ attributes that occurs, occurs ≥ k times (Stokes, PSD 2012,
"On computational anonymity"; slides "Computational anonymity and some combinatorics", §2).
Set-valued data is k^m-anonymous when every itemset of ≤ m items is contained in 0 or ≥ k
transactions (Terrovitis et al. 2008) — the same notion with itemsets as the points.

Both checkers count on integer codes, one pass per attribute subset (per level for itemsets),
and prune like Apriori: a record whose combination on some T ⊂ S is already rare has a rare
combination on S too, so it is left out of the counts for S and only the *minimal* violations
(all of whose proper sub-combinations occur ≥ k times) are reported. Records sharing a
combination on S share every sub-combination, so the counts of the records kept are exact.
A table is (k,ℓ)-anonymous iff it has no minimal violation of size ≤ ℓ.

The checkers work on integer codes; ``tables.models.kl.check_kl`` encodes a table or a release into
them (a generalized cell — value set ``a|b``, range ``3..7``, ``*`` — counts as one value).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from math import comb

import numpy as np
import scipy.sparse as sp
from numba import njit

from anonymatch.core.errors import InputError


@dataclass(frozen=True)
class Violation:
    """A minimal rare combination: ``attributes`` (or items) with ``values``, seen ``count``
    times with 0 < count < k."""

    attributes: tuple[str, ...]
    values: tuple[str, ...]
    count: int


@dataclass
class AnonymityReport:
    """Outcome of a (k,ℓ) or k^m check. ``max_level``: the largest ℓ' ≤ ``level`` for which the
    data is (k,ℓ')-anonymous (0 if not even (k,1)). ``levels``: per level, the subsets counted,
    the minimal violations found and the records with a rare combination of that size or smaller
    (records at risk for an adversary who knows that many attributes). ``violations``: minimal
    violations, the worst (rarest, then smallest) first, at most ``max_report`` of them."""

    kind: str
    passed: bool
    k: int
    level: int
    n_records: int
    max_level: int
    n_violations: int
    levels: list[dict[str, int]] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["violations"] = [asdict(v) for v in self.violations]
        return out


# --------------------------------------------------------------------------------------------
# tables


def combo_ids(cols: np.ndarray, cards: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Dense ids of the rows of ``cols`` (n × s int codes, column j in [0, cards[j])), and the
    count of each id. Mixed-radix key when it fits in 62 bits, else pairwise re-factorization.
    O(n log n) (a bincount, O(n + key range), when the key range is small)."""
    n, s = cols.shape
    if s == 0:
        return np.zeros(n, np.int64), np.array([n], np.int64)
    key = cols[:, 0].astype(np.int64)
    size = int(cards[0])
    for j in range(1, s):
        c = int(cards[j])
        if size * c >= 1 << 62:
            _, key = np.unique(key, return_inverse=True)
            size = int(key.max()) + 1 if n else 1
        key = key * c + cols[:, j]
        size *= c
    if size <= 8 * n + 1024:
        counts = np.bincount(key, minlength=size)
        present = np.flatnonzero(counts)
        remap = np.full(size, -1, np.int64)
        remap[present] = np.arange(len(present))
        return remap[key], counts[present]
    _, inv, counts = np.unique(key, return_inverse=True, return_counts=True)
    return inv.reshape(-1).astype(np.int64), counts.astype(np.int64)


@dataclass
class _Found:
    subset: tuple[int, ...]
    codes: np.ndarray  # (v, s) codes of the minimal rare combinations
    counts: np.ndarray  # (v,)


def rare_combinations(
    codes: np.ndarray, cards: Sequence[int], k: int, level: int
) -> tuple[list[_Found], list[dict[str, int]]]:
    """All minimal rare combinations of ≤ ``level`` columns of ``codes`` (n × d), with per-level
    statistics. Apriori pruning as in the module docstring.

    Complexity: O(Σ_s C(d,s) · n_alive log n) time, O(n·d) memory plus the rare rows found.
    """
    n, d = codes.shape
    rare_rows: dict[tuple[int, ...], np.ndarray] = {}
    found: list[_Found] = []
    stats: list[dict[str, int]] = []
    at_risk = np.zeros(n, bool)
    # A record whose whole combination (all d attributes) occurs ≥ k times has no rare
    # sub-combination: if every record is such, the table is k-anonymous and so (k,ℓ) for all ℓ.
    _, full_counts = combo_ids(codes, cards)
    if n == 0 or full_counts.min() >= k:
        for s in range(1, level + 1):
            stats.append(
                {
                    "level": s,
                    "subsets": comb(d, s),
                    "subsets_counted": 0,
                    "violations": 0,
                    "records_at_risk": 0,
                }
            )
        return found, stats
    columns = np.ascontiguousarray(codes.T)  # one contiguous row per attribute
    for s in range(1, level + 1):
        checked = violations = 0
        for subset in combinations(range(d), s):
            alive = None
            members = set(subset)
            if rare_rows and len(rare_rows) < 2**s:
                subs = [t for t in rare_rows if members.issuperset(t) and len(t) < s]
            elif rare_rows:
                subs = [
                    sub for t in range(1, s) for sub in combinations(subset, t) if sub in rare_rows
                ]
            else:
                subs = []
            for sub in subs:
                if alive is None:
                    alive = np.ones(n, bool)
                alive[rare_rows[sub]] = False
            if alive is None:
                idx = None
                part = columns[list(subset)].T
            else:
                idx = np.flatnonzero(alive)
                if len(idx) == 0:
                    continue
                part = columns[list(subset)][:, idx].T
            checked += 1
            ids, counts = combo_ids(part, [cards[a] for a in subset])
            rare = counts < k
            if not rare.any():
                continue
            row_rare = rare[ids]
            rows = np.flatnonzero(row_rare) if idx is None else idx[row_rare]
            rare_rows[subset] = rows
            at_risk[rows] = True
            first = np.full(len(counts), -1, np.int64)
            order = np.flatnonzero(row_rare)
            first[ids[order[::-1]]] = order[::-1]
            which = np.flatnonzero(rare)
            found.append(_Found(subset, part[first[which]], counts[which]))
            violations += len(which)
        stats.append(
            {
                "level": s,
                "subsets": comb(d, s),
                "subsets_counted": checked,
                "violations": violations,
                "records_at_risk": int(at_risk.sum()),
            }
        )
    return found, stats


def check_level(level: int, d: int, what: str = "attributes") -> int:
    """Validate ℓ (or m) against the number of attributes: 1 ≤ ℓ ≤ d."""
    if isinstance(level, bool) or not isinstance(level, int | np.integer):
        raise InputError(f"ℓ must be an integer, got {level!r}")
    if level < 1:
        raise InputError(f"ℓ must be at least 1, got {level}")
    if level > d:
        raise InputError(f"ℓ = {level} exceeds the number of {what} ({d})")
    return int(level)


def check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise InputError(f"k must be an integer, got {k!r}")
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    return int(k)


def check_kl_codes(
    codes: np.ndarray,
    labels: Sequence[np.ndarray],
    names: Sequence[str],
    k: int,
    level: int,
    max_report: int = 1000,
) -> AnonymityReport:
    """(k,ℓ) check of integer-coded columns (see ``rare_combinations``)."""
    k = check_k(k)
    level = check_level(level, codes.shape[1])
    cards = [len(x) for x in labels]
    found, stats = rare_combinations(codes, cards, k, level)
    return _report(
        "table", k, level, codes.shape[0], found, stats, max_report, _Vocabulary(names, labels)
    )


@dataclass(frozen=True)
class _Vocabulary:
    """How a report spells the codes of a violation: the column ``names`` (tables; empty for
    itemsets) and the ``labels`` of each column's codes (tables) or of the items (itemsets)."""

    names: Sequence[str]
    labels: Sequence[np.ndarray] | np.ndarray


def _report(
    kind: str,
    k: int,
    level: int,
    n: int,
    found: list[_Found],
    stats: list[dict[str, int]],
    max_report: int,
    vocabulary: _Vocabulary,
) -> AnonymityReport:
    """The report of a ``kind`` ("table" or "transactions") check of n records at ``level``:
    the ``found`` rare combinations (at most ``max_report`` listed, rarest first, spelled
    with ``vocabulary``) and the per-level ``stats``."""
    names, labels = vocabulary.names, vocabulary.labels
    total = sum(len(f.counts) for f in found)
    max_level = 0
    for st in stats:
        if st["violations"]:
            break
        max_level = st["level"]
    # worst first: the rarest, then the smallest subsets
    flat = [
        (int(c), len(f.subset), fi, j)
        for fi, f in enumerate(found)
        for j, c in enumerate(f.counts.tolist())
    ]
    flat.sort()
    violations = []
    for count, _, fi, j in flat[:max_report]:
        f = found[fi]
        if kind == "table":
            attrs = tuple(names[a] for a in f.subset)
            vals = tuple(
                str(labels[a][c]) for a, c in zip(f.subset, f.codes[j].tolist(), strict=True)
            )
        else:  # itemsets: the subset is unused, the codes are items
            attrs = ()
            vals = tuple(str(labels[c]) for c in f.codes[j].tolist())
        violations.append(Violation(attrs, vals, count))
    return AnonymityReport(kind, total == 0, k, level, n, max_level, total, stats, violations)


# --------------------------------------------------------------------------------------------
# transactions (k^m)


@njit(cache=True)
def _itemset_keys(
    indptr, indices, s, base, prev_keys, count_only, out, out_rows
):  # pragma: no cover
    """Keys of the s-subsets of every transaction (items sorted ascending) whose (s−1)-subsets
    are all in ``prev_keys`` (sorted), as mixed-radix numbers in ``base``. With ``count_only``
    returns the number of keys; else writes them into ``out`` and their transaction into
    ``out_rows``. Enumerates the combinations of each transaction in lexicographic order."""
    total = 0
    idx = np.empty(s, np.int64)
    for r in range(len(indptr) - 1):
        lo, hi = indptr[r], indptr[r + 1]
        m = hi - lo
        if m < s:
            continue
        for j in range(s):
            idx[j] = j
        while True:
            ok = True
            if s > 1:
                for drop in range(s):
                    key = 0
                    for j in range(s):
                        if j != drop:
                            key = key * base + indices[lo + idx[j]]
                    pos = np.searchsorted(prev_keys, key)
                    if pos >= len(prev_keys) or prev_keys[pos] != key:
                        ok = False
                        break
            if ok:
                if not count_only:
                    key = 0
                    for j in range(s):
                        key = key * base + indices[lo + idx[j]]
                    out[total] = key
                    out_rows[total] = r
                total += 1
            # next combination
            j = s - 1
            while j >= 0 and idx[j] == m - s + j:
                j -= 1
            if j < 0:
                break
            idx[j] += 1
            for t in range(j + 1, s):
                idx[t] = idx[t - 1] + 1
    return total


def decode_keys(keys: np.ndarray, s: int, base: int) -> np.ndarray:
    """Items (len × s) of mixed-radix itemset keys."""
    out = np.empty((len(keys), s), np.int64)
    rest = keys.copy()
    for j in range(s - 1, -1, -1):
        out[:, j] = rest % base
        rest //= base
    return out


def rare_itemsets(
    matrix: sp.csr_array, k: int, m: int
) -> tuple[list[_Found], list[dict[str, int]], list[np.ndarray]]:
    """Minimal rare itemsets (support 0 < c < k) of ≤ m items of a binary transaction × item CSR
    matrix, Apriori: level s only counts s-itemsets all of whose (s−1)-subsets are frequent.
    Returns (found, per-level stats, frequent keys per level).

    Complexity: O(Σ_s Σ_t C(|t ∩ F₁|, s)·s log|F_{s−1}|) with F the frequent itemsets.
    Reference: Terrovitis, Mamoulis, Kalnis, "Privacy-preserving anonymization of set-valued
    data", VLDB 2008 (k^m-anonymity); Agrawal & Srikant 1994 (Apriori).
    """
    n, n_items = matrix.shape
    base = max(n_items, 2)
    if float(base) ** m >= 2.0**62:
        raise InputError(f"m = {m} is too large for {n_items} distinct items (keys overflow)")
    mat = sp.csr_array(matrix)
    mat.sum_duplicates()
    mat.sort_indices()
    indptr = mat.indptr.astype(np.int64)
    indices = mat.indices.astype(np.int64)
    found: list[_Found] = []
    stats: list[dict[str, int]] = []
    frequent: list[np.ndarray] = []
    at_risk = np.zeros(n, bool)
    prev = np.empty(0, np.int64)
    for s in range(1, m + 1):
        if s == 1:
            keys = indices
            rows = np.repeat(np.arange(n), np.diff(indptr))
        else:
            empty = np.empty(0, np.int64)
            total = _itemset_keys(indptr, indices, s, base, prev, True, empty, empty)
            keys = np.empty(total, np.int64)
            rows = np.empty(total, np.int64)
            _itemset_keys(indptr, indices, s, base, prev, False, keys, rows)
        uniq, inv, counts = np.unique(keys, return_inverse=True, return_counts=True)
        rare = counts < k
        if rare.any():
            found.append(_Found((), decode_keys(uniq[rare], s, base), counts[rare]))
            at_risk[rows[rare[inv.reshape(-1)]]] = True
        prev = uniq[~rare]
        frequent.append(prev)
        stats.append(
            {
                "level": s,
                "itemsets_counted": len(uniq),
                "violations": int(rare.sum()),
                "records_at_risk": int(at_risk.sum()),
            }
        )
        if len(prev) == 0:
            for s2 in range(s + 1, m + 1):
                stats.append(
                    {
                        "level": s2,
                        "itemsets_counted": 0,
                        "violations": 0,
                        "records_at_risk": int(at_risk.sum()),
                    }
                )
            break
        # restrict transactions to frequent items after level 1 (Apriori)
        if s == 1:
            keep = np.zeros(base, bool)
            keep[prev] = True
            live = keep[indices]
            row_of = np.repeat(np.arange(n), np.diff(indptr))
            indices = indices[live]
            indptr = np.concatenate([[0], np.cumsum(np.bincount(row_of[live], minlength=n))])
            indptr = indptr.astype(np.int64)
    return found, stats, frequent


def check_km(
    matrix: sp.csr_array,
    item_labels: np.ndarray,
    k: int,
    m: int,
    max_report: int = 1000,
) -> AnonymityReport:
    """Is the set-valued data (transactions × items, 0/1 CSR) k^m-anonymous: is every itemset of
    ≤ m items contained in 0 or ≥ k transactions? Generalized items (item groups of a release)
    are items of their own. See ``rare_itemsets`` for complexity and reference."""
    k = check_k(k)
    if isinstance(m, bool) or not isinstance(m, int | np.integer) or m < 1:
        raise InputError(f"m must be a positive integer, got {m!r}")
    found, stats, _ = rare_itemsets(matrix, k, int(m))
    return _report(
        "transactions",
        k,
        int(m),
        matrix.shape[0],
        found,
        stats,
        max_report,
        _Vocabulary((), item_labels),
    )
