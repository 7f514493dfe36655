"""The attacker's view of a release: which published rows could each person be.

Every kind of release answers the same question from the published data and the original
alone. The attacker knows every person's quasi-identifiers and sees the whole release; person
i is *compatible* with published row j iff j could have been made from i (a table's cells
contain i's values, a set record's possible worlds hold i's items, a relational record both).
The release is k-anonymous in the nonreciprocal sense iff this compatibility graph has a
k-factor (Doka et al. §2.2; Wong et al.), and i's *candidates* — the rows that can be i's in
some world consistent with the release — are the compatible rows that lie in some perfect
matching (Dulmage–Mendelsohn; Choromanski et al. Lemma 4.1 and §4).

Compatibility depends only on a person's values and a row's published cells, so identical
originals are compatible with the same rows and identical published rows with the same
originals: the view is kept on **groups** — originals grouped by identical values (group ids
and counts), published rows grouped by identical cells (group ids and counts) — with the
compatibility between the groups as a sparse 0/1 matrix, each pair standing for a complete
bipartite block of people × rows. A kind supplies only that compatibility (``tables.verify``:
cell containment; ``sets.verify``: set containment; ``relational.verify``: the joint test);
everything else — the k-factor verdict, the candidates, the class sizes, the figures per person
— is computed here, once per view, and never on an n × n structure.

References
----------
K. Doka, M. Xue, D. Tsoumakos, P. Karras. "k-Anonymization by Freeform Generalization".
ASIA CCS 2015, §2.2 (the compatibility graph and its k-factor).
W. K. Wong, N. Mamoulis, D. W. Cheung. "Non-homogeneous generalization in privacy preserving
data publishing". SIGMOD 2010 (k-anonymity as k disjoint assignments).
K. Choromanski, T. Jebara, K. Tang. "Adaptive Anonymity via b-Matching". NIPS 2013, Lemma 4.1
(the edges an attacker can rule out: those in no perfect matching) and §4.
A. L. Dulmage, N. S. Mendelsohn. "Coverings of bipartite graphs". Canad. J. Math. 10, 1958;
T. Tassa. "Finding all maximally-matchable edges in a bipartite graph". TCS 423, 2012.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numba import njit

from anonymatch.core.matching import has_k_factor, k_factor_in_blocks


def group_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Identical rows of a 2-D numeric array: (distinct rows, inverse, counts).

    The result of ``np.unique(keys, axis=0, return_inverse=True, return_counts=True)`` (the
    same rows, order, inverse and counts; rows equal under ``==`` merge, as there), by
    ``np.lexsort`` on the columns: ``np.unique`` sorts the rows as structured values, 4x slower
    on Adult.

    Parameters
    ----------
    keys : numpy.ndarray
        n × d numeric array without NaN (a table's encoded QIs: missing values as +inf / −1).

    Returns
    -------
    tuple of numpy.ndarray
        The U distinct rows in lexicographic order, ``inverse`` (row i is distinct row
        ``inverse[i]``, int64) and ``counts`` (U).

    Notes
    -----
    Time O(n·d log n), memory O(n·d).

    Examples
    --------
    >>> import numpy as np
    >>> uniq, inverse, counts = group_rows(np.array([[2.0, 1.0], [1.0, 5.0], [2.0, 1.0]]))
    >>> uniq.tolist(), inverse.tolist(), counts.tolist()
    ([[1.0, 5.0], [2.0, 1.0]], [1, 0, 1], [1, 2])
    """
    n, d = keys.shape
    if n == 0 or d == 0:
        uniq, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
        return uniq, inverse.reshape(-1), counts
    order = np.lexsort(keys.T[::-1])  # the first column is the primary key
    rows = keys[order]
    new = np.empty(n, bool)
    new[0] = True
    np.any(rows[1:] != rows[:-1], axis=1, out=new[1:])
    inverse = np.empty(n, np.int64)
    inverse[order] = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    return rows[starts], inverse, np.diff(np.append(starts, n))


def group_sets(matrix: sp.csr_array) -> tuple[sp.csr_array, np.ndarray, np.ndarray]:
    """Identical rows of a sparse 0/1 matrix (item sets): (distinct rows, counts, inverse).

    Parameters
    ----------
    matrix : scipy.sparse.csr_array
        n × b bitmap, one row per record (its items).

    Returns
    -------
    tuple
        The U distinct rows (CSR, sorted indices) in order of first occurrence, ``counts`` (U,
        int64) and ``inverse`` (row i is distinct row ``inverse[i]``, int64).

    Notes
    -----
    One dictionary lookup per row: time O(total items), memory O(total items).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> m = sp.csr_array([[1, 0, 1], [0, 1, 0], [1, 0, 1]])
    >>> uniq, counts, inverse = group_sets(m)
    >>> uniq.shape, counts.tolist(), inverse.tolist()
    ((2, 3), [2, 1], [0, 1, 0])
    """
    m = sp.csr_array(matrix)
    m.sort_indices()
    seen: dict[bytes, int] = {}
    inverse = np.empty(m.shape[0], np.int64)
    first: list[int] = []
    ind, ptr = m.indices.astype(np.int64), m.indptr
    for i in range(m.shape[0]):
        key = ind[ptr[i] : ptr[i + 1]].tobytes()
        u = seen.get(key)
        if u is None:
            u = seen[key] = len(first)
            first.append(i)
        inverse[i] = u
    counts = np.bincount(inverse, minlength=len(first)).astype(np.int64)
    uniq = sp.csr_array(m[np.asarray(first, np.int64)])
    uniq.sort_indices()
    return uniq, counts, inverse


