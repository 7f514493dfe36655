"""Leakage of kept columns (tables.risk.leakage): worked examples, invariants, the pipeline."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

import anonymatch
from anonymatch.tables.columns.schema import Schema, encode_qi
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.risk.leakage import LeakageOptions, check_leakage


def _check(data, release, qi, numeric=(), sensitive=(), **options):
    schema = Schema.build(qi, numeric, sensitive)
    enc = encode_qi(data, schema)
    return check_leakage(data, enc, parse_cells(release, enc), release, schema,
                         LeakageOptions(**options))  # fmt: skip


def _by(report, name):
    return next(c for c in report.columns if c.column == name)


def test_functional_dependency_pins_every_generalized_row() -> None:
    # education → education-num: the range 9..13 published beside "Bachelors" is really 13
    edu = ["HS-grad"] * 20 + ["Bachelors"] * 20
    data = pd.DataFrame({"num": ["9"] * 20 + ["13"] * 20, "edu": edu, "sex": ["F", "M"] * 20})
    release = pd.DataFrame({"num": ["9..13"] * 40, "edu": edu, "sex": ["F|M"] * 40})
    report = _check(data, release, ["num", "sex"], ["num"], min_support=5)
    column = _by(report, "edu")
    assert column.flagged and column.proposed_role == "identifier"  # it recodes num
    num = next(q for q in column.by_qi if q.qi == "num")
    assert (num.generalized, num.narrowed, num.pinned, num.determined) == (40, 40, 40, 40)
    sex = next(q for q in column.by_qi if q.qi == "sex")
    assert sex.narrowed == 0  # edu says nothing about sex
    assert "narrows the published 'num' in 40 of 40 rows" in report.lines()[0]


def test_exact_cells_leak_nothing() -> None:
    edu = ["a"] * 20 + ["b"] * 20
    data = pd.DataFrame({"num": ["1"] * 20 + ["2"] * 20, "edu": edu})
    release = pd.DataFrame({"num": data["num"], "edu": edu})
    column = _by(_check(data, release, ["num"], ["num"]), "edu")
    assert column.leaked_rows == 0 and not column.flagged
    assert column.by_qi[0].determined == 40  # it still tells the value on its own


def test_near_functional_dependency_within_tolerance() -> None:
    # one husband in 1,000 is a woman (167 expected): relationship still reveals sex
    rel = ["Husband"] * 1000 + ["Wife"] * 200
    sex = ["M"] * 999 + ["F"] + ["F"] * 200
    data = pd.DataFrame({"sex": sex, "rel": rel})
    release = pd.DataFrame({"sex": ["F|M"] * 1200, "rel": rel})
    strict = _by(_check(data, release, ["sex"], tolerance=0.0), "rel")
    assert strict.leaked_rows == 200  # exactly: only Wife rules out M
    near = _by(_check(data, release, ["sex"], tolerance=0.01), "rel")
    assert near.leaked_rows == 1200 and near.pinned_rows == 1200


def test_sparsity_is_not_a_dependency() -> None:
    # a small group that happens not to show a rare value does not rule it out
    rng = np.random.default_rng(3)
    country = np.where(rng.random(2000) < 0.97, "US", rng.choice(["MX", "DE", "CA"], 2000))
    kept = rng.integers(0, 40, 2000).astype(str)
    data = pd.DataFrame({"country": country, "kept": kept})
    release = pd.DataFrame({"country": ["CA|DE|MX|US"] * 2000, "kept": kept})
    column = _by(_check(data, release, ["country"]), "kept")
    assert column.leaked_rows == 0


def test_unique_and_free_text_columns() -> None:
    n = 300
    data = pd.DataFrame(
        {
            "age": [str(20 + i % 10) for i in range(n)],
            "weight": [str(100_000 + 7 * i) for i in range(n)],
            "mail": [f"person{i}@example.org" for i in range(n)],
            "note": [f"called on day {i} about the order" for i in range(n)],
        }
    )
    release = data.assign(age="20..29")
    report = _check(data, release, ["age"], ["age"])
    weight, mail, note = (_by(report, c) for c in ("weight", "mail", "note"))
    assert weight.unique_rows == n and weight.proposed_role == "identifier"
    assert weight.free_text is None  # numbers are not free text
    assert mail.free_text is not None and "e-mail" in mail.free_text
    assert note.free_text is not None and "distinct text" in note.free_text
    assert {c.column for c in report.flagged} == {"weight", "mail", "note"}


def test_suppressed_cells_cover_the_domain() -> None:
    edu = ["a"] * 20 + ["b"] * 20
    data = pd.DataFrame({"c": ["x"] * 20 + ["y"] * 20, "edu": edu})
    release = pd.DataFrame({"c": ["*"] * 40, "edu": edu})
    column = _by(_check(data, release, ["c"]), "edu")
    assert column.pinned_rows == 40


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 5))
def test_copy_of_a_qi_pins_every_generalized_cell(seed: int, k: int) -> None:
    """A kept copy of a QI pins every cell of several values (tolerance 0, every value with
    support), and the counts nest: pinned ≤ narrowed ≤ generalized."""
    rng = np.random.default_rng(seed)
    n = 120
    frame = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.integers(0, 3, n).astype(str)})
    frame["copy"] = frame["b"]
    res = anonymatch.anonymize(frame, k=k, qi=["a", "b"], numeric=["a"], seed=seed)
    report = res.report["leakage"]
    column = next(c for c in report["columns"] if c["column"] == "copy")
    counts = frame["b"].value_counts()
    if counts.min() >= 10 and counts.min() * (1 - counts.max() / n) >= 5:
        b = next((q for q in column["by_qi"] if q["qi"] == "b"), None)
        generalized = int(res.table["b"].str.contains("|", regex=False).sum())
        assert (b["pinned_rows"] if b else 0) == generalized
    for q in column["by_qi"]:
        assert q["pinned_rows"] <= q["narrowed_rows"] <= q["generalized_rows"]


def test_anonymize_records_leakage_in_the_manifest() -> None:
    rng = np.random.default_rng(0)
    n = 600
    num = np.repeat([0, 1, 2], n // 3)
    frame = pd.DataFrame({"num": num, "word": [f"w{v}" for v in num], "x": rng.integers(0, 3, n)})
    res = anonymatch.anonymize(frame, k=250, qi=["num"], numeric=["num"], seed=1, method="mondrian")
    leakage = res.report["leakage"]
    assert leakage["schema"] == "anonymatch-leakage/1"
    assert leakage["flagged"] == ["word"]
