"""DataFrames other than pandas at the Python front (issue 30 item 4): Polars (eager and
lazy), Arrow tables and Dask DataFrames are converted in one place
(``core.params.require_frame``) and give the release of the same pandas frame; a release
comes out as Arrow or Polars in the typed Parquet layout."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import anonymatch

KEYWORDS = {"k": 3, "qi": "age,zip", "numeric": "age", "seed": 4}


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 70, 60),
            "zip": rng.choice(["a1", "b2", "c3"], 60),
            "dx": rng.choice(["x", "y"], 60),
        }
    )


def _converted(kind: str, frame: pd.DataFrame) -> object:
    if kind == "arrow":
        return pa.Table.from_pandas(frame, preserve_index=False)
    if kind == "batch":
        return pa.RecordBatch.from_pandas(frame, preserve_index=False)
    if kind in ("polars", "lazy"):
        pl = pytest.importorskip("polars")
        converted = pl.from_pandas(frame)
        return converted.lazy() if kind == "lazy" else converted
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(frame, npartitions=3)


@pytest.mark.parametrize("kind", ["arrow", "batch", "polars", "lazy", "dask"])
def test_other_frames_give_the_pandas_release(kind: str) -> None:
    frame = _frame()
    expected = anonymatch.anonymize(frame, **KEYWORDS)
    result = anonymatch.anonymize(_converted(kind, frame), **KEYWORDS)
    pd.testing.assert_frame_equal(
        result.release.astype(str), expected.release.astype(str), check_dtype=False
    )
    report = anonymatch.verify(_converted(kind, frame), result.release, k=3, qi="age,zip",
                               numeric="age")  # fmt: skip
    assert report.passed


def test_release_out_as_arrow_and_polars() -> None:
    result = anonymatch.anonymize(_frame(), **KEYWORDS)
    table = result.to_arrow()
    assert table.num_rows == 60
    assert pa.types.is_struct(table.schema.field("age").type)
    assert pa.types.is_list(table.schema.field("zip").type)
    assert table.column("dx").to_pylist() == result.release["dx"].tolist()
    pl = pytest.importorskip("polars")
    frame = result.to_polars()
    assert isinstance(frame, pl.DataFrame) and frame.shape == (60, 3)


def test_other_objects_are_refused_naming_the_parameter() -> None:
    with pytest.raises(TypeError, match="^data must be a pandas DataFrame, got dict$"):
        anonymatch.anonymize({"age": [1]}, **KEYWORDS)
