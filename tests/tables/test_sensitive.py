"""ℓ-diversity and t-closeness: the checks against brute force, the construction's guarantee,
the verifier's soundness (docs/guarantees/sensitive.md)."""

from __future__ import annotations

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
from anonymatch.tables.sensitive import (
    EncodedSensitive,
    SensitiveModel,
    SensitiveTarget,
    build_models,
    candidates,
    failing,
    person_stats,
)
from tests.factories import random_frame

QI = "n0,n1,c0,c1"


def _brute(values: list[int], m: int, model: SensitiveModel, q: np.ndarray) -> bool:
    """Whether one person's candidate values satisfy ``model``, straight from the definitions."""
    counts = np.bincount(values, minlength=m)
    p = counts / len(values)
    ok = True
    if model.l is not None:
        if model.diversity == "distinct":
            ok &= int((counts > 0).sum()) >= model.l
        elif model.diversity == "entropy":
            h = -sum(x * math.log(x) for x in p if x > 0)
            ok &= h >= math.log(model.l) - 1e-12
        else:
            r = sorted(counts, reverse=True)
            assert model.c is not None
            ok &= r[0] < model.c * sum(r[model.l - 1 :])
    if model.t is not None:
        if model.ordered:
            emd = sum(abs(a - b) for a, b in zip(np.cumsum(p)[:-1], np.cumsum(q)[:-1], strict=True))
            emd /= max(m - 1, 1)
        else:
            emd = 0.5 * float(np.abs(p - q).sum())
        ok &= emd <= model.t + 1e-12
    return bool(ok)


MODELS = st.one_of(
    st.builds(lambda ell: SensitiveModel("s", l=ell), st.integers(2, 4)),
    st.builds(lambda ell: SensitiveModel("s", l=ell, diversity="entropy"), st.integers(2, 4)),
    st.builds(
        lambda ell, c: SensitiveModel("s", l=ell, diversity="recursive", c=c),
        st.integers(2, 3),
        st.sampled_from([0.5, 1.0, 2.0, 3.0]),
    ),
    st.builds(lambda t: SensitiveModel("s", t=t), st.sampled_from([0.1, 0.25, 0.5])),
    st.builds(lambda t: SensitiveModel("s", t=t, ordered=True), st.sampled_from([0.1, 0.3])),
)


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 12),
    m=st.integers(2, 5),
    model=MODELS,
)
def test_person_checks_match_the_definitions(
    seed: int, n: int, m: int, model: SensitiveModel
) -> None:
    rng = np.random.default_rng(seed)
    cand = (rng.random((n, n)) < 0.5) | np.eye(n, dtype=bool)
    shown = rng.integers(0, m, n)
    original = rng.permutation(shown)
    sens = EncodedSensitive("s", np.arange(m), shown, original, model.ordered)
    q = sens.table_distribution()
    bad = failing(person_stats(sp.csr_array(cand.astype(np.int8)), sens, model), model)
    for i in range(n):
        values = [int(shown[j]) for j in np.flatnonzero(cand[i])]
        assert bad[i] == (not _brute(values, m, model, q)), (i, values)
    # the class-based kernel on count vectors agrees too
    target = SensitiveTarget.build([original], [m], (model,))
    counts = np.stack([np.bincount(shown[cand[i]], minlength=m) for i in range(n)])
    assert np.array_equal(target.ok(counts), ~bad)


def test_candidates_drop_rows_in_no_perfect_matching() -> None:
    # person 0 (age 1) is compatible with both rows; person 1 (age 5) only with row 1, so row 1
    # is person 1's in every consistent world and cannot be person 0's.
    original = pd.DataFrame({"age": [1, 5], "s": ["a", "b"]})
    release = pd.DataFrame({"age": ["1..5", "5"], "s": ["a", "b"]})
    from anonymatch.tables.cells import parse_cells
    from anonymatch.tables.pipeline import prepare
    from anonymatch.tables.schema import Schema

    _, enc, _ = prepare(original, Schema.build(["age"], ["age"]))
    cand = candidates(parse_cells(release, enc), enc)
    assert cand is not None
    assert cand.toarray().tolist() == [[1, 0], [0, 1]]


