"""Sparse binary matrices (users × items, bipartite graphs, adjacency matrices): readers and
writers. Everything stays in scipy.sparse CSR (int8 ones, int32/int64 indices); nothing is ever
densified.

Input formats (chosen by extension, or ``fmt``):

* edge list, CSV/TSV/text (``.csv .tsv .txt .edges``): one ``row,col`` pair of non-negative
  integer ids per line (comma, tab or blanks); an optional first line ``row,col`` (any
  non-numeric pair) is a header; ``#``/``%`` lines are comments. Duplicates count once.
* edge list, Parquet (``.parquet``): integer columns ``row`` and ``col``, read batch by batch.
* MatrixMarket (``.mtx``): coordinate, pattern or 0/1 values (``scipy.io.mmread``).
* transactions (``.dat``, the FIMI layout): line i holds the item ids of row i, separated by
  blanks; an empty line is an empty row.

Adjacency mode (``adjacency="directed"|"undirected"``) reads an edge list as a graph on one node
set: the matrix is square (n × n, n = largest id + 1) and, for ``undirected``, symmetric.

The shape of an edge list is (largest row id + 1, largest col id + 1) unless ``shape`` is
given: rows without edges inside that range are users with no items. Releases keep the row ids
of the original (row i of the release is user i), which is what the verifier and the downstream
metrics need; the ids in the input should therefore be pseudonymous.

Ids are bounded by the input's size: the matrix has a row (an ``indptr`` entry) for every id up
to the largest, so a row or column id of 10¹² in a ten-line file would ask for terabytes. Every
reader refuses (``InputError``) a dimension above ``max(2**24, 64 × edges)``
(:func:`anonymatch.core.params.check_dimensions`); relabel such ids to 0 … n−1 first.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import scipy.io
import scipy.sparse as sp

from anonymatch.core.errors import InputError
from anonymatch.core.files import write_atomically
from anonymatch.core.params import check_dimensions

Adjacency = Literal["none", "directed", "undirected"]
FORMATS = ("auto", "edges", "parquet", "mtx", "dat")
_SPLIT = re.compile(r"[,\t ;]+")


def sparse_format(path: str | os.PathLike[str], fmt: str = "auto") -> str:
    """The format name of ``path``: ``edges``, ``parquet``, ``mtx`` or ``dat``."""
    if fmt != "auto":
        if fmt not in FORMATS:
            raise InputError(f"unknown sparse format {fmt!r} (expected one of {FORMATS})")
        return fmt
    name = str(path).lower()
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith((".mtx", ".mm")):
        return "mtx"
    if name.endswith(".dat"):
        return "dat"
    return "edges"


def binary_csr(
    rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int] | None = None
) -> sp.csr_array:
    """CSR int8 0/1 matrix of the (row, col) pairs (duplicates once), indices sorted.
    O(E log E) time."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    if shape is None:
        shape = (
            int(rows.max()) + 1 if rows.size else 0,
            int(cols.max()) + 1 if cols.size else 0,
        )
    if rows.size and (rows.max() >= shape[0] or cols.max() >= shape[1]):
        raise InputError(f"an edge lies outside the declared shape {shape[0]} x {shape[1]}")
    m = sp.csr_array((np.ones(rows.size, np.int8), (rows, cols)), shape=shape, dtype=np.int8)
    m.sum_duplicates()
    m.data[:] = 1
    m.sort_indices()
    return m


def as_binary_csr(matrix: sp.spmatrix | sp.sparray) -> sp.csr_array:
    """``matrix`` as a 0/1 CSR array with sorted indices, no duplicates and no explicit zeros
    (a copy unless it already is one). O(nnz)."""
    m = sp.csr_array(matrix)
    if not (m.has_canonical_format and m.data.size and m.data.min() == 1 and m.data.max() == 1):
        m = m.copy()
        m.sum_duplicates()
        m.eliminate_zeros()
        m.data[:] = 1
        m.sort_indices()
    return m


def _check_ids(values: np.ndarray, what: str, where: str) -> np.ndarray:
    if values.size and values.min() < 0:
        raise InputError(f"negative {what} id {int(values.min())} in {where}")
    return values


