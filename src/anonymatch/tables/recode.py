"""Published QI cells and the recoding of a generalization graph into them.

Published record j covers the originals adjacent to it in the graph: a numeric QI becomes the
range [min, max] of their values, a categorical QI the set of their labels (Doka §3) — or, for
a QI whose hierarchy's nodes are published (``tables.columns.hierarchy``), the leaves under the
lowest node covering those labels — held as the node (:class:`NodeCells`), not as its leaves,
so that a 100,000-leaf hierarchy costs memory in the rows and the distinct nodes, never rows ×
leaves. A suppressed cell (``*``) matches any value.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numba import njit

from anonymatch.core.graph import GeneralizationGraph, class_members
from anonymatch.core.view import group_rows
from anonymatch.tables.columns.hierarchy import Hierarchy
from anonymatch.tables.columns.schema import EncodedQI


@dataclass(frozen=True, eq=False)
class NodeCells:
    """The cells of a categorical QI whose hierarchy's nodes are published, one node per row:
    ``nodes[j]`` is the hierarchy node of row j (a leaf is its own node, code c = leaf c;
    −1 for a suppressed cell). O(n) memory, where the leaf sets it stands for hold up to
    rows × leaves labels (a 100,000-leaf ZIP hierarchy). ``width`` is the number of columns
    of :meth:`leaf_sets` (the original's domain, at least the hierarchy's leaves)."""

    tree: Hierarchy
    nodes: np.ndarray
    width: int

    def leaf_sets(self) -> sp.csr_array:
        """The (n × width) 0/1 CSR of the leaves under each row's node (empty for ``*``): the
        value sets the other readers of :class:`GeneralizedQI` expect. O(Σ leaves under the
        rows' nodes)."""
        live = self.nodes >= 0
        if live.all():
            return self.tree.leaf_sets(self.nodes, self.width)
        m = self.tree.leaf_sets(self.nodes[live], self.width)
        lengths = np.zeros(len(self.nodes), np.int64)
        lengths[live] = np.diff(m.indptr)
        indptr = np.concatenate([[0], np.cumsum(lengths)])
        return sp.csr_array((m.data, m.indices, indptr), shape=(len(self.nodes), self.width))

    def take(self, rows: np.ndarray) -> NodeCells:
        return NodeCells(self.tree, self.nodes[rows], self.width)

    def keys(self, star: np.ndarray | None = None) -> np.ndarray:
        """One int64 per row, equal iff the rows' leaf sets are equal: the node's span
        (``Hierarchy.spans``: two nodes with the same leaves, a chain of one-child nodes,
        have the same span); −1 for a suppressed cell (``nodes`` −1, or ``star``). O(n)."""
        lo, hi = self.tree.spans
        live = self.nodes >= 0 if star is None else (self.nodes >= 0) & ~star
        node = np.where(live, self.nodes, 0)
        return np.where(live, lo[node] * (self.tree.n_leaves + 1) + hi[node], -1)

    def distinct(self) -> tuple[np.ndarray, np.ndarray, sp.csr_array]:
        """(reps, group, sets): the first row of each distinct cell, each row's number among
        them and the leaf sets of the distinct cells only (``recode.distinct_rows`` without
        the rows × leaves matrix). O(n log n + Σ leaves of the distinct nodes)."""
        _, reps, group = np.unique(self.keys(), return_index=True, return_inverse=True)
        reps = reps.astype(np.int64)
        return reps, group.reshape(-1).astype(np.int64), self.take(reps).leaf_sets()


class CatSets(tuple[Any, ...]):
    """The categorical cells of a :class:`GeneralizedQI`: a tuple of per-attribute 0/1 CSR
    value sets, some of which may be held as :class:`NodeCells`. Indexing and iterating give
    CSR matrices as before (a node attribute's leaf sets are built on first use and kept);
    :meth:`nodes` gives the node form to the readers that use it (verification, formatting,
    loss, the headline and the leakage check), which then never build the rows × leaves
    matrix."""

    def nodes(self, a: int) -> NodeCells | None:
        """Attribute a's cells as nodes, None when they are value sets."""
        item = tuple.__getitem__(self, a)
        return item if isinstance(item, NodeCells) else None

    def __getitem__(self, a: Any) -> Any:
        if isinstance(a, slice):
            return tuple(self[i] for i in range(*a.indices(len(self))))
        item = tuple.__getitem__(self, a)
        if not isinstance(item, NodeCells):
            return item
        cache = self.__dict__.setdefault("_leaf_sets", {})
        a = a % len(self)
        if a not in cache:
            cache[a] = item.leaf_sets()
        return cache[a]

    def __iter__(self) -> Iterator[Any]:
        for a in range(len(self)):
            yield self[a]

    def take(self, rows: np.ndarray) -> CatSets:
        return CatSets(
            item.take(rows) if isinstance(item, NodeCells) else item[rows]
            for item in tuple.__iter__(self)
        )


def cat_distinct(cells: GeneralizedQI, a: int) -> tuple[np.ndarray, np.ndarray, sp.csr_array]:
    """(reps, group, sets) of categorical attribute a: the first row of each distinct cell,
    each row's cell number and the value sets of the distinct cells. From the nodes when the
    attribute publishes hierarchy nodes (never the rows × leaves matrix), else from
    ``distinct_rows``. O(n log n + nnz)."""
    nodes = cat_nodes(cells, a)
    if nodes is not None:
        return nodes.distinct()
    sets = cells.cat_sets[a]
    reps, group = distinct_rows(sets)
    return reps, group, sp.csr_array(sets[reps])


def cat_nodes(cells: GeneralizedQI, a: int) -> NodeCells | None:
    """Categorical attribute a's cells as hierarchy nodes, None when held as value sets."""
    sets = cells.cat_sets
    return sets.nodes(a) if isinstance(sets, CatSets) else None


@dataclass(frozen=True)
class GeneralizedQI:
    """The QI part of a release, aligned with ``EncodedQI``'s attributes.

    ``num_lo``/``num_hi`` are (n, dn) inclusive bounds; ``cat_sets[a]`` is an n × |A| 0/1 CSR
    matrix of the labels in each cell (codes of the original domain; a parsed release may use
    extra codes ≥ |A| for labels absent from the original). ``num_star``/``cat_star`` mark
    suppressed cells, whose bounds/sets are ignored. ``cat_sets`` may be a :class:`CatSets`
    holding hierarchy attributes as :class:`NodeCells` (``cat_nodes``): indexing it still
    gives the CSR leaf sets, built on first use.
    """

    num_lo: np.ndarray
    num_hi: np.ndarray
    num_star: np.ndarray
    cat_sets: tuple[sp.csr_array, ...]
    cat_star: np.ndarray

    @property
    def n(self) -> int:
        return int(self.num_lo.shape[0])

    def take(self, rows: np.ndarray) -> GeneralizedQI:
        """Rows in a new order (e.g. the publication shuffle)."""
        sets = self.cat_sets
        return GeneralizedQI(
            self.num_lo[rows],
            self.num_hi[rows],
            self.num_star[rows],
            sets.take(rows) if isinstance(sets, CatSets) else tuple(s[rows] for s in sets),
            self.cat_star[rows],
        )


def published_groups(published: GeneralizedQI) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Identical published rows: (reps, group, mult) with ``reps[g]`` the first row of group g,
    ``group[j]`` the group of row j and ``mult[g]`` its size, groups numbered in order of their
    first row.

    Two rows share a group only if every array of ``published`` the compatibility kernel reads
    holds the same bits for both (bounds, stars, and the label set of every categorical cell,
    duplicates and order of the stored indices aside; a suppressed cell's stored bounds or
    labels are ignored, as the kernel ignores them): then every original is compatible with
    both or with neither. Every field of :class:`GeneralizedQI` enters the key, so a field
    added later cannot be forgotten. Label sets are keyed by (size, a 64-bit random-weight
    hash), whole rows by a 64-bit random-weight hash of that key, and every row is then compared
    exactly with the first row of its hash (all key columns, every label of every set); the rows
    that differ (a collision) are grouped among themselves by the same procedure with fresh
    weights, so identical rows always share a group and different rows never do. O(n·d + n log n
    + nnz) (a collision has probability about n²/2⁶⁴ and adds the loners' cost again).
    """
    import dataclasses

    published = _blank_stars(published)
    n = published.n
    columns: list[np.ndarray] = []
    sets: list[sp.csr_array] = []
    for field in dataclasses.fields(published):
        value = getattr(published, field.name)
        if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == n:
            flat = np.ascontiguousarray(value.reshape(n, -1))
            if flat.dtype.itemsize == 8:
                columns.append(flat.view(np.int64))
            else:
                columns.append(flat.astype(np.int64))
        elif isinstance(value, CatSets):  # a node attribute is keyed by its leaf set (span)
            for a in range(len(value)):
                nodes = value.nodes(a)
                if nodes is not None:  # a suppressed cell's node is not read
                    columns.append(nodes.keys(published.cat_star[:, a]).reshape(n, 1))
                    continue
                m = value[a]
                m = sp.csr_array(
                    (np.ones(len(m.indices), np.int8), m.indices, m.indptr), shape=m.shape
                )
                m.sum_duplicates()
                sets.append(m)
        elif isinstance(value, tuple) and all(sp.issparse(m) for m in value):
            for m in value:
                m = sp.csr_array(
                    (np.ones(len(m.indices), np.int8), m.indices, m.indptr), shape=m.shape
                )
                m.sum_duplicates()  # sorted, unique labels per row
                sets.append(m)
        else:  # an unknown field: no grouping (always exact)
            return np.arange(n), np.arange(n), np.ones(n, np.int64)
    rng = np.random.default_rng()
    weights = rng.integers(1, 2**62, max([m.shape[1] for m in sets] + [1]))
    for m in sets:
        sizes = np.diff(m.indptr)
        with np.errstate(over="ignore"):  # per-row sums by a running sum (np.add.at is slow)
            run = np.concatenate([[0], np.cumsum(weights[m.indices])])
            hashed = run[m.indptr[1:]] - run[m.indptr[:-1]]
        columns.append(np.stack([sizes, hashed], axis=1))
    if n == 0:
        return np.arange(0), np.arange(0), np.ones(0, np.int64)
    key = np.hstack(columns) if columns else np.zeros((n, 1), np.int64)
    mix = rng.integers(1, 2**62, key.shape[1]) | 1
    with np.errstate(over="ignore"):
        hashed = (key * mix).sum(axis=1)  # wraps modulo 2**64
    _, first, inverse = np.unique(hashed, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    rep = first[inverse]  # the first row of the same hash, for every row
    same = (key == key[rep]).all(axis=1)  # exact: a collision leaves the row on its own
    for m in sets:  # exact check of every row's label sets against its group's first row
        sizes = np.diff(m.indptr)  # equal to the first row's (part of the key)
        ptr = np.asarray(m.indptr, np.int64)
        shift = np.repeat(ptr[rep] - ptr[:-1], sizes)  # from each label to the first row's
        shift += np.arange(len(m.indices))
        differs = m.indices[shift] != m.indices
        if differs.any():
            same[np.searchsorted(ptr, np.flatnonzero(differs), side="right") - 1] = False
    group = inverse.copy()
    loners = np.flatnonzero(~same)
    if len(loners):  # rows whose hash another row shares: grouped among themselves, freshly
        _, sub, _ = published_groups(published.take(loners))
        group[loners] = len(first) + sub
    # renumber groups in order of their first row
    _, reps, group = np.unique(group, return_index=True, return_inverse=True)
    order = np.argsort(reps, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    group = rank[group.reshape(-1)]
    reps = reps[order]
    mult = np.bincount(group, minlength=len(reps)).astype(np.int64)
    return reps.astype(np.int64), group.astype(np.int64), mult


def _blank_stars(cells: GeneralizedQI) -> GeneralizedQI:
    """``cells`` with the stored bounds and labels of suppressed cells cleared (a ``*`` matches
    every value whatever is stored under it). O(n·d + nnz)."""
    import dataclasses

    if cells.n == 0:
        return cells
    return dataclasses.replace(
        cells,
        num_lo=np.where(cells.num_star, 0.0, cells.num_lo),
        num_hi=np.where(cells.num_star, 0.0, cells.num_hi),
        cat_sets=CatSets(
            _clear_rows(cells.cat_sets, a, cells.cat_star[:, a]) for a in range(len(cells.cat_sets))
        ),
    )


def _clear_rows(
    cat_sets: tuple[sp.csr_array, ...], a: int, rows: np.ndarray
) -> sp.csr_array | NodeCells:
    """Attribute a's cells with the labels of the rows where the mask ``rows`` is set removed
    (node cells: their node set to −1, never expanded into leaves). O(nnz) or O(n)."""
    held = cat_sets.nodes(a) if isinstance(cat_sets, CatSets) else None
    if held is not None:
        return NodeCells(held.tree, np.where(rows, -1, held.nodes), held.width)
    out = sp.csr_array(cat_sets[a], copy=True)
    out.data[np.repeat(rows, np.diff(out.indptr))] = 0
    out.eliminate_zeros()
    return out


def concat_cells(parts: list[GeneralizedQI]) -> GeneralizedQI:
    """The rows of ``parts`` one after the other (all coded in the same domains)."""
    n_cat = len(parts[0].cat_sets)
    items: list[sp.csr_array | NodeCells] = []
    for a in range(n_cat):
        nodes = [cat_nodes(p, a) for p in parts]
        first = nodes[0]
        if first is not None and all(x is not None and x.tree is first.tree for x in nodes):
            joined = np.concatenate([x.nodes for x in nodes if x is not None])
            items.append(NodeCells(first.tree, joined, max(x.width for x in nodes if x)))
            continue
        width = max(int(p.cat_sets[a].shape[1]) for p in parts)
        items.append(
            sp.csr_array(sp.vstack([_widen(p.cat_sets[a], width) for p in parts], format="csr"))
        )
    sets = CatSets(items)
    return GeneralizedQI(
        np.concatenate([p.num_lo for p in parts]),
        np.concatenate([p.num_hi for p in parts]),
        np.concatenate([p.num_star for p in parts]),
        sets,
        np.concatenate([p.cat_star for p in parts]),
    )


def _widen(m: sp.csr_array, width: int) -> sp.csr_array:
    return sp.csr_array((m.data, m.indices, m.indptr), shape=(m.shape[0], width))


def recode(graph: GeneralizationGraph, qi: EncodedQI) -> GeneralizedQI:
    """Cells of every published record from the originals the graph maps to it.

    A cell is suppressed (``*``) when one of those originals has a missing value in its
    attribute (a missing value is compatible with ``*`` only; docs/guarantees/missing.md);
    otherwise it is the range or set of their values (closed under the hierarchy when its
    nodes are published).

    A graph stored as classes (``GeneralizationGraph.from_classes``: Mondrian, the classes of
    the sensitive models) is recoded once per class from its member list, never from its
    Σ m² edges: O(n·d + n log n).

    Complexity: O(E·d) time and O(E + n·d) memory for E graph edges (plus O(nnz·L) per
    hierarchy of L levels).
    """
    classes = graph.classes
    if classes is not None:
        rows, cols = classes
        members, indptr = class_members(rows)
        per_class = sp.csr_array(
            (np.ones(len(members), np.int8), members, indptr), shape=(len(indptr) - 1, graph.n)
        )
        return _recode_members(per_class, qi).take(cols)
    members = graph.published_members()
    n = graph.n
    if n and np.any(np.diff(members.indptr) == 0):
        raise ValueError("every published record needs at least one original")
    reps, group = _same_members(members)
    if len(reps) < n:  # e.g. Mondrian's bicliques: every member of a class has the same cells
        return _recode_members(sp.csr_array(members[reps]), qi).take(group)
    return _recode_members(members, qi)


def _same_members(members: sp.csr_array) -> tuple[np.ndarray, np.ndarray]:
    """Published rows adjacent to exactly the same originals: (reps, group) with ``reps[g]``
    the first row of group g and ``group[j]`` the group of row j. Proposed by (degree, a
    random-weight hash of the sorted neighbours), then compared exactly with the group's first
    row; a row that differs (a collision) stays on its own. O(E log E) for E edges."""
    n = members.shape[0]
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    m = sp.csr_array(members)
    if not m.has_sorted_indices:
        m = sp.csr_array(members, copy=True)
        m.sort_indices()
    sizes = np.diff(m.indptr)
    weights = np.random.default_rng().integers(1, 2**62, max(m.shape[1], 1))
    # Row sums and the exact comparison by a compiled pass, O(n) extra memory (issue 38: the
    # per-edge int64 arrays of the numpy version were a peak of large-k runs); the sums are
    # ``np.add.reduceat``'s, wrapping on overflow as it does.
    with np.errstate(over="ignore"):
        hashed = _row_sums(m.indptr, m.indices, weights)
        hashed = hashed * 1_000_003 + sizes
    _, first, inverse = np.unique(hashed, return_index=True, return_inverse=True)
    rep = first[inverse.reshape(-1)]
    same = _same_rows(m.indptr, m.indices, rep)
    key = np.where(same, rep, n + np.arange(n))
    _, reps, group = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(reps, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return reps[order], rank[group.reshape(-1)]


def _recode_members(members: sp.csr_array, qi: EncodedQI) -> GeneralizedQI:
    # compiled passes over each published record's members, reading the originals through
    # the member indices (issue 38: the n·k gathers, masks and reduceats of numpy were most
    # of the recoding, on the main thread while the privacy step's walks ran)
    indptr, idx = members.indptr.astype(np.int64), members.indices.astype(np.int64)
    n = members.shape[0]
    lo, hi, num_star = _member_bounds(
        indptr, idx, np.ascontiguousarray(qi.num, np.float64), np.ascontiguousarray(qi.num_missing)
    )
    cat_star = np.zeros((n, qi.cat.shape[1]), bool)
    sets: list[sp.csr_array | NodeCells] = []
    for a, tree in enumerate(qi.cat_hierarchies()):
        card = int(qi.cat_card[a])
        star, ptr, values = _distinct_sets(
            indptr, idx, np.ascontiguousarray(qi.cat[:, a]),
            np.ascontiguousarray(qi.cat_missing[:, a]), card,
        )  # fmt: skip
        cat_star[:, a] = star
        m = sp.csr_array((np.ones(len(values), np.int8), values, ptr), shape=(n, card))
        m.has_sorted_indices = True
        sets.append(m if tree is None else _close(tree, m, cat_star[:, a]))
    return GeneralizedQI(lo, hi, num_star, CatSets(sets), cat_star)


@njit(cache=True, nogil=True)
def _member_bounds(indptr, idx, num, missing):  # pragma: no cover - compiled
    """Per published record j and numeric attribute a: the bounds of its members' present
    values and whether a member's value is missing (the cell suppressed, bounds 0 then: a
    placeholder). O(members · d)."""
    n, d = len(indptr) - 1, num.shape[1]
    lo = np.empty((n, d))
    hi = np.empty((n, d))
    star = np.zeros((n, d), np.bool_)
    for j in range(n):
        for a in range(d):
            low, high, gone = np.inf, -np.inf, False
            for p in range(indptr[j], indptr[j + 1]):
                i = idx[p]
                if missing[i, a]:
                    gone = True
                else:
                    v = num[i, a]
                    low = min(low, v)
                    high = max(high, v)
            star[j, a] = gone
            lo[j, a] = 0.0 if gone else low
            hi[j, a] = 0.0 if gone else high
    return lo, hi, star


@njit(cache=True, nogil=True)
def _distinct_sets(indptr, idx, codes, missing, card):  # pragma: no cover - compiled
    """Per published record j: whether a member's value is missing (the cell suppressed, its
    set empty) and else its members' distinct ``codes``, sorted: the (indptr, indices) of the
    0/1 matrix of each published record's value set. A stamp per value (no sort of all the
    slots): O(members + Σ s_j log s_j) for sets of s_j values, O(card) memory besides the
    output."""
    n = len(indptr) - 1
    stamp = np.full(card, -1, np.int64)
    star = np.zeros(n, np.bool_)
    out_ptr = np.zeros(n + 1, np.int64)
    out = np.empty(len(idx), np.int64)
    c = 0
    for j in range(n):
        for p in range(indptr[j], indptr[j + 1]):
            star[j] |= missing[idx[p]]
        start = c
        if not star[j]:
            for p in range(indptr[j], indptr[j + 1]):
                v = codes[idx[p]]
                if stamp[v] != j:
                    stamp[v] = j
                    out[c] = v
                    c += 1
            out[start:c].sort()
        out_ptr[j + 1] = c
    return star, out_ptr, out[:c]


def _close(tree: Hierarchy, sets: sp.csr_array, star: np.ndarray) -> NodeCells:
    """The lowest node covering each cell's values (−1 for a suppressed cell: it has no
    lowest covering node), kept as nodes: the leaves under them are never listed per row.
    O(nnz·L) for the originals' values nnz (not the leaves under the nodes)."""
    nodes = np.full(len(star), -1, np.int64)
    live = np.flatnonzero(~star)
    if len(live):
        nodes[live] = tree.lowest_nodes(sets[live] if len(live) < len(star) else sets)
    return NodeCells(tree, nodes, int(sets.shape[1]))