def _planted(n: int, seed: int) -> pd.DataFrame:
    """QIs that predict the sensitive value: plain k-anonymity leaves homogeneous people."""
    frame = random_frame(n, seed)
    frame["s"] = np.where(frame["n0"] < 15, "low", np.where(frame["c0"] == "v0", "mid", "high"))
    return frame


def _is_union_of_bicliques(graph: anonymatch.tables.pipeline.GeneralizationGraph) -> bool:
    """Every connected component of the bipartite graph (originals, published rows) is complete:
    each of its originals is joined to all of its rows."""
    adj = sp.csr_array(graph.matrix)
    n = adj.shape[0]
    both = sp.block_array([[None, adj], [adj.T, None]]).tocsr()
    _, labels = connected_components(both, directed=False)
    rows_per_component = np.bincount(labels[n:], minlength=labels.max() + 1)
    return bool(np.all(np.diff(adj.indptr) == rows_per_component[labels[:n]]))


@pytest.mark.parametrize("method", ["hungarian", "sortgreedy", "greedy", "mondrian"])
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
    plain_result = anonymatch.tables.anonymize(data, k=3, qi=QI, numeric="n0,n1", method=method)
    assert _is_union_of_bicliques(plain_result.graph) == (method == "mondrian")
    plain = anonymatch.tables.verify(
        data,
        plain_result.release,
        k=3,
        qi=QI,
        numeric="n0,n1",
        sensitive="s",
        **model,
    )
    result = anonymatch.tables.anonymize(
        data, k=3, qi=QI, numeric="n0,n1", sensitive="s", method=method, **model
    )
    check = anonymatch.tables.verify(
        data, result.release, k=3, qi=QI, numeric="n0,n1", sensitive="s", **model
    )
    assert check.passed, check.reason
    assert check.sensitive and all(s["passed"] for s in check.sensitive)
    assert _is_union_of_bicliques(result.graph)  # the shown values do not depend on the draw
    assert result.report["guarantee"]["sensitive"][0]["column"] == "s"
    if "l" in model and model.get("diversity", "distinct") == "distinct":
        assert not plain.passed  # the planted table needs the model


def test_tampered_release_fails_the_verifier() -> None:
    data = _planted(60, 5)
    result = anonymatch.tables.anonymize(data, k=3, qi=QI, numeric="n0,n1", sensitive="s", l=2)
    release = result.release.copy()
    # give every row of the first published class the same value, keeping the multiset: swap
    # values with rows outside the class
    cells = release[QI.split(",")].astype(str).agg("|".join, axis=1)
    first = np.flatnonzero(cells == cells.iloc[0])
    target = release.loc[first[0], "s"]
    others = [
        j for j in range(len(release)) if j not in set(first) and release.loc[j, "s"] == target
    ]
    for i, j in zip(first[1:], others, strict=False):
        release.loc[i, "s"], release.loc[j, "s"] = release.loc[j, "s"], release.loc[i, "s"]
    check = anonymatch.tables.verify(data, release, k=3, qi=QI, numeric="n0,n1", sensitive="s", l=2)
    assert not check.passed and "fail on 's'" in check.reason
    altered = result.release.copy()
    altered.loc[0, "s"] = "never-seen"
    with pytest.raises(InputError, match="not the original's"):
        anonymatch.tables.verify(data, altered, k=3, qi=QI, numeric="n0,n1", sensitive="s", l=2)


def test_infeasible_and_malformed_models() -> None:
    data = _planted(40, 1)
    with pytest.raises(InfeasibleError):
        anonymatch.tables.anonymize(data, k=3, qi=QI, sensitive="s", l=4)  # 3 values only
    with pytest.raises(InputError, match="--t must be in"):
        build_models(["s"], t=0.0)
    with pytest.raises(InputError, match="--sensitive"):
        build_models([], l=2)
    with pytest.raises(InputError, match="needs --c"):
        build_models(["s"], l=2, diversity="recursive")
    with pytest.raises(InputError, match="does not support"):
        anonymatch.tables.anonymize(data, k=3, qi=QI, sensitive="s", l=2, method="ring")
    numbers = data.assign(s=["x", *range(39)])
    with pytest.raises(InputError, match="non-number"):
        anonymatch.tables.anonymize(numbers, k=3, qi=QI, numeric="n0,s", sensitive="s", t=0.5)
