"""The strong-connectivity certificate (``core.strong``) against scipy's strong components."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components

from anonymatch.core.strong import Certificate
from anonymatch.core.view import strong_components
from anonymatch.tables.risk.known import _reroute


def residual(seed: int, n_u: int, n_g: int, p: float, q: float):
    """A random pattern of pairs (CSR, sorted) and back arcs g → u on a random share ``q`` of
    them, grouped by g (the arrays of ``core.view.strong_components``)."""
    rng = np.random.default_rng(seed)
    c = sp.csr_array((rng.random((n_u, n_g)) < p).astype(np.int8))
    c.sort_indices()
    pair_u = np.repeat(np.arange(n_u), np.diff(c.indptr))
    back = rng.random(len(c.indices)) < q
    by_g = np.argsort(c.indices[back], kind="stable")
    back_u = pair_u[back][by_g]
    back_ptr = np.r_[0, np.cumsum(np.bincount(c.indices[back], minlength=n_g))]
    return c.indptr.astype(np.int64), c.indices, back_ptr.astype(np.int64), back_u, rng


def strongly_connected(c_ptr, c_idx, back_ptr, back_u, dead, extra, gone) -> bool:
    """scipy's answer: the digraph without the dead back arcs, with the extra ones, and
    without the nodes ``gone``, strongly connected on the nodes left."""
    n_u, n_g = len(c_ptr) - 1, len(back_ptr) - 1
    n = n_u + n_g
    src = [np.repeat(np.arange(n_u), np.diff(c_ptr))]
    dst = [n_u + c_idx.astype(np.int64)]
    g_of = np.repeat(np.arange(n_g), np.diff(back_ptr))
    keep = back_u != dead[g_of]
    src.append(n_u + g_of[keep])
    dst.append(back_u[keep].astype(np.int64))
    added = np.flatnonzero(extra >= 0)
    src.append(n_u + added)
    dst.append(extra[added])
    s, d = np.concatenate(src), np.concatenate(dst)
    alive = np.ones(n, bool)
    alive[[x for x in gone if x >= 0]] = False
    ok = alive[s] & alive[d]
    graph = sp.csr_array((np.ones(int(ok.sum())), (s[ok], d[ok])), shape=(n, n))
    labels = connected_components(graph, directed=True, connection="strong")[1]
    return len(set(labels[alive].tolist())) <= 1


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two labelings split the nodes alike (labels themselves may differ)."""
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