_DISTINCT: dict[int, tuple[Any, tuple[np.ndarray, np.ndarray]]] = {}
"""``distinct_rows`` of the matrices alive, by id (a release's leakage check and utility
headline read the same cells)."""


def distinct_rows(sets: sp.csr_array) -> tuple[np.ndarray, np.ndarray]:
    """(reps, group): the first row of each distinct set and each row's set number. Keyed by
    the set size, its first and last stored label and a sum of random 62-bit label weights
    (wrapping): two different sets share a key with probability about 2^-62 — callers whose
    result is verified afterwards (formatting) or that report figures (leakage, headline)
    accept that. Computed once per matrix object while it lives. O(nnz + n log n)."""
    key = id(sets)
    hit = _DISTINCT.get(key)
    if hit is not None and hit[0]() is sets:
        return hit[1]
    result = _distinct_rows(sets)

    def forget(_: object, key: int = key) -> None:
        _DISTINCT.pop(key, None)

    try:
        ref = weakref.ref(sets, forget)
    except TypeError:  # not weak-referenceable: no cache
        return result
    _DISTINCT[key] = (ref, result)
    return result


def _distinct_rows(sets: sp.csr_array) -> tuple[np.ndarray, np.ndarray]:
    n = sets.shape[0]
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    ptr = np.asarray(sets.indptr, np.int64)
    idx = np.asarray(sets.indices, np.int64)
    size = np.diff(ptr)
    filled = size > 0
    first = (
        np.where(filled, idx[np.minimum(ptr[:-1], max(len(idx) - 1, 0))], -1)
        if len(idx)
        else np.full(n, -1)
    )
    last = np.where(filled, idx[np.maximum(ptr[1:] - 1, 0)], -1) if len(idx) else np.full(n, -1)
    w = np.random.default_rng().integers(1, 2**62, max(int(sets.shape[1]), 1))
    with np.errstate(over="ignore"):
        cum = np.concatenate([[0], np.cumsum(w[idx])])
        hashed = cum[ptr[1:]] - cum[ptr[:-1]]
    keys = np.stack([size, first, last, hashed], axis=1)
    _, group, counts = group_rows(keys)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    reps = np.argsort(group, kind="stable")[starts]  # the first row of each group
    return reps.astype(np.int64), group


@njit(cache=True, nogil=True)
def _row_sums(indptr, indices, weights):  # pragma: no cover - compiled
    """``np.add.reduceat(weights[indices], indptr[:-1])`` without the per-edge array (an
    empty row takes the next row's first weight, as reduceat gives)."""
    n = len(indptr) - 1
    out = np.zeros(n, np.int64)
    for i in range(n):
        a, b = indptr[i], indptr[i + 1]
        if a == b:
            if a < len(indices):
                out[i] = weights[indices[a]]
            continue
        total = np.int64(0)
        for p in range(a, b):
            total += weights[indices[p]]
        out[i] = total
    return out


@njit(cache=True, nogil=True)
def _same_rows(indptr, indices, rep):  # pragma: no cover - compiled
    """Whether each row of a CSR matrix (sorted indices) equals row ``rep[i]``."""
    n = len(indptr) - 1
    same = np.zeros(n, np.bool_)
    for i in range(n):
        a, r = indptr[i], indptr[rep[i]]
        size = indptr[i + 1] - a
        if size != indptr[rep[i] + 1] - r:
            continue
        ok = True
        for t in range(size):
            if indices[a + t] != indices[r + t]:
                ok = False
                break
        same[i] = ok
    return same
