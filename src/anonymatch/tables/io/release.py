"""Reading a table release for analysis: typed cells, without the original.

:func:`read_release` turns a release (CSV with its ``.schema.json`` sidecar, typed Parquet, or
a CSV described by its manifest) into a DataFrame whose quasi-identifier cells are values an
analyst can compute with: a numeric range is a :class:`pandas.Interval` closed on both sides
(or two columns ``NAME_lo``/``NAME_hi``), a categorical cell a ``frozenset`` of labels, a
suppressed cell (``*``) NA; the kept columns get their types back. :func:`midpoints`,
:func:`mean_bounds` and :func:`uniform_histogram` are the usual estimates on ranges. The format
is documented in ``docs/release-format.md``; a worked example is ``docs/reading-releases.md``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from anonymatch.core.cells import NODE_MARK, STAR, split_cell
from anonymatch.core.csvsafe import unescape_frame
from anonymatch.core.documents import check_readable_path, load_json
from anonymatch.core.errors import InputError
from anonymatch.core.manifest import load_manifest
from anonymatch.core.params import param
from anonymatch.tables.columns.qitypes import GRANULARITIES, DateScale, OrdinalScale
from anonymatch.tables.io import CsvOptions, is_parquet, read_table
from anonymatch.tables.io.cells import _parse_numeric_column
from anonymatch.tables.io.sidecar import (
    PARQUET_TYPING_KEY,
    RELEASE_SCHEMA,
    schema_path,
    typed_kept_column,
)
from anonymatch.tables.io.stats import is_stats_file


def _sidecar(path: Path, manifest: str | os.PathLike[str] | None) -> list[dict[str, Any]] | None:
    """The column descriptions of a CSV release: its sidecar, else its manifest, else None."""
    side = Path(schema_path(path))
    if side.is_file():
        doc = load_json(side, "release schema")
        try:
            return _described(doc)
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"cannot read the release schema {side}: {exc}") from None
    return _from_manifest(manifest)


def _from_manifest(manifest: str | os.PathLike[str] | None) -> list[dict[str, Any]] | None:
    """The QI descriptions a manifest gives (kept columns then stay text), None without one."""
    if manifest is None:
        return None
    return _manifest_columns(manifest)


def _manifest_columns(
    manifest: str | os.PathLike[str], document: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The QI column descriptions of a release from its manifest (``parameters.qi`` and
    ``parameters.numeric``; ``document``: the manifest already read). InputError if it does
    not name them."""
    if document is None:
        document = load_manifest(manifest)
    try:
        parameters = document["parameters"]
        qi, numeric = list(parameters["qi"]), set(parameters.get("numeric") or ())
        if not all(isinstance(name, str) for name in qi):
            raise TypeError("parameters.qi is not a list of column names")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"cannot read the manifest {manifest}: {exc}") from None
    return [
        {"name": name, "role": "qi", "cell": "range" if name in numeric else "set"} for name in qi
    ]


def _described(doc: object) -> list[dict[str, Any]]:
    """The column descriptions of a sidecar document; ValueError/KeyError/TypeError unless
    it is one (``docs/release-format.md``)."""
    if not isinstance(doc, dict) or doc.get("schema") != RELEASE_SCHEMA:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise ValueError(f"schema {found!r}, expected {RELEASE_SCHEMA!r}")
    columns = doc["columns"]
    if not isinstance(columns, list):
        raise TypeError("columns is not a list")
    for i, column in enumerate(columns):
        _check_column(column, i)
    return list(columns)


_COLUMN_KEYS = {"name": None, "role": ("qi", "kept"), "cell": ("range", "set"),
                "values": ("integer", "float", "ordinal", "date"), "dtype": None,
                "granularity": GRANULARITIES}  # fmt: skip


def _check_column(column: object, i: int) -> None:
    """TypeError/ValueError unless ``column`` is a sidecar column description: an object whose
    ``name`` and other known keys are text (``role``, ``cell`` and ``values`` one of theirs)."""
    if not isinstance(column, dict) or not isinstance(column.get("name"), str):
        raise TypeError(f"columns[{i}] is not an object with a text name")
    for key, allowed in _COLUMN_KEYS.items():
        value = column.get(key)
        if key in column and not isinstance(value, str):
            raise TypeError(f"columns[{i}].{key} is not text")
        if key in column and allowed is not None and value not in allowed:
            raise ValueError(f"columns[{i}].{key} is {value!r}, not one of {', '.join(allowed)}")
    order, nodes = column.get("order"), column.get("nodes")
    if column.get("values") == "ordinal" and not _texts(order):
        raise TypeError(f"columns[{i}].order is not a list of labels")
    if column.get("values") == "date" and "granularity" not in column:
        raise TypeError(f"columns[{i}] has no granularity")
    if "nodes" in column and not (
        isinstance(nodes, dict) and all(_texts(v) for v in nodes.values())
    ):
        raise TypeError(f"columns[{i}].nodes is not an object of leaf lists")


