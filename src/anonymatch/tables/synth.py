"""Synthetic census-like tables: a Chow–Liu tree Bayesian network fitted to a table (by default
UCI Adult's 8 QIs, ``hours-per-week`` and ``income``) and sampled at any size.

Model (Chow & Liu, *Approximating discrete probability distributions with dependence trees*,
IEEE Trans. Inf. Theory 1968): every column is discrete (numeric columns such as age are modelled
as their observed values); the tree is the maximum spanning tree of the complete graph weighted by
the empirical (plug-in) mutual information of each pair of columns — the tree-structured
distribution closest in KL divergence to the empirical joint. Rooted at one column, the network
is P(root) · Π P(child | parent), each factor estimated by counts (maximum likelihood, no
smoothing: a synthetic row never pairs a parent value with a child value they never co-occur
with in the data).

Sampling is ancestral and vectorized: for each node in topological order, one inverse-CDF lookup
per row in the parent-value's cumulative count table (integers, so exact). Generation runs in
fixed blocks of :data:`BLOCK_ROWS` rows, block ``i`` seeded by child ``i`` of
``numpy.random.SeedSequence(seed)``, so the output depends only on ``seed`` and the number of
rows — not on how the rows are batched for writing — and memory does not grow with the row count.

The data is synthetic. It is *not* a privacy mechanism: it is fitted on public data and carries
no guarantee about the rows it was fitted on.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from anonymatch.core.errors import InputError
from anonymatch.core.files import write_atomically
from anonymatch.tables.datasets import ADULT_QI, dataset_path, load_adult

FORMAT = "anonymatch-census-model"
FORMAT_VERSION = 1
# Adult's 8 QIs, then an "other" column and the sensitive one.
CENSUS_COLUMNS: tuple[str, ...] = (*ADULT_QI, "hours-per-week", "income")
# Rows generated per internal block (each with its own child seed). Fixed: changing it changes
# every output for a given seed, so it is part of the format's reproducibility contract.
BLOCK_ROWS = 1 << 16
DEFAULT_CHUNK_ROWS = 1 << 18  # rows per write batch / Parquet row group (output independent)
DEFAULT_NA_TOKENS: tuple[str, ...] = ("?", "")
EXTENSIONS = (".csv", ".parquet", ".pq")
# Edge weights of the spanning tree: the plug-in (maximum-likelihood) mutual information of
# Chow & Liu, or its Miller–Madow bias-corrected value (see mutual_information).
ESTIMATORS = ("plugin", "miller-madow")


@dataclass(frozen=True, eq=False)  # arrays inside: compare models through to_dict()
class CensusModel:
    """A Chow–Liu tree Bayesian network over discrete columns.

    ``values[c]`` are the labels of column ``c`` (ints for integer columns, else strings), in
    code order. ``parent[c]`` is ``None`` for the root. ``counts[c]`` is the 1-D count vector of
    the root, or the (|parent values| × |values|) contingency table of (parent, child) for the
    others: P(child | parent = r) = counts[c][r] / counts[c][r].sum(). ``order`` is a
    topological order (root first). ``edges`` lists the tree edges with their mutual
    information (nats) in the fitted data."""

    columns: tuple[str, ...]
    integer: tuple[str, ...]
    values: dict[str, list[Any]]
    root: str
    parent: dict[str, str | None]
    order: tuple[str, ...]
    counts: dict[str, np.ndarray]
    edges: tuple[tuple[str, str, float], ...]
    rows_fitted: int
    source: str = ""
    estimator: str = "plugin"
    _cum: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._validate()
        for c in self.order:
            # Row-major cumulative counts: row r of a CPT occupies [r·K, (r+1)·K) and its draws
            # are offset by the counts of all earlier rows, so one searchsorted serves all rows.
            self._cum[c] = np.cumsum(self.counts[c].ravel()).astype(np.int64)

    # ----------------------------------------------------------------------------- checks
    def _validate(self) -> None:
        cols = self.columns
        if len(cols) == 0 or len(set(cols)) != len(cols):
            raise InputError("census model: columns must be non-empty and distinct")
        if self.estimator not in ESTIMATORS:
            raise InputError(f"census model: unknown estimator {self.estimator!r}")
        if set(self.integer) - set(cols):
            raise InputError("census model: integer columns must be model columns")
        if sorted(self.order) != sorted(cols) or self.order[0] != self.root:
            raise InputError("census model: order must list every column, root first")
        seen: set[str] = set()
        for c in self.order:
            p = self.parent.get(c, "<missing>")
            if (c == self.root) != (p is None) or (p is not None and p not in seen):
                raise InputError(f"census model: column {c!r} has no valid parent in the tree")
            seen.add(c)
            k = len(self.values.get(c, []))
            if k == 0 or len(set(self.values[c])) != k:
                raise InputError(f"census model: column {c!r} needs distinct values")
            shape = (k,) if p is None else (len(self.values[p]), k)
            counts = self.counts.get(c)
            if counts is None or counts.shape != shape or (counts < 0).any():
                raise InputError(f"census model: counts of {c!r} must be ≥ 0 with shape {shape}")
            if counts.sum() != self.rows_fitted:
                raise InputError(f"census model: counts of {c!r} do not add up to rows_fitted")
            if p is not None and not np.array_equal(counts.sum(axis=1), self.marginal(p)):
                raise InputError(f"census model: counts of {c!r} disagree with those of {p!r}")
            if (self.marginal(c) == 0).any():
                raise InputError(f"census model: a value of {c!r} has zero count")

    # ----------------------------------------------------------------------------- access
    def marginal(self, column: str) -> np.ndarray:
        """Counts of each value of ``column`` in the fitted data."""
        counts = self.counts[column]
        return counts if counts.ndim == 1 else counts.sum(axis=0)

    def cpt(self, column: str) -> np.ndarray:
        """P(column) for the root, else the matrix P(column | parent) (rows: parent values)."""
        counts = self.counts[column].astype(float)
        return counts / counts.sum(axis=-1, keepdims=True)

    def schema(self) -> pa.Schema:
        """Arrow schema of the generated tables: int64 integer columns, string others."""
        return pa.schema(
            [(c, pa.int64() if c in self.integer else pa.string()) for c in self.columns]
        )

    # ----------------------------------------------------------------------------- sampling
    def sample_codes(self, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Value codes of ``n`` rows by ancestral sampling. O(n · Σ log|CPT|) time,
        O(n · columns) memory; no Python loop over rows."""
        codes: dict[str, np.ndarray] = {}
        for c in self.order:
            cum = self._cum[c]
            p = self.parent[c]
            if p is None:
                draw = rng.integers(0, int(cum[-1]), size=n, dtype=np.int64)
                codes[c] = np.searchsorted(cum, draw, side="right")
            else:
                k = self.counts[c].shape[1]
                r = codes[p]
                row_end = cum[k - 1 :: k]  # cumulative count at the end of each parent row
                row_total = self.counts[c].sum(axis=1)
                start = (row_end - row_total)[r]
                draw = start + rng.integers(0, row_total[r], dtype=np.int64)
                codes[c] = np.searchsorted(cum, draw, side="right") - r * k
        return codes

    def block_table(self, n: int, block: int, seed: int) -> pa.Table:
        """Block ``block`` (``n`` rows) of the stream for ``seed``: its randomness is child
        ``block`` of ``SeedSequence(seed)``, i.e. ``SeedSequence(seed).spawn(block + 1)[block]``
        (built directly, so no list of children is held)."""
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(block,)))
        codes = self.sample_codes(n, rng)
        arrays = []
        for c in self.columns:
            if c in self.integer:
                labels = np.asarray(self.values[c], dtype=np.int64)
                arrays.append(pa.array(labels[codes[c]], pa.int64()))
            else:
                dictionary = pa.array([str(v) for v in self.values[c]], pa.string())
                arrays.append(dictionary.take(pa.array(codes[c], pa.int64())))
        return pa.Table.from_arrays(arrays, schema=self.schema())

    def iter_blocks(self, rows: int, seed: int) -> Iterator[pa.Table]:
        """The generated rows as Arrow tables of :data:`BLOCK_ROWS` rows (the last shorter)."""
        _check_rows(rows)
        seed = _check_seed(seed)
        for block, start in enumerate(range(0, rows, BLOCK_ROWS)):
            yield self.block_table(min(BLOCK_ROWS, rows - start), block, seed)

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        """``n`` synthetic rows as a DataFrame — exactly the rows ``write_census`` writes for
        the same seed."""
        table = pa.concat_tables(list(self.iter_blocks(n, seed)))
        return table.to_pandas()

    # ----------------------------------------------------------------------------- JSON
    def to_dict(self) -> dict[str, Any]:
        columns = [
            {
                "name": c,
                "kind": "integer" if c in self.integer else "string",
                "values": list(self.values[c]),
            }
            for c in self.columns
        ]
        edges = [{"parent": p, "child": c, "mutual_information": mi} for p, c, mi in self.edges]
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "model": "Chow-Liu tree Bayesian network (maximum-likelihood CPTs from counts)",
            "source": self.source,
            "rows_fitted": self.rows_fitted,
            "mutual_information_estimator": self.estimator,
            "columns": columns,
            "root": self.root,
            "order": list(self.order),
            "parent": dict(self.parent),
            "edges": edges,
            "counts": {c: self.counts[c].tolist() for c in self.columns},
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"

    @classmethod
    def from_dict(cls, data: Any) -> CensusModel:
        """Rebuild a model from :meth:`to_dict` output; InputError on anything malformed."""
        try:
            if data.get("format") != FORMAT or data.get("version") != FORMAT_VERSION:
                raise InputError(f"not a {FORMAT} version {FORMAT_VERSION} file")
            columns = tuple(str(c["name"]) for c in data["columns"])
            integer = tuple(str(c["name"]) for c in data["columns"] if c["kind"] == "integer")
            values: dict[str, list[Any]] = {}
            for c in data["columns"]:
                if c["kind"] == "integer":
                    values[c["name"]] = [int(v) for v in c["values"]]
                elif c["kind"] == "string":
                    values[c["name"]] = [str(v) for v in c["values"]]
                else:
                    raise InputError(f"unknown column kind {c['kind']!r}")
            counts = {c: np.asarray(data["counts"][c], dtype=np.int64) for c in columns}
            parent = {str(c): (None if p is None else str(p)) for c, p in data["parent"].items()}
            edges = tuple(
                (str(e["parent"]), str(e["child"]), float(e["mutual_information"]))
                for e in data["edges"]
            )
            return cls(
                columns=columns,
                integer=integer,
                values=values,
                root=str(data["root"]),
                parent=parent,
                order=tuple(str(c) for c in data["order"]),
                counts=counts,
                edges=edges,
                rows_fitted=int(data["rows_fitted"]),
                source=str(data.get("source", "")),
                estimator=str(data.get("mutual_information_estimator", "plugin")),
            )
        except InputError as exc:
            raise InputError(f"invalid census model: {exc}") from None
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise InputError(f"invalid census model: {type(exc).__name__}: {exc}") from None

    @classmethod
    def from_json(cls, text: str) -> CensusModel:
        from anonymatch.core.documents import parse_json

        try:  # bounded: nested more than 64 levels is refused, never a RecursionError
            data = parse_json(text, "model")
        except InputError as exc:
            raise InputError(f"invalid census model: {exc}") from None
        return cls.from_dict(data)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model as JSON, atomically."""
        text = self.to_json()
        write_atomically(path, lambda tmp: tmp.write_text(text))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> CensusModel:
        p = Path(path)
        if not p.is_file():
            raise InputError(f"model file not found: {path}")
        try:
            text = p.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read model file {path}: {exc}") from None
        return cls.from_json(text)


# --------------------------------------------------------------------------------- fitting
def mutual_information(
    a: np.ndarray, b: np.ndarray, ka: int, kb: int, estimator: str = "plugin"
) -> float:
    """Mutual information (nats) of two code vectors with ``ka`` and ``kb`` values. O(n + ka·kb).

    ``plugin``: of the empirical joint distribution (Chow & Liu). ``miller-madow``: each entropy
    corrected by (m − 1)/2n for its m non-empty cells (Miller 1955), which removes most of the
    plug-in estimate's upward bias of about (ka − 1)(kb − 1)/2n — large for pairs of
    many-valued columns on a few tens of thousands of rows (age × hours-per-week on Adult)."""
    joint = np.bincount(a * kb + b, minlength=ka * kb).reshape(ka, kb).astype(float)
    return _mi_from_counts(joint, estimator)


def _mi_from_counts(joint: np.ndarray, estimator: str = "plugin") -> float:
    n = joint.sum()
    pa_ = joint.sum(axis=1, keepdims=True) / n
    pb_ = joint.sum(axis=0, keepdims=True) / n
    pj = joint / n
    nz = pj > 0
    value = float(np.sum(pj[nz] * np.log(pj[nz] / (pa_ @ pb_)[nz])))
    if estimator == "miller-madow":
        ma, mb = int((pa_ > 0).sum()), int((pb_ > 0).sum())
        value += ((ma - 1) + (mb - 1) - (int(nz.sum()) - 1)) / (2 * n)
    elif estimator != "plugin":
        raise InputError(f"unknown mutual information estimator {estimator!r}")
    return value if estimator == "miller-madow" else max(0.0, value)


def pairwise_mutual_information(
    codes: dict[str, np.ndarray], sizes: dict[str, int], estimator: str = "plugin"
) -> np.ndarray:
    """Matrix of the mutual information between every pair of columns (keys' order)."""
    names = list(codes)
    m = np.zeros((len(names), len(names)))
    for i, x in enumerate(names):
        for j in range(i + 1, len(names)):
            y = names[j]
            m[i, j] = m[j, i] = mutual_information(
                codes[x], codes[y], sizes[x], sizes[y], estimator
            )
    return m


def maximum_spanning_tree(weights: np.ndarray) -> list[tuple[int, int]]:
    """Kruskal's maximum spanning tree of the complete graph with symmetric ``weights``
    (ties broken by the smaller index pair, so the result is deterministic). O(d² log d)."""
    d = weights.shape[0]
    pairs = sorted(
        ((i, j) for i in range(d) for j in range(i + 1, d)), key=lambda e: (-weights[e], e)
    )
    comp = list(range(d))

    def find(x: int) -> int:
        while comp[x] != x:
            comp[x] = comp[comp[x]]
            x = comp[x]
        return x

    tree = []
    for i, j in pairs:
        ri, rj = find(i), find(j)
        if ri != rj:
            comp[ri] = rj
            tree.append((i, j))
    return tree


def _encode(column: pd.Series, integer: bool) -> tuple[np.ndarray, list[Any]]:
    if integer:
        ints = pd.to_numeric(column, errors="raise").astype(np.int64).to_numpy()
        uniq, codes = np.unique(ints, return_inverse=True)
        return codes.astype(np.int64), [int(v) for v in uniq]
    strings = column.astype(str).to_numpy(dtype=object)
    uniq, codes = np.unique(strings, return_inverse=True)
    return codes.astype(np.int64), [str(v) for v in uniq]


def _is_integer_column(column: pd.Series) -> bool:
    if pd.api.types.is_bool_dtype(column):
        return False
    if pd.api.types.is_integer_dtype(column):
        return True
    values = pd.to_numeric(column, errors="coerce")
    return bool(values.notna().all() and (values == values.round()).all())


def fit_census_model(
    frame: pd.DataFrame,
    columns: Sequence[str] | None = None,
    root: str | None = None,
    integer: Sequence[str] | None = None,
    na_values: Sequence[str] = DEFAULT_NA_TOKENS,
    source: str = "",
    estimator: str = "plugin",
) -> CensusModel:
    """Fit a Chow–Liu tree Bayesian network to ``columns`` of ``frame`` (default: all).

    Rows with a missing value (NaN or a token of ``na_values``) in one of the columns are
    dropped. ``integer`` lists the columns whose values are integers (default: every column
    whose values all parse as integers); they are generated as int64, the others as strings.
    ``root`` defaults to the first column (the tree distribution does not depend on the root).
    ``estimator`` sets the edge weights: ``plugin`` (Chow & Liu's empirical mutual information)
    or ``miller-madow`` (bias-corrected, see :func:`mutual_information`).
    Complexity: O(d² · n + Σ|A||B|) for d columns and n rows."""
    columns = list(frame.columns if columns is None else columns)
    if estimator not in ESTIMATORS:
        raise InputError(f"estimator must be one of {', '.join(ESTIMATORS)}, got {estimator!r}")
    if not columns:
        raise InputError("no columns to fit")
    if len(set(columns)) != len(columns):
        raise InputError("a column is listed twice")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"the table has no column {missing[0]!r}")
    root = columns[0] if root is None else root
    if root not in columns:
        raise InputError(f"root {root!r} is not one of the columns")
    data = frame[columns]
    keep = ~data.isna().any(axis=1).to_numpy()
    tokens = [t for t in na_values]
    if tokens:
        keep &= ~data.astype(str).apply(lambda s: s.str.strip().isin(tokens)).any(axis=1).to_numpy()
    data = data.loc[keep]
    if len(data) == 0:
        raise InputError("no complete rows to fit the model on")
    if integer is None:
        integer = [c for c in columns if _is_integer_column(data[c])]
    else:
        bad = [c for c in integer if c not in columns]
        if bad:
            raise InputError(f"integer column {bad[0]!r} is not one of the columns")
    codes: dict[str, np.ndarray] = {}
    values: dict[str, list[Any]] = {}
    for c in columns:
        try:
            codes[c], values[c] = _encode(data[c], c in integer)
        except (ValueError, TypeError):
            raise InputError(f"column {c!r} is not integer-valued") from None
    sizes = {c: len(values[c]) for c in columns}
    mi = pairwise_mutual_information(codes, sizes, estimator)
    tree = maximum_spanning_tree(mi)
    neighbours: dict[str, list[str]] = {c: [] for c in columns}
    for i, j in tree:
        neighbours[columns[i]].append(columns[j])
        neighbours[columns[j]].append(columns[i])
    parent: dict[str, str | None] = {root: None}
    order = [root]
    for c in order:  # breadth-first orientation away from the root
        for nb in sorted(neighbours[c], key=columns.index):
            if nb not in parent:
                parent[nb] = c
                order.append(nb)
    counts: dict[str, np.ndarray] = {}
    edges = []
    for c in order:
        p = parent[c]
        if p is None:
            counts[c] = np.bincount(codes[c], minlength=sizes[c]).astype(np.int64)
        else:
            flat = codes[p] * sizes[c] + codes[c]
            counts[c] = np.bincount(flat, minlength=sizes[p] * sizes[c]).reshape(sizes[p], sizes[c])
            edges.append((p, c, float(mi[columns.index(p), columns.index(c)])))
    return CensusModel(
        columns=tuple(columns),
        integer=tuple(c for c in columns if c in integer),
        values=values,
        root=root,
        parent=parent,
        order=tuple(order),
        counts=counts,
        edges=tuple(edges),
        rows_fitted=len(data),
        source=source,
        estimator=estimator,
    )


