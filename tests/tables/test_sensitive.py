"""ℓ-diversity and t-closeness: the checks against brute force, the construction's guarantee,
the verifier's soundness (docs/guarantees/sensitive.md)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components

import anonymatch
from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.tables.columns.schema import Schema
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.methods import names
from anonymatch.tables.models.disclosure import SensitiveModel, build_models
from anonymatch.tables.models.sensitive import (
    EncodedSensitive,
    SensitiveTarget,
    check_model,
    describe_model,
    encode_sensitive,
    failing,
    person_stats,
)
from anonymatch.tables.pipeline import prepare
from tests.factories import one_per_shape, person_candidates, random_frame

QI = "n0,n1,c0,c1"
EPS = 1e-12  # the library's float slack on entropy and distance comparisons


# ---------------------------------------------------------------------------------------------
# brute force, straight from the definitions
# ---------------------------------------------------------------------------------------------


def _emd(counts: np.ndarray, q: np.ndarray, ordered: bool) -> float:
    p = counts / counts.sum()
    m = len(counts)
    if ordered:  # Σ over the first m − 1 values of |F_p − F_Q|, over m − 1
        fp, fq, total = 0.0, 0.0, 0.0
        for v in range(m - 1):
            fp += p[v]
            fq += q[v]
            total += abs(fp - fq)
        return total / max(m - 1, 1)
    return 0.5 * sum(abs(a - b) for a, b in zip(p, q, strict=True))


def _brute(counts: np.ndarray, model: SensitiveModel, q: np.ndarray) -> bool:
    """Whether a multiset of values (``counts[v]`` copies of value v) satisfies ``model``."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    assert total > 0
    if model.l is not None:
        if model.diversity == "distinct":
            if sum(1 for x in counts if x > 0) < model.l:
                return False
        elif model.diversity == "entropy":
            h = -sum((x / total) * math.log(x / total) for x in counts if x > 0)
            if h < math.log(model.l) - EPS:
                return False
        else:
            assert model.c is not None
            r = sorted((int(x) for x in counts), reverse=True)
            if not r[0] < model.c * sum(r[model.l - 1 :]):
                return False
    return not (model.t is not None and _emd(counts, q, model.ordered) > model.t + EPS)


MODELS = st.one_of(
    st.builds(lambda ell: SensitiveModel("s", l=ell), st.integers(2, 4)),
    st.builds(lambda ell: SensitiveModel("s", l=ell, diversity="entropy"), st.integers(2, 4)),
    st.builds(
        lambda ell, c: SensitiveModel("s", l=ell, diversity="recursive", c=c),
        st.integers(2, 3),
        st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0]),
    ),
    st.builds(lambda t: SensitiveModel("s", t=t), st.sampled_from([0.1, 0.25, 0.5, 1.0])),
    st.builds(lambda t: SensitiveModel("s", t=t, ordered=True), st.sampled_from([0.05, 0.1, 0.3])),
    st.builds(
        lambda ell, t, o: SensitiveModel("s", l=ell, t=t, ordered=o),
        st.integers(2, 3),
        st.sampled_from([0.2, 0.4]),
        st.booleans(),
    ),
)


