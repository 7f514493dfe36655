"""A Dask DataFrame on the streamed path without collecting it (issue 30): its partitions are
computed one at a time, in order, as the scan consumes them (``tables.io.stream``'s
``iter_table_batches``), and the release equals the one streamed from a Parquet file of the
same rows."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonymatch.core.errors import InputError
from anonymatch.tables.columns.schema import Schema
from anonymatch.tables.io.stream import is_dask_frame, iter_table_batches
from tests.factories import stream_file

dd = pytest.importorskip("dask.dataframe", reason="dask is missing")

PARTITIONS = 6


def _people(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "zip": rng.integers(100, 104, n).astype(str),
            "sex": rng.choice(["f", "m"], n),
            "dx": rng.choice(["flu", "asthma", "gout"], n),
        }
    )


class Computed:
    """Counts the partitions a Dask graph computes (through ``map_partitions``), the rows of
    each and the most computed at once."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.live = self.peak = 0
        self.lock = threading.Lock()

    def __dask_tokenize__(self) -> tuple[str, int]:
        return ("Computed", id(self))

    def __call__(self, part: pd.DataFrame) -> pd.DataFrame:
        if len(part) == 0:  # Dask's own calls on empty metadata
            return part
        with self.lock:
            self.live += 1
            self.peak = max(self.peak, self.live)
        try:
            return part.copy()
        finally:
            with self.lock:
                self.live -= 1
                self.sizes.append(len(part))


def _frame(people: pd.DataFrame, counter: Computed) -> object:
    source = dd.from_pandas(people, npartitions=PARTITIONS, sort=False)
    return source.map_partitions(counter, meta=people.head(0))


def test_partitions_are_computed_one_at_a_time() -> None:
    people = _people(1_200)
    counter = Computed()
    frame = _frame(people, counter)
    assert is_dask_frame(frame) and not is_dask_frame(people)
    batches = iter_table_batches(frame, batch_rows=150)
    first = next(batches)
    assert first.num_rows == 150 and counter.sizes == [200]  # one partition, no more
    rest = list(batches)
    assert len(counter.sizes) == PARTITIONS and counter.peak == 1
    assert max(counter.sizes) == 200  # the most rows held: one partition
    together = pd.concat([b.to_pandas() for b in [first, *rest]], ignore_index=True)
    pd.testing.assert_frame_equal(together, people.reset_index(drop=True))


def test_streamed_release_of_a_dask_frame_equals_parquet(tmp_path: Path) -> None:
    people = _people(1_500, seed=2)
    people.to_parquet(tmp_path / "people.parquet", index=False)
    schema = Schema.build(["age", "zip", "sex"], ["age"], ["dx"])
    keywords = {"method": "hungarian", "seed": 4, "executor": "inline", "chunk_rows": 500,
                "progress": False}  # fmt: skip
    counter = Computed()
    from_dask = stream_file(_frame(people, counter), tmp_path / "d.csv", 4, schema, **keywords)
    stream_file(tmp_path / "people.parquet", tmp_path / "p.csv", 4, schema, **keywords)
    assert (tmp_path / "d.csv").read_text() == (tmp_path / "p.csv").read_text()
    assert counter.peak == 1 and len(counter.sizes) == PARTITIONS  # computed once, in turn
    assert from_dask["verification"]["passed"] is True  # type: ignore[index]


def test_an_empty_dask_frame_is_refused() -> None:
    empty = dd.from_pandas(_people(10).head(0), npartitions=1)
    with pytest.raises(InputError, match="no rows"):
        list(iter_table_batches(empty))
