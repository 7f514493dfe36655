"""Modular decomposition of graphs and the twin classes it exposes (Stokes' slides §3).

A module is a vertex set M whose members have the same neighbours outside M; a strong module
overlaps no other module; the strong modules form the decomposition tree (leaves = vertices;
internal nodes parallel — G[M] disconnected —, series — complement of G[M] disconnected — or
prime), and the children of the root form the maximal modular partition. Vertices with equal
open (closed) neighbourhoods are false (true) twins, and the twin classes are exactly the sets
of leaf children of one parallel (series) node. Hence the exact form of the slides' theorem
used here: G is k-anonymous w.r.t. open (closed) neighbourhoods iff every vertex is a leaf
child of a parallel (series) node having ≥ k leaf children. Note: the slides state the theorem
for *the* maximal modular partition (children of the root); that reading fails on the slides'
own 15-vertex example, whose root's children are {1..3, 10..12} (a K_{3,3}, neither edgeless
nor complete), {4..6}, {7..9}, {13..15} — the five classes of 3 are nodes of the decomposition
tree one level lower. Dense O(n²) adjacency: for the small graphs of the checks and tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from anonymatch.core.errors import InputError

# --------------------------------------------------------------------------------------------
# neighbourhood classes and the checker


# --------------------------------------------------------------------------------------------
# modular decomposition


@dataclass
class MDNode:
    """A node of the modular decomposition tree: ``kind`` is "leaf", "parallel", "series" or
    "prime"; ``vertices`` the strong module (sorted); ``children`` its maximal strong proper
    submodules."""

    kind: str
    vertices: np.ndarray
    children: list[MDNode] = field(default_factory=list)

    def nodes(self) -> list[MDNode]:
        """All nodes, preorder."""
        out = [self]
        for c in self.children:
            out.extend(c.nodes())
        return out

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "vertices": self.vertices.tolist(),
            "children": [c.to_dict() for c in self.children],
        }


def _closure(adj: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Smallest module of the graph ``adj`` (dense bool) containing the mask ``start``: add
    splitters (vertices outside seeing some but not all of it) until none is left.
    O(n · |result|)."""
    member = start.copy()
    size = int(member.sum())
    seen = adj[:, member].sum(axis=1)
    while True:
        split = ~member & (seen > 0) & (seen < size)
        if not split.any():
            return member
        member |= split
        size = int(member.sum())
        seen = seen + adj[:, split].sum(axis=1)


def _maximal_modules_avoiding(adj: np.ndarray, v: int) -> list[np.ndarray]:
    """The maximal modules not containing v (they partition V − v), by partition refinement:
    every module avoiding v lies inside one part, and parts are split by any outside vertex
    that distinguishes their members. O(n² · parts)."""
    n = adj.shape[0]
    rest = np.ones(n, bool)
    rest[v] = False
    work = [p for p in (rest & adj[v], rest & ~adj[v]) if p.any()]
    done = []
    while work:
        part = work.pop()
        size = int(part.sum())
        if size == 1:
            done.append(part)
            continue
        seen = adj[:, part].sum(axis=1)
        split = np.flatnonzero(~part & (seen > 0) & (seen < size))
        if not len(split):
            done.append(part)
            continue
        w = int(split[0])
        work.extend([part & adj[w], part & ~adj[w]])
    return done