@settings(max_examples=120, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 12),
    m=st.integers(1, 5),
    density=st.sampled_from([0.2, 0.5, 0.9]),
    model=MODELS,
)
def test_person_checks_match_the_definitions(
    seed: int, n: int, m: int, density: float, model: SensitiveModel
) -> None:
    """``person_stats``/``failing``/``check_model`` over a random candidate matrix agree with
    plain Python over each person's candidate values."""
    rng = np.random.default_rng(seed)
    cand = (rng.random((n, n)) < density) | np.eye(n, dtype=bool)  # nobody without candidates
    shown = rng.integers(0, m, n)
    original = rng.permutation(shown)
    sens = EncodedSensitive("s", np.arange(m), shown, original, model.ordered)
    q = np.bincount(original, minlength=m) / n
    assert np.allclose(sens.table_distribution(), q)
    matrix = sp.csr_array(cand.astype(np.int8))
    stats = person_stats(matrix, sens, model)
    bad = failing(stats, model)
    for i in range(n):
        counts = np.bincount(shown[cand[i]], minlength=m)
        p = counts / counts.sum()
        assert stats.size[i] == cand[i].sum()
        assert stats.distinct[i] == np.count_nonzero(counts)
        assert stats.top[i] == counts.max()
        assert stats.entropy[i] == pytest.approx(-sum(x * math.log(x) for x in p if x > 0))
        if model.t is not None:
            assert stats.emd is not None
            assert stats.emd[i] == pytest.approx(_emd(counts, q, model.ordered), abs=1e-12)
        if model.diversity == "recursive" and model.l is not None:
            assert stats.recursive_margin is not None and model.c is not None
            r = sorted(counts.tolist(), reverse=True)
            margin = model.c * sum(r[model.l - 1 :]) - r[0]
            assert stats.recursive_margin[i] == pytest.approx(margin)
        assert bad[i] == (not _brute(counts, model, q)), (i, counts.tolist())
    check = check_model(matrix, sens, model)
    assert check.passed == (not bad.any())
    assert check.failing == int(bad.sum()) and check.people == n
    homogeneous = sum(np.unique(shown[cand[i]]).size == 1 for i in range(n))
    assert check.homogeneous == homogeneous
    assert (check.reason == "ok") if check.passed else ("fail on 's'" in check.reason)
    json.dumps(check.to_dict())  # JSON-able


@st.composite
def _targets(
    draw: st.DrawFn,
) -> tuple[list[np.ndarray], list[int], list[SensitiveModel], np.ndarray]:
    """1–3 sensitive columns (each with its table's codes, its number of values m and a model)
    and 1–6 rows of value counts (a class per row, never empty in any column)."""
    columns, records = draw(st.integers(1, 3)), draw(st.integers(1, 30))
    codes, sizes, models = [], [], []
    for s in range(columns):
        m = draw(st.integers(1, 5))
        values = st.lists(st.integers(0, m - 1), min_size=records, max_size=records)
        codes.append(np.array(draw(values)))
        sizes.append(m)
        model = draw(MODELS)
        models.append(
            SensitiveModel(f"s{s}", model.l, model.diversity, model.c, model.t, model.ordered)
        )
    rows = draw(st.integers(1, 6))
    counts = np.zeros((rows, sum(sizes)), np.int64)
    for r in range(rows):
        start = 0
        for m in sizes:
            counts[r, start : start + m] = draw(
                st.lists(st.integers(0, 6), min_size=m, max_size=m).filter(any)
            )
            start += m
    return codes, sizes, models, counts


@settings(max_examples=200, deadline=None)
@given(case=_targets())
def test_class_kernel_matches_the_definitions(
    case: tuple[list[np.ndarray], list[int], list[SensitiveModel], np.ndarray],
) -> None:
    """``counts_ok`` (``SensitiveTarget.build(...).ok``) on count vectors: every column's model
    holds, by brute force, against that column's table distribution."""
    codes, sizes, models, counts = case
    target = SensitiveTarget.build(codes, sizes, tuple(models))
    got = target.ok(counts)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    for r in range(counts.shape[0]):
        want = True
        for s, model in enumerate(models):
            q = np.bincount(codes[s], minlength=sizes[s]) / len(codes[s])
            want &= _brute(counts[r, offsets[s] : offsets[s + 1]], model, q)
        assert bool(got[r]) == want, (r, counts[r].tolist(), models)
    # the slot layout of a class's counts, as the builders take them
    members = np.arange(0, len(codes[0]), 2)
    want_counts = [np.bincount(c[members], minlength=m) for c, m in zip(codes, sizes, strict=True)]
    assert np.array_equal(target.counts(members), np.concatenate(want_counts))


# ---------------------------------------------------------------------------------------------
# candidates and the verifier's soundness, on hand-made releases
# ---------------------------------------------------------------------------------------------


def _candidates_of(original: pd.DataFrame, release: pd.DataFrame, qi: str, numeric: str):
    numbers = [a for a in numeric.split(",") if a in qi.split(",")]
    _, enc, _ = prepare(original, Schema.build(qi.split(","), numbers))
    return person_candidates(parse_cells(release, enc), enc)