@settings(max_examples=150, deadline=None)
@given(
    st.integers(0, 2**31),
    st.integers(1, 9),
    st.integers(1, 9),
    st.floats(0.2, 1.0),
    st.floats(0.2, 1.0),
    st.data(),
)
def test_the_certificate_never_claims_what_scipy_denies(seed, n_u, n_g, p, q, data) -> None:
    """Built exactly when the digraph is strongly connected; after random cuts (back arcs that
    lose their flow, up to one original and one published group emptied), "still strong" is
    only ever said of a digraph scipy finds strongly connected on the nodes left, and is said
    of the digraph unchanged."""
    c_ptr, c_idx, back_ptr, back_u, rng = residual(seed, n_u, n_g, p, q)
    none = np.full(n_g, -1, np.int64)
    cert = Certificate.build(c_ptr, c_idx, back_ptr, back_u)
    whole = strongly_connected(c_ptr, c_idx, back_ptr, back_u, none, none, [])
    assert (cert is not None) == whole
    tarjan = strong_components(c_ptr, c_idx, back_ptr, back_u, none, none)
    assert (len(set(tarjan.tolist())) == 1) == whole
    if cert is None:
        return
    assert cert.still_strong(c_ptr, c_idx, back_ptr, back_u, none, none, np.array([-1, -1]))
    column = sp.csr_array((np.ones(len(c_idx)), c_idx, c_ptr), shape=(n_u, n_g)).tocsc()
    for _ in range(data.draw(st.integers(1, 8))):
        dead, extra = none.copy(), none.copy()
        share = data.draw(st.floats(0.0, 0.5))
        for g in range(n_g):
            arcs = back_u[back_ptr[g] : back_ptr[g + 1]]
            if len(arcs) and rng.random() < share:
                dead[g] = rng.choice(arcs)
            pairs = column.indices[column.indptr[g] : column.indptr[g + 1]]
            if len(pairs) and rng.random() < share:
                extra[g] = rng.choice(pairs)
        emptied = np.array(
            [
                rng.integers(n_u) if rng.random() < 0.5 else -1,
                n_u + rng.integers(n_g) if rng.random() < 0.5 else -1,
            ],
            np.int64,
        )
        said = cert.still_strong(c_ptr, c_idx, back_ptr, back_u, dead, extra, emptied)
        truth = strongly_connected(c_ptr, c_idx, back_ptr, back_u, dead, extra, emptied.tolist())
        assert said == truth or emptied[0] == 0


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 12), st.floats(0.0, 0.5))
def test_every_conditioning_of_a_matching_flow_agrees_with_scipy(seed, n, p) -> None:
    """A planted perfect matching as the flow plus random pairs; every pair (u, g) in turn as
    the known person's row, rerouted as ``tables.risk.known`` does (u and g emptied): "still
    strong" is said exactly when scipy finds the rest strongly connected, unless the root (node
    0) is emptied, when nothing is shown (it failed when a
    lost node could be found again through another lost one, or a new arc was ignored)."""
    rng = np.random.default_rng(seed)
    match = rng.permutation(n)
    pairs = rng.random((n, n)) < p
    pairs[np.arange(n), match] = True
    c = sp.csr_array(pairs.astype(np.int8))
    c.sort_indices()
    c_ptr, c_idx = c.indptr.astype(np.int64), c.indices
    back_u, back_ptr = np.argsort(match), np.arange(n + 1, dtype=np.int64)
    cert = Certificate.build(c_ptr, c_idx, back_ptr, back_u)
    none = np.full(n, -1, np.int64)
    assert (cert is not None) == strongly_connected(c_ptr, c_idx, back_ptr, back_u, none, none, [])
    if cert is None:
        return
    flow, arcs_in = np.ones(n, np.int64), (cert.t_ptr, cert.t_u, cert.in_ptr, cert.in_g)
    one_sided = (np.empty(0, np.int64),) * 4
    for u, g in zip(*np.nonzero(pairs), strict=True):
        dead, extra = _reroute(c_ptr, c_idx, back_ptr, back_u, flow, *arcs_in, u, g)
        emptied = np.array([u, n + g], np.int64)
        said = cert.still_strong(c_ptr, c_idx, back_ptr, back_u, dead, extra, emptied)
        truth = strongly_connected(c_ptr, c_idx, back_ptr, back_u, dead, extra, [u, n + g])
        assert said == truth or u == 0, (u, g)  # the root emptied: not shown
        # the path from both ends and the path from g alone: the same components after
        both = strong_components(c_ptr, c_idx, back_ptr, back_u, dead, extra)
        alone = strong_components(
            c_ptr, c_idx, back_ptr, back_u,
            *_reroute(c_ptr, c_idx, back_ptr, back_u, flow, *one_sided, u, g),
        )  # fmt: skip
        assert same_partition(both, alone)


def test_a_large_dense_component_is_shown_without_tarjan() -> None:
    """On a dense component with a perfect matching as its flow (the known-person figures'
    case) one dead back arc and two emptied groups are mostly shown harmless by the trees
    alone, as scipy confirms."""
    rng = np.random.default_rng(7)
    n = 300
    match = rng.permutation(n)  # original u's flow goes to published match[u]
    pairs = rng.random((n, n)) < 0.1
    pairs[np.arange(n), match] = True
    c = sp.csr_array(pairs.astype(np.int8))
    c.sort_indices()
    c_ptr, c_idx = c.indptr.astype(np.int64), c.indices
    back_u = np.argsort(match)  # published g's back arc goes to the u matched to it
    back_ptr = np.arange(n + 1, dtype=np.int64)
    cert = Certificate.build(c_ptr, c_idx, back_ptr, back_u)
    assert cert is not None
    shown = 0
    for _ in range(50):  # condition on a random pair (u, g), as the known-person figures do
        u = int(rng.integers(n))
        g = int(rng.choice(c_idx[c_ptr[u] : c_ptr[u + 1]]))
        dead, extra = _reroute(
            c_ptr, c_idx, back_ptr, back_u, np.ones(n, np.int64),
            cert.t_ptr, cert.t_u, cert.in_ptr, cert.in_g, u, g,
        )  # fmt: skip
        emptied = np.array([u, n + g], np.int64)
        if cert.still_strong(c_ptr, c_idx, back_ptr, back_u, dead, extra, emptied):
            shown += 1
            assert strongly_connected(c_ptr, c_idx, back_ptr, back_u, dead, extra, emptied.tolist())
    assert shown >= 45
