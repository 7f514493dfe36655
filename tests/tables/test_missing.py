"""Missing QI values published as '*', per-column missing codes, the suppression limit."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonymatch
from anonymatch.core.errors import InputError
from anonymatch.core.params import Execution
from anonymatch.tables.columns.schema import MissingCodes, Schema, encode_qi
from anonymatch.tables.job import ReleaseCheck
from anonymatch.tables.methods import names
from anonymatch.tables.models.suppress import choose_outliers
from anonymatch.tables.pipeline import prepare, verify_release
from tests.factories import anonymize_table as anonymize

QI = ["age", "edu", "sex", "job"]
NUMERIC = ["age", "edu"]
SCHEMA = Schema.build(QI, NUMERIC, ["s"])
CODES = MissingCodes(("", "?"), {"edu": ("-9", "-8")})


def _check(k: int, **keywords: object) -> ReleaseCheck:
    """What a release of SCHEMA read with CODES claims at level ``k``."""
    keywords.setdefault("l", 1)  # s unprotected, as the module's releases (no default ℓ = 2)
    return ReleaseCheck.of(SCHEMA, dict(k=k, na_values=CODES, **keywords))


METHODS = names(levels=False, missing=True)


def _frame(n: int, seed: int, missing: float = 0.15) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 70, n).astype(str),
            "edu": rng.integers(1, 16, n).astype(str),
            "sex": rng.choice(["F", "M"], n),
            "job": rng.choice(list("abcde"), n),
            "s": rng.choice(list("xyz"), n),
        }
    )
    for column, token in (("age", ""), ("edu", "-9"), ("edu", "-8"), ("job", "?")):
        frame.loc[rng.random(n) < missing / 2, column] = token
    return frame


def _expected_stars(
    release: anonymatch.tables.pipeline.Release,
    data: pd.DataFrame,
    schema: Schema = SCHEMA,
    codes: MissingCodes = CODES,
) -> None:
    """A published cell is '*' exactly where one of the originals linked to its row (the
    generalization graph) misses that attribute."""
    enc = encode_qi(data, schema, codes)
    members = release.graph.published_members()
    rows = np.repeat(np.arange(members.shape[0]), np.diff(members.indptr))
    for a in range(len(enc.num_names)):
        want = np.zeros(members.shape[0], bool)
        np.logical_or.at(want, rows, enc.num_missing[members.indices, a])
        assert np.array_equal(release.cells.num_star[:, a], want)
    for a in range(len(enc.cat_names)):
        want = np.zeros(members.shape[0], bool)
        np.logical_or.at(want, rows, enc.cat_missing[members.indices, a])
        assert np.array_equal(release.cells.cat_star[:, a], want)


@pytest.mark.parametrize("method", METHODS)
def test_missing_values_kept_starred_and_verified(method: str) -> None:
    data = _frame(60, 3)
    release = anonymize(data, 3, QI, NUMERIC, ["s"], method=method, seed=1, na_values=CODES, l=1)
    assert len(release.table) == 60  # nobody dropped for a missing value
    _expected_stars(release, data)
    assert verify_release(release.table, data, _check(3)).passed
    enc = encode_qi(data, SCHEMA, CODES)
    report = release.report
    assert report["input"]["missing_values"] == enc.num_missing.sum() + enc.cat_missing.sum()  # type: ignore[index]
    stars = release.cells.num_star.sum() + release.cells.cat_star.sum()
    assert report["loss"]["suppressed_cells"] == stars  # type: ignore[index]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(4, 14),
    k=st.integers(1, 3),
    seed=st.integers(0, 10_000),
    share=st.floats(0.0, 0.9),
    method=st.sampled_from(METHODS),
)
def test_property_small_tables_with_nans(
    n: int, k: int, seed: int, share: float, method: str
) -> None:
    data = _frame(n, seed, share)
    data.loc[data["age"] == "", "age"] = None  # a null is missing too
    release = anonymize(data, k, QI, NUMERIC, ["s"], method=method, seed=seed, na_values=CODES, l=1)
    _expected_stars(release, data)
    assert verify_release(release.table, data, _check(k)).passed


def test_verifier_missing_matches_only_star() -> None:
    data = _frame(40, 5)
    release = anonymize(data, 2, QI, NUMERIC, ["s"], seed=2, na_values=CODES, l=1)
    # the same release against an original in which some present values are declared
    # missing: the rows of those people show ranges, which a missing value cannot be in
    code = data.loc[~data["edu"].isin(["-9", "-8"]), "edu"].iloc[0]
    stricter = MissingCodes(CODES.tokens, {"edu": ("-9", "-8", code)})
    report = verify_release(
        release.table, data, ReleaseCheck.of(SCHEMA, dict(k=2, na_values=stricter, l=1))
    )
    assert not report.passed and "matches only" in report.reason
    # a release showing a present value where the original is missing fails too
    table = release.table.copy()
    starred = np.flatnonzero(table["edu"].to_numpy() == "*")
    table.loc[starred, "edu"] = "1..15"  # covers every present value, not a missing one
    assert not verify_release(table, data, _check(2)).passed
    # '*' stays compatible with any value: the release passes against a complete original
    filled = data.copy()
    filled.loc[filled["edu"].isin(["-9", "-8"]), "edu"] = "5"
    filled.loc[filled["age"] == "", "age"] = "40"
    filled.loc[filled["job"] == "?", "job"] = "a"
    assert verify_release(release.table, filled, _check(2)).passed


def test_per_column_codes_numeric_dtype_and_mapping() -> None:
    frame = pd.DataFrame(
        {"age": [30, -9, 41, 52, -9, 33], "n": [-9, 1, 2, 3, 4, 5], "c": list("abcabc")}
    )
    schema = Schema.build(["age", "n", "c"], ["age", "n"])
    enc = encode_qi(frame, schema, MissingCodes((), {"age": ("-9",)}))
    assert enc.num_missing[:, 0].tolist() == [False, True, False, False, True, False]
    assert not enc.num_missing[:, 1].any()  # -9 is a value in another column
    assert enc.num_span.tolist() == [22.0, 14.0]  # spans of the present values only
    result = anonymatch.anonymize(frame, k=2, qi="age,n,c", numeric="age,n",
                                  na_values={"age": [-9]}, seed=0)  # fmt: skip
    assert result.report["verification"]["passed"]
    assert result.report["parameters"]["na_codes"] == {"age": ["-9"]}
    with pytest.raises(InputError, match="unknown column 'nope'"):
        prepare(frame, schema, MissingCodes((), {"nope": ("1",)}))


def test_unsupported_methods_refuse_missing_values() -> None:
    data = _frame(30, 1)
    with pytest.raises(InputError, match="method 'mip' does not handle missing"):
        anonymize(data, 2, QI, NUMERIC, ["s"], method="mip", na_values=CODES, l=1)
    with pytest.raises(InputError, match="sensitive models.*does not handle missing"):
        anonymize(data, 2, QI, NUMERIC, ["s"], na_values=CODES, l=2)
    with pytest.raises(InputError, match="default of sensitive column 's'.*`l` 1 to publish"):
        anonymize(data, 2, QI, NUMERIC, ["s"], na_values=CODES)  # the default ℓ = 2 refused
    release = anonymize(data, 2, QI, NUMERIC, ["s"], na_values=CODES, drop_missing=True, l=1)
    assert release.report["input"]["dropped_missing"] > 0  # type: ignore[index]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(8, 60),
    k=st.integers(2, 4),
    limit=st.floats(0.0, 0.5),
    seed=st.integers(0, 1000),
)
def test_suppression_never_exceeds_the_limit(n: int, k: int, limit: float, seed: int) -> None:
    data = _frame(n, seed)
    _, enc, _ = prepare(data, SCHEMA, CODES)
    drop = choose_outliers(enc, k, limit)
    assert drop.sum() <= np.floor(limit * n + 1e-9) and n - drop.sum() >= k


def test_suppression_release_verified_within_the_limit_only() -> None:
    data = _frame(200, 11)
    plain = anonymize(data, 5, QI, NUMERIC, ["s"], seed=4, na_values=CODES, l=1)
    release = anonymize(
        data, 5, QI, NUMERIC, ["s"], seed=4, na_values=CODES, suppression_limit=0.05, l=1
    )
    dropped = release.report["input"]["suppressed"]  # type: ignore[index]
    assert 0 < dropped <= 10 and len(release.table) == 200 - dropped
    assert release.report["input"]["records"] == 200  # type: ignore[index]
    assert release.report["loss"]["gcp"] < plain.report["loss"]["gcp"]  # type: ignore[index]
    # the independent verifier: fewer rows pass only within the limit
    assert not verify_release(release.table, data, _check(5)).passed
    too_small = verify_release(release.table, data, _check(5, suppression_limit=0.01))
    assert not too_small.passed and "limit allows 2 fewer" in too_small.reason
    report = verify_release(release.table, data, _check(5, suppression_limit=0.05))
    assert report.passed and report.suppressed == dropped and report.n_original == 200
    # the search for the published people (used when the suppression rule's people fail)
    from anonymatch.tables.io.cells import parse_cells
    from anonymatch.tables.verify import verify

    _, enc, _ = prepare(data, SCHEMA, CODES)
    searched = verify(parse_cells(release.table, enc), enc, 5, 0.05)
    assert searched.passed and searched.suppressed == dropped
    # a release missing rows is not k-anonymous for lack of rows alone: k = 6 fails
    assert not verify_release(release.table, data, _check(40, suppression_limit=0.05)).passed


def test_suppression_limit_bad_values() -> None:
    data = _frame(20, 1)
    for bad in (-0.1, 1.0, "0.1", True):
        with pytest.raises(InputError, match="suppression_limit"):
            anonymize(data, 2, QI, NUMERIC, na_values=CODES, suppression_limit=bad)  # type: ignore[arg-type]


def test_streamed_path_keeps_missing_values(tmp_path: Path) -> None:
    from anonymatch.tables.streamed import release_frame, verify_file
    from tests.factories import stream_file as anonymize_file

    data = _frame(300, 8)
    source = tmp_path / "in.csv"
    data.to_csv(source, index=False)
    out = tmp_path / "out.csv"
    report = anonymize_file(
        source, out, 3, SCHEMA, na_values=CODES, executor="inline", partition_size=60, seed=3, l=1
    )
    published = release_frame(out)
    assert len(published) == 300 and report["input"]["missing_values"] > 0  # type: ignore[index]
    assert report["loss"]["suppressed_cells"] > 0  # type: ignore[index]
    assert verify_release(published.astype(str), data, _check(3)).passed
    check = verify_file(source, out, _check(3), 5, execution=Execution("inline"))
    assert check["passed"], check


@settings(max_examples=60, deadline=None)
@given(
    n_u=st.integers(2, 7),
    n_pub=st.integers(1, 6),
    k=st.integers(1, 3),
    seed=st.integers(0, 10_000),
)
def test_k_factor_subset_is_a_proof(n_u: int, n_pub: int, k: int, seed: int) -> None:
    """Whatever the search returns is a k-factor between the chosen originals and every
    published row (checked by the plain k-factor flow on the chosen sub-graph); and it finds one
    whenever the planted release (some originals fitting no row) has one."""
    import scipy.sparse as sp

    from anonymatch.core.matching import has_k_factor, k_factor_subset

    rng = np.random.default_rng(seed)
    c = sp.csr_array((rng.random((n_u, n_pub)) < 0.6).astype(np.int8))
    counts = rng.integers(1, 3, n_u)
    size = min(n_pub, int(counts.sum()))
    chosen, _ = k_factor_subset(c, counts, k, size)
    if chosen is not None:
        assert chosen.sum() == size and np.all(chosen <= counts)
        keep = chosen > 0
        assert has_k_factor(sp.csr_array(c[keep]), chosen[keep], k) == k * size
    # planted: a complete block of `size` originals (k-regular whenever size ≥ k) plus
    # outliers compatible with no row
    if size >= k:
        block = sp.csr_array(np.vstack([np.ones((1, size)), np.zeros((2, size))]).astype(np.int8))
        found, _ = k_factor_subset(block, np.array([size, 1, 2]), k, size)
        assert found is not None and found.tolist() == [size, 0, 0]


def test_suppression_with_a_sensitive_model_is_verified_on_the_kept_people() -> None:
    from anonymatch.tables.models.disclosure import SensitiveModels, build_models

    data = _frame(150, 21, missing=0.0)
    release = anonymize(data, 3, QI, NUMERIC, ["s"], seed=5, l=2, suppression_limit=0.05)
    dropped = release.report["input"]["suppressed"]  # type: ignore[index]
    assert dropped > 0 and len(release.table) == 150 - dropped
    models = build_models(("s",), 2, "distinct", None, None, ())
    report = verify_release(
        release.table,
        data,
        dataclasses.replace(
            ReleaseCheck.of(SCHEMA, dict(k=3, suppression_limit=0.05, l=2)),
            sensitive_models=SensitiveModels(models),
        ),
    )
    assert report.passed and report.sensitive and report.suppressed == dropped


# --------------------------------------------------------------------------- typed QIs

JOB_TREE = "a;ab;abc;*\nb;ab;abc;*\nc;c;abc;*\nd;de;de;*\ne;de;de;*\n"
SIZES = ("S", "M", "L", "XL")
TYPED_QI = ["age", "size", "when", "job"]


def _typed_schema(cells: str = "node") -> Schema:
    from anonymatch.tables.columns.hierarchy import parse_hierarchy
    from anonymatch.tables.columns.qitypes import build_types

    types = build_types(
        {"size": list(SIZES)}, {"when": "month"}, {"job": parse_hierarchy(JOB_TREE, "job.csv")},
        cells,
    )  # fmt: skip
    return Schema.build(TYPED_QI, ["age"], ["s"], types=types)


def _typed_frame(n: int, seed: int, share: float) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 70, n).astype(str),
            "size": rng.choice(SIZES, n),
            "when": [f"2018-{m:02d}-{d:02d}" for m, d in zip(rng.integers(1, 13, n),
                                                          rng.integers(1, 28, n), strict=True)],
            "job": rng.choice(list("abcde"), n),
            "s": rng.choice(list("xyz"), n),
        }
    )  # fmt: skip
    # survey codes and tokens: '-9' in the ordinal, '' in the date, '?' in the hierarchy
    for column, token in (("age", "-1"), ("size", "-9"), ("when", ""), ("job", "?")):
        frame.loc[rng.random(n) < share / 2, column] = token
    return frame


TYPED_CODES = MissingCodes(("", "?"), {"size": ("-9",), "age": ("-1",)})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(4, 16),
    k=st.integers(1, 3),
    seed=st.integers(0, 10_000),
    share=st.floats(0.0, 0.9),
    method=st.sampled_from(METHODS),
    cells=st.sampled_from(["node", "set"]),
)
def test_property_typed_qis_with_missing_values(
    n: int, k: int, seed: int, share: float, method: str, cells: str
) -> None:
    """A hierarchy, an ordinal and a date QI with missing values: the release verifies, a cell
    is '*' exactly where a linked original misses that attribute (never a node or a range), and
    every other hierarchy cell is the lowest node covering its linked values."""
    from anonymatch.tables.io.cells import parse_cells

    schema = _typed_schema(cells)
    data = _typed_frame(n, seed, share)
    types = schema.types
    release = anonymize(
        data, k, TYPED_QI, ["age"], ["s"], method=method, seed=seed, na_values=TYPED_CODES,
        types=types, l=1,
    )  # fmt: skip
    assert len(release.table) == n
    _expected_stars(release, data, schema, TYPED_CODES)
    enc = encode_qi(data, schema, TYPED_CODES)
    members = release.graph.published_members()
    tree = types.hierarchies["job"]
    (j,) = [a for a, name in enumerate(enc.cat_names) if name == "job"]
    want = release.cells.cat_star[:, j]  # checked by _expected_stars
    sets = release.cells.cat_sets[j]
    for row in np.flatnonzero(~want).tolist():  # closed under the hierarchy (node cells)
        linked = enc.cat[members.indices[members.indptr[row] : members.indptr[row + 1]], j]
        got = set(sets.indices[sets.indptr[row] : sets.indptr[row + 1]].tolist())
        if cells == "node":
            node = next(
                v for v in np.argsort(tree.count, kind="stable").tolist()
                if set(linked.tolist()) <= set(tree.node_leaves[[v]].indices.tolist())
            )  # fmt: skip
            assert got == set(tree.node_leaves[[node]].indices.tolist())
        else:
            assert got == set(linked.tolist())
    for row in np.flatnonzero(want).tolist():
        assert sets.indptr[row] == sets.indptr[row + 1]  # a '*' has no node
    # the text read back: '*' where a value is missing, and for the hierarchy also where the
    # node is the root (written '*' too: it covers every value, as a suppressed cell does)
    parsed = parse_cells(release.table, enc)
    assert np.array_equal(parsed.num_star, release.cells.num_star)  # rows stay aligned
    full = np.diff(sets.indptr) == tree.n_leaves
    shown = (release.table["job"] == "*").to_numpy()
    assert np.array_equal(shown, want | (full if cells == "node" else False))
    assert np.array_equal(parsed.cat_star[:, j], shown)
    assert verify_release(
        release.table, data, ReleaseCheck.of(schema, dict(k=k, na_values=TYPED_CODES, l=1))
    ).passed


def test_typed_qis_with_missing_values_through_the_cli_and_streamed(tmp_path: Path) -> None:
    """The CLI (in memory, streamed) with --hierarchy/--ordinal/--date and --na: every person
    kept, missing values published as '*', verify passes from the manifest alone."""
    import json

    from anonymatch.cli import main

    data = _typed_frame(90, 4, 0.3)
    source, tree = tmp_path / "in.csv", tmp_path / "job.csv"
    data.to_csv(source, index=False)
    tree.write_text(JOB_TREE)
    typed = ["--ordinal", "size=" + "|".join(SIZES), "--date", "when=month",
             "--hierarchy", f"job={tree}", "--na", "size=-9", "--na", "age=-1"]  # fmt: skip
    for executor in ("threads", "inline"):
        out, report = tmp_path / f"{executor}.csv", tmp_path / f"{executor}.json"
        code = main(["anonymize", str(source), "-o", str(out), "--report", str(report), "--k",
                     "3", "--qi", ",".join(TYPED_QI), "--numeric", "age", "--seed", "1", "-q",
                     "--executor", executor, "--partition-size", "30", *typed])  # fmt: skip
        assert code == 0
        manifest = json.loads(report.read_text())
        assert manifest["output"]["records"] == 90 and manifest["input"]["missing_values"] > 0
        published = pd.read_csv(out, dtype=str, keep_default_na=False)
        # every suppressed cell reads '*' (so may a hierarchy's root node: it covers all)
        stars = (published[TYPED_QI] == "*").to_numpy().sum()
        assert stars >= manifest["loss"]["suppressed_cells"] > 0
        nodes = published["job"][published["job"].str.startswith("~")]
        assert set(nodes) <= {"~ab", "~abc", "~de"}
        code = main(["verify", str(source), str(out), "--manifest", str(report), "-q", *typed])
        assert code == 0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="ab|\\é *?", max_size=4), max_size=30))
def test_sorted_codes_is_numpy_unique(labels: list[str]) -> None:
    """The categorical domain and codes of ``encode_qi`` (hashing, then sorting the distinct
    labels only) are exactly ``np.unique``'s, dtype included."""
    from anonymatch.tables.columns.schema import sorted_codes

    values = np.array(labels, dtype=object)
    domain, codes = sorted_codes(values)
    expected, inverse = np.unique(values, return_inverse=True)
    assert domain.dtype == expected.dtype and domain.tolist() == expected.tolist()
    assert np.array_equal(codes, inverse.reshape(-1))