def fit_adult(
    path: str | os.PathLike[str] | None = None, estimator: str = "miller-madow"
) -> CensusModel:
    """The census model of :data:`CENSUS_COLUMNS` fitted on UCI Adult's 30,162 complete rows
    (``path`` or ``$ANONYMATCH_DATA/adult/adult.data``), rooted at age.

    Departure from plain Chow–Liu: the default edge weight is the Miller–Madow corrected mutual
    information. With plug-in weights the bias of the 94-valued hours-per-week wins it the edge
    to occupation over occupation–sex, and the synthetic data loses occupation × sex entirely
    (benchmarks/synth_census.py measures both trees)."""
    src = dataset_path("adult/adult.data", path)
    frame = load_adult(src, complete=True)
    return fit_census_model(
        frame,
        CENSUS_COLUMNS,
        root="age",
        integer=("age", "education-num", "hours-per-week"),
        source=f"UCI Adult ({src}), rows with '?' dropped",
        estimator=estimator,
    )


# Cardinalities of the columns in Adult's complete rows, for data-free test tables.
_ADULT_SIZES = {
    "age": 72,
    "workclass": 7,
    "education-num": 16,
    "marital-status": 7,
    "occupation": 14,
    "race": 5,
    "sex": 2,
    "native-country": 41,
    "hours-per-week": 94,
    "income": 2,
}


