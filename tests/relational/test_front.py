"""The relational-transaction kind: input checks, worked examples, the verifier rejecting a
tampered release, the class baseline, the JSONL round trip and the utility figures."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.relational import anonymize, evaluate, verify
from anonymatch.relational.io import (
    People,
    RelationalRelease,
    from_frames,
    release_from_objects,
    release_lines,
)
from anonymatch.relational.job import RelationalJob
from anonymatch.relational.methods import names
from anonymatch.sets.io import SetRelease

QI = ["age", "sex"]
NUM = ["age"]


def small_people(n: int = 40, seed: int = 0) -> People:
    rng = np.random.default_rng(seed)
    ids = [f"p{i}" for i in range(n)]
    table = pd.DataFrame(
        {
            "id": ids,
            "age": rng.integers(20, 60, n),
            "sex": rng.choice(["F", "M"], n),
            "note": rng.choice(["x", "y"], n),
        }
    )
    rows = [(ids[i], f"c{c}") for i in range(n) for c in rng.choice(8, rng.integers(0, 4), False)]
    items = pd.DataFrame(rows, columns=["id", "code"])
    return from_frames(table, items, "id", "code")


def test_worked_example_two_people_per_record() -> None:
    table = pd.DataFrame({"id": list("abcd"), "age": [30, 31, 40, 41], "sex": list("FFMM")})
    items = pd.DataFrame({"id": list("abcd"), "code": list("xxyy")})
    people = from_frames(table, items, "id", "code")
    result = anonymize(people, k=2, qi=QI, numeric=NUM, seed=0)
    assert result.verification.passed
    # the items of each pair agree: every record is certain of its one item
    assert np.diff(result.release.sets.uncertain.indptr).sum() == 0
    assert sorted(result.release.table["age"]) == ["30..31", "30..31", "40..41", "40..41"]
    assert "id" not in result.release.table.columns


@pytest.mark.parametrize("method", names())
def test_every_method_passes_the_verifier(method: str) -> None:
    people = small_people()
    result = anonymize(people, k=3, qi=QI, numeric=NUM, method=method, seed=1)
    report = verify(people, result.release, k=3, qi=QI, numeric=NUM)
    assert report.passed and report.k_factor_flow == 3 * people.n
    assert result.report["data_kind"] == "relational"


def test_item_weight_trades_cells_for_items() -> None:
    people = small_people(120, seed=3)
    plain = anonymize(people, k=4, qi=QI, numeric=NUM, item_weight=0.0, seed=0)
    joint = anonymize(people, k=4, qi=QI, numeric=NUM, item_weight=1.0, seed=0)
    assert joint.report["loss"]["mean_uncertain"] < plain.report["loss"]["mean_uncertain"]


def tampered(release: RelationalRelease, record: int) -> RelationalRelease:
    """The release with one record's set part narrowed to its certain items (no uncertainty,
    no error allowed): the people it hid behind the uncertain items no longer match it."""
    s = release.sets
    unc = sp.lil_array(s.uncertain)
    unc[record, :] = False
    t = s.max_errors.copy()
    t[record] = 0
    sets = SetRelease(s.base, sp.csr_array(unc), t, None, s.items, s.integer_items)
    return dataclasses.replace(release, sets=sets)


def test_verifier_rejects_a_tampered_release() -> None:
    people = small_people()
    result = anonymize(people, k=3, qi=QI, numeric=NUM, seed=2)
    loose = int(np.argmax(np.diff(result.release.sets.uncertain.indptr)))
    assert np.diff(result.release.sets.uncertain.indptr)[loose] > 0
    report = verify(people, tampered(result.release, loose), k=3, qi=QI, numeric=NUM)
    assert not report.passed
    # a narrowed QI cell breaks it too
    table = result.release.table.copy()
    table.loc[0, "age"] = "0"
    cells = dataclasses.replace(result.release, table=table)
    assert not verify(people, cells, k=3, qi=QI, numeric=NUM).passed
    # and so does a missing record
    short = dataclasses.replace(
        result.release,
        table=result.release.table.iloc[1:].reset_index(drop=True),
    )
    assert "records" in verify(people, short, k=3, qi=QI, numeric=NUM).reason


def test_jsonl_round_trip_verifies() -> None:
    import json

    people = small_people()
    result = anonymize(people, k=3, qi=QI, numeric=NUM, seed=4)
    lines = release_lines(result.release)
    first = json.loads(lines[0])
    assert list(first)[:5] == ["age", "sex", "items", "uncertain", "max_errors"]
    assert "note" in first and "id" not in first
    back = release_from_objects([json.loads(x) for x in lines], people, QI)
    assert verify(people, back, k=3, qi=QI, numeric=NUM).passed


def test_one_long_table_with_repeated_attributes() -> None:
    long = pd.DataFrame(
        {"id": list("aabbcd"), "age": [30, 30, 31, 31, 40, 41], "code": list("xyxyzz")}
    )
    people = from_frames(long, None, "id", "code")
    assert people.n == 4 and list(people.table.columns) == ["id", "age"]
    assert people.items.matrix.toarray().sum(axis=1).tolist() == [2, 2, 1, 1]
    assert anonymize(people, k=2, qi=["age"], numeric=["age"], seed=0).verification.passed


def test_missing_item_codes_mean_no_item() -> None:
    table = pd.DataFrame({"id": list("abc"), "age": [1, 2, 3]})
    items = pd.DataFrame({"id": list("abcc"), "code": ["-1", "x", "x", "x"]})
    people = from_frames(table, items, "id", "code", na_items=["-1"])
    assert people.items.matrix.toarray().sum(axis=1).tolist() == [0, 1, 1]
    assert people.duplicates_removed == 1


@pytest.mark.parametrize(
    ("table", "items", "id_column", "message"),
    [
        ({"id": ["a"], "age": [1]}, {"id": ["a"], "code": ["x"]}, "nope", "unknown id column"),
        ({"id": ["a", "a"], "age": [1, 2], "code": ["x", "y"]}, None, "id", "conflicting"),
        ({"id": ["a"], "age": [1]}, {"id": ["a", "z"], "code": ["x", "y"]}, "id", "not in"),
        ({"id": ["a"], "age": [1]}, {"id": ["a"], "code": ["-1"]}, "id", "empty"),
        ({"id": ["a", "a"], "age": [1, 1]}, {"id": ["a"], "code": ["x"]}, "id", "more than one"),
    ],
)
def test_bad_input_is_one_input_error(
    table: dict[str, list[object]], items: dict[str, list[object]] | None, id_column: str,
    message: str,
) -> None:  # fmt: skip
    frame = pd.DataFrame(items) if items is not None else None
    with pytest.raises(InputError, match=message):
        from_frames(pd.DataFrame(table), frame, id_column, "code", na_items=["-1"])


def test_job_checks() -> None:
    with pytest.raises(InputError, match="`k`"):
        RelationalJob.build(dict(k=True, qi=QI))
    with pytest.raises(InputError, match="`item_weight`"):
        RelationalJob.build(dict(k=2, qi=QI, item_weight=-1.0))
    with pytest.raises(InputError, match="partition_size"):
        RelationalJob.build(dict(k=2, qi=QI, method="classes", partition_size=10))
    with pytest.raises(InputError, match="unknown parameter"):
        RelationalJob.build(dict(k=2, qi=QI, ell=2))
    with pytest.raises(InfeasibleError):
        anonymize(small_people(5), k=6, qi=QI, numeric=NUM)
    with pytest.raises(TypeError):
        anonymize(pd.DataFrame(), k=2, qi=QI)  # type: ignore[arg-type]


def test_evaluate_figures_and_baseline_comparison() -> None:
    people = small_people(150, seed=5)
    free = anonymize(people, k=5, qi=QI, numeric=NUM, item_weight=0.05, seed=0)
    base = anonymize(people, k=5, qi=QI, numeric=NUM, method="classes", seed=0)
    f = evaluate(people, free, qi=QI, numeric=NUM, queries=200)
    b = evaluate(people, base, qi=QI, numeric=NUM, queries=200)
    assert 0.0 <= f.relational_gcp <= 1.0 and f.queries == 200
    assert f.min_candidates >= 5 and b.min_candidates >= 5
    assert f.mean_uncertain < b.mean_uncertain
    # the true record of a person is exact on a query about that person alone: errors finite
    assert np.isfinite(f.query_error) and np.isfinite(b.query_error)


def brute_force_matches(people: People, release: RelationalRelease, qi: list[str]) -> np.ndarray:
    """n × n_published bool: the matching rule of docs/guarantees/relational.md, cell by cell
    and item by item in Python."""
    x = people.items.matrix
    out = np.zeros((people.n, release.n), bool)
    base, unc = sp.csr_array(release.sets.base), sp.csr_array(release.sets.uncertain)
    for j in range(release.n):
        b = set(base.indices[base.indptr[j] : base.indptr[j + 1]].tolist())
        u = set(unc.indices[unc.indptr[j] : unc.indptr[j + 1]].tolist())
        t = int(release.sets.max_errors[j])
        for i in range(people.n):
            r = set(x.indices[x.indptr[i] : x.indptr[i + 1]].tolist())
            sets_ok = r - b <= u and (b - u) <= r and len(r ^ b) <= t
            cells_ok = True
            for name in qi:
                cell, value = str(release.table[name][j]), people.table[name][i]
                if cell == "*":
                    continue
                if name in NUM:
                    lo, _, hi = cell.partition("..")
                    cells_ok &= float(lo) <= value <= float(hi or lo)
                else:
                    cells_ok &= str(value) in cell.split("|")
            out[i, j] = sets_ok and cells_ok
    return out


@pytest.mark.parametrize("method", names())
def test_joint_compatibility_is_the_rule(method: str) -> None:
    from anonymatch.relational.pipeline import encode
    from anonymatch.relational.verify import joint_view
    from anonymatch.tables.columns.schema import Schema

    people = small_people(30, seed=7)
    result = anonymize(people, k=3, qi=QI, numeric=NUM, method=method, seed=0)
    enc = encode(people, Schema.build(QI, NUM))
    view = joint_view(result.release, people, enc)
    got = view.person_matrix().toarray() > 0
    assert np.array_equal(got, brute_force_matches(people, result.release, QI))


@pytest.mark.parametrize("method", names(sensitive=True))
def test_l_diversity_on_the_joint_graph(method: str) -> None:
    rng = np.random.default_rng(11)
    people = small_people(60, seed=11)
    table = people.table.assign(disease=rng.choice(["flu", "cold", "hiv", "none"], people.n))
    people = dataclasses.replace(people, table=table)
    models = {"sensitive": ["disease"], "l": 3}
    result = anonymize(people, k=3, qi=QI, numeric=NUM, method=method, seed=0, options=models)
    assert result.verification.passed and result.verification.sensitive
    assert result.report["guarantee"]["sensitive"][0]["l"] == 3
    assert verify(people, result, k=3, qi=QI, numeric=NUM, options=models).passed
    # the disease values moved to other records break it
    shuffled = result.release.table.copy()
    shuffled["disease"] = np.sort(shuffled["disease"].to_numpy())
    bad = dataclasses.replace(result.release, table=shuffled)
    assert not verify(people, bad, k=3, qi=QI, numeric=NUM, options=models).passed


def test_hierarchy_nodes_in_the_release(tmp_path: Path) -> None:
    from anonymatch.tables.columns.qitypes import build_types

    tree = tmp_path / "sex.csv"
    tree.write_text("F;person;*\nM;person;*\n")
    types = build_types({}, {}, {"sex": str(tree)}, "node")
    people = small_people(30, seed=9)
    options = {"types": types}
    result = anonymize(people, k=4, qi=QI, numeric=NUM, seed=0, options=options)
    assert result.verification.passed
    assert set(result.release.table["sex"]) <= {"F", "M", "~person"}
    assert verify(people, result, k=4, qi=QI, numeric=NUM, options=options).passed


def test_front_refuses_unknown_or_missing_keywords() -> None:
    people = small_people(6)
    with pytest.raises(TypeError, match="unexpected keyword"):
        anonymize(people, k=2, qi=QI, colour="red")
    with pytest.raises(TypeError, match="missing"):
        anonymize(people, qi=QI)
    with pytest.raises(TypeError, match="unexpected keyword"):
        verify(people, anonymize(people, k=2, qi=QI, seed=0), k=2, qi=QI, method="classes")


def test_a_named_sensitive_column_gets_l2_by_default() -> None:
    """Issue 36: the relational path shares the tables' default (``build_models``)."""
    rng = np.random.default_rng(11)
    people = small_people(60, seed=11)
    table = people.table.assign(disease=rng.choice(["flu", "cold", "hiv", "none"], people.n))
    people = dataclasses.replace(people, table=table)
    named = {"sensitive": ["disease"]}
    result = anonymize(people, k=3, qi=QI, numeric=NUM, seed=0, options=named)
    default = {"column": "disease", "diversity": "distinct", "l": 2, "default": True}
    assert result.report["guarantee"]["sensitive"] == [default]
    assert verify(people, result, k=3, qi=QI, numeric=NUM, options=named).passed
    opted = anonymize(people, k=3, qi=QI, numeric=NUM, seed=0, options={**named, "l": 1})
    assert opted.report["guarantee"]["unprotected"] == ["disease"]
    assert "sensitive" not in opted.report["guarantee"]
