"""ReleaseFeatures: release cells and exact values into one feature space (issue 27)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import anonymatch
from anonymatch.core.errors import InputError
from anonymatch.tables.io.cells import write_release
from anonymatch.tables.io.release import read_release
from anonymatch.tables.models.features import ReleaseFeatures

LABELS = list("abcde")

cat_cell = st.one_of(
    st.just(None), st.frozensets(st.sampled_from(LABELS), min_size=1, max_size=len(LABELS))
)
num_cell = st.one_of(
    st.just("*"),
    st.tuples(st.integers(0, 50), st.integers(0, 20)).map(lambda t: f"{t[0]}..{t[0] + t[1]}"),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(num_cell, cat_cell), min_size=1, max_size=30))
def test_shapes_and_fractional_rows(rows: list[tuple[str, frozenset[str] | None]]) -> None:
    rel = pd.DataFrame({"x": [r[0] for r in rows], "c": [r[1] for r in rows]})
    f = ReleaseFeatures(numeric=["x"]).fit(rel)
    out = f.transform(rel)
    names = f.get_feature_names_out()
    assert out.shape == (len(rows), len(names))
    onehot = out[:, 2:]
    if onehot.shape[1]:
        np.testing.assert_allclose(onehot.sum(axis=1), 1.0)
    assert np.all(out[:, 1] >= 0)  # widths
    assert not np.isnan(out).any()


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(LABELS), min_size=1, max_size=20), st.integers(0, 100))
def test_exact_values_are_one_hot(values: list[str], number: int) -> None:
    rel = pd.DataFrame({"x": ["0..100"] * len(values), "c": [frozenset(LABELS)] * len(values)})
    f = ReleaseFeatures(numeric=["x"]).fit(rel)
    exact = pd.DataFrame({"x": [str(number)] * len(values), "c": values})
    out = f.transform(exact)
    np.testing.assert_array_equal(out[:, 0], number)
    np.testing.assert_array_equal(out[:, 1], 0)
    expected = np.array([[1.0 if v == leaf else 0.0 for leaf in LABELS] for v in values])
    np.testing.assert_array_equal(out[:, 2:], expected)


def test_suppressed_cells_take_the_prior() -> None:
    rel = pd.DataFrame(
        {"x": ["10..20", "30..30", "*"], "c": [frozenset("ab"), frozenset("a"), pd.NA]}
    )
    f = ReleaseFeatures(numeric=["x"]).fit(rel)
    out = f.transform(rel)
    np.testing.assert_allclose(out[2], [(15 + 30) / 2, 20.0, 0.75, 0.25])


def test_hierarchy_nodes_spread_over_leaves(tmp_path) -> None:
    from anonymatch.tables.columns.hierarchy import read_hierarchy

    path = tmp_path / "h.csv"
    path.write_text("a;AB;*\nb;AB;*\nc;CD;*\nd;CD;*\n")
    tree = read_hierarchy(path)
    rel = pd.DataFrame({"c": [frozenset(["~AB"]), frozenset(["c"])]})
    f = ReleaseFeatures(hierarchies={"c": tree}).fit(rel)
    assert f.get_feature_names_out().tolist() == ["c=a", "c=b", "c=c", "c=d"]
    np.testing.assert_allclose(f.transform(rel), [[0.5, 0.5, 0, 0], [0, 0, 1, 0]])


def test_read_release_in_a_pipeline(tmp_path) -> None:
    rng = np.random.default_rng(0)
    n = 120
    age = rng.integers(20, 70, n)
    sex = rng.choice(["F", "M"], n)
    y = np.where(age + rng.normal(0, 5, n) > 45, "hi", "lo")
    df = pd.DataFrame({"age": age, "sex": sex, "label": y})
    r = anonymatch.anonymize(df, k=3, qi="age,sex", numeric="age", seed=1)
    out = tmp_path / "r.csv"
    write_release(out, r.release, r.cells, r.qi)
    rel = read_release(out)
    model = make_pipeline(
        ReleaseFeatures(columns=["age", "sex"]), StandardScaler(), LogisticRegression()
    )
    model.fit(rel, rel["label"])
    assert model.score(df, df["label"]) > 0.7
    names = model[0].get_feature_names_out().tolist()
    assert names == ["age_mid", "age_width", "sex=F", "sex=M"]


def test_errors() -> None:
    with pytest.raises(InputError, match="DataFrame"):
        ReleaseFeatures().fit(np.zeros((2, 2)))
    with pytest.raises(InputError, match="no column 'z'"):
        ReleaseFeatures(columns=["z"]).fit(pd.DataFrame({"a": [1]}))
    f = ReleaseFeatures(numeric=["a"]).fit(pd.DataFrame({"a": ["1..2"]}))
    with pytest.raises(InputError, match="neither a number nor a range"):
        f.transform(pd.DataFrame({"a": ["x"]}))


def test_lazy_front_name() -> None:
    assert anonymatch.tables.ReleaseFeatures is ReleaseFeatures