def test_candidates_drop_rows_in_no_perfect_matching() -> None:
    # person 0 (age 1) is compatible with both rows; person 1 (age 5) only with row 1, so row 1
    # is person 1's in every consistent world and cannot be person 0's.
    original = pd.DataFrame({"age": [1, 5], "s": ["a", "b"]})
    release = pd.DataFrame({"age": ["1..5", "5"], "s": ["a", "b"]})
    cand = _candidates_of(original, release, "age", "age")
    assert cand is not None
    assert cand.toarray().tolist() == [[1, 0], [0, 1]]
    # no perfect matching at all: nobody can be row 1's
    assert _candidates_of(original, pd.DataFrame({"age": ["1", "1"]}), "age", "age") is None


def _forced_release() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Four people; row 3 ("1..6") is compatible with everyone but must go to C or D (rows 2
    and 3 are the only ones they fit), so A and B see rows 0 and 1 only: value x twice."""
    original = pd.DataFrame({"age": [1, 2, 5, 6], "s": ["x", "x", "x", "y"]})
    release = pd.DataFrame({"age": ["1..2", "1..2", "5..6", "1..6"], "s": ["x", "x", "x", "y"]})
    return original, release


def test_verifier_counts_only_matchable_rows() -> None:
    original, release = _forced_release()
    cand = _candidates_of(original, release, "age", "age")
    assert cand is not None
    assert cand.toarray().tolist() == [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]]
    # over the compatible rows alone A and B would see {x, y}: the release is a 2-factor and
    # looks 2-diverse, but A and B are homogeneous in every world consistent with it
    kw = {"k": 2, "qi": "age", "numeric": "age", "sensitive": "s"}
    check = anonymatch.tables.verify(original, release, l=2, **kw)
    assert not check.passed and check.min_matches_original == 2
    assert check.sensitive[0]["failing"] == 2 and check.sensitive[0]["homogeneous"] == 2
    assert "2 of 4 people fail on 's'" in check.reason
    assert not anonymatch.tables.verify(original, release, **kw).passed  # the default ℓ = 2
    assert anonymatch.tables.verify(original, release, l=1, **kw).passed  # k alone holds


def test_homogeneous_class_fails_and_a_diverse_one_passes() -> None:
    original = pd.DataFrame({"age": [1, 2, 3, 7, 8, 9], "s": ["a", "a", "a", "a", "b", "c"]})
    cells = ["1..3"] * 3 + ["7..9"] * 3
    kw = {"k": 3, "qi": "age", "numeric": "age", "sensitive": "s"}
    homogeneous = pd.DataFrame({"age": cells, "s": ["a", "a", "a", "b", "a", "c"]})
    check = anonymatch.tables.verify(original, homogeneous, l=2, **kw)
    assert not check.passed
    assert check.sensitive[0]["failing"] == 3 and check.sensitive[0]["homogeneous"] == 3
    # Q = (4, 1, 1)/6: the all-"a" class is at distance ½(1/3 + 1/6 + 1/6) = 1/3
    assert anonymatch.tables.verify(original, homogeneous, t=1 / 3 + 1e-9, **kw).passed
    assert not anonymatch.tables.verify(original, homogeneous, t=0.3, **kw).passed
    # swapping one value across the classes (same multiset) makes both classes diverse
    diverse = pd.DataFrame({"age": cells, "s": ["a", "b", "a", "a", "a", "c"]})
    assert anonymatch.tables.verify(original, diverse, l=2, **kw).passed
    assert not anonymatch.tables.verify(original, diverse, l=3, **kw).passed


def _planted(n: int, seed: int) -> pd.DataFrame:
    """QIs that predict the sensitive value: plain k-anonymity leaves homogeneous people."""
    frame = random_frame(n, seed)
    frame["s"] = np.where(frame["n0"] < 15, "low", np.where(frame["c0"] == "v0", "mid", "high"))
    return frame


def _class_of_row(release: pd.DataFrame) -> np.ndarray:
    cells = release[QI.split(",")].astype(str).agg("|".join, axis=1)
    return pd.factorize(cells)[0]


def test_tampered_release_fails_the_verifier() -> None:
    data = _planted(60, 5)
    kw = {"k": 3, "qi": QI, "numeric": "n0,n1", "sensitive": "s", "l": 2}
    result = anonymatch.tables.anonymize(data, seed=1, **kw)
    assert anonymatch.tables.verify(data, result.release, **kw).passed
    # the values within each class, in any order, are what the release shows: still passes
    shuffled = result.release.copy()
    rng = np.random.default_rng(0)
    for g in np.unique(labels := _class_of_row(shuffled)):
        rows = np.flatnonzero(labels == g)
        shuffled.loc[rows, "s"] = shuffled.loc[rng.permutation(rows), "s"].to_numpy()
    assert anonymatch.tables.verify(data, shuffled, **kw).passed
    # give every row of the first published class the same value, keeping the multiset: swap
    # values with rows outside the class
    release = result.release.copy()
    first = np.flatnonzero(labels == labels[0])
    target = release.loc[first[0], "s"]
    others = [
        j for j in range(len(release)) if j not in set(first) and release.loc[j, "s"] == target
    ]
    for i, j in zip(first[1:], others, strict=False):
        release.loc[i, "s"], release.loc[j, "s"] = release.loc[j, "s"], release.loc[i, "s"]
    assert release["s"].value_counts().equals(result.release["s"].value_counts())
    check = anonymatch.tables.verify(data, release, **kw)
    assert not check.passed and "fail on 's'" in check.reason
    assert check.sensitive[0]["homogeneous"] >= len(first)
    # a release must carry the original's values
    altered = result.release.copy()
    altered.loc[0, "s"] = "never-seen"
    with pytest.raises(InputError, match="not the original's"):
        anonymatch.tables.verify(data, altered, **kw)
    swapped = result.release.copy()
    swapped.loc[swapped["s"] == "low", "s"] = "mid"  # same set of values, other counts
    with pytest.raises(InputError, match="not the original's"):
        anonymatch.tables.verify(data, swapped, **kw)
    with pytest.raises(InputError, match="no sensitive column"):
        anonymatch.tables.verify(data, result.release.drop(columns="s"), **kw)


# ---------------------------------------------------------------------------------------------
# the construction: every method's release satisfies its model, from the release alone
# ---------------------------------------------------------------------------------------------

METHODS = [m for m in names(sensitive=True) if m != "mip"]  # the MIP: once, below
MODEL_CASES = [
    {"l": 2},
    {"l": 2, "diversity": "entropy"},
    {"l": 2, "diversity": "recursive", "c": 3.0},
    {"t": 0.5},
    {"t": 0.3, "ordered": True},
]
MODEL_IDS = ["distinct", "entropy", "recursive", "t-equal", "t-ordered"]


def _model(case: dict) -> SensitiveModel:
    case = dict(case)
    return SensitiveModel("s", ordered=case.pop("ordered", False), **case)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", MODEL_CASES, ids=MODEL_IDS)
@settings(max_examples=6, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(20, 60),
    k=st.integers(2, 4),
    m=st.integers(2, 5),
    skew=st.sampled_from([0.0, 0.5, 1.5]),
)
def test_every_release_satisfies_its_model(
    method: str, case: dict, seed: int, n: int, k: int, m: int, skew: float
) -> None:
    """Random table, random sensitive column of m values (each present, frequencies ∝ e^(−skew·v)):
    ``anonymize`` raises InfeasibleError exactly when the table itself fails the model, and
    otherwise its release passes ``verify`` with the same k and model, every person's candidate
    rows (recomputed from the release) satisfying the model by brute force."""
    model = _model(case)
    rng = np.random.default_rng(seed)
    frame = random_frame(n, seed)
    weights = np.exp(-skew * np.arange(m))
    codes = np.concatenate([np.arange(m), rng.choice(m, n - m, p=weights / weights.sum())])
    frame["s"] = rng.permutation(codes) * 10 if model.ordered else [f"s{v}" for v in codes]
    numeric = "n0,n1,s" if model.ordered else "n0,n1"
    params = {k_: v for k_, v in case.items() if k_ != "ordered"}
    kw = {"k": k, "qi": QI, "numeric": numeric, "sensitive": "s", **params}
    table_counts = np.bincount(codes, minlength=m)
    if not _brute(table_counts, model, table_counts / n):
        with pytest.raises(InfeasibleError, match="cannot satisfy"):
            anonymatch.tables.anonymize(frame, method=method, **kw)
        return
    result = anonymatch.tables.anonymize(frame, method=method, seed=seed, **kw)
    # the default structure publishes classes (rings only by name: tests/tables/test_circulant.py)
    assert result.report["guarantee"].get("construction") in (None, "classes")
    check = anonymatch.tables.verify(frame, result.release, **kw)
    assert check.passed, check.reason
    assert [s["passed"] for s in check.sensitive] == [True]
    assert _is_union_of_bicliques(result.graph)
    # recompute every person's candidates from the release and check them by brute force
    cand = _candidates_of(frame, result.release, QI, numeric)
    assert cand is not None
    sens = encode_sensitive("s", result.release["s"], frame["s"], model.ordered)
    q = sens.table_distribution()
    cand = sp.csr_array(cand)
    for i in range(n):
        rows = cand.indices[cand.indptr[i] : cand.indptr[i + 1]]
        assert len(rows) >= k
        shown = np.bincount(sens.published[rows], minlength=sens.m)
        assert _brute(shown, model, q), (i, shown.tolist())
        if model.l is not None and model.diversity == "distinct":
            assert np.count_nonzero(shown) >= model.l


@pytest.mark.parametrize("method", names(sensitive=True))
def test_more_values_than_the_table_has_is_infeasible(method: str) -> None:
    data = _planted(20, 1)  # values low, mid, high
    kw = {"k": 2, "qi": QI, "numeric": "n0,n1", "sensitive": "s", "method": method}
    with pytest.raises(InfeasibleError, match="3 distinct values"):
        anonymatch.tables.anonymize(data, l=4, **kw)
    with pytest.raises(InfeasibleError):
        anonymatch.tables.anonymize(data.assign(s="same"), l=2, **kw)
    skewed = data.assign(s=["rare", *["common"] * 19])
    with pytest.raises(InfeasibleError):
        anonymatch.tables.anonymize(skewed, l=2, diversity="entropy", **kw)
    with pytest.raises(InfeasibleError):
        anonymatch.tables.anonymize(skewed, l=2, diversity="recursive", c=3.0, **kw)


def test_feasible_table_is_never_called_infeasible() -> None:
    # 15 × "a", 7 × "b": recursive (3, 2)-diversity holds for the table (15 < 3·7), but the
    # greedy k-member clustering leaves records that fit no class; the table must then be one
    # class rather than an InfeasibleError (Mondrian finds classes on the same input)
    rng = np.random.default_rng(34)
    data = random_frame(22, 34).assign(s=rng.permutation(["a"] * 15 + ["b"] * 7))
    kw = {"k": 2, "qi": QI, "numeric": "n0,n1", "sensitive": "s", "l": 2}
    kw |= {"diversity": "recursive", "c": 3.0}
    for method in one_per_shape():
        result = anonymatch.tables.anonymize(data, method=method, seed=1, **kw)
        assert anonymatch.tables.verify(data, result, **kw).passed  # with a ring certificate


def test_mip_with_a_model() -> None:
    data = _planted(16, 4)
    kw = {"k": 2, "qi": QI, "numeric": "n0,n1", "sensitive": "s", "l": 2}
    result = anonymatch.tables.anonymize(data, method="mip", seed=3, time_limit=5.0, **kw)
    assert anonymatch.tables.verify(data, result, **kw).passed
    assert _is_union_of_bicliques(result.graph) == (
        result.report["guarantee"]["construction"] == "classes"
    )
    assert result.report["method"] == "mip"


# ---------------------------------------------------------------------------------------------
# classes: why the guarantee holds for every draw, and what it buys
# ---------------------------------------------------------------------------------------------


def _is_union_of_bicliques(graph: GeneralizationGraph) -> bool:
    """Every connected component of the bipartite graph (originals, published rows) is complete:
    each of its originals is joined to all of its rows."""
    adj = sp.csr_array(graph.matrix)
    n = adj.shape[0]
    both = sp.block_array([[None, adj], [adj.T, None]]).tocsr()
    _, labels = connected_components(both, directed=False)
    rows_per_component = np.bincount(labels[n:], minlength=labels.max() + 1)
    originals_per_component = np.bincount(labels[:n], minlength=labels.max() + 1)
    return bool(
        np.all(np.diff(adj.indptr) == rows_per_component[labels[:n]])
        and np.array_equal(rows_per_component, originals_per_component)
    )


def test_biclique_oracle() -> None:
    ring = GeneralizationGraph.from_edges(
        np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 1, 2, 2, 0]), 3
    )
    pairs = GeneralizationGraph.from_edges(np.array([0, 0, 1, 1, 2]), np.array([0, 1, 0, 1, 2]), 3)
    assert not _is_union_of_bicliques(ring) and _is_union_of_bicliques(pairs)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    "model",
    [
        {"l": 2},
        {"l": 2, "diversity": "entropy"},
        {"l": 2, "diversity": "recursive", "c": 3.0},
        {"t": 0.4},
    ],
)
def test_every_release_satisfies_its_model_for_every_draw(method: str, model: dict) -> None:
    data = _planted(80, 3)
    kw = {"k": 3, "qi": QI, "numeric": "n0,n1", "sensitive": "s", "method": method}
    plain_result = anonymatch.tables.anonymize(data, seed=2, l=1, **kw)  # unprotected
    assert _is_union_of_bicliques(plain_result.graph) == (method == "mondrian")
    kw.pop("method")
    plain = anonymatch.tables.verify(data, plain_result.release, **kw, **model)
    result = anonymatch.tables.anonymize(data, method=method, seed=2, **kw, **model)
    check = anonymatch.tables.verify(data, result, **kw, **model)  # a ring's certificate too
    assert check.passed, check.reason
    assert check.sensitive and all(s["passed"] for s in check.sensitive)
    # the shown values do not depend on the draw: a class's rows show the class's values (the
    # default structure: classes, never rings, issue 36)
    assert _is_union_of_bicliques(result.graph)
    # the planted QIs give plain k-anonymity homogeneous people; the model leaves none
    assert plain.min_matches_original >= 3 and not plain.passed
    assert plain.sensitive[0]["homogeneous"] > 0
    assert check.sensitive[0]["homogeneous"] == 0


def test_release_does_not_depend_on_the_draw() -> None:
    """Two draws of the privacy step: the same classes, so the same candidate value counts."""
    data = _planted(40, 7)
    kw = {"k": 3, "qi": QI, "numeric": "n0,n1", "sensitive": "s", "l": 2}
    shown = []
    for seed in (1, 2):
        result = anonymatch.tables.anonymize(data, seed=seed, **kw)
        cand = _candidates_of(data, result.release, QI, "n0,n1")
        assert cand is not None
        sens = encode_sensitive("s", result.release["s"], data["s"], False)
        stats = person_stats(cand, sens)
        shown.append((stats.size.tolist(), stats.distinct.tolist(), stats.top.tolist()))
    assert shown[0] == shown[1]


# ---------------------------------------------------------------------------------------------
# the manifest and the models' parameters
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "described"),
    [
        ({"l": 2}, {"diversity": "distinct", "l": 2}),
        ({"l": 2, "diversity": "entropy"}, {"diversity": "entropy", "l": 2}),
        (
            {"l": 2, "diversity": "recursive", "c": 3.0},
            {"diversity": "recursive", "l": 2, "c": 3.0},
        ),
        ({"t": 0.5}, {"t": 0.5, "ground_distance": "equal"}),
        (
            {"l": 2, "t": 0.5},
            {"diversity": "distinct", "l": 2, "t": 0.5, "ground_distance": "equal"},
        ),
    ],
)
def test_manifest_records_models_and_checks(model: dict, described: dict) -> None:
    data = _planted(30, 2)
    seed = 918_273_645
    result = anonymatch.tables.anonymize(
        data, k=3, qi=QI, numeric="n0,n1", sensitive="s", seed=seed, **model
    )
    report = result.report
    guarantee, verification = report["guarantee"], report["verification"]
    assert isinstance(guarantee, dict) and isinstance(verification, dict)
    assert guarantee["model"] == "k-anonymity" and guarantee["k"] == 3
    assert guarantee["sensitive"] == [{"column": "s", **described}]
    (check,) = verification["sensitive"]
    assert check["passed"] and check["failing"] == 0 and check["people"] == 30
    assert check["model"] == guarantee["sensitive"][0] and check["reason"] == "ok"
    assert verification["passed"]
    text = json.dumps(report)
    assert str(seed) not in text and report["randomness"] == {"source": "seed"}
    plain = anonymatch.tables.anonymize(
        data, k=3, qi=QI, numeric="n0,n1", sensitive="s", seed=1, l=1
    )
    assert "sensitive" not in plain.report["guarantee"]
    assert plain.report["guarantee"]["unprotected"] == ["s"]


def test_ordered_ground_distance_in_the_manifest() -> None:
    data = _planted(30, 2).assign(s=np.arange(30) % 5 * 10)
    result = anonymatch.tables.anonymize(
        data, k=3, qi=QI, numeric="n0,n1,s", sensitive="s", t=0.4, seed=1
    )
    (model,) = result.report["guarantee"]["sensitive"]
    assert model == {"column": "s", "t": 0.4, "ground_distance": "ordered"}


def test_per_column_models() -> None:
    default, one = build_models(["s", "u"], l={"u": 3})
    assert one == SensitiveModel("u", l=3) and not one.default
    assert default == SensitiveModel("s", l=2) and default.default  # named, no model
    (only,) = build_models(["s", "u"], l={"s": 1, "u": 3})  # l = 1: s unprotected
    assert only == SensitiveModel("u", l=3)
    (closeness,) = build_models(["s"], l=1, t=0.5)  # no ℓ, but t
    assert closeness == SensitiveModel("s", t=0.5)
    both = build_models(["s", "u"], l=2, t={"s": 0.5}, ordered=["s"])
    assert both == (SensitiveModel("s", l=2, t=0.5, ordered=True), SensitiveModel("u", l=2))
    assert describe_model(both[0]) == "distinct l-diversity with l = 2 and t-closeness with t = 0.5"
    rec = build_models(["s"], l=3, diversity="recursive", c=2)
    assert describe_model(rec[0]) == "recursive l-diversity with l = 3, c = 2"


def test_infeasible_and_malformed_models() -> None:
    data = _planted(40, 1)
    with pytest.raises(InfeasibleError):
        anonymatch.tables.anonymize(data, k=3, qi=QI, sensitive="s", l=4)  # 3 values only
    for bad_t in (0.0, 1.5, -0.1, float("nan")):
        with pytest.raises(InputError, match="`t` must be in"):
            build_models(["s"], t=bad_t)
    for bad_l in (0, -1, 2.0, True, "2"):
        with pytest.raises(InputError, match="`l` must be an integer"):
            build_models(["s"], l=bad_l)
    with pytest.raises(InputError, match="`sensitive`"):
        build_models([], l=2)
    with pytest.raises(InputError, match="needs `c`"):
        build_models(["s"], l=2, diversity="recursive")
    with pytest.raises(InputError, match="`c` must be a positive"):
        build_models(["s"], l=2, diversity="recursive", c=0.0)
    with pytest.raises(InputError, match="`c` applies"):
        build_models(["s"], l=2, c=2.0)
    with pytest.raises(InputError, match="need `l`"):
        build_models(["s"], t=0.5, diversity="entropy")
    with pytest.raises(InputError, match="unknown diversity"):
        build_models(["s"], l=2, diversity="shannon")
    with pytest.raises(InputError, match="not a `sensitive` column"):
        build_models(["s"], l={"zz": 2})
    for method in ("ring",):
        with pytest.raises(InputError, match="does not support"):
            anonymatch.tables.anonymize(data, k=3, qi=QI, sensitive="s", l=2, method=method)
    with pytest.raises(InputError, match="both a quasi-identifier"):
        anonymatch.tables.anonymize(data, k=3, qi=QI, sensitive="c0", l=2)
    numbers = data.assign(s=["x", *range(39)])
    with pytest.raises(InputError, match="non-number"):
        anonymatch.tables.anonymize(numbers, k=3, qi=QI, numeric="n0,s", sensitive="s", t=0.5)
    with pytest.raises(InputError, match="non-number"):
        anonymatch.tables.verify(numbers, numbers, k=1, qi=QI, numeric="n0,s", sensitive="s", t=0.5)
