"""Whether a strongly connected residual digraph stays strongly connected after a local change.

The digraph is that of ``core.view.strong_components``: the residual digraph of a flow on
groups, nodes 0 … U − 1 the original groups and U … U + G − 1 the published ones, an arc
u → g for every stored pair of a U × G CSR pattern and g → u for the pairs the flow runs on.
The known-person figures (``tables.risk.known``) condition such a digraph on one person's
true row a couple of hundred times: the flow changes along one short alternating path, a few
back arcs g → u lose their last unit (``dead``), a few gain one, and the person's and the
row's groups may be left empty. Recomputing the strongly connected components costs
O(pairs) per hypothesis, and on Adult at k = 100 the digraph of a component has 3 M arcs
while in every one of the 200 sampled hypotheses the component stayed one strongly connected
component apart from the emptied groups.

A **certificate** answers that case in about O(U + G): a breadth-first out-tree of the
digraph from a root (every node reachable from it) and in-tree to it (every node reaching
it), built once; 2(N − 1) arcs that prove strong connectivity as long as they all stand. A
change breaks the tree arcs it removes and isolates the emptied groups (an empty original
group keeps no arc in, an empty published group no arc out: each is its own component); the
nodes below a broken arc are then re-attached one by one through any arc of the changed
digraph from (to) a node already reached (reaching the root), in sweeps over them in
preorder. When every node is re-attached the digraph minus the emptied groups is still
strongly connected; when not (a true split), or when the sweeps do not settle
(``SWEEPS_MAX``), the caller computes the components in full. On Adult at k = 100 the trees
answered all 200 hypotheses of hungarian's, sortgreedy's and greedy's releases, and the
known-person figures took 0.3 s instead of 1.2 s (hungarian), the same figures.

Complexity: O(pairs) to build (two breadth-first searches and the transposed pattern);
O(U + G) plus the scans of the orphans' arcs per check, each stopping at its first way back.
Memory O(pairs) (the transposed pattern, int32 where it fits).

References
----------
Tarjan, "Depth-first search and linear graph algorithms", SIAM J. Comput. 1 (1972): a digraph
is strongly connected iff one node reaches all and is reached by all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

SWEEPS_MAX = 32
"""The most sweeps over the orphans a check makes before it answers "unknown" (the caller
then computes the components in full). Each sweep re-attaches one orphan at least, and the
first usually all of them (an orphan's tree parent comes before it in the sweep), so the
check costs at most a few scans of the orphans' arcs, each stopping at the first way back: on
Adult's greedy release at k = 100 every one of the 200 hypotheses was answered, in 0.15 s
of CPU in all (a bound on the orphans instead, 12.5 % of the nodes, sent 10–35 of them to
Tarjan's pass, 0.3–1.2 s). 32 sweeps also settle any digraph of up to 32 orphans a tree,
which the tests use to check the answer exactly."""


WORK_MIN = 1 << 16
"""The check gives up (answers "unknown", and the caller runs Tarjan's pass) once its sweeps
have read more orphans and arcs than a quarter of the digraph's pairs and nodes — about the
time of that pass, whose reads are sequential where the sweeps' land anywhere — but never
below this many, so that small digraphs are always settled (the tests check the answer
exactly). On Adult's greedy release at k = 10 a few hypotheses emptied a node near a tree's
root: 34,000 of 41,000 nodes orphaned, five sweeps reading 350,000 arcs, 19 ms where Tarjan
takes 5 (issue 38)."""


@njit(cache=True, nogil=True, inline="always")
def arc_span(x, into, n_u, c_ptr, back_ptr, t_ptr, in_ptr):  # pragma: no cover - compiled
    """Where node x's arcs lie in their array (read by :func:`arc_end`), out of x or, with
    ``into``, into x: an original group's out-arcs are its pairs (``c_ptr``) and its in-arcs
    the flow's back arcs (``in_ptr``, by original group); a published group's out-arcs are
    the back arcs (``back_ptr``) and its in-arcs its pairs (``t_ptr``, by published group).
    The arrays of :class:`Certificate` and ``core.view.strong_components``. O(1)."""
    if x < n_u:
        return (in_ptr[x], in_ptr[x + 1]) if into else (c_ptr[x], c_ptr[x + 1])
    g = x - n_u
    return (t_ptr[g], t_ptr[g + 1]) if into else (back_ptr[g], back_ptr[g + 1])


@njit(cache=True, nogil=True, inline="always")
def arc_end(x, into, p, n_u, c_idx, back_u, t_u, in_g):  # pragma: no cover - compiled
    """The node at the other end of x's arc at position p of :func:`arc_span`. O(1)."""
    if x < n_u:
        return n_u + np.int64(in_g[p]) if into else n_u + np.int64(c_idx[p])
    return np.int64(t_u[p]) if into else np.int64(back_u[p])


@dataclass(frozen=True)
class Certificate:
    """The out-tree and in-tree of one root of a strongly connected residual digraph, with
    the arcs a check needs to re-attach nodes: the pairs by published group (``t_ptr``,
    ``t_u``: the arcs into each g) and the flow's pairs by original group (``in_ptr``,
    ``in_g``: the arcs into each u). ``parent``, ``pre``, ``size`` and ``order`` are 2 × N:
    line 0 the out-tree, line 1 the in-tree; ``pre``/``order`` a depth-first preorder (a
    subtree is the range ``pre[x]`` … ``pre[x] + size[x]``)."""

    parent: np.ndarray
    pre: np.ndarray
    size: np.ndarray
    order: np.ndarray
    t_ptr: np.ndarray
    t_u: np.ndarray
    in_ptr: np.ndarray
    in_g: np.ndarray

    @classmethod
    def build(
        cls, c_ptr: np.ndarray, c_idx: np.ndarray, back_ptr: np.ndarray, back_u: np.ndarray
    ) -> Certificate | None:
        """The certificate of the residual digraph (``core.view.strong_components``' arrays,
        without changes), or None when it is not strongly connected (or empty). O(pairs)."""
        n_u, n_g = len(c_ptr) - 1, len(back_ptr) - 1
        if n_u == 0 or n_g == 0:
            return None
        index = np.int32 if max(n_u, n_g) < 2**31 else np.int64
        t_ptr, t_u = _transpose(c_ptr, c_idx, n_g, np.empty(0, index))
        in_ptr, in_g = _transpose(back_ptr, back_u, n_u, np.empty(0, np.int64))
        ok, parent, pre, size, order = _trees(
            c_ptr, c_idx, back_ptr, back_u, t_ptr, t_u, in_ptr, in_g
        )
        if not ok:
            return None
        return cls(parent, pre, size, order, t_ptr, t_u, in_ptr, in_g)

    def still_strong(
        self,
        c_ptr: np.ndarray,
        c_idx: np.ndarray,
        back_ptr: np.ndarray,
        back_u: np.ndarray,
        dead: np.ndarray,
        extra: np.ndarray,
        emptied: np.ndarray,
    ) -> bool:
        """Whether the digraph, with the back arcs g → ``dead[g]`` removed and g →
        ``extra[g]`` added (−1: none) and the nodes ``emptied`` (at most 2, −1: none) cut off,
        is strongly connected on the other nodes. False means "not shown" (not strongly
        connected, or not shown within ``SWEEPS_MAX`` sweeps and the reading budget of
        ``WORK_MIN``). O(U + G) plus the scans of the orphans' arcs, each stopping at its
        first way back."""
        return _still_strong(
            self.parent, self.pre, self.size, self.order, c_ptr, c_idx, back_ptr, back_u,
            self.t_ptr, self.t_u, self.in_ptr, self.in_g, dead, extra, emptied,
        )  # fmt: skip


@njit(cache=True, nogil=True)
def _transpose(ptr, idx, n_cols, like):  # pragma: no cover - compiled
    """The transpose of a CSR pattern (``ptr``, ``idx``) with ``n_cols`` columns: its CSC
    pointers and row indices (of ``like``'s dtype), each column's rows increasing. A counting
    sort, O(rows + n_cols + pairs)."""
    n_rows = len(ptr) - 1
    t_ptr = np.zeros(n_cols + 1, np.int64)
    for p in range(len(idx)):
        t_ptr[idx[p] + 1] += 1
    for j in range(n_cols):
        t_ptr[j + 1] += t_ptr[j]
    fill = t_ptr[:-1].copy()
    rows = np.empty(len(idx), like.dtype)
    for i in range(n_rows):
        for p in range(ptr[i], ptr[i + 1]):
            j = idx[p]
            rows[fill[j]] = i
            fill[j] += 1
    return t_ptr, rows


@njit(cache=True, nogil=True)
def _trees(c_ptr, c_idx, back_ptr, back_u, t_ptr, t_u, in_ptr, in_g):  # pragma: no cover
    """The breadth-first out-tree (line 0) and in-tree (line 1) of node 0, each as parent
    (−1 at the root), depth-first preorder, subtree sizes and the nodes in preorder, after a
    flag: False when some node is not reached (the digraph is not strongly connected).
    O(nodes + pairs)."""
    n_u = len(c_ptr) - 1
    n_g = len(back_ptr) - 1
    n = n_u + n_g
    parent = np.full((2, n), -2, np.int64)
    pre = np.empty((2, n), np.int64)
    size = np.ones((2, n), np.int64)
    order = np.empty((2, n), np.int64)
    queue = np.empty(n, np.int64)
    for side in range(2):
        par = parent[side]
        par[0] = -1
        queue[0] = 0
        head, tail = 0, 1
        while head < tail:
            x = queue[head]
            head += 1
            into = side == 1  # out-tree: the arcs out of x; in-tree: the arcs into x
            lo, hi = arc_span(x, into, n_u, c_ptr, back_ptr, t_ptr, in_ptr)
            for p in range(lo, hi):
                y = arc_end(x, into, p, n_u, c_idx, back_u, t_u, in_g)
                if par[y] == -2:
                    par[y] = x
                    queue[tail] = y
                    tail += 1
        if tail < n:
            return False, parent, pre, size, order
        for t in range(n - 1, 0, -1):  # sizes, leaves up (reverse breadth-first order)
            x = queue[t]
            size[side, par[x]] += size[side, x]
        # children lists, then a depth-first preorder: each subtree a contiguous range
        start = np.zeros(n + 1, np.int64)
        for x in range(1, n):
            start[par[x] + 1] += 1
        for x in range(n):
            start[x + 1] += start[x]
        fill = start.copy()
        kids = np.empty(n, np.int64)
        for x in range(n):
            if par[x] >= 0:
                kids[fill[par[x]]] = x
                fill[par[x]] += 1
        stack = queue  # reused
        stack[0] = 0
        top, count = 1, 0
        while top:
            top -= 1
            x = stack[top]
            pre[side, x] = count
            order[side, count] = x
            count += 1
            for q in range(start[x], start[x + 1]):
                stack[top] = kids[q]
                top += 1
    return True, parent, pre, size, order


@njit(cache=True, nogil=True, inline="always")
def _cut(a, b, n_u, dead, emptied):  # pragma: no cover - compiled
    """Whether the arc a → b is gone: an end emptied, or a back arc that lost its flow."""
    if a == emptied[0] or a == emptied[1] or b == emptied[0] or b == emptied[1]:
        return True
    return a >= n_u and b < n_u and dead[a - n_u] == b


@njit(cache=True, nogil=True)
def _still_strong(
    parent,
    pre,
    size,
    order,
    c_ptr,
    c_idx,
    back_ptr,
    back_u,
    t_ptr,
    t_u,
    in_ptr,
    in_g,
    dead,
    extra,
    emptied,
):  # pragma: no cover - compiled
    """:meth:`Certificate.still_strong`, compiled: per tree, the nodes below a broken tree
    arc or an emptied node are orphans; each is re-attached through an arc of the changed
    digraph from (out-tree) or to (in-tree) a node not orphaned or already re-attached,
    sweeping the orphans still waiting in preorder until a sweep re-attaches none (at most
    ``SWEEPS_MAX`` sweeps, and about as much reading as Tarjan's pass: ``WORK_MIN``). Each
    orphan's scan stops at its first way back."""
    n_u = len(c_ptr) - 1
    n_g = len(back_ptr) - 1
    n = n_u + n_g
    added = np.flatnonzero(extra >= 0)  # the new back arcs g → extra[g], by g
    budget = max((len(c_idx) + n) // 4, WORK_MIN)  # about Tarjan's time (its reads are 4× faster)
    work = 0
    if emptied[0] == 0 or emptied[1] == 0:  # the root itself
        return False
    orphan = np.zeros(n, np.bool_)  # by preorder position
    listed = np.empty(n, np.int64)
    iv_lo = np.empty(n_g + 2, np.int64)
    iv_hi = np.empty(n_g + 2, np.int64)
    for side in range(2):
        par, pos, sz, at = parent[side], pre[side], size[side], order[side]
        # the orphans: the subtrees below an emptied node or a tree arc that lost its flow,
        # listed in preorder (parents first) by walking their intervals of preorder positions
        # in order — subtrees are nested or disjoint (a sort of the positions instead: numba's
        # quicksort took 17 ms on 16,000 of them, issue 38)
        n_iv = 0
        for z in range(2):
            x = emptied[z]
            if x >= 0:
                iv_lo[n_iv], iv_hi[n_iv] = pos[x], pos[x] + sz[x]
                n_iv += 1
        for g in range(n_g):
            u = dead[g]
            if u < 0:
                continue
            x = u if side == 0 else n_u + g  # the arc g → u: into u (out-tree), out of g
            if par[x] == (n_u + g if side == 0 else u):
                iv_lo[n_iv], iv_hi[n_iv] = pos[x], pos[x] + sz[x]
                n_iv += 1
        n_orphans = 0
        reach = 0
        for t in np.argsort(iv_lo[:n_iv]):
            for p in range(max(iv_lo[t], reach), iv_hi[t]):
                orphan[p] = True
                listed[n_orphans] = p
                n_orphans += 1
            reach = max(reach, iv_hi[t])
        left = 0
        for q in range(n_orphans):
            x = at[listed[q]]
            if x != emptied[0] and x != emptied[1]:
                listed[left] = listed[q]
                left += 1
            else:
                orphan[listed[q]] = False  # never a way through: excluded below by _cut
        todo = left
        progress = True
        sweeps = 0
        while todo and progress:
            sweeps += 1
            if sweeps > SWEEPS_MAX:
                return False
            progress = False
            waiting = 0  # the orphans still waiting, kept in preorder for the next sweep
            for q in range(left):
                s = at[listed[q]]
                found = False
                into = side == 0  # a way back: an arc into s (out-tree), out of s (in-tree)
                lo, hi = arc_span(s, into, n_u, c_ptr, back_ptr, t_ptr, in_ptr)
                work += 1
                for p in range(lo, hi):
                    work += 1
                    y = arc_end(s, into, p, n_u, c_idx, back_u, t_u, in_g)
                    a, b = (y, s) if into else (s, y)
                    if not orphan[pos[y]] and not _cut(a, b, n_u, dead, emptied):
                        found = True
                        break
                for g in added:  # the new back arcs: g → s (into u) / s → extra[s]
                    if found:
                        break
                    if into and extra[g] == s:
                        y = n_u + g
                    elif not into and g == s - n_u:
                        y = extra[g]
                    else:
                        continue
                    gone = y == emptied[0] or y == emptied[1]
                    found = not orphan[pos[y]] and not gone
                if found:
                    orphan[listed[q]] = False
                    todo -= 1
                    progress = True
                else:
                    listed[waiting] = listed[q]
                    waiting += 1
                if work > budget:
                    return False  # as dear as Tarjan's pass: let the caller run it
            left = waiting
        if todo:
            return False
    return True
