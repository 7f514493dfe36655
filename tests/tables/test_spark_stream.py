"""A Spark DataFrame on the streamed path without collecting it (issue 30): its partitions come
one at a time through ``toLocalIterator`` (``tables.io.stream``'s ``iter_table_batches``), never
through ``collect``/``toPandas``, and the release equals the one streamed from a Parquet file
of the same rows. Skips without pyspark or a Java runtime."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonymatch.tables.columns.schema import Schema
from anonymatch.tables.io.stream import is_spark_frame, iter_table_batches
from tests.factories import stream_file

pyspark_sql = pytest.importorskip("pyspark.sql", reason="pyspark is missing")
if shutil.which("java") is None:
    pytest.skip("Spark needs a Java runtime (java)", allow_module_level=True)


@pytest.fixture(scope="module")
def spark() -> Iterator[object]:
    session = (
        pyspark_sql.SparkSession.builder.master("local[1]")
        .appName("anonymatch-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    yield session
    session.stop()


def _people(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "zip": rng.integers(100, 104, n).astype(str),
            "sex": rng.choice(["f", "m"], n),
            "dx": rng.choice(["flu", "asthma", "gout"], n),
        }
    )


def test_spark_frame_streams_without_collecting(
    spark: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    people = _people(1_200, seed=3)
    frame = spark.createDataFrame(people).repartition(1).coalesce(1)  # type: ignore[attr-defined]
    assert is_spark_frame(frame) and not is_spark_frame(people)

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the Spark DataFrame was collected")

    for name in ("collect", "toPandas", "toArrow"):
        monkeypatch.setattr(type(frame), name, refused, raising=False)
    batches = list(iter_table_batches(frame, batch_rows=500))
    assert [b.num_rows for b in batches] == [500, 500, 200]
    together = pd.concat([b.to_pandas() for b in batches], ignore_index=True)
    pd.testing.assert_frame_equal(together, people, check_dtype=False)
    people.to_parquet(tmp_path / "people.parquet", index=False)
    schema = Schema.build(["age", "zip", "sex"], ["age"], ["dx"])
    keywords = {"method": "hungarian", "seed": 4, "executor": "inline", "chunk_rows": 400,
                "progress": False}  # fmt: skip
    stream_file(frame, tmp_path / "s.csv", 4, schema, **keywords)
    stream_file(tmp_path / "people.parquet", tmp_path / "p.csv", 4, schema, **keywords)
    assert (tmp_path / "s.csv").read_text() == (tmp_path / "p.csv").read_text()