def example_census_frame(rows: int = 20_000, seed: int = 0) -> pd.DataFrame:
    """A census-*shaped* table without any real data (for tests where ANONYMATCH_DATA is
    unset): :data:`CENSUS_COLUMNS` with Adult's cardinalities, generic labels (``sex-0``…),
    integer age / education-num / hours-per-week, and skewed dependencies along a random tree
    (Dirichlet(0.3) conditional tables). Fit it with :func:`fit_census_model`."""
    _check_rows(rows)
    rng = np.random.default_rng(_check_seed(seed))
    cols = list(CENSUS_COLUMNS)
    codes: dict[str, np.ndarray] = {}
    for i, c in enumerate(cols):
        k = _ADULT_SIZES[c]
        if i == 0:
            codes[c] = rng.choice(k, size=rows, p=rng.dirichlet(np.full(k, 0.3)))
            continue
        parent = cols[int(rng.integers(0, i))]
        table = rng.dirichlet(np.full(k, 0.3), size=_ADULT_SIZES[parent])
        cum = np.cumsum(table, axis=1)
        u = rng.random(rows)[:, None]
        codes[c] = np.minimum((u > cum[codes[parent]]).sum(axis=1), k - 1)
    offsets = {"age": 17, "education-num": 1, "hours-per-week": 1}
    return pd.DataFrame(
        {
            c: (codes[c] + offsets[c])
            if c in offsets
            else np.char.add(f"{c}-", codes[c].astype(str))
            for c in cols
        }
    )