def modular_decomposition(adjacency: sp.csr_array | np.ndarray) -> MDNode:
    """The modular decomposition tree of a simple undirected graph.

    Recursive: G[S] disconnected → parallel node over the components; complement disconnected →
    series node over the co-components; otherwise a prime node, whose maximal strong modules are
    the maximal proper modules: for a vertex v, the maximal modules avoiding v are computed by
    partition refinement; each is a maximal strong module unless the smallest module holding it
    and v is a proper subset — then it lies in v's maximal strong module.

    Complexity: O(n³) per level of the tree in the worst case with dense O(n²) memory — an
    analysis function for graphs of up to a few thousand vertices (or their quotients).
    Reference: Gallai 1967; Ehrenfeucht, Gabow, McConnell, Sullivan, J. Algorithms 1994 (the
    partition P(G, v)); Stokes, NORDSEC 2013 (modular decomposition and graph k-anonymity).
    """
    if sp.issparse(adjacency):
        adj = sp.csr_array(adjacency).toarray() != 0
    else:
        adj = np.asarray(adjacency) != 0
    if adj.shape[0] != adj.shape[1] or not np.array_equal(adj, adj.T):
        raise InputError("modular decomposition needs a symmetric adjacency matrix")
    np.fill_diagonal(adj, False)
    return _decompose(adj, np.arange(adj.shape[0], dtype=np.int64))


def _decompose(adj: np.ndarray, vertices: np.ndarray) -> MDNode:
    n = len(vertices)
    if n == 1:
        return MDNode("leaf", vertices)
    if n == 0:
        raise InputError("modular decomposition of an empty graph")
    k, labels = connected_components(sp.csr_array(adj), directed=False)
    if k > 1:
        return MDNode("parallel", vertices, _children(adj, vertices, labels, k, "parallel"))
    comp = ~adj
    np.fill_diagonal(comp, False)
    k, labels = connected_components(sp.csr_array(comp), directed=False)
    if k > 1:
        return MDNode("series", vertices, _children(adj, vertices, labels, k, "series"))
    # prime: both G[S] and its complement are connected
    v = 0
    parts = _maximal_modules_avoiding(adj, v)
    own = np.zeros(n, bool)
    own[v] = True
    modules = []
    for part in parts:
        start = part.copy()
        start[v] = True
        if _closure(adj, start).all():
            modules.append(part)  # a maximal strong module of its own
        else:
            own |= part
    modules.append(own)
    labels = np.empty(n, np.int64)
    for i, m in enumerate(modules):
        labels[m] = i
    return MDNode("prime", vertices, _children(adj, vertices, labels, len(modules), "prime"))


def _children(
    adj: np.ndarray, vertices: np.ndarray, labels: np.ndarray, count: int, kind: str
) -> list[MDNode]:
    out = []
    for i in range(count):
        idx = np.flatnonzero(labels == i)
        child = _decompose(adj[np.ix_(idx, idx)], vertices[idx])
        out.append(child)
    out.sort(key=lambda c: int(c.vertices.min()))
    return out


def maximal_modular_partition(tree: MDNode) -> list[np.ndarray]:
    """The maximal strong modules other than V (the children of the root); [V] for one vertex."""
    if tree.kind == "leaf":
        return [tree.vertices]
    return [c.vertices for c in tree.children]


def twin_classes_from_decomposition(tree: MDNode, closed: bool = False) -> list[np.ndarray]:
    """Open (closed) neighbourhood classes read off the decomposition tree: the leaf children of
    each parallel (series) node form one class; every other vertex is alone. O(n)."""
    want = "series" if closed else "parallel"
    classes: list[np.ndarray] = []
    placed: set[int] = set()
    for node in tree.nodes():
        if node.kind == want:
            leaves = [int(c.vertices[0]) for c in node.children if c.kind == "leaf"]
            if leaves:
                classes.append(np.array(sorted(leaves), np.int64))
                placed.update(leaves)
    for v in tree.vertices.tolist():
        if v not in placed:
            classes.append(np.array([v], np.int64))
    classes.sort(key=lambda c: int(c[0]))
    return classes


def is_module(adj: np.ndarray, members: np.ndarray) -> bool:
    """Do all vertices of ``members`` have the same neighbours outside it? O(n·|members|)."""
    mask = np.zeros(adj.shape[0], bool)
    mask[members] = True
    seen = adj[:, mask].sum(axis=1)[~mask]
    return bool(np.all((seen == 0) | (seen == mask.sum())))


# --------------------------------------------------------------------------------------------
# the anonymizer