def _texts(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def read_release(
    path: str | os.PathLike[str],
    manifest: str | os.PathLike[str] | None = None,
    *,
    ranges: Literal["interval", "bounds"] = "interval",
    table: str | None = None,
) -> pd.DataFrame:
    """Read a table release with typed quasi-identifier cells.

    Parameters
    ----------
    path : path-like
        The release: ``.csv``/``.tsv`` (typed by its sidecar ``PATH.schema.json``, written with
        every CSV release, or by ``manifest``), ``.parquet`` (a file or a directory of parts;
        typed by itself), a database URL (``postgresql://…``, ``sqlite:///…``,
        ``duckdb:///…``) with ``table``: typed by the sidecar stored with the table (column
        comments on PostgreSQL, the companion table ``TABLE__anonymatch`` elsewhere), or a
        relational-transaction release ``.jsonl``/``.ndjson``/``.json`` (``anonymize-rt``;
        typed by ``manifest``, required).
    manifest : path-like, optional
        The release's manifest (``anonymize --report``): names the QIs and the numeric ones of
        a CSV release without sidecar (its kept columns then stay text).
    ranges : {"interval", "bounds"}, default "interval"
        A numeric QI as one column of :class:`pandas.Interval` (closed on both sides), or as two
        float columns ``NAME_lo`` and ``NAME_hi`` in its place.
    table : str, optional
        The release table when ``path`` is a database URL (``anonymize -o URL --output-table``).

    Returns
    -------
    pandas.DataFrame
        The release's rows and columns: numeric QIs as intervals (or bounds), categorical QIs as
        ``frozenset`` of labels, NA for a suppressed cell; kept columns as int64/float64 when
        every value is a number, else text. ``df.attrs["qi"]`` lists the QIs and
        ``df.attrs["ranges"]`` the numeric ones. A relational release adds its set part:
        ``items`` and ``uncertain`` as ``frozenset`` of item tokens, ``max_errors`` as int64,
        and ``df.attrs["kind"] == "relational"``.

    Raises
    ------
    anonymatch.core.errors.InputError
        If the file cannot be read, a cell is malformed, a CSV release has neither sidecar
        nor manifest, or a JSON Lines release has no relational manifest (the message names
        ``anonymatch.relational.io.read_release``).

    Notes
    -----
    Time and memory O(n·d) for n rows and d columns (plus the labels of the value sets).

    Examples
    --------
    >>> import anonymatch, pandas as pd, tempfile, os
    >>> df = pd.DataFrame({"age": [30, 31, 32, 40, 41, 42], "sex": list("FMFMFM"),
    ...                    "bp": [120, 130, 125, 140, 135, 128]})
    >>> out = os.path.join(tempfile.mkdtemp(), "r.csv")
    >>> from anonymatch.tables.io.cells import write_release
    >>> r = anonymatch.anonymize(df, k=3, qi="age,sex", numeric="age", seed=1)
    >>> write_release(out, r.release, r.cells, r.qi)
    >>> typed = read_release(out)
    >>> typed["age"].dtype
    interval[int64, both]
    >>> typed["bp"].dtype
    dtype('int64')
    >>> isinstance(typed["sex"].iloc[0], frozenset)
    True
    """
    from anonymatch.tables.io.sql import is_database_url

    if is_database_url(path):
        return _read_database_release(str(path), table, manifest, ranges)
    if table is not None:
        raise InputError("`table` reads a release from a database URL (postgresql://…)")
    p = Path(path)
    if not check_readable_path(p, "release"):
        raise InputError(f"release not found: {path}")
    if ranges not in ("interval", "bounds"):
        raise InputError(f"ranges must be 'interval' or 'bounds', got {ranges!r}")
    if p.is_file() and p.suffix.lower() in JSON_LINES:  # a relational (JSONL) release
        frame, columns = _read_relational_release(p, manifest)
    elif p.is_dir() or is_parquet(p):
        frame, columns = _read_parquet_release(p)
    else:
        described = _sidecar(p, manifest)
        if described is None:
            raise InputError(
                f"{path} has no sidecar {Path(schema_path(p)).name}: pass the release's manifest "
                "to tell its quasi-identifiers"
            )
        frame = read_table(p, CsvOptions(skip_initial_space=False))
        if not is_stats_file(p):  # SPSS/Stata releases hold their cells unguarded
            frame = unescape_frame(frame)
        columns = described
    return typed_release(frame, columns, ranges)


def _read_database_release(
    text: str, table: str | None, manifest: str | os.PathLike[str] | None, ranges: str
) -> pd.DataFrame:
    """A release table typed by the sidecar stored with it (else by ``manifest``)."""
    from anonymatch.tables.io.sql import SqlSource, read_sql_release

    if table is None:
        raise InputError(f"a release in {SqlSource(text, '_').where} needs its `table`")
    frame, typing = read_sql_release(text, table)
    if typing is not None:
        try:
            columns = _described(typing)
        except (ValueError, KeyError, TypeError) as exc:
            where = SqlSource(text, table).where
            raise InputError(
                f"cannot read the typing of table {table!r} in {where}: {exc}"
            ) from None
    else:
        described = _from_manifest(manifest)
        if described is None:
            raise InputError(
                f"table {table!r} has no stored typing: pass the release's manifest to tell its "
                "quasi-identifiers"
            )
        columns = described
    return typed_release(frame, columns, ranges)


def typed_release(
    frame: pd.DataFrame, columns: list[dict[str, Any]], ranges: str = "interval"
) -> pd.DataFrame:
    """``frame``'s published cells typed by the column descriptions ``columns`` (a sidecar's,
    a manifest's or a database release's; ``docs/release-format.md``): what
    :func:`read_release` returns. O(n·d) plus the labels of the value sets."""
    out: dict[str, Any] = {}
    qi, numeric = [], []
    known = {c["name"]: c for c in columns}
    for name in frame.columns:
        info = known.get(str(name), {"role": "kept", "dtype": "string"})
        column = frame[name]
        scale = _scale(info)
        if info.get("role") == "qi" and scale is not None:
            qi.append(str(name))
            numeric.append(str(name))
            out.update(_scaled(column, str(name), scale, ranges))
        elif info.get("role") == "qi" and info.get("cell") == "range":
            qi.append(str(name))
            numeric.append(str(name))
            lo, hi, star = _bounds(column, str(name))
            integral = info.get("values") == "integer"
            if integral:  # exact int64 bounds, or InputError naming the cell
                lo, hi = _integer_bounds(column, str(name), lo, hi, star)
            if ranges == "bounds":
                out[f"{name}_lo"] = pd.Series(np.where(star, np.nan, lo))
                out[f"{name}_hi"] = pd.Series(np.where(star, np.nan, hi))
            else:
                out[str(name)] = _intervals(lo, hi, star, integral)
        elif info.get("role") == "qi":
            qi.append(str(name))
            out[str(name)] = _sets(column, info)
        elif "dtype" in info and not pd.api.types.is_numeric_dtype(column.dtype):
            out[str(name)] = typed_kept_column(column, str(info["dtype"]), str(name))
            out[str(name)] = out[str(name)].reset_index(drop=True)
        else:
            out[str(name)] = column.reset_index(drop=True)
    result = pd.DataFrame(out)
    result.attrs["qi"] = qi
    result.attrs["ranges"] = numeric
    result.attrs["ordinal"] = {c["name"]: list(c["order"]) for c in columns
                               if c.get("values") == "ordinal"}  # fmt: skip
    if any(c.get("role") == "items" for c in columns):
        result.attrs["kind"] = "relational"
    return result


JSON_LINES = (".jsonl", ".ndjson", ".json")
"""Extensions of a JSON Lines release (relational-transaction releases, ``anonymize-rt``)."""
SET_PART = ("items", "uncertain", "max_errors")
"""The keys of a relational record's set part (``docs/release-format.md``)."""


def _read_relational_release(
    path: Path, manifest: str | os.PathLike[str] | None
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """A relational JSON Lines release as a frame of its raw values and its column
    descriptions: the QIs (and numeric ones) from the manifest (``anonymize-rt --report``),
    the set part (``items``, ``uncertain`` as ``frozenset`` of item tokens, ``max_errors`` as
    int64) typed here. A numeric QI is ``values = "integer"`` when every bound is an integer.
    InputError without a manifest, for another kind's manifest, or a malformed line. O(size).
    """
    hint = "or read it with anonymatch.relational.io.read_release(path, people, qi)"
    if manifest is None:
        raise InputError(
            f"{path} is a JSON Lines release: pass its manifest ({param('manifest')}: the JSON "
            f"report anonymize-rt writes) to tell its quasi-identifiers, {hint}"
        )
    document = load_manifest(manifest)
    kind = document.get("data_kind")
    if kind != "relational":
        raise InputError(
            f"the manifest {manifest} describes a {kind or 'non-relational'} release; "
            "anonymatch.read_release reads table releases and relational JSON Lines releases "
            "(a set-valued release: anonymatch.sets.io.read_set_release)"
        )
    described = _manifest_columns(manifest, document)
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                raise InputError(f"{path}:{no}: not a JSON object ({hint})") from None
            if not isinstance(obj, dict) or any(key not in obj for key in SET_PART):
                raise InputError(
                    f"{path}:{no}: not a relational record (items, uncertain, max_errors); {hint}"
                )
            missing = [c["name"] for c in described if c["name"] not in obj]
            if missing:
                raise InputError(f"{path}:{no}: missing QI cell {missing[0]!r}")
            rows.append(obj)
    if not rows:
        raise InputError(f"the release has no records: {path}")
    frame = pd.DataFrame(rows)
    for c in described:  # QI cells as text, like a CSV release's
        frame[c["name"]] = frame[c["name"]].map(lambda v: STAR if v is None else str(v))
        if c["cell"] == "range":
            lo, hi, star = _bounds(frame[c["name"]], c["name"])
            bounds = np.concatenate([lo[~star], hi[~star]])
            if np.all(np.isfinite(bounds)) and np.all(bounds == np.floor(bounds)):
                c["values"] = "integer"
    for name in ("items", "uncertain"):
        if not all(isinstance(v, list) for v in frame[name]):
            raise InputError(f"{path}: {name} is not a list on every line ({hint})")
    part = {
        "items": pd.Series([frozenset(str(x) for x in v) for v in frame["items"]], dtype=object),
        "uncertain": pd.Series(
            [frozenset(str(x) for x in v) for v in frame["uncertain"]], dtype=object
        ),
        "max_errors": pd.to_numeric(frame["max_errors"], errors="coerce"),
    }
    if part["max_errors"].isna().any():
        raise InputError(f"{path}: max_errors is not a number on every line")
    part["max_errors"] = part["max_errors"].astype("int64")
    columns = [*described, *({"name": n, "role": "items"} for n in SET_PART)]
    return frame.assign(**part), columns


def _scale(info: dict[str, Any]) -> OrdinalScale | DateScale | None:
    """The scale of an ordinal or date range column (None for any other column)."""
    if info.get("cell") != "range":
        return None
    if info.get("values") == "ordinal":
        return OrdinalScale(tuple(info["order"]))
    if info.get("values") == "date":
        return DateScale(str(info["granularity"]))
    return None


_PERIODS = {"year": "Y", "quarter": "Q", "month": "M", "week": "W-SUN", "day": "D",
            "hour": "h", "minute": "min", "second": "s"}  # fmt: skip


def _scaled(
    column: pd.Series, name: str, scale: OrdinalScale | DateScale, ranges: str
) -> dict[str, pd.Series]:
    """An ordinal or date range column, typed: an ordinal cell as an interval of ranks in its
    order (closed on both sides; ``bounds``: two ordered categoricals of labels), a date cell
    as the interval of instants it covers, ``[start of the first period, start of the period
    after the last)`` (``bounds``: two :class:`pandas.Period` columns, both ends included).
    A suppressed cell is NA. O(n) plus one parse per distinct cell."""
    text = column.reset_index(drop=True).astype(object).map(_struct_text)
    star = (text.isna() | (text.astype(str) == STAR)).to_numpy()
    lo, hi = np.full(len(text), np.nan), np.full(len(text), np.nan)
    if (~star).any():
        live = text[~star].astype(str).reset_index(drop=True)
        lo[~star], hi[~star] = scale.parse(live, name)
    if isinstance(scale, OrdinalScale):
        if ranges == "bounds":
            order = pd.CategoricalDtype(list(scale.order), ordered=True)
            return {f"{name}_{side}": pd.Series(pd.Categorical.from_codes(
                np.where(star, -1, ends).astype(np.int64), dtype=order))
                for side, ends in (("lo", lo), ("hi", hi))}  # fmt: skip
        return {name: _intervals(lo, hi, star, integral=not star.any())}
    assert isinstance(scale, DateScale)
    dates = _dates(lo, hi, star, scale, ranges == "bounds")
    return {name + suffix: values for suffix, values in dates.items()}


def _dates(
    lo: np.ndarray, hi: np.ndarray, star: np.ndarray, scale: DateScale, bounds: bool
) -> dict[str, pd.Series]:
    """Date range cells (period numbers ``lo``..``hi``) as intervals of instants, or as two
    Period columns with ``bounds`` (named ``_lo``/``_hi``, the caller's name prefixed)."""
    freq = _PERIODS[scale.granularity]
    live = ~star
    kind = pd.PeriodDtype(freq)
    first = pd.Series(pd.NaT, index=range(len(lo)), dtype=kind)
    last = first.copy()
    first[live] = [pd.Period(scale.start(int(v)), freq) for v in lo[live]]
    last[live] = [pd.Period(scale.start(int(v)), freq) for v in hi[live]]
    if bounds:
        return {"_lo": first, "_hi": last}
    left = first.dt.start_time
    right = (last + 1).dt.start_time
    return {"": pd.Series(pd.arrays.IntervalArray.from_arrays(left, right, closed="left"))}


def _struct_text(cell: Any) -> Any:
    """A Parquet ``struct{lo, hi}`` cell of labels as its CSV text (``lo..hi``, or ``lo``);
    any other cell as it is."""
    if not isinstance(cell, dict):
        return cell
    if cell.get("lo") is None:
        return None
    return cell["lo"] if cell["lo"] == cell.get("hi") else f"{cell['lo']}..{cell['hi']}"


def _read_parquet_release(path: Path) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises many types for corrupt files
        raise InputError(f"cannot read Parquet release {path}: {exc}") from None
    stored = (table.schema.metadata or {}).get(PARQUET_TYPING_KEY)
    if stored is not None:  # the sidecar's typing, written with the file (typed QIs)
        try:
            return table.to_pandas(), _described(json.loads(stored))
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"cannot read the typing of Parquet release {path}: {exc}") from None
    columns: list[dict[str, Any]] = []
    for fld in table.schema:
        kind = fld.type
        if pa.types.is_struct(kind) and {kind.field(i).name for i in range(kind.num_fields)} == {
            "lo",
            "hi",
        }:
            integral = pa.types.is_integer(kind.field("lo").type)
            columns.append(
                {
                    "name": fld.name,
                    "role": "qi",
                    "cell": "range",
                    "values": "integer" if integral else "float",
                }
            )
        elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
            columns.append({"name": fld.name, "role": "qi", "cell": "set"})
        else:
            columns.append({"name": fld.name, "role": "kept"})
    return table.to_pandas(), columns


def _bounds(column: pd.Series, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lo, hi, star = _parse_numeric_column(column.reset_index(drop=True), name)
    return lo, hi, star


_SAFE_INTEGER = 2.0**53
"""Below this magnitude every integer is a float and float → int64 is exact."""

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _integer_bounds(
    column: pd.Series, name: str, lo: np.ndarray, hi: np.ndarray, star: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The bounds of an integer range column as exact int64 (0 under ``*``): every bound must
    be an integer within int64. Bounds the float parse may have rounded (magnitude ≥ 2⁵³) are
    read again exactly from the cell; InputError naming the column and the row otherwise."""
    out: list[np.ndarray] = []
    cells = column.reset_index(drop=True)
    for side, values in (("lo", lo), ("hi", hi)):
        exact = np.where(star, 0.0, values)
        suspect = ~star & ~(
            (np.abs(exact) < _SAFE_INTEGER) & (exact == np.floor(np.nan_to_num(exact)))
        )
        ints = exact.astype(np.int64) if not suspect.any() else np.zeros(len(exact), np.int64)
        if suspect.any():
            ints[~suspect] = exact[~suspect].astype(np.int64)
            for row in np.flatnonzero(suspect):
                ints[row] = _exact_integer(cells.iloc[row], side, name, int(row))
        out.append(ints)
    return out[0], out[1]


def _exact_integer(cell: Any, side: str, name: str, row: int) -> int:
    """One bound of an integer range cell, exactly; InputError if it is not an int64."""
    from decimal import Decimal, InvalidOperation

    if isinstance(cell, dict):  # Parquet struct{lo, hi}
        value: Any = cell.get(side)
        shown = f"{cell.get('lo')}..{cell.get('hi')}"
    else:
        shown = str(cell).strip()
        parts = shown.split("..", 1)
        value = parts[0] if side == "lo" or len(parts) == 1 else parts[1]
    try:
        number = Decimal(value if isinstance(value, int) else str(value).strip())
    except (InvalidOperation, ValueError, TypeError):
        number = Decimal("NaN")
    where = f"column {name!r} (row {row + 1})"
    if not number.is_finite() or number != number.to_integral_value():
        raise InputError(f"{shown!r} in {where} is not an integer range (its values are integers)")
    if not _INT64_MIN <= int(number) <= _INT64_MAX:
        raise InputError(f"{shown!r} in {where} is out of the int64 range")
    return int(number)


def _intervals(lo: np.ndarray, hi: np.ndarray, star: np.ndarray, integral: bool) -> pd.Series:
    if integral and not star.any():
        left, right = np.asarray(lo, np.int64), np.asarray(hi, np.int64)
        return pd.Series(pd.arrays.IntervalArray.from_arrays(left, right, closed="both"))
    left, right = np.where(star, np.nan, lo), np.where(star, np.nan, hi)
    return pd.Series(pd.arrays.IntervalArray.from_arrays(left, right, closed="both"))


@dataclass(frozen=True)
class HierarchyNode:
    """A hierarchy node published in a release whose sidecar does not list its leaves (a
    node of a large hierarchy): its ``label`` and the ``hierarchy`` file it comes from (with
    ``sha256``); ``anonymatch.tables.columns.hierarchy.read_hierarchy`` of that file gives its
    leaves. Cells whose leaves the sidecar lists read as ``frozenset`` of leaves instead."""

    label: str
    hierarchy: str | None = None
    sha256: str | None = None

    def __str__(self) -> str:
        return NODE_MARK + self.label


def _sets(column: pd.Series, info: Mapping[str, Any] | None = None) -> pd.Series:
    """Cells as frozensets of labels (NA for ``*``); a ``~node`` cell of a hierarchy QI as the
    leaves the sidecar lists under it, else a :class:`HierarchyNode` (never the literal
    ``~label``); the rows showing one node share one object (memory in the distinct nodes,
    not rows × leaves). Parquet node cells already hold their leaves."""
    tree = (info or {}).get("hierarchy")
    nodes = (info or {}).get("nodes") or {}
    tree_file = str(tree.get("file")) if isinstance(tree, Mapping) else None
    tree_sha = str(tree.get("sha256")) if isinstance(tree, Mapping) else None
    values: list[Any] = []
    shared: dict[str, frozenset[str] | HierarchyNode] = {}
    for cell in column.reset_index(drop=True):
        if isinstance(cell, dict):  # Parquet struct{node, values}
            cell = cell.get("values")
        if cell is None or (isinstance(cell, float) and np.isnan(cell)):
            values.append(pd.NA)
        elif isinstance(cell, list | tuple | np.ndarray):
            values.append(frozenset(str(v) for v in cell))
        elif str(cell) == STAR:
            values.append(pd.NA)
        elif tree is not None and str(cell).startswith(NODE_MARK):
            label = split_cell(str(cell)[1:])[0]
            if label not in shared:  # one object per distinct node, not per row
                shared[label] = (
                    frozenset(str(v) for v in nodes[label])
                    if label in nodes
                    else HierarchyNode(label, tree_file, tree_sha)
                )
            values.append(shared[label])
        else:
            values.append(frozenset(split_cell(str(cell))))
    return pd.Series(values, dtype=object)


def _range_arrays(release: pd.DataFrame, column: str) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) float arrays of a numeric QI of a read release, NaN for suppressed cells."""
    if column in release.columns:
        values = release[column]
        if isinstance(values.dtype, pd.IntervalDtype):
            array = values.array
            return np.asarray(array.left, float), np.asarray(array.right, float)
        raise InputError(f"column {column!r} holds no ranges")
    if f"{column}_lo" in release.columns and f"{column}_hi" in release.columns:
        return (
            release[f"{column}_lo"].to_numpy(float),
            release[f"{column}_hi"].to_numpy(float),
        )
    raise InputError(f"the release has no column {column!r}")


def midpoints(release: pd.DataFrame, column: str) -> pd.Series:
    """The midpoint of every range of a numeric QI: the usual point estimate.

    Parameters
    ----------
    release : pandas.DataFrame
        A release from :func:`read_release` (either ``ranges`` layout).
    column : str
        A numeric quasi-identifier.

    Returns
    -------
    pandas.Series
        (lo + hi) / 2 per row, NaN for a suppressed cell.

    Notes
    -----
    Time O(n).
    """
    lo, hi = _range_arrays(release, column)
    return pd.Series((lo + hi) / 2, index=release.index, name=column)


def mean_bounds(release: pd.DataFrame, column: str) -> tuple[float, float]:
    """The smallest and largest mean of a numeric QI the release allows.

    Every person's value lies in its range, so the mean over the rows lies between the mean of
    the lower ends and the mean of the upper ends — tight: the original's mean is one of the
    possible means, and both ends are reached by some table consistent with the release.

    Parameters
    ----------
    release : pandas.DataFrame
        A release from :func:`read_release`.
    column : str
        A numeric quasi-identifier.

    Returns
    -------
    tuple of float
        (lowest mean, highest mean) over the rows whose cell is not suppressed (NaN, NaN if
        every cell is).

    Notes
    -----
    Time O(n).
    """
    lo, hi = _range_arrays(release, column)
    live = ~np.isnan(lo)
    if not live.any():
        return (float("nan"), float("nan"))
    return (float(lo[live].mean()), float(hi[live].mean()))


def uniform_histogram(
    release: pd.DataFrame,
    column: str,
    bins: int | Sequence[float] = 10,
    *,
    integral: bool | None = None,
) -> pd.Series:
    """A histogram of a numeric QI that spreads each row uniformly over its range.

    Parameters
    ----------
    release : pandas.DataFrame
        A release from :func:`read_release`.
    column : str
        A numeric quasi-identifier.
    bins : int or sequence of float, default 10
        Number of equal-width bins over [min lo, max hi] (integers: [min lo, max hi + 1)), or
        the bin edges.
    integral : bool, optional
        Whether the values are integers: a range ``40..45`` then spreads its row over the six
        integers 40 … 45 (as the interval [40, 46)), a single value ``42`` over [42, 43).
        Default: True when every bound is an integer.

    Returns
    -------
    pandas.Series
        Expected count per bin (floats summing to the number of non-suppressed rows whose range
        lies within the edges), indexed by the bins (:class:`pandas.IntervalIndex`,
        closed left).

    Notes
    -----
    Time O(n · b) for n rows and b bins.
    """
    lo, hi = _range_arrays(release, column)
    live = ~np.isnan(lo)
    lo, hi = lo[live], hi[live]
    if integral is None:
        integral = bool(np.all(lo == np.round(lo)) and np.all(hi == np.round(hi)))
    right = hi + 1.0 if integral else hi
    if isinstance(bins, int):
        if bins < 1:
            raise InputError(f"bins must be at least 1, got {bins}")
        start = float(lo.min()) if len(lo) else 0.0
        stop = float(right.max()) if len(lo) else 1.0
        edges = np.linspace(start, stop if stop > start else start + 1.0, bins + 1)
    else:
        edges = np.asarray(list(bins), float)
        if len(edges) < 2 or np.any(np.diff(edges) <= 0):
            raise InputError("bin edges must be at least two increasing numbers")
    counts = np.zeros(len(edges) - 1)
    width = right - lo
    point = width <= 0
    for b in range(len(edges) - 1):
        a, z = edges[b], edges[b + 1]
        overlap = np.clip(np.minimum(right, z) - np.maximum(lo, a), 0.0, None)
        share = np.divide(overlap, width, out=np.zeros_like(overlap), where=~point)
        last = b == len(edges) - 2
        inside = (lo >= a) & ((lo <= z) if last else (lo < z))
        counts[b] = share.sum() + np.count_nonzero(point & inside)
    index = pd.IntervalIndex.from_breaks(edges, closed="left")
    return pd.Series(counts, index=index, name=column)
