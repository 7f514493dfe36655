"""Sparse binary data (issue 5): smooth / nonsmooth k-anonymity, Mondrian on binary data,
randomized response, the verifier, metrics and min-hash chunking."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.core.runner import Placement, run_partitions
from anonymatch.sparse.methods.mondrian import mondrian_labels
from anonymatch.sparse.methods.randomized_response import flip_probability, randomized_response
from anonymatch.sparse.methods.smooth import _meyerson, cluster, opening_costs, split_large, vote
from anonymatch.sparse.metrics import edge_metrics
from anonymatch.sparse.order import minhash_chunks, minhash_signatures
from anonymatch.sparse.pipeline import anonymize_sparse
from anonymatch.sparse.verify import row_classes, verify_sparse
from tests.factories import planted


def dense(m: sp.sparray) -> np.ndarray:
    return np.asarray(sp.csr_array(m).toarray())


def random_matrix(n: int, m: int, density: float, seed: int) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    return sp.csr_array((rng.random((n, m)) < density).astype(np.int8))


# --- the paper's Figure 1 in miniature ---------------------------------------------------------


def test_figure1_suppression_drops_smooth_keeps_and_adds_one_edge() -> None:
    # k = 4: feature 0 held by all 4 users, feature 1 by 3 of 4, feature 2 by one user.
    x = sp.csr_array(np.array([[1, 1, 0], [1, 1, 0], [1, 1, 0], [1, 0, 1]], np.int8))
    labels = cluster(x, 4, seed=0).labels
    assert np.all(labels == labels[0])
    nonsmooth = dense(vote(x, labels, "all"))
    smooth = dense(vote(x, labels, "majority"))
    assert (nonsmooth == [[1, 0, 0]] * 4).all()  # suppression drops feature 1 (and 2)
    assert (smooth == [[1, 1, 0]] * 4).all()  # smooth keeps feature 1 ...
    added = (smooth == 1) & (dense(x) == 0)
    assert added.sum() == 1 and added[3, 1]  # ... and adds exactly one edge
    assert verify_sparse(smooth, x, 4, "smooth").passed
    assert not verify_sparse(smooth, x, 4, "nonsmooth").passed
    assert verify_sparse(nonsmooth, x, 4, "nonsmooth").passed
    m_s, m_n = edge_metrics(x, smooth), edge_metrics(x, nonsmooth)
    assert m_s.jaccard == pytest.approx(7 / 9)  # |E| = 8: 7 kept, 1 created, 1 dropped
    assert m_n.jaccard == pytest.approx(4 / 8)
    assert m_s.created == pytest.approx(1 / 8) and m_s.suppressed == pytest.approx(1 / 8)


def test_tie_is_kept_by_the_majority_vote() -> None:
    x = sp.csr_array(np.array([[1, 1], [1, 1], [1, 0], [1, 0]], np.int8))
    p = dense(vote(x, np.zeros(4, np.int64), "majority"))
    assert (p == 1).all()  # 2 of 4 is "at least half" (Definition 3.5)
    assert verify_sparse(p, x, 4, "smooth").passed


# --- facility location pieces -------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_opening_costs_match_brute_force(seed: int) -> None:
    x = random_matrix(50, 15, 0.25, seed)
    x = sp.csr_array(x.toarray() * (np.arange(50) >= 5)[:, None])  # empty rows too
    x = sp.csr_array(sp.vstack([x, x[5:12], x[5:8]]))  # and rows with 2 or 3 copies
    d = (dense(x)[:, None, :] != dense(x)[None, :, :]).sum(axis=2)
    for k, beta in [(2, 2.0), (3, 4.0), (5, 1.5)]:
        kk = int(np.ceil(beta * k))
        alpha = 1 / beta
        expected = 2 * alpha / (1 - alpha) * np.sort(d, axis=1)[:, :kk].sum(axis=1)
        np.testing.assert_allclose(opening_costs(x, k, beta), expected)


def test_planted_clusters_are_recovered() -> None:
    x = planted(blocks=6, size=7, items=10, noise=0.02, seed=4)
    labels = cluster(x, 4, seed=3).labels
    truth = np.repeat(np.arange(6), 7)
    # same partition up to renaming
    pairs = {(int(a), int(b)) for a, b in zip(labels, truth, strict=True)}
    assert len(pairs) == len(set(labels.tolist())) == 6


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(4, 45),
    m=st.integers(1, 12),
    density=st.floats(0.05, 0.6),
    k=st.integers(1, 6),
    seed=st.integers(0, 10_000),
)
def test_every_release_verifies_and_smooth_beats_nonsmooth(
    n: int, m: int, density: float, k: int, seed: int
) -> None:
    x = random_matrix(n, m, density, seed)
    k = min(k, n)
    c = cluster(x, k, runs=3, seed=seed)
    sizes = np.bincount(c.labels)
    assert sizes.min() >= k
    assert n < 2 * k or sizes.max() < 2 * k
    smooth, nonsmooth = vote(x, c.labels, "majority"), vote(x, c.labels, "all")
    assert verify_sparse(smooth, x, k, "smooth").passed
    assert verify_sparse(nonsmooth, x, k, "nonsmooth").passed
    assert edge_metrics(x, smooth).jaccard >= edge_metrics(x, nonsmooth).jaccard - 1e-12
    mondrian = vote(x, mondrian_labels(x, k), "all")
    assert verify_sparse(mondrian, x, k, "nonsmooth").passed


def test_split_large_cuts_into_k_to_2k() -> None:
    x = random_matrix(100, 20, 0.3, 7)
    labels, split = split_large(x, np.zeros(100, np.int64), 6)
    sizes = np.bincount(labels)
    assert split == 1 and sizes.min() >= 6 and sizes.max() < 12 and sizes.sum() == 100


def test_cluster_is_reproducible_and_seed_dependent() -> None:
    x = random_matrix(120, 30, 0.15, 1)
    a, b = cluster(x, 4, seed=9).labels, cluster(x, 4, seed=9).labels
    assert np.array_equal(a, b)
    others = [cluster(x, 4, seed=s).labels for s in range(3)]
    assert any(not np.array_equal(a, o) for o in others)


def test_k_larger_than_rows_and_bad_parameters() -> None:
    x = random_matrix(5, 4, 0.5, 0)
    with pytest.raises(InfeasibleError, match="larger than the number of rows"):
        cluster(x, 6)
    with pytest.raises(InputError, match="beta"):
        opening_costs(x, 2, beta=1.0)
    with pytest.raises(InfeasibleError, match="larger than the number of rows"):
        anonymize_sparse(x, 6)
    with pytest.raises(InputError, match="epsilon"):
        anonymize_sparse(x, 2, "rr", epsilon=0.0)


# --- verifier: tampered releases are rejected ------------------------------------------------


def test_tampered_releases_are_rejected() -> None:
    x = planted(blocks=4, size=6, items=8, noise=0.1, seed=2)
    release = anonymize_sparse(x, 4, seed=1)
    p = release.published
    assert verify_sparse(p, x, 4, "smooth").passed
    # one extra 1 in one row: that row leaves its class (a class of 1)
    t = sp.lil_array(p)
    row = 0
    col = int(np.flatnonzero(dense(p)[row] == 0)[0])
    t[row, col] = 1
    report = verify_sparse(t, x, 4, "smooth")
    assert not report.passed and report.smallest_class == 1
    # a whole class gets an item almost none of its originals hold: majority broken
    classes = row_classes(p)
    members = np.flatnonzero(classes == classes[0])
    held = dense(x)[members].sum(axis=0)
    col = int(np.argmin(held))
    assert 2 * held[col] < members.size
    t = sp.lil_array(p)
    for r in members:
        t[r, col] = 1
    report = verify_sparse(t, x, 4, "smooth")
    assert not report.passed and report.unsupported_ones == members.size
    # a row missing
    assert not verify_sparse(p[:-1], x, 4).passed
    # smooth release is not a suppression release when it created ones
    if edge_metrics(x, p).created > 0:
        assert not verify_sparse(p, x, 4, "nonsmooth").passed


def test_row_classes_groups_identical_rows_exactly() -> None:
    p = sp.csr_array(np.array([[1, 0, 1], [0, 0, 0], [1, 0, 1], [0, 1, 0], [0, 0, 0]], np.int8))
    c = row_classes(p)
    assert c[0] == c[2] and c[1] == c[4] and len({c[0], c[1], c[3]}) == 3


# --- randomized response --------------------------------------------------------------------


def test_flip_probabilities() -> None:
    assert flip_probability(1.0, "edge") == pytest.approx(2 / (1 + np.e))
    assert flip_probability(6.0, "node", n_cols=3) == pytest.approx(2 / (1 + np.e**2))
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(InputError):
            flip_probability(bad)


@pytest.mark.parametrize(("epsilon", "level"), [(1.0, "edge"), (0.5, "edge"), (40.0, "node")])
def test_randomized_response_matches_its_flip_probabilities(epsilon: float, level: str) -> None:
    x = random_matrix(300, 80, 0.2, 11)
    p = flip_probability(epsilon, level, x.shape[1])
    out = dense(randomized_response(x, epsilon, level, seed=5))
    orig = dense(x)
    ones, zeros = orig == 1, orig == 0
    kept = int(out[ones].sum())
    created = int(out[zeros].sum())
    assert stats.binomtest(kept, int(ones.sum()), 1 - p / 2).pvalue > 1e-3
    assert stats.binomtest(created, int(zeros.sum()), p / 2).pvalue > 1e-3
    # created entries are uniform over the zeros: per-row counts ∝ number of zeros in the row
    per_row = (out * zeros).sum(axis=1)
    expected = zeros.sum(axis=1) * created / zeros.sum()
    assert stats.chisquare(per_row, expected).pvalue > 1e-3


def test_randomized_response_refuses_a_dense_release() -> None:
    x = random_matrix(50, 50, 0.1, 0)
    with pytest.raises(InputError, match="larger epsilon"):
        randomized_response(x, 0.1, seed=0, max_created=10)


# --- min-hash chunking and the runner ------------------------------------------------------------


def test_minhash_collision_rate_is_the_jaccard_similarity() -> None:
    a = np.arange(0, 60)
    b = np.arange(20, 80)  # |a ∩ b| = 40, |a ∪ b| = 80
    rows = np.concatenate([np.zeros(60, int), np.ones(60, int)])
    x = sp.csr_array((np.ones(120, np.int8), (rows, np.concatenate([a, b]))), shape=(2, 100))
    sig = minhash_signatures(x, hashes=3000, seed=1)
    equal = int((sig[0] == sig[1]).sum())
    assert stats.binomtest(equal, 3000, 0.5).pvalue > 1e-3


def test_minhash_chunks_cover_rows_and_group_similar_rows() -> None:
    x = planted(blocks=8, size=25, items=30, noise=0.0, seed=0)
    chunks = minhash_chunks(x, 50, seed=3)
    assert len(chunks) == 4 and all(c.size >= 50 for c in chunks)
    assert np.array_equal(np.sort(np.concatenate(chunks)), np.arange(200))
    blocks = [set((c // 25).tolist()) for c in chunks]
    assert all(len(b) == 2 for b in blocks)  # identical rows stay together


def _square_plus_draw(job: int, seed: np.random.SeedSequence) -> float:
    return job * job + float(np.random.default_rng(seed).random())


def test_run_partitions_order_and_seed_not_executor() -> None:
    jobs = list(range(7))
    inline = run_partitions(_square_plus_draw, jobs, placement=Placement("inline"), seed=3)
    threads = run_partitions(
        _square_plus_draw, jobs, placement=Placement("threads", workers=3), seed=3
    )
    processes = run_partitions(
        _square_plus_draw, jobs, placement=Placement("processes", workers=2), seed=3
    )
    assert inline == threads == processes
    assert [int(v) for v in inline] == [j * j for j in jobs]
    assert run_partitions(_square_plus_draw, jobs, placement=Placement("inline"), seed=4) != inline
    with pytest.raises(InputError):
        run_partitions(
            _square_plus_draw,
            jobs,
            placement=Placement("bogus"),  # type: ignore[arg-type]
            seed=1,
        )


def test_chunked_and_unchunked_paths_agree() -> None:
    # Noise-free blocks: min-hash chunks keep identical rows together, so both are exact.
    clean = planted(blocks=12, size=10, items=12, noise=0.0, seed=8)
    assert anonymize_sparse(clean, 4, seed=2).report["loss"]["jaccard"] == 1.0
    chunked = anonymize_sparse(clean, 4, seed=2, chunk_rows=30, executor="inline")
    assert chunked.report["parameters"]["chunks"] == 4 and chunked.report["loss"]["jaccard"] == 1.0
    # Noisy blocks: chunks of only 3 blocks cost some utility (rows whose first min-hash is a
    # noise item are sorted away from their block), but not much.
    x = planted(blocks=12, size=10, items=12, noise=0.01, seed=8)
    whole = anonymize_sparse(x, 4, seed=2)
    chunked = anonymize_sparse(x, 4, seed=2, chunk_rows=30, executor="threads", workers=2)
    same = anonymize_sparse(x, 4, seed=2, chunk_rows=30, executor="inline")
    assert (chunked.published != same.published).nnz == 0  # the executor does not matter
    assert chunked.verification is not None and chunked.verification.passed
    j_whole = whole.report["loss"]["jaccard"]
    j_chunked = chunked.report["loss"]["jaccard"]
    assert j_whole - 0.15 < j_chunked <= j_whole + 0.05
    big = anonymize_sparse(x, 4, seed=2, chunk_rows=1000)
    assert (big.published != whole.published).nnz == 0  # one chunk = the unchunked algorithm


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), threads=st.integers(2, 4))
def test_meyerson_runs_on_threads_equal_the_sequential_runs(seed: int, threads: int) -> None:
    """The runs on a thread pool give the clustering of the runs one after another, and the
    cheapest run is the one the sequential loop (draws in run order from one generator) finds."""
    x = random_matrix(150, 25, 0.2, seed)
    one = cluster(x, 4, runs=5, seed=seed, threads=1)
    many = cluster(x, 4, runs=5, seed=seed, threads=threads)
    assert np.array_equal(one.labels, many.labels)
    assert one.facility_cost == many.facility_cost
    rng = np.random.default_rng(seed)
    xs = sp.csr_array(x)
    csc = sp.csc_array(xs)
    cost = opening_costs(xs, 4, 2.0)
    deg = np.diff(xs.indptr).astype(np.int64)
    totals = []
    for _ in range(5):
        order = rng.permutation(150).astype(np.int64)
        _, _, total = _meyerson(
            xs.indptr.astype(np.int64),
            xs.indices.astype(np.int64),
            csc.indptr.astype(np.int64),
            deg,
            cost,
            order,
            rng.random(150),
        )
        totals.append(total)
    assert one.facility_cost == min(totals)


def test_threads_must_be_positive() -> None:
    with pytest.raises(InputError, match="threads"):
        cluster(random_matrix(20, 5, 0.5, 0), 2, threads=0)


def test_opening_costs_on_threads_equal_one_thread() -> None:
    x = random_matrix(1500, 60, 0.08, 4)
    one = opening_costs(x, 5, threads=1)
    assert np.array_equal(opening_costs(x, 5, threads=3), one)
    # brute force on a few rows: 2α/(1−α) · Σ distances to the ⌈βk⌉ nearest rows (self included)
    d = dense(x).astype(np.int64)
    for i in (0, 17, 1499):
        dist = np.sort(np.abs(d - d[i]).sum(axis=1))[:10]
        assert one[i] == pytest.approx(2.0 * dist.sum())