@dataclass(frozen=True, eq=False)
class AttackerView:
    """Originals × published rows as the attacker sees them, on groups of identical ones.

    Parameters
    ----------
    c : scipy.sparse.csr_array
        U × G 0/1 matrix (int8, sorted indices): ``c[u, g] = 1`` iff the originals of group u
        are compatible with the published rows of group g — all of them with all of them.
    counts : numpy.ndarray
        Size of each original group (U, int64).
    inverse : numpy.ndarray
        The group of each original (n, int64).
    mult : numpy.ndarray
        Size of each published group (G, int64).
    group : numpy.ndarray
        The group of each published row (n_published, int64).

    Notes
    -----
    Build it with :meth:`build` (which normalizes ``c``) or :meth:`singletons`. The k-factor
    flows and the candidates are computed once and kept in the view. Memory O(n + pairs
    between groups): a release of one class of n identical rows costs O(n), not n² pairs.

    References
    ----------
    Doka et al., ASIA CCS 2015, §2.2; Choromanski et al., NIPS 2013, Lemma 4.1.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> view = AttackerView.singletons(sp.csr_array(np.ones((3, 3))))
    >>> view.has_k_factor(3), view.candidates().per_original().tolist()
    (True, [3, 3, 3])
    """

    c: sp.csr_array
    counts: np.ndarray
    inverse: np.ndarray
    mult: np.ndarray
    group: np.ndarray
    _cache: dict[Any, Any] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def build(
        cls,
        c: sp.sparray | sp.spmatrix,
        counts: np.ndarray,
        inverse: np.ndarray,
        mult: np.ndarray | None = None,
        group: np.ndarray | None = None,
    ) -> AttackerView:
        """The view of a U × G compatibility between groups; published rows ungrouped (one
        group each) when ``mult`` and ``group`` are None. ``c`` becomes 0/1 int8 with sorted,
        unique indices. O(pairs between groups + n)."""
        m = sp.csr_array(c)
        m.sum_duplicates()
        m = sp.csr_array((np.ones(len(m.indices), np.int8), m.indices, m.indptr), shape=m.shape)
        m.eliminate_zeros()
        m.sort_indices()
        if mult is None or group is None:
            mult = np.ones(m.shape[1], np.int64)
            group = np.arange(m.shape[1], dtype=np.int64)
        return cls(
            m,
            np.asarray(counts, np.int64),
            np.asarray(inverse, np.int64).reshape(-1),
            np.asarray(mult, np.int64),
            np.asarray(group, np.int64).reshape(-1),
        )

    @classmethod
    def singletons(cls, c: sp.sparray | sp.spmatrix) -> AttackerView:
        """The person-level view of an n × n_published compatibility matrix: every person and
        every row a group of its own. O(n + pairs)."""
        n, n_pub = c.shape
        return cls.build(
            c,
            np.ones(n, np.int64),
            np.arange(n, dtype=np.int64),
            np.ones(n_pub, np.int64),
            np.arange(n_pub, dtype=np.int64),
        )

    @property
    def n(self) -> int:
        """Number of originals."""
        return len(self.inverse)

    @property
    def n_published(self) -> int:
        """Number of published rows."""
        return len(self.group)

    def pairs(self) -> int:
        """Compatible (original group, published row) pairs: the ``nnz`` of :meth:`expanded`,
        counted without building it. O(pairs between groups) time, O(G) memory (issue 38:
        no per-pair copy)."""
        return int(_row_sums(self.c.indptr, self.c.indices, self.mult).sum())

    def person_pairs(self) -> int:
        """Compatible (person, published row) pairs: the ``nnz`` of :meth:`person_matrix`,
        counted without building it. O(pairs between groups)."""
        return int(self.counts @ self.per_original())

    def per_original(self) -> np.ndarray:
        """Compatible published rows of each original group (U, int64; per person:
        ``per_original()[inverse]``). O(pairs between groups)."""
        return _row_sums(self.c.indptr, self.c.indices, self.mult)

    def per_published(self) -> np.ndarray:
        """Compatible originals of each published group (G, int64; per row:
        ``per_published()[group]``). O(pairs between groups) time, O(G) memory."""
        return _column_sums(self.c.indptr, self.c.indices, self.counts, self.c.shape[1])

    def class_sizes(self) -> tuple[np.ndarray, np.ndarray]:
        """Sizes of the classes of identical originals and of identical published rows, per
        person and per row: (``counts[inverse]``, ``mult[group]``). O(n)."""
        return self.counts[self.inverse], self.mult[self.group]

    def expanded(self) -> sp.csr_array:
        """The U × n_published matrix: one column per published row. O(pairs)."""
        if len(self.mult) == len(self.group) and np.array_equal(
            self.group, np.arange(len(self.group))
        ):
            return self.c.copy()
        return sp.csr_array(self.c[:, self.group])

    def person_matrix(self) -> sp.csr_array:
        """The person × published-row 0/1 matrix (int8, sorted indices). Memory O(Σ over
        people of their compatible rows): n² for a release of one class — for small inputs
        and tests; every figure of the view is computed without it."""
        m = sp.csr_array(self.c[self.inverse][:, self.group])
        m.sort_indices()
        return sp.csr_array(m.astype(np.int8))

    def k_factor_flow(self, k: int) -> int:
        """Maximum flow of the k-factor network: a k-factor (k disjoint perfect matchings of
        originals and published rows) exists iff it equals k·n.

        Computed once per k on the contracted network of ``core.matching.has_k_factor``
        (the same value as on the person-level network, for every input).

        Parameters
        ----------
        k : int
            The level.

        Returns
        -------
        int
            The flow value (0 when the numbers of originals and rows differ).

        Raises
        ------
        OverflowError
            If k·n exceeds scipy's int32 capacities.

        Notes
        -----
        Dinic's algorithm on O(U + G + pairs between groups) arcs.

        References
        ----------
        Doka et al., ASIA CCS 2015, §2.2 (the k-factor of the compatibility graph).

        Examples
        --------
        >>> import numpy as np
        >>> import scipy.sparse as sp
        >>> view = AttackerView.singletons(sp.csr_array(np.eye(3)))
        >>> view.k_factor_flow(1), view.k_factor_flow(2)
        (3, 3)
        """
        key = ("flow", int(k))
        if key not in self._cache:
            if self.n != self.n_published:
                self._cache[key] = 0
            else:
                self._cache[key] = has_k_factor(self.c, self.counts, int(k), self.mult)
        return int(self._cache[key])

    def has_k_factor(self, k: int) -> bool:
        """Whether the compatibility graph has a k-factor: as many rows as originals, at least
        k compatible rows per original and originals per row, and a flow of k·n
        (:meth:`k_factor_flow`). O(pairs between groups) plus the flow when the degrees
        allow it."""
        if self.n != self.n_published:
            return False
        if self.n == 0:
            return True
        if self.per_original().min() < k or self.per_published().min() < k:
            return False
        return self.k_factor_flow(k) == k * self.n

    def k_factor_in_blocks(self, k: int, row_block: np.ndarray, col_block: np.ndarray) -> bool:
        """Whether the graph has a k-factor made of k-factors inside given blocks (a block
        label per original and per published row): True proves a k-factor of the whole graph,
        False proves nothing (``core.matching.k_factor_in_blocks``). Flows on the blocks'
        disjoint contracted networks, batch by batch of whole blocks, O(n + pairs inside the
        blocks)."""
        return k_factor_in_blocks(self.c, self.inverse, self.group, int(k), row_block, col_block)

    def is_k_factor(self, k: int, factor: sp.csr_array) -> bool:
        """Whether ``factor`` (person × published row, n × n) is a k-factor of the expanded
        compatibility graph: every person and every row in exactly k of its pairs, no pair
        twice, every pair compatible. True proves the graph has a k-factor without a flow
        (the release's own graph, checked edge by edge against this view: it can only make
        the check cheaper, never make a release pass that has none); False proves nothing.
        O(n log n + pairs + E) for E = k·n pairs, one compiled pass, O(n) memory."""
        n = self.n
        if factor.shape != (n, n) or factor.nnz != k * n:
            return False
        ptr, cols = factor.indptr, factor.indices
        if not np.array_equal(np.diff(ptr), np.full(n, k)):
            return False
        if not np.array_equal(np.bincount(cols, minlength=n), np.full(n, k)):
            return False
        people = np.argsort(self.inverse, kind="stable")  # each original's row marked once
        return bool(_pairs_allowed(ptr, cols, self.c.indptr, self.c.indices, self.inverse,
                                   self.group, people, self.c.shape[1]))  # fmt: skip

    def candidates(self, matching: np.ndarray | None = None) -> AttackerView | None:
        """Every person's candidates: the compatible rows that lie in some perfect matching.

        Parameters
        ----------
        matching : numpy.ndarray, optional
            A perfect matching the attacker already has (original i ↔ published row
            ``matching[i]``, every pair compatible): it replaces the max-flow. Not cached.

        Returns
        -------
        AttackerView or None
            The view restricted to the candidate pairs (same groups; ``per_original()`` is
            each group's number of candidates), or None when the compatibility graph has no
            perfect matching (no world is consistent with the release).

        Notes
        -----
        A perfect matching of the person-level graph is an integral flow source → u
        (``counts[u]``) → g → sink (``mult[g]``) of value n on the groups, and back (deal
        each u's flow to its members, each g's to its rows: the blocks are complete); by the
        same symmetry (i, j) lies in some perfect matching iff some flow of value n puts flow
        on (u(i), g(j)). Given one flow f, a flow f' with f'(u, g) > 0 exists iff f(u, g) > 0
        or the residual graph of f has a cycle through u → g, i.e. iff u and g lie in one
        strongly connected component of the digraph with an arc u → g per compatible pair and
        g → u where f > 0 — the Dulmage–Mendelsohn test on the contracted graph. Time:
        Dinic's algorithm on O(U + G + pairs between groups) arcs, then O(U + G + pairs) for
        the components; memory O(n + pairs between groups).

        References
        ----------
        Choromanski et al., NIPS 2013, Lemma 4.1 (edges in no perfect matching are ruled out);
        Dulmage & Mendelsohn (1958); Tassa (2012).

        Examples
        --------
        >>> import numpy as np
        >>> import scipy.sparse as sp
        >>> view = AttackerView.singletons(sp.csr_array(np.array([[1, 1], [0, 1]])))
        >>> view.candidates().person_matrix().toarray().tolist()
        [[1, 0], [0, 1]]
        """
        if self._cache.get("of_candidates"):  # every pair lies in some perfect matching
            return self
        if matching is not None:
            return self._candidates(None, self._flow_of(np.asarray(matching, np.int64)))
        if "candidates" not in self._cache:
            # a perfect flow this view already has (any one gives the same candidates), else
            # one max-flow, not kept (O(pairs))
            flow, carried = self._cache.get("flow"), self._cache.get("flow_nonzero")
            if flow is None and carried is not None:
                self._cache["candidates"] = self._candidates(None, carried)
            else:
                has = "flow" in self._cache
                self._cache["candidates"] = self._candidates(flow if has else self._perfect_flow())
        cand: AttackerView | None = self._cache["candidates"]
        return cand

    def perfect_flow(self) -> np.ndarray | None:
        """Per stored pair of ``c`` (sorted CSR order): the flow of one perfect matching on the
        groups, or None when there is none (computed once: Dinic on O(U + G + pairs between
        groups) arcs; none for a view of candidates, which keeps the flow it was found from,
        nor for a :meth:`restrict` of a view with a flow to a part the flow stays in).
        ``candidates_of(flow)`` takes it, or any other perfect flow."""
        carried = self._cache.get("flow_nonzero")
        if "flow" not in self._cache and carried is not None:
            # kept from the view this one was derived from, by its nonzero pairs (O(n)): laid
            # out per pair on each call, not kept (O(pairs))
            flow = np.zeros(self.c.nnz, np.int64)
            flow[carried[0]] = carried[1]
            return flow
        if "flow" not in self._cache:
            self._cache["flow"] = self._perfect_flow()
        flow_: np.ndarray | None = self._cache["flow"]
        return flow_

    def perfect_flow_nonzero(self) -> tuple[np.ndarray, np.ndarray] | None:
        """:meth:`perfect_flow` by its nonzero pairs: their positions among the stored pairs
        of ``c`` (increasing) and their flows, or None. O(n) for a view that carries its
        flow (a view of candidates, a :meth:`restrict` of one: no per-pair array), else
        :meth:`perfect_flow` and O(pairs)."""
        carried = self._cache.get("flow_nonzero")
        if "flow" not in self._cache and carried is not None:
            return carried[0], carried[1]
        flow = self.perfect_flow()
        if flow is None:
            return None
        used = np.flatnonzero(flow > 0)
        return used, flow[used]

    def candidates_of(self, flow: np.ndarray) -> AttackerView:
        """:meth:`candidates` given the flow of a perfect matching on the groups (per stored
        pair of ``c``, as :meth:`perfect_flow`), without the max-flow: one strongly connected
        components pass, O(U + G + pairs between groups); none on a view of candidates."""
        if self._cache.get("of_candidates"):
            return self
        cand = self._candidates(flow)
        assert cand is not None
        return cand

    def _perfect_flow(self) -> np.ndarray | None:
        """Per stored pair of ``c``: the flow of one perfect matching on the groups, or None.
        Dinic on O(U + G + pairs between groups) arcs."""
        from scipy.sparse.csgraph import maximum_flow

        n_u, n_g = self.c.shape
        n = self.n
        if n != int(self.mult.sum()):
            return None
        if n == 0:
            return np.zeros(self.c.nnz, np.int64)
        # The network in CSR form directly, the same matrix its COO lists gave (issue 38: the
        # int64 lists and the COO → CSR copy were the peak memory of large-k runs): row 0 the
        # source, rows 1 + u the original groups' pairs in ``c``'s sorted order, then each
        # published group → sink.
        c, counts, mult = self.c, self.counts, self.mult
        src, sink = 0, 1 + n_u + n_g
        pairs = int(c.nnz)
        indptr = np.empty(sink + 2, np.int64)
        indptr[0] = 0
        indptr[1 : 2 + n_u] = n_u + c.indptr
        indptr[2 + n_u : sink + 1] = indptr[1 + n_u] + 1 + np.arange(n_g)
        indptr[sink + 1] = indptr[sink]
        indices = np.empty(int(indptr[-1]), np.int32)
        caps = np.empty(int(indptr[-1]), np.int32)
        indices[:n_u], caps[:n_u] = 1 + np.arange(n_u), counts
        inner = slice(n_u, n_u + pairs)
        indices[inner] = c.indices
        indices[inner] += 1 + n_u
        caps[inner] = mult[c.indices]
        np.minimum(caps[inner], np.repeat(counts, np.diff(c.indptr)), out=caps[inner])
        indices[n_u + pairs :], caps[n_u + pairs :] = sink, mult
        net = sp.csr_array((caps, indices, indptr.astype(np.int32)), shape=(sink + 1, sink + 1))
        result = maximum_flow(net, src, sink, method="dinic")
        del net, indices, caps
        if int(result.flow_value) != n:
            return None
        flow = sp.csr_array(result.flow)
        return _pair_flows(flow.indptr, flow.indices, flow.data, c.indptr, c.indices, n_u)

    def _pair_index(self, people: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each (person, published row): the position of its group pair among the stored
        pairs of ``c`` (sorted CSR order) and whether it is stored (compatible).
        O(len · log pairs + pairs between groups)."""
        # a binary search in each person's group row of ``c`` (compiled; issue 38: the
        # per-pair int64 keys of every stored pair were a peak of large-k runs). The same
        # positions as a search among all stored pairs: rows are sorted and laid out in order.
        return _pair_positions(
            self.c.indptr, self.c.indices, self.inverse[people], self.group[rows]
        )

    def compatible(self, people: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Whether person ``people[t]`` is compatible with published row ``rows[t]``, for
        every t (boolean array). O(len · log pairs + pairs between groups)."""
        return self._pair_index(np.asarray(people, np.int64), np.asarray(rows, np.int64))[1]

    def restrict(self, people: np.ndarray, rows: np.ndarray) -> AttackerView:
        """The view of some people and some published rows (in the given orders): the groups
        shrink to their members among them, and empty groups go. O(n + pairs between
        groups)."""
        people, rows = np.asarray(people, np.int64), np.asarray(rows, np.int64)
        n_u, n_g = self.c.shape
        counts = np.bincount(self.inverse[people], minlength=n_u)
        mult = np.bincount(self.group[rows], minlength=n_g)
        live_u, live_g = np.flatnonzero(counts), np.flatnonzero(mult)
        new_u = np.cumsum(counts > 0) - 1
        new_g = np.cumsum(mult > 0) - 1
        # the rows live_u, columns renumbered (−1: gone) in one compiled pass (issue 38:
        # scipy's c[rows][:, cols] made two copies of the pairs); the order of ``c`` kept
        column = np.where(mult > 0, new_g, -1)
        ptr = _submatrix_ptr(self.c.indptr, self.c.indices, live_u, column)
        index = np.int32 if max(len(live_u), len(live_g), int(ptr[-1])) < 2**31 else np.int64
        sub_idx, sub_data = _submatrix(self.c.indptr, self.c.indices, self.c.data, live_u,
                                       column, ptr, np.empty(0, index))  # fmt: skip
        c = sp.csr_array((sub_data, sub_idx, ptr.astype(index)), shape=(len(live_u), len(live_g)))
        c.sort_indices()
        sub = AttackerView(
            c,
            counts[live_u].astype(np.int64),
            new_u[self.inverse[people]],
            mult[live_g].astype(np.int64),
            new_g[self.group[rows]],
        )
        self._carry_flow(sub, live_u, live_g)
        return sub

    def _carry_flow(self, sub: AttackerView, live_u: np.ndarray, live_g: np.ndarray) -> None:
        """Give ``sub`` (:meth:`restrict` to the groups ``live_u`` and ``live_g``) what this
        view knows of its perfect matchings when they are ``sub``'s too: the restriction keeps
        whole groups, every pair of its original groups, and as many people as rows (then a
        perfect matching's pairs of those groups stay among them and fill the rows) — e.g. a
        component of the candidate graph. Its perfect flow (no max-flow run) and, for a view
        of candidates, that every pair is a candidate (a matching of the whole through a pair
        restricts to one of ``sub``). O(n + U)."""
        lengths = np.diff(self.c.indptr)[live_u]
        if len(live_u) == 0 or not (
            np.array_equal(sub.counts, self.counts[live_u])
            and np.array_equal(sub.mult, self.mult[live_g])
            and int(sub.c.nnz) == int(lengths.sum())
            and int(sub.counts.sum()) == int(sub.mult.sum())
        ):
            return
        if self._cache.get("of_candidates"):
            sub._cache["of_candidates"] = True
        if self._cache.get("flow") is not None:
            pos = np.flatnonzero(self._cache["flow"])
            val = self._cache["flow"][pos]
        elif "flow_nonzero" in self._cache:
            pos, val = self._cache["flow_nonzero"]
        else:
            return
        u = np.searchsorted(self.c.indptr, pos, side="right") - 1
        at = np.minimum(np.searchsorted(live_u, u), len(live_u) - 1)
        inside = live_u[at] == u
        new_pos = sub.c.indptr[at[inside]] + (pos[inside] - self.c.indptr[u[inside]])
        sub._cache["flow_nonzero"] = (new_pos.astype(np.int64), val[inside].astype(np.int64))

    def _flow_of(self, matching: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The stored pairs of ``c`` (sorted CSR order) that ``matching`` uses and how many of
        its pairs each carries (a flow by its nonzero pairs). O(n log n + pairs between
        groups)."""
        at, _ = self._pair_index(np.arange(self.n), matching)
        used, values = np.unique(at, return_counts=True)
        return used.astype(np.int64), values.astype(np.int64)

    def _candidates(
        self, used_flow: np.ndarray | None, nonzero: tuple[np.ndarray, np.ndarray] | None = None
    ) -> AttackerView | None:
        """The view restricted to the pairs whose groups share a strongly connected component
        of the residual digraph of a perfect flow: ``used_flow`` per stored pair, or
        ``nonzero`` its nonzero pairs (increasing positions, values)."""
        if used_flow is None and nonzero is None:
            return None
        # nodes 0..U−1 the original groups, U..U+G−1 the published groups; arcs u → g for
        # every pair (``c``'s rows), g → u where the flow runs (at most n pairs, as per-g
        # lists): one compiled Tarjan pass on ``c``'s own arrays (issue 38: scipy's needed
        # the digraph laid out and copied as float64, 13 bytes a pair at large k).
        c = self.c
        n_u, n_g = c.shape
        if nonzero is None:
            assert used_flow is not None
            used = np.flatnonzero(used_flow > 0)
            values = used_flow[used]
        else:
            used, values = nonzero
        u_used = np.searchsorted(c.indptr, used, side="right") - 1
        g_used = c.indices[used]
        back = np.argsort(g_used, kind="stable")
        back_ptr = np.zeros(n_g + 1, np.int64)
        np.cumsum(np.bincount(g_used, minlength=n_g), out=back_ptr[1:])
        none = np.full(n_g, -1, np.int64)
        scc = strong_components(c.indptr, c.indices, back_ptr, u_used[back], none, none)
        keep, kept = _same_component(c.indptr, c.indices, scc, n_u)
        del scc
        ptr = np.zeros(n_u + 1, np.int64)
        np.cumsum(kept, out=ptr[1:])
        index = np.int32 if max(n_u, n_g, int(ptr[-1])) < 2**31 else np.int64
        # every pair a candidate (common for a k-regular freeform release at large k): the
        # pairs' indices shared with this view's, not copied (issue 38; never written to)
        kept_all = int(ptr[-1]) == int(c.nnz)
        indices = c.indices if kept_all else c.indices[keep]
        cand = sp.csr_array(
            (np.ones(int(ptr[-1]), np.int8), indices.astype(index, copy=False), ptr.astype(index)),
            shape=(n_u, n_g),
        )
        cand.has_sorted_indices = True
        view = AttackerView(cand, self.counts, self.inverse, self.mult, self.group)
        # the flow runs on candidate pairs only (u → g → u is a cycle): a perfect flow of the
        # candidates' view too, kept by its nonzero pairs (O(n)) for ``perfect_flow``
        view._cache["flow_nonzero"] = (_kept_positions(keep, used), values)
        view._cache["of_candidates"] = True  # its candidates are itself
        return view


@njit(cache=True, nogil=True)
def _row_sums(indptr, indices, weight):  # pragma: no cover - compiled
    """Σ weight[indices[p]] over each row's slots of a CSR pattern (the product of the 0/1
    matrix with ``weight`` without scipy's upcast copy of its data). O(nnz), O(rows) memory."""
    n = len(indptr) - 1
    out = np.zeros(n, np.int64)
    for i in range(n):
        total = 0
        for p in range(indptr[i], indptr[i + 1]):
            total += weight[indices[p]]
        out[i] = total
    return out


@njit(cache=True, nogil=True)
def _submatrix_ptr(indptr, indices, rows, column):  # pragma: no cover - compiled
    """The row pointers of the submatrix of a CSR pattern on ``rows`` and the columns with
    ``column[g] >= 0``. O(pairs of the rows)."""
    ptr = np.zeros(len(rows) + 1, np.int64)
    for r in range(len(rows)):
        count = 0
        for p in range(indptr[rows[r]], indptr[rows[r] + 1]):
            if column[indices[p]] >= 0:
                count += 1
        ptr[r + 1] = ptr[r] + count
    return ptr


@njit(cache=True, nogil=True)
def _submatrix(indptr, indices, data, rows, column, ptr, like):  # pragma: no cover - compiled
    """The indices (``column``'s new numbers, of ``like``'s dtype) and data of the submatrix
    of ``_submatrix_ptr``, in the order of the stored pairs. O(pairs of the rows)."""
    out_idx = np.empty(ptr[-1], like.dtype)
    out_data = np.empty(ptr[-1], data.dtype)
    at = 0
    for r in range(len(rows)):
        for p in range(indptr[rows[r]], indptr[rows[r] + 1]):
            g = column[indices[p]]
            if g >= 0:
                out_idx[at] = g
                out_data[at] = data[p]
                at += 1
    return out_idx, out_data


@njit(cache=True, nogil=True)
def _column_sums(indptr, indices, weight, n_cols):  # pragma: no cover - compiled
    """Σ weight[i] over the rows i storing each column of a CSR pattern (``weight @`` the 0/1
    matrix without scipy's upcast copy of its data: issue 38). O(nnz), O(columns) memory."""
    out = np.zeros(n_cols, np.int64)
    for i in range(len(indptr) - 1):
        w = weight[i]
        for p in range(indptr[i], indptr[i + 1]):
            out[indices[p]] += w
    return out


@njit(cache=True, nogil=True)
def component_labels(indptr, indices, n_nodes, offset):  # pragma: no cover - compiled
    """The connected components of the undirected graph on ``n_nodes`` nodes whose edges join
    each row x of a CSR pattern (``indptr``, ``indices``) to node ``offset`` + ``indices[p]``:
    a label per node, numbered in the order of each component's smallest node — the labels of
    ``scipy.sparse.csgraph.connected_components`` (``connection="weak"`` for a square graph,
    ``offset`` 0; the bipartite graph of a U × G pattern with ``offset`` U), without its
    float64 copy and transpose of the edges (issue 38: the peak of large-k runs). Union–find
    whose root is always the smallest node of its set, with path halving. Time O(E log n)
    at worst, memory O(n)."""
    parent = np.arange(n_nodes)
    for x in range(len(indptr) - 1):
        for p in range(indptr[x], indptr[x + 1]):
            a, b = x, offset + np.int64(indices[p])
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            while parent[b] != b:
                parent[b] = parent[parent[b]]
                b = parent[b]
            if a < b:
                parent[b] = a
            elif b < a:
                parent[a] = b
    labels = np.empty(n_nodes, np.int64)
    count = 0
    for x in range(n_nodes):
        root = x
        while parent[root] != root:
            root = parent[root]
        if root == x:  # the smallest node of its component: a new label
            labels[x] = count
            count += 1
        else:
            labels[x] = labels[root]
    return labels


@njit(cache=True, nogil=True)
def strong_components(c_ptr, c_idx, back_ptr, back_u, dead, extra):  # pragma: no cover
    """The strongly connected components (a label per node) of the residual digraph of a flow
    on groups: nodes 0 … U − 1 the original groups, U … U + G − 1 the published groups, an arc
    u → g for every stored pair of the U × G CSR matrix (``c_ptr``, ``c_idx``) and g → u for
    the pairs the flow runs on (``back_u[back_ptr[g]:back_ptr[g + 1]]``), except the arc
    g → ``dead[g]`` and with an arc g → ``extra[g]`` added (−1: none; one flow changed along
    a path, as ``risk.known`` conditions it). Tarjan's algorithm, iteratively (``arc[v]`` the
    next out-arc of v to look at). O(U + G + pairs) time, O(U + G) memory."""
    n_u = len(c_ptr) - 1
    n_g = len(back_ptr) - 1
    n = n_u + n_g
    index = np.full(n, -1, np.int64)
    low = np.zeros(n, np.int64)
    label = np.full(n, -1, np.int64)
    arc = np.zeros(n, np.int64)
    stack = np.empty(n, np.int64)
    calls = np.empty(n, np.int64)
    counter, top, labels = 0, 0, 0
    for root in range(n):
        if index[root] >= 0:
            continue
        depth = 0
        calls[0] = root
        index[root] = counter
        low[root] = counter
        counter += 1
        stack[top] = root
        top += 1
        while depth >= 0:
            v = calls[depth]
            w = -1
            if v < n_u:
                t = c_ptr[v] + arc[v]
                if t < c_ptr[v + 1]:
                    w = n_u + c_idx[t]
                    arc[v] += 1
            else:
                gv = v - n_u
                while w < 0:
                    t = back_ptr[gv] + arc[v]
                    if t < back_ptr[gv + 1]:
                        arc[v] += 1
                        if back_u[t] != dead[gv]:
                            w = back_u[t]
                    elif t == back_ptr[gv + 1] and extra[gv] >= 0:
                        arc[v] += 1
                        w = extra[gv]
                    else:
                        break
            if w >= 0:
                if index[w] < 0:
                    index[w] = counter
                    low[w] = counter
                    counter += 1
                    stack[top] = w
                    top += 1
                    depth += 1
                    calls[depth] = w
                elif label[w] < 0 and index[w] < low[v]:
                    low[v] = index[w]
                continue
            if low[v] == index[v]:  # v roots a component: pop it
                while True:
                    top -= 1
                    y = stack[top]
                    label[y] = labels
                    if y == v:
                        break
                labels += 1
            depth -= 1
            if depth >= 0 and low[v] < low[calls[depth]]:
                low[calls[depth]] = low[v]
    return label


@njit(cache=True, nogil=True)
def _pair_flows(f_ptr, f_idx, f_val, c_ptr, c_idx, n_u):  # pragma: no cover - compiled
    """The flow on each stored pair (u, g) of ``c`` (sorted CSR order), read from the flow
    matrix of ``_perfect_flow``'s network (entry (1 + u, 1 + n_u + g), duplicates summed):
    row by row through a stamp over the published groups. O(pairs + flow entries)."""
    out = np.zeros(len(c_idx), np.int64)
    n_g = f_ptr.shape[0] - 3 - n_u
    stamp = np.zeros(n_g, np.int64)
    for u in range(n_u):
        row = 1 + u
        for p in range(f_ptr[row], f_ptr[row + 1]):
            g = f_idx[p] - 1 - n_u
            if 0 <= g < n_g:
                stamp[g] += f_val[p]
        for p in range(c_ptr[u], c_ptr[u + 1]):
            out[p] = stamp[c_idx[p]]
        for p in range(f_ptr[row], f_ptr[row + 1]):
            g = f_idx[p] - 1 - n_u
            if 0 <= g < n_g:
                stamp[g] = 0
    return out


@njit(cache=True, nogil=True)
def _same_component(indptr, indices, scc, n_u):  # pragma: no cover - compiled
    """Per stored pair (u, g) of a U × G CSR matrix: whether u and published node U + g share
    a strongly connected component; and how many pairs each row keeps. O(pairs)."""
    keep = np.zeros(len(indices), np.bool_)
    kept = np.zeros(n_u, np.int64)
    for u in range(n_u):
        for p in range(indptr[u], indptr[u + 1]):
            if scc[u] == scc[n_u + indices[p]]:
                keep[p] = True
                kept[u] += 1
    return keep, kept


@njit(cache=True, nogil=True)
def _kept_positions(keep, used):  # pragma: no cover - compiled
    """The position of each stored pair ``used`` (increasing, every one kept) among the
    pairs ``keep`` marks. O(pairs)."""
    out = np.empty(len(used), np.int64)
    count, j = 0, 0
    for p in range(len(keep)):
        if j < len(used) and p == used[j]:
            out[j] = count
            j += 1
        if keep[p]:
            count += 1
    return out


@njit(cache=True, nogil=True)
def _pair_positions(indptr, indices, u, g):  # pragma: no cover - compiled
    """For each (u[t], g[t]): its position among the stored pairs of a CSR matrix with sorted
    indices (or where it would be inserted, at most the last position) and whether it is
    stored."""
    size = len(indices)
    at = np.zeros(len(u), np.int64)
    found = np.zeros(len(u), np.bool_)
    for t in range(len(u)):
        lo, hi = indptr[u[t]], indptr[u[t] + 1]
        p = lo + np.searchsorted(indices[lo:hi], g[t])
        if p < hi and indices[p] == g[t]:
            found[t] = True
        at[t] = min(p, max(size - 1, 0))
    return at, found


@njit(cache=True, nogil=True)
def _pairs_allowed(ptr, cols, c_ptr, c_idx, inverse, group, people, n_groups):  # pragma: no cover
    """Whether every person's pairs (CSR ``ptr``, ``cols``) are strictly increasing (no pair
    twice) and compatible: group pair (inverse[i], group[j]) stored in the CSR ``c``
    (``c_ptr``, ``c_idx``; ``n_groups`` columns). The persons are taken in ``people`` order,
    those of one unique original together: its row of ``c`` is marked once, and each pair is
    one look-up (a binary search per pair was 2–3× slower on Adult at k = 100–200, issue 38).
    O(pairs of c + pairs checked), O(n_groups) memory."""
    mark = np.full(n_groups, -1, np.int64)
    marked = -1
    for i in people:
        u = inverse[i]
        if u != marked:
            for q in range(c_ptr[u], c_ptr[u + 1]):
                mark[c_idx[q]] = u
            marked = u
        last = -1
        for p in range(ptr[i], ptr[i + 1]):
            j = cols[p]
            if j <= last or mark[group[j]] != u:
                return False
            last = j
    return True
