"""Sparse binary datasets of Esfandiari et al. (Table 2) and generators.

* ``adult_onehot``: UCI Adult, all 32,561 rows, the 8 categorical attributes one-hot (``?`` is a
  value of its own), 102 columns and 260,488 ones — Table 2's "adult"; the income label apart.
* ``googleplay_onehot``: the Google Play Store apps CSV, categorical columns one-hot (see the
  function for which columns and rows).
* ``fimi_matrix``: a FIMI transaction file (retail, BMS1, …) as a user × item matrix.
* ``stochastic_block_model``: the bipartite SBM of §4.2 (n = 1024, blocks of 64, 0.8 inside,
  0.01 outside by default).
* ``powerlaw_interests``: a large user × interest matrix with power-law degrees and
  community structure, for the scale-out benchmark.

Data files are read from an explicit path or ``$ANONYMATCH_DATA`` (never shipped).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from anonymatch.sparse.io import binary_csr, read_sparse
from anonymatch.tables.datasets import ADULT_COLUMNS, dataset_path
from anonymatch.tables.io import CsvOptions, read_table

ADULT_CATEGORICAL: tuple[str, ...] = (
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native-country",
)
GOOGLEPLAY_CATEGORICAL: tuple[str, ...] = (
    "Category",
    "Rating",
    "Size",
    "Installs",
    "Type",
    "Price",
    "Content Rating",
    "Genres",
    "Android Ver",
)


@dataclass(frozen=True)
class OneHot:
    """A one-hot matrix, its column labels (``attribute=value``) and an optional label vector."""

    matrix: sp.csr_array
    columns: list[str]
    labels: np.ndarray | None = None


def one_hot(
    frame: pd.DataFrame, attributes: tuple[str, ...], columns: list[str] | None = None
) -> OneHot:
    """One column per (attribute, value) present (or per entry of ``columns``, values not listed
    being dropped). O(n·d) time, sparse output."""
    n = len(frame)
    if columns is None:
        columns = []
        for a in attributes:
            values = sorted(set(frame[a].fillna("nan").astype(str).tolist()))
            columns.extend(f"{a}={v}" for v in values)
    position = {c: i for i, c in enumerate(columns)}
    rows, cols = [], []
    for a in attributes:
        keys = (a + "=" + frame[a].fillna("nan").astype(str)).map(position)
        ok = keys.notna().to_numpy()
        rows.append(np.flatnonzero(ok))
        cols.append(keys[ok].to_numpy(dtype=np.int64))
    m = binary_csr(np.concatenate(rows), np.concatenate(cols), (n, len(columns)))
    return OneHot(m, columns)


def _adult_frame(relative: str, path: str | os.PathLike[str] | None) -> pd.DataFrame:
    options = CsvOptions(names=ADULT_COLUMNS)
    if relative.endswith(".test"):
        frame = pd.read_csv(
            dataset_path(relative, path),
            names=list(ADULT_COLUMNS),
            skiprows=1,
            skipinitialspace=True,
            dtype=str,
        )
    else:
        frame = read_table(dataset_path(relative, path), options)
    for c in frame.columns:
        frame[c] = frame[c].astype(str).str.strip()
    return frame


def adult_onehot(path: str | os.PathLike[str] | None = None) -> OneHot:
    """Adult (adult.data), all 32,561 rows, 8 categorical attributes one-hot → 102 columns,
    260,488 ones; ``labels`` = 1 for income >50K."""
    frame = _adult_frame("adult/adult.data", path)
    out = one_hot(frame, ADULT_CATEGORICAL)
    labels = (frame["income"].str.rstrip(".") == ">50K").to_numpy(np.int8)
    return OneHot(out.matrix, out.columns, labels)


def adult_test_onehot(columns: list[str], path: str | os.PathLike[str] | None = None) -> OneHot:
    """The Adult test split (adult.test, 16,281 rows) one-hot on the training ``columns``."""
    frame = _adult_frame("adult/adult.test", path)
    out = one_hot(frame, ADULT_CATEGORICAL, columns)
    labels = (frame["income"].str.rstrip(".") == ">50K").to_numpy(np.int8)
    return OneHot(out.matrix, out.columns, labels)


def googleplay_onehot(path: str | os.PathLike[str] | None = None) -> OneHot:
    """Google Play Store apps: one row per distinct app name (first occurrence), dropping the
    one malformed row (no Category); the 9 categorical-like columns ``GOOGLEPLAY_CATEGORICAL``
    one-hot with their raw text values (missing = its own value ``nan``). The paper's exact
    preprocessing (8,672 rows × 521 columns) is not documented; this one keeps every app."""
    frame = pd.read_csv(dataset_path("googleplay/googleplaystore.csv", path), dtype=str)
    frame.columns = [c.lstrip("\ufeff") for c in frame.columns]
    frame = frame[frame["Category"] != "1.9"]  # the malformed row, shifted one column left
    frame = frame.drop_duplicates("App").reset_index(drop=True)
    return one_hot(frame, GOOGLEPLAY_CATEGORICAL)


def fimi_matrix(name: str, path: str | os.PathLike[str] | None = None) -> sp.csr_array:
    """A FIMI transaction file (``fimi/<name>.dat``) as a user × item matrix."""
    return read_sparse(dataset_path(f"fimi/{name}.dat", path), fmt="dat")


def stochastic_block_model(
    n: int = 1024,
    block: int = 64,
    p_in: float = 0.8,
    p_out: float = 0.01,
    seed: int | None = None,
) -> sp.csr_array:
    """Bipartite SBM (§4.2): rows and columns in n/block blocks; an edge inside corresponding
    blocks with probability ``p_in``, elsewhere ``p_out``. Sampled block by block of rows, never
    dense over the whole matrix. O(n·(block + p_out·n)) expected time."""
    rng = np.random.default_rng(seed)
    rows_out, cols_out = [], []
    for start in range(0, n, block):
        stop = min(start + block, n)
        size = stop - start
        inside = rng.random((size, size)) < p_in
        r, c = np.nonzero(inside)
        rows_out.append(r + start)
        cols_out.append(c + start)
        count = rng.binomial(size * n, p_out)
        pos = rng.choice(size * n, size=count, replace=False)
        r, c = np.divmod(pos, n)
        outside = (c < start) | (c >= stop)
        rows_out.append(r[outside] + start)
        cols_out.append(c[outside])
    return binary_csr(np.concatenate(rows_out), np.concatenate(cols_out), (n, n))


def powerlaw_interests(
    n_rows: int,
    n_cols: int = 100_000,
    mean_degree: float = 20.0,
    communities: int | None = None,
    exponent: float = 2.5,
    mix: float = 0.8,
    seed: int | None = None,
    block_rows: int = 200_000,
) -> sp.csr_array:
    """A user × interest matrix: row degrees follow a power law (Pareto tail, exponent
    ``exponent``, mean ``mean_degree``, at most n_cols/10); every user belongs to one of
    ``communities`` (default n_rows/200) each with 40 favourite interests, and draws a fraction
    ``mix`` of its interests from them (Zipf(1) within the favourites, so a community shares its
    top interests) and the rest from a Zipf(0.8) popularity over all columns; repeated draws
    count once, so the mean row degree ends a little below ``mean_degree``. Generated block by
    block: O(nnz) time, O(nnz) memory."""
    rng = np.random.default_rng(seed)
    communities = communities or max(1, n_rows // 200)
    fav = rng.integers(0, n_cols, size=(communities, 40))
    fav_cdf = np.cumsum(1.0 / np.arange(1, 41))
    fav_cdf /= fav_cdf[-1]
    ranks = np.arange(1, n_cols + 1, dtype=np.float64) ** -0.8
    cdf = np.cumsum(ranks / ranks.sum())
    perm = rng.permutation(n_cols)
    xm = mean_degree * (exponent - 2) / (exponent - 1)
    rows_out, cols_out = [], []
    for start in range(0, n_rows, block_rows):
        stop = min(start + block_rows, n_rows)
        size = stop - start
        deg = np.minimum(
            np.ceil(xm * (1 + rng.pareto(exponent - 1, size))).astype(np.int64), n_cols // 10
        )
        comm = rng.integers(0, communities, size)
        rows = np.repeat(np.arange(start, stop, dtype=np.int64), deg)
        from_fav = rng.random(rows.size) < mix
        slot = np.minimum(np.searchsorted(fav_cdf, rng.random(rows.size)), fav.shape[1] - 1)
        fav_pick = fav[np.repeat(comm, deg), slot]
        global_pick = perm[np.minimum(np.searchsorted(cdf, rng.random(rows.size)), n_cols - 1)]
        rows_out.append(rows)
        cols_out.append(np.where(from_fav, fav_pick, global_pick))
    return binary_csr(np.concatenate(rows_out), np.concatenate(cols_out), (n_rows, n_cols))
