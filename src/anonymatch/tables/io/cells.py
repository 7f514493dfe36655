"""The table release format (DESIGN.md › Release formats): formatting and parsing.

CSV cells: a numeric QI is ``lo..hi`` (inclusive) or the plain value when lo = hi; a categorical
QI is its sorted value set joined by ``|`` (a single value stays plain), with ``\\``, ``|`` and
``*`` inside values escaped by ``\\``; ``*`` alone is a suppressed cell. Parquet keeps types:
a numeric QI is a struct ``{lo, hi}``, a categorical QI a list of strings, a suppressed cell null.

Typed QIs (``tables.columns.qitypes``): an ordinal or date QI is a range of labels, ``10+..1,000+``
or ``2018-01..2018-06`` (Parquet: ``struct{lo, hi}`` of the two labels as text); a categorical QI
with a hierarchy whose nodes are published is ``~label`` for a node (a leaf value stays plain, the
root is ``*``; Parquet: ``struct{node, values}``, the node label — null for a leaf — and the leaves
it covers). A ``~label`` cell is read back as that node (``recode.NodeCells``: the node, never
its leaves listed per row), so node labels that look like leaf values (``~Other`` beside a leaf
``Other``) are never confused.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import scipy.sparse as sp

from anonymatch.core.cells import NODE_MARK, STAR, escape_label, split_cell
from anonymatch.core.csvsafe import unescape_frame, write_csv
from anonymatch.core.errors import InputError
from anonymatch.core.files import write_atomically
from anonymatch.tables.columns.hierarchy import Hierarchy
from anonymatch.tables.columns.qitypes import DateScale, OrdinalScale
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.io import is_parquet, read_table
from anonymatch.tables.io.sidecar import (
    PARQUET_TYPING_KEY,
    kept_column_dtype,
    release_schema,
    typed_kept_column,
    write_schema,
)
from anonymatch.tables.recode import (
    CatSets,
    GeneralizedQI,
    NodeCells,
    cat_nodes,
    distinct_rows,
    published_groups,
)

EXACT_INTEGER = float(2**53)
"""Integral floats below this magnitude print as integers (every integer up to 2^53 is a
float exactly); beyond it a float prints as its shortest exact ``repr`` (``1e+19``), never
through an int64 cast that would overflow at 2^63."""


def _number_text(values: np.ndarray, integral: bool) -> list[str]:
    """The text of published numbers, read back by ``_exact_numbers`` as exactly the same
    floats: integers for an integral column (up to 2^53), else the shortest ``repr``."""
    return _number_array(values, integral).tolist()


def _number_array(values: np.ndarray, integral: bool) -> np.ndarray:
    """``_number_text`` as an object array. Each distinct bit pattern is formatted once (a
    column repeats its bounds). O(n + u) for u distinct values."""
    codes, bits = pd.factorize(np.ascontiguousarray(values, dtype=np.float64).view(np.int64))
    distinct = np.asarray(bits, dtype=np.int64).view(np.float64)
    out = [repr(v) for v in distinct.tolist()]  # shortest text that round-trips exactly
    if integral:
        small = np.abs(distinct) < EXACT_INTEGER
        for i in np.flatnonzero(small).tolist():
            out[i] = str(int(distinct[i]))
    return np.asarray(out, dtype=object)[codes]


def integer_typed(values: np.ndarray, integral: bool) -> bool:
    """Whether a numeric QI's Parquet cells are int64 (integral and every finite value below
    2^53 in magnitude, so exact both ways) rather than float64."""
    finite = values[np.isfinite(values)]
    return integral and bool(np.all(np.abs(finite) < EXACT_INTEGER))


def format_cells(cells: GeneralizedQI, qi: EncodedQI) -> dict[str, list[str]]:
    """CSV text of every published QI cell, by attribute name. Identical rows (a class
    release's members, ``recode.published_groups``) are formatted once. O(n·d + Σ set sizes)
    for the distinct rows, O(n·d) to copy their text to every row."""
    if not qi.types:  # plain numbers and value sets: vectorized, grouping would cost more
        return _format_cells(cells, qi)
    reps, group, _ = published_groups(cells)
    if len(reps) == cells.n:
        return _format_cells(cells, qi)
    distinct = _format_cells(cells.take(reps), qi)
    return {name: np.asarray(col, dtype=object)[group].tolist() for name, col in distinct.items()}


def _format_cells(cells: GeneralizedQI, qi: EncodedQI) -> dict[str, list[str]]:
    """Text of every cell, column by column with object-array operations: numeric bounds
    through their distinct values (``_number_text``), value sets by concatenating
    ``label|`` per stored label and summing each row's segment (``np.add.reduceat``). O(n·d +
    Σ set sizes)."""
    out: dict[str, list[str]] = {}
    scaled = qi.types.scaled
    for a, name in enumerate(qi.num_names):
        integral = bool(qi.num_integral[a])
        star = cells.num_star[:, a]
        if name in scaled:
            lo = np.asarray(scaled[name].text(np.where(star, 0, cells.num_lo[:, a])), object)
            hi = np.asarray(scaled[name].text(np.where(star, 0, cells.num_hi[:, a])), object)
        else:
            lo = _number_array(cells.num_lo[:, a], integral)
            hi = _number_array(cells.num_hi[:, a], integral)
        text = np.where(lo == hi, lo, lo + ".." + hi)
        out[name] = np.where(star, STAR, text).tolist()
    trees = qi.cat_hierarchies()
    for a, name in enumerate(qi.cat_names):
        star = cells.cat_star[:, a]
        tree = trees[a]
        if tree is not None:  # labels escaped for the leaves shown only (not 100,000 ZIPs)
            held = cat_nodes(cells, a)
            shown = held if held is not None else cells.cat_sets[a]
            out[name] = _node_column(tree, shown, star, qi.cat_domains[a])
            continue
        sets = cells.cat_sets[a]
        labels = np.array([escape_label(str(v)) for v in qi.cat_domains[a]], dtype=object)
        out[name] = _set_text(sets.indptr, sets.indices, labels, star)
    return out


def _set_text(ptr: np.ndarray, idx: np.ndarray, labels: np.ndarray, star: np.ndarray) -> list[str]:
    """``"|".join`` of each row's labels (in stored order), ``*`` where ``star``: every stored
    label but the first of its row is taken as ``|label``, and each non-empty row's segment is
    summed (string concatenation inside one ufunc loop; a one-label row is its label). O(n +
    Σ set sizes)."""
    n = len(ptr) - 1
    text = np.full(n, "", dtype=object)
    if len(idx):
        filled = np.flatnonzero(np.diff(ptr) > 0)
        first = np.zeros(len(idx), bool)
        first[ptr[filled]] = True
        barred = np.array(["|" + str(v) for v in labels], dtype=object)
        pieces = np.where(first, labels[idx], barred[idx])
        text[filled] = np.add.reduceat(pieces, ptr[filled])
    return np.where(star, STAR, text).tolist()


def _node_column(
    tree: Hierarchy,
    sets: sp.csr_array | NodeCells,
    star: np.ndarray,
    labels: np.ndarray,
) -> list[str]:
    """Text of hierarchy cells: a leaf, ``~node`` or ``*`` (lowest node covering each set).
    The lowest node is found once per distinct set (``recode.distinct_rows``): a release of
    nodes holds few distinct cells but up to rows × leaves labels, and walking every label up
    the L levels cost O(nnz·L) — 31 s for a 100,000-leaf ZIP hierarchy. Now O(nnz) cheap
    arithmetic plus O(nnz of the distinct sets · L). (A hash collision could only merge two
    different sets' text; the release is verified from its text, so it could never pass.)
    Cells held as nodes (:class:`~anonymatch.tables.recode.NodeCells`, what ``recode``
    makes) are written from their nodes: O(n), no leaf listed."""
    nodes = np.full(len(star), tree.root, np.int64)
    if isinstance(sets, NodeCells):  # the cells' nodes, kept by recode: nothing to find
        nodes = np.where(sets.nodes >= 0, sets.nodes, tree.root)
    elif len(live := np.flatnonzero(~star)):
        subset = sets[live] if len(live) < len(star) else sets
        reps, group = distinct_rows(subset)
        nodes[live] = tree.lowest_nodes(subset[reps])[group]
    text: dict[int, str] = {}
    for v in np.unique(nodes).tolist():
        shown = tree.node_text(v)
        if shown is None:
            text[v] = escape_label(str(labels[tree.node_leaves[[v]].indices[0]]))
        elif shown == STAR:
            text[v] = STAR
        else:
            text[v] = NODE_MARK + escape_label(shown)
    return [STAR if s else text[v] for v, s in zip(nodes.tolist(), star, strict=True)]


def parse_cells(frame: pd.DataFrame, qi: EncodedQI) -> GeneralizedQI:
    """Published QI cells from a release table (CSV text or Parquet typed columns), with labels
    coded in the original's domain (labels the original never had get extra codes ≥ |A|).
    Raises InputError on a missing column or a malformed cell. Inside
    ``tables.io.reuse.reuse_parsed_release`` the same text is parsed once (the result is shared:
    do not change it)."""
    from anonymatch.tables.io.reuse import cached, cells_key

    return cached(lambda: cells_key(frame, qi), lambda: _parse_cells(frame, qi))


def _parse_cells(frame: pd.DataFrame, qi: EncodedQI) -> GeneralizedQI:
    for name in qi.names:
        if name not in frame.columns:
            raise InputError(f"the release has no column {name!r}")
    frame = frame.reset_index(drop=True)
    n = len(frame)
    dn, dc = len(qi.num_names), len(qi.cat_names)
    lo, hi = np.empty((n, dn)), np.empty((n, dn))
    num_star = np.zeros((n, dn), bool)
    scaled = qi.types.scaled
    for a, name in enumerate(qi.num_names):
        if name in scaled:
            lo[:, a], hi[:, a], num_star[:, a] = _parse_scaled_column(
                frame[name], name, scaled[name]
            )
            continue
        uniq, codes, first = _distinct(frame[name])
        lo_u, hi_u, star_u = _parse_numeric_column(uniq, name, first)
        lo[:, a], hi[:, a], num_star[:, a] = lo_u[codes], hi_u[codes], star_u[codes]
    cat_star = np.zeros((n, dc), bool)
    sets = []
    for a, name in enumerate(qi.cat_names):
        uniq, codes, first = _distinct(frame[name])
        tree = qi.types.hierarchies.get(name)
        nodes = _node_codes(uniq, name, qi.cat_domains[a], tree)
        if nodes is not None and tree is not None:  # no node expanded into its leaves
            cat_star[:, a] = nodes[codes] < 0
            sets.append(NodeCells(tree, nodes[codes], len(qi.cat_domains[a])))
            continue
        m, star_u = _parse_categorical_column(uniq, name, qi.cat_domains[a], tree, first)
        cat_star[:, a] = star_u[codes]
        sets.append(m if len(uniq) == n else sp.csr_array(m[codes]))
    return GeneralizedQI(lo, hi, num_star, CatSets(sets), cat_star)


def _node_codes(
    column: pd.Series, name: str, domain: np.ndarray, tree: Hierarchy | None
) -> np.ndarray | None:
    """The hierarchy node of each distinct text cell of a node column (−1 for ``*``): a
    ``~label`` cell is the node of that label, a plain leaf its own node (leaf code c is node
    c), an ARX label without ``~`` a node as in ``_marked_nodes``. None when the column is not
    all nodes and leaves (a value set ``a|b``, a label outside the hierarchy, typed Parquet
    cells): ``_parse_categorical_column`` then reads it as value sets. A ``~label`` that
    names no node raises InputError (``Hierarchy.node``), as there. O(u·log N) for u distinct
    cells and N leaves — never the leaves under a node."""
    if tree is None or len(domain) != tree.n_leaves or not len(column):
        return None
    if not all(isinstance(c, str) for c in column):
        return None
    text = column.astype(str)
    star = (text == STAR).to_numpy()
    text = _marked_nodes(text, star, domain, tree)
    out = np.full(len(text), -1, np.int64)
    leaves: list[int] = []
    labels: list[str] = []
    for i, cell in enumerate(text.tolist()):
        if star[i]:
            continue
        if cell.startswith(NODE_MARK):
            parts = split_cell(cell[1:])
            if len(parts) != 1:
                raise InputError(f"malformed node cell {cell!r} in column {name!r}")
            out[i] = tree.node(parts[0])
            continue
        parts = split_cell(cell) if ("\\" in cell or "|" in cell) else [cell]
        if len(parts) != 1:
            return None
        leaves.append(i)
        labels.append(parts[0])
    if labels:
        wanted = np.asarray(labels, dtype=str)
        pos = np.minimum(np.searchsorted(tree.leaves, wanted), tree.n_leaves - 1)
        if np.any(tree.leaves[pos] != wanted):
            return None
        out[leaves] = pos
    return out


def _distinct(column: pd.Series) -> tuple[pd.Series, np.ndarray, np.ndarray]:
    """The distinct cells of a text column (each parsed once: cells repeat across rows), the
    index of each row's cell among them and the first row of each. Typed (Parquet) columns are
    returned as they are. O(n)."""
    column = column.reset_index(drop=True)
    first_cell = column.iloc[0] if len(column) else None
    if first_cell is None or isinstance(first_cell, dict | list | np.ndarray):
        rows = np.arange(len(column))
        return column, rows, rows
    codes, uniq = pd.factorize(column, use_na_sentinel=False)
    first = np.empty(len(uniq), np.int64)
    first[codes[::-1]] = np.arange(len(codes))[::-1]
    return pd.Series(uniq, dtype=object), codes, first


def _exact_numbers(text: pd.Series) -> np.ndarray:
    """Numbers parsed exactly (numpy's strtod: the shortest repr of a float reads back as that
    float, which ``pd.to_numeric``'s fast parser does not guarantee); NaN where not a number."""
    try:
        return text.to_numpy(dtype=str).astype(np.float64)
    except ValueError:
        return pd.to_numeric(text, errors="coerce").to_numpy(float)


def _parse_numeric_column(
    column: pd.Series, name: str, rows: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bounds and ``*`` mask of a numeric column; ``rows[u]`` is the release row of entry u
    (for error messages; identity by default)."""
    first = column.iloc[0] if len(column) else None
    if isinstance(first, dict) or (
        first is None and column.dtype == object and column.isna().all()
    ):
        star = column.isna().to_numpy()
        lo = np.array([np.nan if s else c["lo"] for c, s in zip(column, star, strict=True)], float)
        hi = np.array([np.nan if s else c["hi"] for c, s in zip(column, star, strict=True)], float)
        bad = ~star & (np.isnan(lo) | np.isnan(hi) | (lo > hi))
        if bad.any():  # a null bound (a suppressed cell is a null struct, not a null bound)
            at = int(bad.argmax())
            row = at if rows is None else int(rows[at])
            cell = column.iloc[at]
            raise InputError(
                f"malformed numeric cell {cell['lo']}..{cell['hi']} in column {name!r} "
                f"(row {row + 1}): "
                + ("a null bound" if np.isnan(lo[at]) or np.isnan(hi[at]) else "lo > hi")
            )
        return np.where(star, -np.inf, lo), np.where(star, np.inf, hi), star
    text = column.astype(str).str.strip()
    star = (text == STAR).to_numpy()
    parts = text.str.split("..", n=1, regex=False)
    left = parts.str[0]
    right = parts.str[1].astype(object)
    right = right.where(right.notna(), left)
    lo = _exact_numbers(left.where(~star, "nan"))
    hi = _exact_numbers(right.where(~star, "nan"))
    bad = ~star & (np.isnan(lo) | np.isnan(hi) | (lo > hi))
    if bad.any():
        at = int(bad.argmax())
        row = at if rows is None else int(rows[at])
        raise InputError(
            f"malformed numeric cell {text.iloc[at]!r} in column {name!r} (row {row + 1})"
        )
    return np.where(star, -np.inf, lo), np.where(star, np.inf, hi), star


def _parse_scaled_column(
    column: pd.Series, name: str, scale: OrdinalScale | DateScale
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ordinal / date range cells (text or Parquet struct{lo, hi} of labels) to numbers."""
    star = column.isna().to_numpy()
    text = pd.Series(
        [
            STAR if s else (f"{c['lo']}..{c['hi']}" if isinstance(c, dict) else str(c).strip())
            for c, s in zip(column, star, strict=True)
        ],
        dtype=object,
    )
    star = (text == STAR).to_numpy()
    lo, hi = np.full(len(text), -np.inf), np.full(len(text), np.inf)
    if (~star).any():
        lo[~star], hi[~star] = scale.parse(text[~star].reset_index(drop=True), name)
    return lo, hi, star


def _parse_categorical_column(
    column: pd.Series,
    name: str,
    domain: np.ndarray,
    tree: Hierarchy | None = None,
    rows: np.ndarray | None = None,
) -> tuple[sp.csr_array, np.ndarray]:
    """Value-set matrix and ``*`` mask of a categorical column; ``rows[u]`` is the release row
    of entry u (for error messages; identity by default)."""
    first = column.iloc[0] if len(column) else None
    if isinstance(first, dict):  # Parquet struct{node, values} of a hierarchy
        column = column.map(lambda c: None if c is None else c["values"])
        first = column.iloc[0]
    if first is None or isinstance(first, list | np.ndarray):  # Parquet list<string>
        star = column.isna().to_numpy()
        lists = column.where(~star, None)
        exploded = lists.explode().dropna().astype(str)
    else:
        text = column.astype(str)
        star = (text == STAR).to_numpy()
        if tree is not None:
            text = _marked_nodes(text, star, domain, tree)
        live = text[~star]
        nodes = live.str.startswith(NODE_MARK)
        if nodes.any():
            node_cells = live[nodes]
            live = live[~nodes]
        escaped = live.str.contains("\\", regex=False)
        plain = live[~escaped].str.split("|", regex=False).explode()
        tricky = pd.Series(
            [split_cell(c) for c in live[escaped]],
            index=live.index[escaped.to_numpy()],
            dtype=object,
        ).explode()
        exploded = pd.concat([plain, tricky]) if len(tricky) else plain
        if nodes.any():
            exploded = pd.concat([exploded, _node_leaves(node_cells, name, tree)])
    codes = pd.Series(np.arange(len(domain)), index=pd.Index([str(v) for v in domain]))
    mapped = exploded.map(codes)
    unknown = mapped.isna().to_numpy()
    if unknown.any():  # labels the original never had: extra codes after the domain
        extra_labels = pd.unique(exploded[unknown])
        extra = pd.Series(len(domain) + np.arange(len(extra_labels)), index=extra_labels)
        mapped[unknown] = exploded[unknown].map(extra)
        width = len(domain) + len(extra_labels)
    else:
        width = len(domain)
    entries = exploded.index.to_numpy(dtype=np.int64)
    present = np.zeros(len(column), bool)
    present[entries] = True
    if np.any(~star & ~present):
        at = int(np.flatnonzero(~star & ~present)[0])
        row = at if rows is None else int(rows[at])
        raise InputError(f"empty value set in column {name!r} (row {row + 1})")
    m = sp.csr_array(
        (np.ones(len(entries), np.int8), (entries, mapped.to_numpy(dtype=np.int64))),
        shape=(len(column), width),
    )
    m.sum_duplicates()
    m.data[:] = 1
    m.sort_indices()
    return m, star


def _marked_nodes(
    text: pd.Series, star: np.ndarray, domain: np.ndarray, tree: Hierarchy
) -> pd.Series:
    """A hierarchy column as another tool writes it (ARX exports its nodes' labels without
    ``~``): a plain cell that is no leaf of the domain but a node label of the hierarchy is
    read as that node. A label that is both stays the leaf (as ``~`` cells are for). O(u) for
    u distinct cells."""
    live = text[~star]
    plain = live[~live.str.startswith(NODE_MARK) & ~live.str.contains("|", regex=False)]
    if plain.empty:
        return text
    uniq = np.asarray(plain.drop_duplicates().tolist(), dtype=object)
    known = np.isin(uniq, np.asarray([str(v) for v in domain], dtype=object))
    nodes = {u: NODE_MARK + escape_label(u) for u, k in zip(uniq, known, strict=True)
             if not k and u in tree.by_label}  # fmt: skip
    if not nodes:
        return text
    return text.where(~text.isin(list(nodes)), text.map(nodes))


def _node_leaves(cells: pd.Series, name: str, tree: Hierarchy | None) -> pd.Series:
    """Leaf labels under the ``~node`` cells (one row per leaf, index = the cell's row)."""
    first = str(cells.iloc[0])
    if tree is None:
        raise InputError(
            f"cell {first!r} in column {name!r} names a hierarchy node; give the hierarchy "
            f"(`hierarchies` {name}=FILE)"
        )
    leaves: dict[str, list[str]] = {}
    for cell in pd.unique(cells):
        parts = split_cell(str(cell)[1:])
        if len(parts) != 1:
            raise InputError(f"malformed node cell {cell!r} in column {name!r}")
        node = tree.node(parts[0])
        leaves[cell] = [str(v) for v in tree.leaves[tree.node_leaves[[node]].indices]]
    return pd.Series([leaves[c] for c in cells], index=cells.index, dtype=object).explode()


def release_arrow_table(frame: pd.DataFrame, cells: GeneralizedQI, qi: EncodedQI) -> pa.Table:
    """Typed Parquet layout of a release: QIs as struct{lo,hi} / list<string>, null = ``*``;
    the other columns as they are."""
    typed = typed_cells(cells, qi)
    arrays = [
        typed[name]
        if name in typed
        else pa.array(
            typed_kept_column(frame[name], kept_column_dtype(frame[name]), name).to_numpy(),
            from_pandas=True,
        )
        for name in frame.columns
    ]
    return pa.Table.from_arrays(arrays, names=[str(name) for name in frame.columns])


def typed_cells(cells: GeneralizedQI, qi: EncodedQI) -> dict[str, pa.Array]:
    """Arrow arrays of the published QI cells by attribute name (the Parquet layout)."""
    out: dict[str, pa.Array] = {}
    scaled = qi.types.scaled
    text = format_cells(cells, qi) if qi.types else {}
    for a, name in enumerate(qi.num_names):
        if name in scaled:  # struct{lo, hi} of the end labels
            star = cells.num_star[:, a]
            ends = [
                scaled[name].text(np.where(star, 0, bound[:, a]))
                for bound in (cells.num_lo, cells.num_hi)
            ]
            out[name] = pa.StructArray.from_arrays(
                [pa.array(e, pa.string()) for e in ends], names=["lo", "hi"], mask=pa.array(star)
            )
            continue
        shown = ~cells.num_star[:, a]
        ints = integer_typed(
            np.concatenate([cells.num_lo[shown, a], cells.num_hi[shown, a]]),
            bool(qi.num_integral[a]),
        )
        kind = pa.int64() if ints else pa.float64()
        # a suppressed cell's bounds are ±inf: zeroed under the null mask for an int column
        lo_values = np.where(shown, cells.num_lo[:, a], 0.0) if ints else cells.num_lo[:, a]
        hi_values = np.where(shown, cells.num_hi[:, a], 0.0) if ints else cells.num_hi[:, a]
        dtype = np.int64 if ints else float
        lo = pa.array(lo_values.astype(dtype), kind)
        hi = pa.array(hi_values.astype(dtype), kind)
        mask = pa.array(cells.num_star[:, a])
        out[name] = pa.StructArray.from_arrays([lo, hi], names=["lo", "hi"], mask=mask)
    trees = qi.cat_hierarchies()
    for a, name in enumerate(qi.cat_names):
        sets = cells.cat_sets[a]
        labels = pa.array([str(v) for v in qi.cat_domains[a]], pa.string()).take(
            pa.array(sets.indices.astype(np.int64))
        )
        star = cells.cat_star[:, a]
        if trees[a] is not None:  # struct{node, values}; the root is null like ``*``
            shown_text = pd.Series(text[name], dtype=object)
            star = star | (shown_text == STAR).to_numpy()
            node = [
                None if (s or not c.startswith(NODE_MARK)) else split_cell(c[1:])[0]
                for c, s in zip(shown_text, star, strict=True)
            ]
            values = pa.ListArray.from_arrays(pa.array(sets.indptr.astype(np.int32)), labels)
            out[name] = pa.StructArray.from_arrays(
                [pa.array(node, pa.string()), values],
                names=["node", "values"],
                mask=pa.array(star),
            )
            continue
        out[name] = pa.ListArray.from_arrays(
            pa.array(sets.indptr.astype(np.int32)), labels, mask=pa.array(star)
        )
    return out


def write_release(
    path: str | os.PathLike[str],
    frame: pd.DataFrame,
    cells: GeneralizedQI,
    qi: EncodedQI,
    csv_safe: bool = True,
) -> None:
    """Write a release table atomically: SPSS/Stata for .sav/.zsav/.dta (``tables.io.stats``),
    an Excel workbook with its sidecar for .xlsx (``tables.io.excel``), Parquet (typed, kept
    columns as numbers where they are numbers) if the path ends in .parquet, else CSV
    (tab-separated for .tsv) with the text cells already in ``frame`` and its sidecar
    ``PATH.schema.json`` (:func:`release_schema`), written first and removed again if the
    release cannot be written. ``csv_safe`` prefixes formula-like
    text cells of a CSV/TSV release with ``'`` (``core.csvsafe``; numbers and ranges are never
    touched); :func:`read_release_text` undoes it."""
    from anonymatch.tables.io.stats import is_stats_release, write_stats_release

    if is_stats_release(path):
        write_stats_release(path, frame)
        return
    if is_parquet(path):
        import pyarrow.parquet as pq  # here: a CSV release never needs it

        table = release_arrow_table(frame, cells, qi)
        typing = json.dumps(release_schema(frame, qi), separators=(",", ":")).encode()
        table = table.replace_schema_metadata(
            {**(table.schema.metadata or {}), PARQUET_TYPING_KEY: typing}
        )  # the sidecar's typing in the file: ordinal orders, date granularities, hierarchies
        write_atomically(path, lambda tmp: pq.write_table(table, tmp))
        return
    sep = "\t" if str(path).lower().endswith((".tsv", ".tab")) else ","
    from anonymatch.tables.io.excel import (
        check_excel_limits,
        is_excel_release,
        with_kept_numbers,
        write_excel,
    )

    excel = is_excel_release(path)
    if excel:
        check_excel_limits(frame, path)
    sidecar = write_schema(path, release_schema(frame, qi))

    def write(tmp: Path) -> None:
        if excel:  # the CSV release's cells in a workbook, numbers as numbers (tables.io.excel)
            write_excel(with_kept_numbers(frame, (*qi.num_names, *qi.cat_names)), tmp, csv_safe)
        else:
            write_csv(frame, tmp, sep, csv_safe)

    try:
        write_atomically(path, write)
    except BaseException:
        Path(sidecar).unlink(missing_ok=True)
        raise


def read_release_text(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a table release (any tool's) as written: Parquet as is, CSV/TSV with every cell as
    text and the formula guard of ``write_release`` undone (``core.csvsafe.unescape_frame``),
    so the cells are exactly the published values; a directory of Parquet parts (the streamed
    path's release) as its parts one after the other, in name order. O(file size)."""
    from pathlib import Path

    parts = sorted(Path(path).glob("*.parquet")) if Path(path).is_dir() else []
    if parts:
        return pd.concat([read_table(part) for part in parts], ignore_index=True)
    frame = read_table(path)
    from anonymatch.tables.io.stats import is_stats_file  # SPSS/Stata: cells unguarded

    return frame if is_parquet(path) or is_stats_file(path) else unescape_frame(frame)