def _parse_edge_text(path: Path) -> tuple[np.ndarray, np.ndarray]:
    rows: list[int] = []
    cols: list[int] = []
    with path.open("r", encoding="utf-8-sig", errors="strict") as handle:
        first_data = True
        for number, raw in enumerate(handle, start=1):
            line = raw.strip()
            if not line or line[0] in "#%":
                continue
            parts = [p for p in _SPLIT.split(line) if p]
            if len(parts) != 2:
                raise InputError(f"{path}: line {number}: expected 'row,col', got {line[:60]!r}")
            try:
                r, c = int(parts[0]), int(parts[1])
            except ValueError:
                if first_data and not any(ch.isdigit() for ch in parts[0] + parts[1]):
                    first_data = False  # a header line such as "row,col"
                    continue
                raise InputError(
                    f"{path}: line {number}: ids must be non-negative integers, got {line[:60]!r}"
                ) from None
            first_data = False
            if r < 0 or c < 0:
                raise InputError(f"{path}: line {number}: negative id in {line[:60]!r}")
            rows.append(r)
            cols.append(c)
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)


def iter_parquet_edges(
    path: str | os.PathLike[str], batch_size: int = 1 << 20
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The (rows, cols) int64 arrays of a Parquet edge list, one record batch at a time, checked
    (integer columns ``row`` and ``col``, no missing or negative ids; InputError otherwise).
    O(batch) memory."""
    path = Path(path)
    try:
        handle = pq.ParquetFile(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from None
    names = handle.schema_arrow.names
    if "row" not in names or "col" not in names:
        raise InputError(f"{path}: a Parquet edge list needs columns 'row' and 'col'")
    for batch in handle.iter_batches(columns=["row", "col"], batch_size=batch_size):
        pair = []
        for name in ("row", "col"):
            column = batch.column(batch.schema.get_field_index(name))
            if not pa.types.is_integer(column.type):
                raise InputError(f"{path}: column {name!r} must hold integers, not {column.type}")
            if column.null_count:
                raise InputError(f"{path}: column {name!r} has missing values")
            values = column.to_numpy()
            _check_ids(values, name, str(path))
            pair.append(values.astype(np.int64, copy=False))
        yield pair[0], pair[1]


def _read_parquet_edges(path: Path) -> tuple[np.ndarray, np.ndarray]:
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    for r, c in iter_parquet_edges(path):
        rows.append(r)
        cols.append(c)
    if not rows:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(rows), np.concatenate(cols)


def _read_mtx(path: Path) -> sp.csr_array:
    try:
        m = scipy.io.mmread(str(path))
    except (ValueError, OSError, IndexError) as exc:
        raise InputError(f"{path}: not a readable MatrixMarket file ({exc})") from None
    if not sp.issparse(m):
        m = sp.coo_array(np.asarray(m))
    coo = sp.coo_array(m)
    data = np.asarray(coo.data)
    keep = data != 0
    if not np.all(data[keep] == 1):
        raise InputError(f"{path}: a binary matrix is expected (entries 0/1 only)")
    rows = coo.row[keep]
    cols = coo.col[keep]
    check_dimensions(int(coo.shape[0]), int(coo.shape[1]), int(keep.sum()), str(path))
    return binary_csr(rows, cols, (int(coo.shape[0]), int(coo.shape[1])))


def _read_transactions(path: Path) -> sp.csr_array:
    lengths: list[int] = []
    items: list[np.ndarray] = []
    with path.open("r", encoding="utf-8", errors="strict") as handle:
        for number, line in enumerate(handle, start=1):
            text = line.strip()
            if not text:
                lengths.append(0)
                continue
            try:
                ids = np.array(text.split(), dtype=np.int64)
            except ValueError:
                raise InputError(
                    f"{path}: line {number}: item ids must be non-negative integers"
                ) from None
            if ids.min() < 0:
                raise InputError(f"{path}: line {number}: negative item id {int(ids.min())}")
            lengths.append(ids.size)
            items.append(ids)
    cols = np.concatenate(items) if items else np.empty(0, np.int64)
    rows = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    n_cols = int(cols.max()) + 1 if cols.size else 0
    check_dimensions(len(lengths), n_cols, cols.size, str(path))
    return binary_csr(rows, cols, (len(lengths), n_cols))


def read_sparse(
    path: str | os.PathLike[str],
    fmt: str = "auto",
    adjacency: Adjacency = "none",
    shape: tuple[int, int] | None = None,
) -> sp.csr_array:
    """Read a binary matrix (see the module docstring for the formats). Raises InputError on a
    missing file, a malformed line, a negative or non-integer id or a non-binary value.
    O(E log E) time, O(E) memory."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"input file not found: {p}")
    kind = sparse_format(p, fmt)
    try:
        if kind == "mtx":
            m = _read_mtx(p)
        elif kind == "dat":
            m = _read_transactions(p)
        else:
            rows, cols = _read_parquet_edges(p) if kind == "parquet" else _parse_edge_text(p)
            m = None
    except UnicodeDecodeError:
        raise InputError(f"{p}: not a text file") from None
    if m is not None:
        rows, cols = m.tocoo().row, m.tocoo().col
        if shape is None and adjacency == "none":
            return m
        shape = shape or (m.shape[0], m.shape[1])
    top_row = int(rows.max()) + 1 if rows.size else 0
    top_col = int(cols.max()) + 1 if cols.size else 0
    check_dimensions(
        max(top_row, shape[0] if shape else 0), max(top_col, shape[1] if shape else 0),
        rows.size, str(p),
    )  # fmt: skip
    if adjacency != "none":
        if adjacency not in ("directed", "undirected"):
            raise InputError(f"unknown adjacency mode {adjacency!r}")
        n = int(max(rows.max() if rows.size else -1, cols.max() if cols.size else -1)) + 1
        if shape is not None:
            n = max(n, shape[0], shape[1])
        if adjacency == "undirected":
            rows, cols = np.concatenate([rows, cols]), np.concatenate([cols, rows])
        return binary_csr(rows, cols, (n, n))
    return binary_csr(rows, cols, shape)


def write_sparse(
    path: str | os.PathLike[str], matrix: sp.csr_array | sp.csr_matrix, fmt: str = "auto"
) -> None:
    """Write a binary matrix atomically as an edge list (CSV ``row,col`` with header, or Parquet
    written row block by row block) or MatrixMarket (pattern). .dat writes transactions."""
    kind = sparse_format(path, fmt)
    m = sp.csr_array(matrix)
    m.sort_indices()
    if kind == "mtx":
        write_atomically(path, lambda tmp: _write_mtx(tmp, m))
        return
    if kind == "parquet":
        write_atomically(path, lambda tmp: _write_parquet(tmp, m))
        return
    if kind == "dat":
        write_atomically(path, lambda tmp: _write_transactions(tmp, m))
        return
    write_atomically(path, lambda tmp: _write_csv(tmp, m))


def _row_blocks(m: sp.csr_array, block: int = 1 << 18) -> list[tuple[int, int]]:
    return [(s, min(s + block, m.shape[0])) for s in range(0, m.shape[0], block)] or [(0, 0)]


def _write_mtx(tmp: Path, m: sp.csr_array) -> None:
    coo = sp.coo_matrix((np.ones(m.nnz, np.int8), m.nonzero()), shape=m.shape)
    with tmp.open("wb") as handle:  # a file object: mmwrite would append .mtx to a bare name
        scipy.io.mmwrite(handle, coo, field="pattern")


def _write_csv(tmp: Path, m: sp.csr_array) -> None:
    with tmp.open("w") as handle:
        handle.write("row,col\n")
        for start, stop in _row_blocks(m):
            part = m[start:stop]
            rows = np.repeat(np.arange(start, stop, dtype=np.int64), np.diff(part.indptr))
            if rows.size:
                np.savetxt(handle, np.column_stack([rows, part.indices]), fmt="%d", delimiter=",")


def _write_parquet(tmp: Path, m: sp.csr_array) -> None:
    schema = pa.schema([("row", pa.int64()), ("col", pa.int64())])
    with pq.ParquetWriter(str(tmp), schema) as writer:
        for start, stop in _row_blocks(m):
            part = m[start:stop]
            rows = np.repeat(np.arange(start, stop, dtype=np.int64), np.diff(part.indptr))
            writer.write_table(
                pa.table({"row": rows, "col": part.indices.astype(np.int64)}, schema=schema)
            )


def _write_transactions(tmp: Path, m: sp.csr_array) -> None:
    with tmp.open("w") as handle:
        ptr, idx = m.indptr, m.indices
        for i in range(m.shape[0]):
            handle.write(" ".join(map(str, idx[ptr[i] : ptr[i + 1]].tolist())) + " \n")
