"""Edge lists of simple undirected graphs: reading (with normalization) and atomic writing.

Format: one edge per line, two integer vertex ids separated by a comma, tab or spaces; an
optional header line (e.g. ``source,target``) whose fields are not both integers; ``#`` starts a
comment line. Normalizations, reported as warnings (never silently): self-loops are dropped,
duplicate edges (in either direction) are merged. A non-integer vertex id in a data line is an
InputError. Vertices are the ids that occur in an edge plus, with ``n_vertices``, the isolated
ids 0 … n_vertices − 1.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from anonymatch.core.errors import InputError
from anonymatch.core.files import write_atomically
from anonymatch.core.params import check_dimensions

_SPLIT = re.compile(r"[,\t ]+")


@dataclass
class EdgeListGraph:
    """A simple undirected graph on vertices 0 … n−1 (``adjacency``: symmetric CSR, 0/1, zero
    diagonal, sorted indices) with the original ``ids`` of the vertices and the ``warnings``
    raised by normalization."""

    adjacency: sp.csr_array
    ids: np.ndarray
    warnings: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return int(self.adjacency.shape[0])

    @property
    def m(self) -> int:
        return int(self.adjacency.nnz // 2)


def adjacency_from_edges(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[sp.csr_array, int, int]:
    """Symmetric 0/1 CSR from an edge list; returns (matrix, self-loops dropped, duplicates
    merged). O(m log m)."""
    src = np.asarray(src, np.int64)
    dst = np.asarray(dst, np.int64)
    loops = src == dst
    n_loops = int(loops.sum())
    src, dst = src[~loops], dst[~loops]
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    keys = np.unique(lo * max(n, 1) + hi)
    n_dup = len(lo) - len(keys)
    lo, hi = keys // max(n, 1), keys % max(n, 1)
    rows = np.concatenate([lo, hi])
    cols = np.concatenate([hi, lo])
    mat = sp.csr_array((np.ones(len(rows), np.int8), (rows, cols)), shape=(n, n))
    mat.sort_indices()
    return mat, n_loops, n_dup


def read_edge_list(path: str | os.PathLike[str], n_vertices: int | None = None) -> EdgeListGraph:
    """Read an edge list (module docstring). Raises InputError on unreadable input, a line that
    is not two fields, or a non-integer vertex id. O(file size + m log m)."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        raise InputError(f"input file not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"input is a directory, not a file: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None
    pairs: list[tuple[str, str]] = []
    numbers: list[int] = []
    header_seen = False
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        fields = [f for f in _SPLIT.split(text) if f]
        if len(fields) < 2:
            raise InputError(f"{path} line {number}: expected two vertex ids, got {text!r}")
        if len(fields) > 2:
            raise InputError(
                f"{path} line {number}: expected two vertex ids, got {len(fields)} fields"
            )
        if not pairs and not header_seen and not all(_is_int(f) for f in fields):
            header_seen = True  # a header line such as "source,target"
            continue
        for f in fields:
            if not _is_int(f):
                raise InputError(f"{path} line {number}: vertex id {f!r} is not an integer")
        pairs.append((fields[0], fields[1]))
        numbers.append(number)
    raw = np.array([[int(a), int(b)] for a, b in pairs], np.int64).reshape(-1, 2)
    if n_vertices is not None:
        if n_vertices < 0:
            raise InputError(f"the number of vertices must be non-negative, got {n_vertices}")
        check_dimensions(n_vertices, n_vertices, len(raw), f"{path} (--n)")
        if len(raw) and (raw.min() < 0 or raw.max() >= n_vertices):
            raise InputError(f"a vertex id is outside 0 … {n_vertices - 1} (`n_vertices`)")
        ids = np.arange(n_vertices, dtype=np.int64)
        codes = raw
    else:
        ids, inv = np.unique(raw.reshape(-1), return_inverse=True)
        codes = inv.reshape(-1, 2)
    mat, loops, dups = adjacency_from_edges(codes[:, 0], codes[:, 1], len(ids))
    warnings = []
    if loops:
        warnings.append(f"dropped {loops} self-loop(s)")
    if dups:
        warnings.append(f"merged {dups} duplicate edge(s)")
    return EdgeListGraph(mat, ids, warnings)


def _is_int(text: str) -> bool:
    return bool(re.fullmatch(r"[+-]?\d+", text))


def edge_array(adjacency: sp.csr_array) -> np.ndarray:
    """Edges (m × 2, u < v) of a symmetric adjacency matrix."""
    coo = sp.triu(sp.csr_array(adjacency), k=1).tocoo()
    order = np.lexsort((coo.col, coo.row))
    return np.column_stack([coo.row[order], coo.col[order]]).astype(np.int64)


def write_edge_list(path: str | os.PathLike[str], adjacency: sp.csr_array, ids: np.ndarray) -> None:
    """Write ``source,target`` CSV (one line per edge, labelled by ``ids``) atomically."""
    edges = ids[edge_array(adjacency)] if adjacency.nnz else np.empty((0, 2), np.int64)
    text = "source,target\n" + "".join(f"{a},{b}\n" for a, b in edges.tolist())
    write_atomically(path, lambda tmp: tmp.write_text(text))
