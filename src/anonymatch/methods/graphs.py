"""k-anonymity of graphs w.r.t. neighbourhoods, modular decomposition, and a graph anonymizer.

Stokes' slides §3 ("k-Anonymity in graphs"; Stokes, NORDSEC 2013): the quasi-identifier of a
vertex is its neighbourhood (Lorrain & White's structural equivalence). A graph is k-anonymous
w.r.t. open (closed) neighbourhoods when every vertex shares N(v) (N(v) ∪ {v}) with ≥ k − 1
other vertices — every row of the adjacency matrix (plus identity) repeated ≥ k times.

Modular decomposition: a module is a vertex set M whose members have the same neighbours
outside M; a strong module overlaps no other module; the strong modules form the decomposition
tree (leaves = vertices; internal nodes parallel — G[M] disconnected —, series — complement of
G[M] disconnected — or prime), and the children of the root form the maximal modular
partition. Vertices with equal open (closed) neighbourhoods are false (true) twins, and the
twin classes are exactly the sets of leaf children of one parallel (series) node. Hence the
exact form of the slides' theorem used here: G is k-anonymous w.r.t. open (closed)
neighbourhoods iff every vertex is a leaf child of a parallel (series) node having ≥ k leaf
children; the classes form a congruence partition into modules of ≥ k vertices whose factors
are edgeless (complete). Note: the slides state the theorem for *the* maximal modular partition
(children of the root); that reading fails on the slides' own 15-vertex example, whose root's
children are {1..3, 10..12} (a K_{3,3}, neither edgeless nor complete), {4..6}, {7..9},
{13..15} — the five classes of 3 are nodes of the decomposition tree one level lower.

The anonymizer partitions the vertices into groups of ≥ k with similar adjacency rows (a
k-means-style clustering, Stokes NORDSEC 2013 §4; it could later share the smooth-k
facility-location clustering of issue 5), makes each group an independent set (open) or a
clique (closed), and joins two groups completely iff the majority of their original pairs were
edges.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, reverse_cuthill_mckee

from ..errors import InfeasibleError, InputError

# --------------------------------------------------------------------------------------------
# neighbourhood classes and the checker


def neighbourhood_classes(adjacency: sp.csr_array, closed: bool = False) -> np.ndarray:
    """Class id of every vertex: equal ids iff equal open (closed) neighbourhoods.

    Rows are hashed (sum of random 64-bit words of the neighbours, with the degree) and the
    buckets are confirmed exactly, so the result is exact. O(n + m) expected.
    """
    a = sp.csr_array(adjacency)
    n = a.shape[0]
    if closed:
        a = sp.csr_array(a + sp.identity(n, dtype=a.dtype, format="csr"))
    a.sort_indices()
    rng = np.random.default_rng(0x5EED)  # fixed: hashing only, no privacy role
    words = rng.integers(0, 2**63 - 1, size=(2, max(n, 1)), dtype=np.int64).astype(np.uint64)
    rows = np.repeat(np.arange(n), np.diff(a.indptr))
    h1 = np.zeros(n, np.uint64)
    h2 = np.zeros(n, np.uint64)
    np.add.at(h1, rows, words[0][a.indices])
    np.add.at(h2, rows, words[1][a.indices])
    deg = np.diff(a.indptr).astype(np.uint64)
    keys = np.column_stack([deg, h1, h2])
    _, ids = np.unique(keys, axis=0, return_inverse=True)
    ids = ids.reshape(-1).astype(np.int64)
    # exact confirmation: every member of a bucket has the bucket leader's row
    order = np.argsort(ids, kind="stable")
    leader = np.full(ids.max() + 1 if n else 0, -1, np.int64)
    out = ids.copy()
    next_id = int(ids.max()) + 1 if n else 0
    for v in order.tolist():
        lead = leader[ids[v]]
        if lead < 0:
            leader[ids[v]] = v
            continue
        row_v = a.indices[a.indptr[v] : a.indptr[v + 1]]
        row_l = a.indices[a.indptr[lead] : a.indptr[lead + 1]]
        if not np.array_equal(row_v, row_l):  # hash collision: astronomically rare
            out[v] = next_id
            next_id += 1
    _, dense = np.unique(out, return_inverse=True)
    return dense.reshape(-1).astype(np.int64)


@dataclass
class GraphAnonymityReport:
    """Outcome of ``check_graph``: ``classes`` sizes (descending), the smallest class, the number
    of vertices in classes smaller than k."""

    passed: bool
    k: int
    closed: bool
    n_vertices: int
    n_edges: int
    n_classes: int
    smallest_class: int
    vertices_below_k: int
    class_sizes: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def check_graph(adjacency: sp.csr_array, k: int, closed: bool = False) -> GraphAnonymityReport:
    """Is the graph k-anonymous w.r.t. open (closed) neighbourhoods? O(n + m)."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    ids = neighbourhood_classes(adjacency, closed)
    n = len(ids)
    sizes = np.bincount(ids) if n else np.zeros(0, np.int64)
    small = sizes < k
    return GraphAnonymityReport(
        passed=bool(not small.any()),
        k=int(k),
        closed=closed,
        n_vertices=n,
        n_edges=int(sp.csr_array(adjacency).nnz // 2),
        n_classes=len(sizes),
        smallest_class=int(sizes.min()) if n else 0,
        vertices_below_k=int(sizes[small].sum()),
        class_sizes=sorted(sizes.tolist(), reverse=True),
    )


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


@dataclass
class GraphAnonymization:
    """Result of ``anonymize_graph``: the new adjacency, the group of each vertex, metrics."""

    adjacency: sp.csr_array
    groups: np.ndarray
    metrics: dict[str, float]


def _group_edges(adj: sp.csr_array, groups: np.ndarray, g: int) -> np.ndarray:
    """e[i, j] = number of edges between groups i and j (e[i, i] counts each edge twice)."""
    z = sp.csr_array(
        (np.ones(len(groups)), (np.arange(len(groups)), groups)), shape=(len(groups), g)
    )
    return (z.T @ adj @ z).toarray()


def _cost_matrix(e: np.ndarray, sizes: np.ndarray, closed: bool) -> np.ndarray:
    """Edges changed between each pair of groups under the majority rule."""
    pairs = np.outer(sizes, sizes).astype(np.float64)
    off = np.minimum(e, pairs - e)
    inner = sizes * (sizes - 1) / 2.0
    within = np.diag(e) / 2.0
    np.fill_diagonal(off, (inner - within) if closed else within)
    return off


def changed_edges(adj: sp.csr_array, groups: np.ndarray, closed: bool) -> int:
    """Edges added + removed when ``groups`` are published by the majority rule. O(m + g²)."""
    g = int(groups.max()) + 1
    sizes = np.bincount(groups, minlength=g)
    return int(round(np.triu(_cost_matrix(_group_edges(adj, groups, g), sizes, closed)).sum()))


def _rcm_groups(adj: sp.csr_array, k: int) -> np.ndarray:
    """Runs of k vertices in reverse Cuthill–McKee order (the last run absorbs the rest)."""
    n = adj.shape[0]
    order = reverse_cuthill_mckee(sp.csr_matrix(adj), symmetric_mode=True).astype(np.int64)
    g = max(n // k, 1)
    groups = np.empty(n, np.int64)
    groups[order] = np.minimum(np.arange(n) // k, g - 1)
    return groups


def _similarity_groups(adj: sp.csr_array, k: int, closed: bool) -> np.ndarray:
    """Greedy k-member grouping: the unassigned vertex of highest degree takes the k − 1
    unassigned vertices whose (open or closed) neighbourhoods have the highest Jaccard
    similarity with its own; the last < 2k vertices form the last group.
    O(Σ_seeds (deg·avg deg + n)) = O(n²/k + m·avg deg)."""
    n = adj.shape[0]
    a = sp.csr_array(adj, dtype=np.float64)
    if closed:
        a = sp.csr_array(a + sp.identity(n, format="csr"))
    deg = np.asarray(a.sum(axis=1)).reshape(-1)
    free = np.ones(n, bool)
    groups = np.full(n, -1, np.int64)
    seeds = np.argsort(-deg, kind="stable")
    gid = 0
    for seed in seeds.tolist():
        if free.sum() < 2 * k:
            break
        if not free[seed]:
            continue
        common = (a[[seed]] @ a).toarray().reshape(-1)
        union = deg[seed] + deg - common
        jac = np.where(union > 0, common / np.where(union > 0, union, 1), 1.0)
        jac[~free] = -1.0
        jac[seed] = -1.0
        take = np.argsort(-jac, kind="stable")[: k - 1]
        members = np.concatenate([[seed], take])
        groups[members] = gid
        free[members] = False
        gid += 1
    groups[free] = gid
    return groups


def _refine(
    adj: sp.csr_array, groups: np.ndarray, k: int, closed: bool, iterations: int
) -> np.ndarray:
    """k-means-style rounds: compute each group's majority pattern (joined to group j iff more
    than half of the pairs are edges) and move every vertex to the group whose pattern it
    matches best (fewest of its own pairs to change), never leaving a group with fewer than k
    vertices; stop when no vertex moves. O(iterations · (m + n·g))."""
    n = adj.shape[0]
    groups = groups.copy()
    g = int(groups.max()) + 1
    for _ in range(iterations):
        sizes = np.bincount(groups, minlength=g)
        e = _group_edges(adj, groups, g)
        pairs = np.outer(sizes, sizes).astype(np.float64)
        np.fill_diagonal(pairs, sizes * (sizes - 1.0))
        pattern = e * 2 > pairs  # group i joined to group j
        np.fill_diagonal(pattern, closed)
        z = sp.csr_array((np.ones(n), (np.arange(n), groups)), shape=(n, g))
        counts = (adj @ z).toarray()  # edges of v to each group
        # cost of v adopting group b's pattern: edges to remove + non-edges to add
        # Σ_j [pattern[b,j]] (size_j − counts[v,j]) + [¬pattern[b,j]] counts[v,j]
        pat = pattern.astype(np.float64)
        cost = counts.sum(axis=1, keepdims=True) + (sizes[None, :] - 2 * counts) @ pat.T
        best = np.argmin(cost, axis=1)
        moved = 0
        for v in np.flatnonzero(best != groups).tolist():
            src, dst = groups[v], best[v]
            if cost[v, dst] < cost[v, src] and sizes[src] > k:
                groups[v] = dst
                sizes[src] -= 1
                sizes[dst] += 1
                moved += 1
        if not moved:
            break
    _, groups = np.unique(groups, return_inverse=True)  # drop emptied groups (none are < k)
    return groups.reshape(-1).astype(np.int64)


def cluster_rows(adj: sp.csr_array, k: int, closed: bool, iterations: int = 10) -> np.ndarray:
    """Groups of ≥ k vertices with similar adjacency rows: k-means-style clustering.

    Two starts — runs of k in reverse Cuthill–McKee order, and a greedy k-member grouping by
    Jaccard similarity of neighbourhoods (``_similarity_groups``) — each refined by
    ``_refine``; the grouping that changes fewer edges under the majority rule is kept.
    O(iterations · (m + n²/k) + m·avg deg).
    Reference: Stokes, NORDSEC 2013 (k-anonymity of graphs through k-means). Could later share
    the smooth-k (facility-location) clustering of issue 5.
    """
    n = adj.shape[0]
    if k <= 1:
        return np.arange(n, dtype=np.int64)
    best, best_cost = None, None
    for start in (_rcm_groups(adj, k), _similarity_groups(adj, k, closed)):
        groups = _refine(adj, start, k, closed, iterations)
        cost = changed_edges(adj, groups, closed)
        if best_cost is None or cost < best_cost:
            best, best_cost = groups, cost
    assert best is not None
    return best


def graph_from_groups(adj: sp.csr_array, groups: np.ndarray, closed: bool) -> sp.csr_array:
    """Every group independent (open) or a clique (closed); groups i ≠ j joined completely iff
    more than half of their |G_i|·|G_j| pairs are edges of ``adj``. O(m + n²_out) where n²_out
    is the number of edges written."""
    g = int(groups.max()) + 1 if len(groups) else 0
    sizes = np.bincount(groups, minlength=g)
    e = _group_edges(adj, groups, g)
    join = e * 2 > np.outer(sizes, sizes)
    np.fill_diagonal(join, closed)
    members = [np.flatnonzero(groups == i) for i in range(g)]
    rows, cols = [], []
    for i, j in zip(*np.nonzero(np.triu(join)), strict=True):
        a, b = members[i], members[j]
        if i == j:
            r, c = np.triu_indices(len(a), 1)
            rows.append(a[r])
            cols.append(a[c])
        else:
            rows.append(np.repeat(a, len(b)))
            cols.append(np.tile(b, len(a)))
    n = len(groups)
    if rows:
        r = np.concatenate(rows)
        c = np.concatenate(cols)
    else:
        r = c = np.empty(0, np.int64)
    out = sp.csr_array(
        (np.ones(2 * len(r), np.int8), (np.concatenate([r, c]), np.concatenate([c, r]))),
        shape=(n, n),
    )
    out.sort_indices()
    return out


def graph_metrics(before: sp.csr_array, after: sp.csr_array) -> dict[str, float]:
    """Jaccard similarity of the edge sets, edges added/removed, and the distance between the
    degree distributions (1-Wasserstein / earth mover's distance, and total variation of the
    degree histograms). O(m log m)."""
    from scipy.stats import wasserstein_distance

    a = sp.triu(sp.csr_array(before), k=1).tocsr()
    b = sp.triu(sp.csr_array(after), k=1).tocsr()
    a.data[:] = 1
    b.data[:] = 1
    both = int((a.multiply(b)).nnz)
    ea, eb = int(a.nnz), int(b.nnz)
    union = ea + eb - both
    deg_a = np.diff(sp.csr_array(before).indptr)
    deg_b = np.diff(sp.csr_array(after).indptr)
    top = int(max(deg_a.max(initial=0), deg_b.max(initial=0))) + 1
    ha = np.bincount(deg_a, minlength=top) / max(len(deg_a), 1)
    hb = np.bincount(deg_b, minlength=top) / max(len(deg_b), 1)
    return {
        "edges_before": ea,
        "edges_after": eb,
        "edges_added": eb - both,
        "edges_removed": ea - both,
        "jaccard": both / union if union else 1.0,
        "degree_emd": float(wasserstein_distance(deg_a, deg_b)) if len(deg_a) else 0.0,
        "degree_tv": float(0.5 * np.abs(ha - hb).sum()),
        "mean_degree_before": float(deg_a.mean()) if len(deg_a) else 0.0,
        "mean_degree_after": float(deg_b.mean()) if len(deg_b) else 0.0,
    }


def anonymize_graph(
    adjacency: sp.csr_array, k: int, closed: bool = False, iterations: int = 10
) -> GraphAnonymization:
    """A k-anonymous graph w.r.t. open (closed) neighbourhoods close to ``adjacency``: groups of
    ≥ k similar vertices (``cluster_rows``), joined by the majority rule (``graph_from_groups``).
    Every vertex of a group then has the same neighbourhood, so classes have ≥ k members.
    Raises InputError if k < 1, InfeasibleError if k > n. Complexity: see ``cluster_rows``.
    """
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    adj = sp.csr_array(adjacency)
    n = adj.shape[0]
    if k > n:
        raise InfeasibleError(f"infeasible: k = {k} is larger than the number of vertices ({n})")
    groups = cluster_rows(adj, int(k), closed, iterations)
    out = graph_from_groups(adj, groups, closed)
    return GraphAnonymization(out, groups, graph_metrics(adj, out))