# --------------------------------------------------------------------------------- writing
def _check_rows(rows: int) -> None:
    if isinstance(rows, bool) or not isinstance(rows, int | np.integer) or rows < 1:
        raise InputError(f"rows must be a positive integer, got {rows!r}")


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def output_kind(path: str | os.PathLike[str]) -> str:
    """``"csv"`` or ``"parquet"`` from the extension; InputError otherwise."""
    suffix = Path(path).suffix.lower()
    if suffix not in EXTENSIONS:
        raise InputError(f"output must end in {', '.join(EXTENSIONS)} (got {Path(path).name!r})")
    return "csv" if suffix == ".csv" else "parquet"


def _batches(blocks: Iterator[pa.Table], chunk_rows: int) -> Iterator[pa.Table]:
    """Re-cut a stream of tables into tables of exactly ``chunk_rows`` rows (the last shorter)."""
    pending: list[pa.Table] = []
    held = 0
    for block in blocks:
        pending.append(block)
        held += block.num_rows
        while held >= chunk_rows:
            table = pa.concat_tables(pending)
            yield table.slice(0, chunk_rows)
            rest = table.slice(chunk_rows)
            pending, held = ([rest] if rest.num_rows else []), rest.num_rows
    if held:
        yield pa.concat_tables(pending)


