"""The release reader: typed cells from the release alone (CSV + sidecar, Parquet, manifest),
and the estimates on ranges (midpoints, bounds of a mean, uniform histogram)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonymatch
from anonymatch.core.errors import InputError
from anonymatch.tables.io.cells import parse_cells, write_release
from anonymatch.tables.io.sidecar import kept_column_dtype, schema_path
from tests.factories import random_frame


def release_of(frame: pd.DataFrame, path: Path, k: int = 3, seed: int = 1) -> object:
    result = anonymatch.anonymize(frame, k=k, qi="n0,n1,c0,c1", numeric="n0,n1", seed=seed)
    write_release(path, result.release, result.cells, result.qi)
    return result


def as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """The table as a CSV input is read: every cell text."""
    return frame.astype(str)


@pytest.mark.parametrize("name", ["rel.csv", "rel.tsv", "rel.parquet"])
def test_cells_are_typed_as_published(tmp_path: Path, name: str) -> None:
    frame = as_text(random_frame(30, 4)).assign(w=[f"{x / 4}" for x in range(30)])
    path = tmp_path / name
    result = release_of(frame, path)
    assert Path(schema_path(path)).exists() == (not name.endswith(".parquet"))
    typed = anonymatch.read_release(path)
    assert typed.attrs["qi"] == ["n0", "n1", "c0", "c1"]
    assert typed.attrs["ranges"] == ["n0", "n1"]
    cells = result.cells  # type: ignore[attr-defined]
    qi = result.qi  # type: ignore[attr-defined]
    order = result.release.reset_index(drop=True)  # type: ignore[attr-defined]
    expected = parse_cells(order, qi)
    for a, col in enumerate(qi.num_names):
        assert str(typed[col].dtype) == "interval[int64, both]"
        assert np.array_equal(typed[col].array.left, expected.num_lo[:, a])
        assert np.array_equal(typed[col].array.right, expected.num_hi[:, a])
        assert np.array_equal(typed[col].array.left, cells.num_lo[:, a])
    for a, col in enumerate(qi.cat_names):
        domain = [str(v) for v in qi.cat_domains[a]]
        sets = expected.cat_sets[a]
        for j, cell in enumerate(typed[col]):
            assert cell == frozenset(
                domain[i] for i in sets.indices[sets.indptr[j] : sets.indptr[j + 1]]
            )
    # kept columns typed again: s is text, w (quarters written as text) floats
    assert typed["s"].tolist() == order["s"].tolist()
    assert typed["w"].dtype == np.float64
    assert sorted(typed["w"]) == sorted(float(x) for x in frame["w"])


def test_parquet_release_keeps_number_columns_as_numbers(tmp_path: Path) -> None:
    frame = as_text(random_frame(24, 2)).assign(
        code=["007"] * 24, count=[str(i) for i in range(24)]
    )
    path = tmp_path / "r.parquet"
    release_of(frame, path)
    schema = pq.read_schema(path)
    assert str(schema.field("count").type) == "int64"
    assert str(schema.field("code").type) == "string"  # 007 is not the text of a number
    assert str(schema.field("s").type) == "string"


def test_kept_column_dtype_only_for_exact_text() -> None:
    assert kept_column_dtype(pd.Series(["1", "-20", "0"])) == "int64"
    assert kept_column_dtype(pd.Series(["1.0", "2.4"])) == "float64"
    for text in (["007"], ["1e3"], ["1", ""], ["1.50"], ["+1"], ["x"]):
        assert kept_column_dtype(pd.Series(text)) == "string", text


def test_bounds_layout_and_suppressed_cells(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    pd.DataFrame(
        {"age": ["30..35", "*", "40"], "job": ["a|b\\|c", "*", "d"], "x": ["1", "2", "3"]}
    ).to_csv(path, index=False)
    sidecar = {
        "schema": "anonymatch-release/1",
        "columns": [
            {"name": "age", "role": "qi", "cell": "range", "values": "integer"},
            {"name": "job", "role": "qi", "cell": "set"},
            {"name": "x", "role": "kept", "dtype": "int64"},
        ],
    }
    Path(schema_path(path)).write_text(json.dumps(sidecar))
    typed = anonymatch.read_release(path)
    assert typed["age"].isna().tolist() == [False, True, False]
    assert typed["age"].iloc[0] == pd.Interval(30.0, 35.0, closed="both")
    assert typed["job"].iloc[0] == frozenset({"a", "b|c"}) and typed["job"].isna().iloc[1]
    bounds = anonymatch.read_release(path, ranges="bounds")
    assert list(bounds.columns) == ["age_lo", "age_hi", "job", "x"]
    assert bounds["age_hi"].tolist()[::2] == [35.0, 40.0] and np.isnan(bounds["age_lo"][1])
    assert anonymatch.mean_bounds(bounds, "age") == (35.0, 37.5)
    assert anonymatch.midpoints(typed, "age").tolist()[::2] == [32.5, 40.0]


def test_manifest_instead_of_sidecar_and_neither(tmp_path: Path) -> None:
    frame = as_text(random_frame(20, 3))
    path = tmp_path / "r.csv"
    result = release_of(frame, path)
    Path(schema_path(path)).unlink()
    with pytest.raises(InputError, match="no sidecar"):
        anonymatch.read_release(path)
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps(result.report))  # type: ignore[attr-defined]
    typed = anonymatch.read_release(path, manifest)
    assert typed.attrs["ranges"] == ["n0", "n1"]
    assert isinstance(typed["c0"].iloc[0], frozenset)
    with pytest.raises(InputError, match="release not found"):
        anonymatch.read_release(tmp_path / "none.csv")
    # the manifest is read by the one reader (core.manifest.load_manifest): held to its shape
    manifest.write_text(json.dumps({**result.report, "parameters": {"qi": "n0"}}))  # type: ignore[dict-item]
    with pytest.raises(InputError, match="not an anonymatch manifest: parameters.qi is str"):
        anonymatch.read_release(path, manifest)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 5))
def test_mean_bounds_hold_the_original_mean(
    tmp_path_factory: pytest.TempPathFactory, seed: int, k: int
) -> None:
    frame = random_frame(25, seed)
    path = tmp_path_factory.mktemp("r") / "r.csv"
    release_of(as_text(frame), path, k=k, seed=seed)
    typed = anonymatch.read_release(path)
    for col in ("n0", "n1"):
        low, high = anonymatch.mean_bounds(typed, col)
        assert low <= frame[col].mean() <= high
        mids = anonymatch.midpoints(typed, col)
        assert low <= mids.mean() <= high
        hist = anonymatch.uniform_histogram(typed, col, bins=7)
        assert hist.sum() == pytest.approx(len(frame))
        assert (hist >= 0).all()


def test_uniform_histogram_spreads_ranges() -> None:
    release = pd.DataFrame(
        {"v": pd.arrays.IntervalArray.from_arrays([0, 4, 2], [3, 4, 5], closed="both")}
    )
    hist = anonymatch.uniform_histogram(release, "v", bins=[0, 2, 4, 6])
    # 0..3 -> 1/2 + 1/2 over {0,1}|{2,3}; 4 -> bin [4,6); 2..5 -> 1/2 [2,4), 1/2 [4,6)
    assert hist.tolist() == [0.5, 1.0, 1.5]
    cont = anonymatch.uniform_histogram(release, "v", bins=[0, 2, 4, 6], integral=False)
    assert cont.tolist() == pytest.approx([2 / 3, 1 / 3 + 2 / 3, 1 + 1 / 3])


def test_parquet_input_keeps_its_column_types(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from anonymatch.cli import main

    frame = random_frame(30, 9).assign(
        count=np.arange(30, dtype=np.int64), w=np.linspace(0, 1, 30), flag=[True, False] * 15
    )
    source = tmp_path / "in.parquet"
    frame.to_parquet(source)
    out = tmp_path / "r.parquet"
    code = main(["anonymize", str(source), "-o", str(out), "--k", "3", "--qi", "n0,c0",
                 "--numeric", "n0", "--seed", "1", "-q"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    schema = pq.read_schema(out)
    assert str(schema.field("count").type) == "int64"
    assert str(schema.field("w").type) == "double"
    assert str(schema.field("flag").type) == "bool"
    typed = anonymatch.read_release(out)
    assert sorted(typed["w"]) == pytest.approx(sorted(frame["w"]))
    assert sorted(typed["count"]) == list(range(30))


# checked conversions (issue 24, item 6): a cell the declared type cannot hold exactly is an
# InputError naming the column and the row, never a rounded, wrapped or invented number


def _integer_release(tmp_path: Path) -> tuple[Path, list[str]]:
    frame = pd.DataFrame(
        {"age": [30, 31, 32, 40, 41, 42], "sex": list("FMFMFM"), "b": [True, False] * 3,
         "bp": [120, 130, 125, 140, 135, 128]}
    )  # fmt: skip
    path = tmp_path / "r.csv"
    result = anonymatch.anonymize(frame, k=3, qi="age,sex", numeric="age", seed=1)
    write_release(path, result.release, result.cells, result.qi)
    return path, path.read_text().splitlines()


def _with_cell(path: Path, lines: list[str], row: int, column: int, cell: str) -> None:
    fields = lines[row + 1].split(",")
    fields[column] = cell
    path.write_text("\n".join([*lines[: row + 1], ",".join(fields), *lines[row + 2 :]]) + "\n")


def test_kept_columns_read_back_as_written(tmp_path: Path) -> None:
    path, _ = _integer_release(tmp_path)
    typed = anonymatch.read_release(path)
    assert typed["b"].tolist() == [c == "True" for c in pd.read_csv(path, dtype=str)["b"]]
    assert typed["bp"].dtype == np.int64


@settings(max_examples=60, deadline=None)
@given(
    cell=st.one_of(
        st.tuples(st.integers(-(10**6), 10**6), st.sampled_from([".5", ".25", ".999"])).map(
            lambda t: f"{t[0]}{t[1]}..{t[0] + 3}"
        ),
        st.integers(2**63, 10**30).map(lambda x: f"{x}..{x}"),
        st.integers(10**30, 10**40).map(lambda x: f"-{x}..0"),
        st.sampled_from(["1e19..2e19", "-1e19..0", "0..inf", "-inf..1", "1.5..2.5"]),
    ),
    row=st.integers(0, 5),
    ranges=st.sampled_from(["interval", "bounds"]),
)
def test_integer_ranges_are_checked(
    tmp_path_factory: pytest.TempPathFactory, cell: str, row: int, ranges: str
) -> None:
    path, lines = _integer_release(tmp_path_factory.mktemp("rel"))
    _with_cell(path, lines, row, 0, cell)
    with pytest.raises(InputError) as info:
        anonymatch.read_release(path, ranges=ranges)  # type: ignore[arg-type]
    message = str(info.value)
    assert "\n" not in message and "'age'" in message and f"row {row + 1}" in message


@settings(max_examples=40, deadline=None)
@given(lo=st.integers(-(2**63), 2**63 - 1), width=st.integers(0, 2**62), row=st.integers(0, 5))
def test_integer_ranges_are_exact_within_int64(
    tmp_path_factory: pytest.TempPathFactory, lo: int, width: int, row: int
) -> None:
    hi = min(lo + width, 2**63 - 1)
    path, lines = _integer_release(tmp_path_factory.mktemp("rel"))
    _with_cell(path, lines, row, 0, f"{lo}..{hi}")
    typed = anonymatch.read_release(path)
    assert str(typed["age"].dtype) == "interval[int64, both]"
    assert (int(typed["age"].array.left[row]), int(typed["age"].array.right[row])) == (lo, hi)


@settings(max_examples=40, deadline=None)
@given(
    column=st.sampled_from([(2, "b"), (3, "bp")]),
    cell=st.sampled_from(["1.5", "1e19", "-9223372036854775809", "x", "nan", "yes", "0.5e1x"]),
    row=st.integers(0, 5),
)
def test_kept_integer_and_bool_columns_are_checked(
    tmp_path_factory: pytest.TempPathFactory, column: tuple[int, str], cell: str, row: int
) -> None:
    path, lines = _integer_release(tmp_path_factory.mktemp("rel"))
    _with_cell(path, lines, row, column[0], cell)
    with pytest.raises(InputError) as info:
        anonymatch.read_release(path)
    message = str(info.value)
    assert "\n" not in message and f"{column[1]!r}" in message and f"row {row + 1}" in message


@pytest.mark.parametrize("bound", ["lo", "hi"])
def test_parquet_null_bound_is_refused(tmp_path: Path, bound: str) -> None:
    import pyarrow as pa

    path = tmp_path / "r.parquet"
    release_of(random_frame(30, 4), path)
    table = pq.read_table(path)
    rows = table.column("n0").to_pylist()
    rows[4] = {**rows[4], bound: None}
    at = table.schema.get_field_index("n0")
    table = table.set_column(at, "n0", pa.array(rows, type=table.schema.field("n0").type))
    pq.write_table(table, path)
    from anonymatch.tables.io.cells import _parse_numeric_column

    with pytest.raises(InputError, match=r"'n0' \(row 5\).*null bound"):
        anonymatch.read_release(path)
    with pytest.raises(InputError, match=r"'n0' \(row 5\).*null bound"):  # verify, risk…
        _parse_numeric_column(pd.read_parquet(path)["n0"], "n0")


# ------------------------------------------------------------- relational (JSONL) releases


def _relational_release(tmp_path: Path) -> tuple[Path, Path]:
    from anonymatch.cli import main

    people = pd.DataFrame(
        {"pid": [f"p{i}" for i in range(12)], "age": list(range(30, 42)), "sex": list("FM") * 6,
         "city": ["a", "b", "c"] * 4}
    )  # fmt: skip
    items = pd.DataFrame(
        {"pid": [f"p{i % 12}" for i in range(20)], "code": [f"c{i % 5}" for i in range(20)]}
    )
    people.to_csv(tmp_path / "people.csv", index=False)
    items.to_csv(tmp_path / "items.csv", index=False)
    out, report = tmp_path / "r.jsonl", tmp_path / "r.json"
    code = main(
        ["anonymize-rt", str(tmp_path / "people.csv"), "--items", str(tmp_path / "items.csv"),
         "--id", "pid", "--item-column", "code", "--qi", "age,sex", "--numeric", "age",
         "-k", "3", "-o", str(out), "--report", str(report), "-q"]
    )  # fmt: skip
    assert code == 0
    return out, report


def test_read_release_types_a_relational_release(tmp_path: Path) -> None:
    out, report = _relational_release(tmp_path)
    typed = anonymatch.read_release(out, report)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert typed.attrs["qi"] == ["age", "sex"] and typed.attrs["ranges"] == ["age"]
    assert typed.attrs["kind"] == "relational"
    assert len(typed) == 12 and str(typed["age"].dtype) == "interval[int64, both]"
    for row, line in zip(typed.itertuples(index=False), lines, strict=True):
        assert row.items == frozenset(line["items"])
        assert row.uncertain == frozenset(line["uncertain"])
        assert row.max_errors == line["max_errors"] and row.city == line["city"]
        assert row.sex == frozenset(line["sex"].split("|"))
        lo, _, hi = line["age"].partition("..")
        assert (row.age.left, row.age.right) == (int(lo), int(hi or lo))
    bounds = anonymatch.read_release(out, report, ranges="bounds")
    assert list(bounds.columns[:3]) == ["age_lo", "age_hi", "sex"]


def test_read_release_of_jsonl_needs_the_relational_manifest(tmp_path: Path) -> None:
    out, report = _relational_release(tmp_path)
    with pytest.raises(InputError, match=r"pass its manifest .*relational\.io\.read_release"):
        anonymatch.read_release(out)
    manifest = json.loads(report.read_text())
    manifest["data_kind"] = "transactions"
    other = tmp_path / "sets.json"
    other.write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="transactions release.*read_set_release"):
        anonymatch.read_release(out, other)
    out.write_text('{"age": "30..31", "sex": "F"}\n')
    with pytest.raises(InputError, match=r"r\.jsonl:1: not a relational record"):
        anonymatch.read_release(out, report)


def test_typed_qis_are_read_back_typed() -> None:
    """Ordinal, date and hierarchy cells described by a sidecar come back typed; ``*`` as NA."""
    from anonymatch.tables.io.release import typed_release

    frame = pd.DataFrame(
        {"size": ["S..L", "*", "XL"], "day": ["2020-01..2020-03", "2021-12", "*"],
         "work": ["~a", "b1", "*"]}
    )  # fmt: skip
    columns = [
        {"name": "size", "role": "qi", "cell": "range", "values": "ordinal",
         "order": ["S", "M", "L", "XL"]},
        {"name": "day", "role": "qi", "cell": "range", "values": "date", "granularity": "month"},
        {"name": "work", "role": "qi", "cell": "set", "hierarchy": {"file": "h.csv"},
         "nodes": {"a": ["a1", "a2"]}},
    ]  # fmt: skip
    typed = typed_release(frame, columns)
    assert typed["size"][0] == pd.Interval(0.0, 2.0, closed="both") and pd.isna(typed["size"][1])
    assert typed["day"][0] == pd.Interval(
        pd.Timestamp("2020-01-01"), pd.Timestamp("2020-04-01"), closed="left"
    )
    assert typed["day"][1].right == pd.Timestamp("2022-01-01") and pd.isna(typed["day"][2])
    assert typed["work"].tolist()[:2] == [frozenset({"a1", "a2"}), frozenset({"b1"})]
    assert pd.isna(typed["work"][2])
    bounds = typed_release(frame, columns, ranges="bounds")
    assert list(bounds.columns) == ["size_lo", "size_hi", "day_lo", "day_hi", "work"]
    assert bounds["size_hi"][0] == "L" and bounds["size_lo"].cat.ordered
    assert pd.isna(bounds["size_lo"][1])
    assert bounds["day_hi"][0] == pd.Period("2020-03", "M") and pd.isna(bounds["day_lo"][2])
    unlisted = typed_release(pd.DataFrame({"work": ["~z"]}), columns[2:])["work"][0]
    assert unlisted.label == "z" and unlisted.hierarchy == "h.csv"  # a HierarchyNode


def test_typed_qis_parquet_and_csv_releases_read_back_alike(tmp_path: Path) -> None:
    """A Parquet release keeps the sidecar's typing in its schema metadata: its ordinal, date
    and hierarchy cells read back as the CSV + sidecar release's do."""
    from anonymatch.cli import main

    rng = np.random.default_rng(5)
    n = 80
    pd.DataFrame(
        {
            "age": rng.integers(20, 70, n),
            "size": rng.choice(["S", "M", "L", "XL"], n),
            "day": pd.Series(pd.date_range("2020-01-01", periods=n, freq="5D")).dt.strftime(
                "%Y-%m-%d"
            ),
            "work": rng.choice(["a1", "a2", "b1", "b2"], n),
            "dx": rng.choice(["x", "y"], n),
        }
    ).to_csv(tmp_path / "p.csv", index=False)
    (tmp_path / "h.csv").write_text("a1;a;*\na2;a;*\nb1;b;*\nb2;b;*\n")
    args = ["-k", "4", "--qi", "age,size,day,work", "--numeric", "age", "--ordinal",
            "size=S|M|L|XL", "--date", "day=month", "--hierarchy", f"work={tmp_path / 'h.csv'}",
            "--method", "mondrian", "--seed", "2", "-q"]  # fmt: skip
    for name in ("r.csv", "r.parquet"):
        assert main(["anonymize", str(tmp_path / "p.csv"), "-o", str(tmp_path / name), *args]) == 0
    for ranges in ("interval", "bounds"):
        csv = anonymatch.read_release(tmp_path / "r.csv", ranges=ranges)  # type: ignore[arg-type]
        parquet = anonymatch.read_release(tmp_path / "r.parquet", ranges=ranges)  # type: ignore[arg-type]
        assert list(csv.columns) == list(parquet.columns)
        for column in csv.columns:
            assert csv[column].tolist() == parquet[column].tolist(), column
        assert parquet.attrs == csv.attrs