def write_census(
    model: CensusModel,
    path: str | os.PathLike[str],
    rows: int,
    seed: int,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: Callable[[int], object] | None = None,
) -> None:
    """Generate ``rows`` rows and write them to ``path`` (``.csv`` with a header, or
    ``.parquet``: one file, a row group per ``chunk_rows`` rows), atomically: a temporary file in
    the same directory renamed into place, removed on any error or interrupt. The content
    depends only on ``model``, ``rows`` and ``seed``; ``chunk_rows`` only sets the write batch.
    ``progress(n)`` is called after each batch of ``n`` rows. Memory: O(chunk_rows + BLOCK_ROWS)
    rows, independent of ``rows``."""
    kind = output_kind(path)
    _check_rows(rows)
    seed = _check_seed(seed)
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise InputError(f"chunk_rows must be a positive integer, got {chunk_rows!r}")
    schema = model.schema()

    def write(tmp: Path) -> None:
        batches = _batches(model.iter_blocks(rows, seed), chunk_rows)
        if kind == "parquet":
            import pyarrow.parquet as pq

            with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
                for batch in batches:
                    writer.write_table(batch, row_group_size=chunk_rows)
                    if progress is not None:
                        progress(batch.num_rows)
        else:
            import pyarrow.csv as pcsv

            # Quote nothing unless a label needs it (pyarrow's "needed" quotes every string).
            labels = [*model.columns]
            for c in model.columns:
                if c not in model.integer:
                    labels.extend(str(v) for v in model.values[c])
            special = any(
                any(ch in v for ch in ',"\n\r') or v != v.strip() or v == "" for v in labels
            )
            options = pcsv.WriteOptions(
                include_header=True, quoting_style="needed" if special else "none"
            )
            with pcsv.CSVWriter(tmp, schema, write_options=options) as writer:
                for batch in batches:
                    writer.write_table(batch)
                    if progress is not None:
                        progress(batch.num_rows)

    write_atomically(path, write)
