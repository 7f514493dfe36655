"""Plain microdata tables drawn from a release, and estimates combined over them (issue 39).

:func:`plain_draws` turns a typed release (:func:`~anonymatch.tables.io.release.read_release`)
into m complete tables with the original's column types — integers where the ranges were of
integers, an ordinal QI's labels, a value-set QI's labels as numbers when they all are — by
:func:`~anonymatch.tables.models.imputation.draw_microdata`; :func:`write_table` writes one in
the release's format. A draw is a function of the release and fresh randomness only: it
discloses nothing the release does not, and carries the release's guarantee and no more
(:data:`STATEMENT`). :func:`parse_estimate` reads an estimate written as text
(``mean(age)``, ``proportion(sex = Female)``, ``ols(hours ~ age + sex)``) strictly — a small
grammar, never ``eval`` — and :func:`combine` computes it on every draw and combines the m
results by Rubin's rules (:func:`~anonymatch.tables.models.imputation.rubin_combine`).

References
----------
Rubin, D. B. *Multiple Imputation for Nonresponse in Surveys*. Wiley, 1987.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anonymatch.core.errors import InputError
from anonymatch.tables.models.imputation import RubinEstimate, draw_microdata, ols, rubin_combine

DRAWS_MANIFEST = "draws.json"
"""The draws manifest written beside the draws, ``DIR/draws.json``."""

DRAWS_SCHEMA = "anonymatch-draws/1"
"""The ``schema`` of a draws manifest (``DIR/draws.json``)."""

STATEMENT = (
    "Each draw is a function of the release and fresh randomness only: it discloses nothing "
    "the release does not and carries the release's guarantee, and no more. A draw's values "
    "are plausible values inside the published cells, not the people's values: analyse the "
    "draws together (Rubin's rules), never one as if it were the original."
)

WEIGHTS = ("uniform", "anchored")
"""The draw models of ``anonymatch draw --weights`` (``draw_microdata``'s ``weights``)."""


def _label_dtype(labels: Sequence[str]) -> str:
    from anonymatch.tables.io.sidecar import kept_column_dtype

    return kept_column_dtype(pd.Series(list(labels), dtype=object)) if labels else "string"


def _set_labels(column: pd.Series) -> list[str]:
    from anonymatch.tables.io.release import HierarchyNode

    labels: set[str] = set()
    for cell in column.dropna():
        if isinstance(cell, HierarchyNode):
            raise InputError(
                f"column {column.name!r} publishes hierarchy nodes whose leaves the release does "
                "not list: draw it in Python (draw_microdata with `hierarchies`)"
            )
        if isinstance(cell, frozenset | set):
            labels.update(str(v) for v in cell)
    return sorted(labels)


def plain_draws(
    release: pd.DataFrame,
    m: int,
    *,
    weights: str = "anchored",
    degree: int | None = None,
    seed: int | None = None,
) -> list[pd.DataFrame]:
    """Draw m plain tables from a typed release, each QI cell replaced by a value inside it.

    Parameters
    ----------
    release : pandas.DataFrame
        A release read by :func:`~anonymatch.tables.io.release.read_release` (its
        ``attrs["qi"]``, ``attrs["ranges"]`` and ``attrs["ordinal"]`` tell the QIs).
    m : int
        Number of tables, ≥ 1 (≥ 2 for Rubin's rules).
    weights : {"anchored", "uniform"}, default "anchored"
        The draw model of :func:`~anonymatch.tables.models.imputation.draw_microdata`:
        ``anchored`` (needs ``degree``, the release's k) gives proper imputations whose Rubin
        intervals covered Adult's mean age and an OLS coefficient; ``uniform`` draws every value
        of a cell equally likely (biased, see ``draw_microdata``).
    degree : int, optional
        The release's k, for ``anchored`` (the manifest's ``guarantee.k``).
    seed : int, optional
        Seeds the draws (tests and experiments); default OS entropy.

    Returns
    -------
    list of pandas.DataFrame
        The m tables, with the release's columns in its order: integer ranges as int64, other
        ranges as float64, an ordinal QI as its labels, a value-set QI as int64/float64 when
        every label of the column is the exact text of such a number, else text; kept columns
        as read, a text column whose every cell is the exact text of a number as numbers.

    Raises
    ------
    InputError
        ``m`` < 1, an unknown ``weights``, ``anchored`` without ``degree``, a date QI (not
        drawn yet), hierarchy nodes whose leaves the release does not list, a column
        suppressed in every row.

    Notes
    -----
    Time O(m·(n log n + n·L)) as ``draw_microdata`` (plus its EM for ``anchored``); memory
    O(m·n·d) for the m tables.

    Examples
    --------
    >>> import pandas as pd
    >>> rel = pd.DataFrame({
    ...     "age": pd.arrays.IntervalArray.from_tuples([(30, 34)] * 4, closed="both"),
    ...     "sex": [frozenset({"1", "2"})] * 4, "y": [1.0, 2.0, 3.0, 4.0]})
    >>> rel.attrs.update(qi=["age", "sex"], ranges=["age"])
    >>> tables = plain_draws(rel, 2, weights="uniform", seed=0)
    >>> [str(t) for t in tables[0].dtypes]
    ['int64', 'int64', 'float64']
    >>> bool(tables[1]["age"].between(30, 34).all())
    True
    """
    if weights not in WEIGHTS:
        raise InputError(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}")
    qi = [c for c in (release.attrs.get("qi") or []) if c in release.columns]
    if not qi:
        raise InputError("the release names no quasi-identifier to draw")
    for name in qi:
        column = release[name]
        if isinstance(column.dtype, pd.IntervalDtype) and not np.issubdtype(
            column.dtype.subtype, np.number
        ):
            raise InputError(f"column {name!r} is a date QI: drawing dates is not supported yet")
    labels = {
        c: _set_labels(release[c])
        for c in qi
        if not isinstance(release[c].dtype, pd.IntervalDtype)
        and c not in (release.attrs.get("ranges") or ())
    }
    tables = draw_microdata(
        release, m=int(m), seed=seed, weights=weights, columns=qi, degree=degree
    )
    ordinal: Mapping[str, list[str]] = release.attrs.get("ordinal") or {}
    types = {c: _label_dtype(v) for c, v in labels.items()}
    from anonymatch.tables.io.sidecar import kept_column_dtype, typed_kept_column

    # a kept column published as the text of numbers (an SPSS/Stata or untyped release of a
    # CSV input) is a number column in the draws, as in the original
    kept = {
        str(c): dtype
        for c in release.columns
        if c not in qi
        and (release[c].dtype == object or pd.api.types.is_string_dtype(release[c].dtype))
        and (dtype := kept_column_dtype(release[c])) in ("int64", "float64")
    }

    out = []
    for table in tables:
        plain = table.copy()
        plain.attrs = {}
        for name, order in ordinal.items():
            if name in plain.columns:
                ranks = plain[name].to_numpy()
                plain[name] = pd.Series(np.asarray(order, dtype=object)[ranks.astype(np.int64)])
        for name, dtype in types.items():
            plain[name] = typed_kept_column(plain[name].astype(str), dtype, name)
        for name, dtype in kept.items():
            plain[name] = typed_kept_column(plain[name], dtype, name)
        out.append(plain)
    return out


def write_table(path: str | os.PathLike[str], frame: pd.DataFrame) -> None:
    """Write a plain table atomically, in the format its extension names: CSV (tab-separated
    for ``.tsv``/``.tab``; text cells that look like formulas prefixed with ``'``), Parquet, an
    Excel workbook (``.xlsx``: numbers as numbers, text as text cells guarded like a CSV's;
    InputError beyond a worksheet's limits), SPSS ``.sav``/``.zsav`` or Stata ``.dta`` (with
    ``frame.attrs["variable_labels"]``, and its ``value_labels`` and ``missing_ranges``: a
    column whose every cell is a label or a code is written as codes with its labels).
    O(n·d)."""
    from anonymatch.core.csvsafe import escape_frame
    from anonymatch.core.files import write_atomically
    from anonymatch.tables.io import is_parquet
    from anonymatch.tables.io.excel import check_excel_limits, is_excel_release, write_excel
    from anonymatch.tables.io.stats import is_stats_release, write_stats_release

    if is_stats_release(path):
        write_stats_release(path, frame)
        return
    if is_excel_release(path):
        check_excel_limits(frame, path)
        write_atomically(path, lambda tmp: write_excel(frame, tmp))
        return
    if is_parquet(path):
        write_atomically(path, lambda tmp: frame.to_parquet(tmp, index=False))
        return
    sep = "\t" if str(path).lower().endswith((".tsv", ".tab")) else ","
    text = escape_frame(frame, True)
    write_atomically(path, lambda tmp: text.to_csv(tmp, index=False, sep=sep))


def read_draw(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a draw as :func:`write_table` wrote it, typed back.

    Parameters
    ----------
    path : path-like
        A draw file: CSV/TSV, Parquet, Excel, SPSS or Stata.

    Returns
    -------
    pandas.DataFrame
        The plain table: CSV safety undone, a text column whose every cell is the exact text
        of a number read as numbers (Parquet, Excel's number cells and the statistical formats
        keep their types).

    Raises
    ------
    InputError
        The file cannot be read.

    Notes
    -----
    Time and memory O(n·d) for n rows and d columns.
    """
    from anonymatch.core.csvsafe import unescape_frame
    from anonymatch.tables.io import CsvOptions, is_parquet, read_table
    from anonymatch.tables.io.excel import is_excel_release
    from anonymatch.tables.io.sidecar import kept_column_dtype, typed_kept_column
    from anonymatch.tables.io.stats import is_stats_file

    if is_parquet(path):
        return read_table(os.fspath(path), CsvOptions())
    if is_excel_release(path):  # the workbook's own cell types: numbers, and text cells
        return unescape_frame(pd.read_excel(path, sheet_name=0, engine="openpyxl"))
    frame = read_table(os.fspath(path), CsvOptions())
    if not is_stats_file(path):  # SPSS/Stata draws hold their cells unguarded
        frame = unescape_frame(frame)
    for name in frame.columns:  # numbers where every cell is the exact text of one
        if frame[name].dtype == object or pd.api.types.is_string_dtype(frame[name].dtype):
            dtype = kept_column_dtype(frame[name])
            if dtype != "string":
                frame[name] = typed_kept_column(frame[name], dtype, str(name))
    return frame


def draw_files(directory: Path) -> list[str]:
    """The draws of a directory, as its manifest ``draws.json`` lists them (else its ``draw_*``
    files by number). O(m)."""
    meta = directory / DRAWS_MANIFEST
    if meta.is_file():
        from anonymatch.core.documents import load_json

        doc = load_json(meta, "draws manifest")
        if isinstance(doc, dict) and "tables" in doc and "files" not in doc:
            raise InputError(
                f"the draws of {meta} are tables of the release's database: read them there "
                "(read_table with the database URL and each table)"
            )
        files = doc.get("files") if isinstance(doc, dict) else None
        if isinstance(files, list) and all(
            isinstance(f, dict) and isinstance(f.get("path"), str) for f in files
        ):
            return [str(directory / Path(f["path"]).name) for f in files]
        raise InputError(f"cannot read the draws manifest {meta}: no list of files")
    found = sorted(directory.glob("draw_*"), key=lambda p: (len(p.name), p.name))
    if not found:
        raise InputError(f"{directory} holds no draw (draw_1.csv, …)")
    return [str(p) for p in found]


def is_draw(path: str) -> bool:
    """Whether ``path`` is a draw: a file its directory's draws manifest lists. O(m)."""
    p = Path(path)
    if not p.is_file() or not (p.parent / DRAWS_MANIFEST).is_file():
        return False
    return p.name in {Path(f).name for f in draw_files(p.parent)}


def published_tables(
    published: Sequence[str], release_table: str | None = None
) -> tuple[list[str], list[pd.DataFrame]]:
    """The tables ``evaluate --classify`` trains on, with their names.

    Parameters
    ----------
    published : sequence of str
        Releases, draw files (a file its directory's ``draws.json`` lists) and directories
        of draws (``anonymatch draw -o DIR``), in any mix.
    release_table : str, optional
        The release table when a release is a database URL.

    Returns
    -------
    names : list of str
        One per table: the path, or ``DIR/draw_i.EXT`` for each draw of a directory.
    tables : list of pandas.DataFrame
        A release as :func:`~anonymatch.tables.io.release.read_release` types it, a draw
        plain as :func:`read_draw` reads it.

    Raises
    ------
    InputError
        A path that is neither, a damaged draws manifest, draws held in a database.

    Notes
    -----
    Time and memory O(size of the tables).
    """
    from anonymatch.tables.io.release import read_release

    names: list[str] = []
    tables: list[pd.DataFrame] = []
    for path in published:
        if Path(path).is_dir() and (Path(path) / DRAWS_MANIFEST).is_file():
            for file in draw_files(Path(path)):
                names.append(str(Path(path) / Path(file).name))
                tables.append(read_draw(file))
        elif is_draw(path):
            names.append(path)
            tables.append(read_draw(path))
        else:
            names.append(path)
            tables.append(read_release(path, table=release_table))
    return names, tables


# --- estimates written as text ---------------------------------------------------------------

_NAME = r"\s*([^\s()~+=,][^()~+=,]*?)\s*"
_FORMS = {
    "mean": re.compile(rf"mean\({_NAME}\)"),
    "proportion": re.compile(rf"proportion\({_NAME}={_NAME}\)"),
    "ols": re.compile(rf"ols\({_NAME}~(\s*[^()~=,]+)\)"),
}


@dataclass(frozen=True)
class EstimateSpec:
    """One estimate: ``kind`` (mean, proportion, ols), its ``column`` (the response of an
    OLS), the ``value`` of a proportion and the ``terms`` (regressors) of an OLS."""

    text: str
    kind: str
    column: str
    value: str | None = None
    terms: tuple[str, ...] = ()


def parse_estimate(text: str) -> EstimateSpec:
    """An estimate written as text, parsed strictly (never evaluated).

    Parameters
    ----------
    text : str
        ``mean(COLUMN)``, ``proportion(COLUMN = VALUE)`` or ``ols(Y ~ X1 + X2 …)`` (an
        intercept always; a text regressor enters as indicators of its values but the first).

    Returns
    -------
    EstimateSpec
        The kind, the column (an OLS's response), a proportion's value, an OLS's terms.

    Raises
    ------
    InputError
        Anything else, with the accepted forms.

    Notes
    -----
    Time O(len(text)).

    Examples
    --------
    >>> parse_estimate("ols(hours ~ age + sex)").terms
    ('age', 'sex')
    >>> parse_estimate("proportion(sex = Female)").value
    'Female'
    """
    spec = str(text).strip()
    for kind, pattern in _FORMS.items():
        match = pattern.fullmatch(spec)
        if match is None:
            continue
        if kind == "mean":
            return EstimateSpec(spec, kind, match.group(1))
        if kind == "proportion":
            return EstimateSpec(spec, kind, match.group(1), value=match.group(2))
        terms = tuple(t.strip() for t in match.group(2).split("+"))
        if not all(terms) or len(set(terms)) != len(terms) or match.group(1) in terms:
            break
        return EstimateSpec(spec, kind, match.group(1), terms=terms)
    raise InputError(
        f"cannot read the estimate {spec!r}: write mean(COLUMN), proportion(COLUMN = VALUE) "
        "or ols(Y ~ X1 + X2)"
    )


def _numbers(table: pd.DataFrame, column: str) -> np.ndarray:
    if column not in table.columns:
        raise InputError(f"the table has no column {column!r}")
    values = pd.to_numeric(table[column], errors="coerce").to_numpy(float)
    if np.isnan(values).any():
        raise InputError(
            f"column {column!r} holds values that are not numbers (a release's ranges? estimate "
            "on draws: anonymatch draw)"
        )
    return values


def _design(
    table: pd.DataFrame, terms: Sequence[str], levels: Mapping[str, list[str]]
) -> np.ndarray:
    parts: list[np.ndarray] = []
    for term in terms:
        if term in levels:
            text = table[term].astype(str).to_numpy()
            parts.extend((text == level).astype(float) for level in levels[term][1:])
        else:
            parts.append(_numbers(table, term))
    return np.column_stack(parts) if parts else np.empty((len(table), 0))


def _levels(tables: Sequence[pd.DataFrame], terms: Sequence[str]) -> dict[str, list[str]]:
    """The text regressors and their levels over every table (sorted; the first is the
    reference)."""
    out: dict[str, list[str]] = {}
    for term in terms:
        for t in tables:
            if term not in t.columns:
                raise InputError(f"the table has no column {term!r}")
        column = tables[0][term]
        if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
            continue
        values = sorted({str(v) for t in tables for v in t[term].astype(str).unique()})
        out[term] = values
    return out


def _one(
    table: pd.DataFrame, spec: EstimateSpec, levels: Mapping[str, list[str]]
) -> tuple[list[float], list[float], int]:
    """The estimates, their variances and the complete-data df on one table."""
    n = len(table)
    if spec.kind == "mean":
        x = _numbers(table, spec.column)
        return [float(x.mean())], [float(x.var(ddof=1)) / n if n > 1 else 0.0], max(n - 1, 1)
    if spec.kind == "proportion":
        if spec.column not in table.columns:
            raise InputError(f"the table has no column {spec.column!r}")
        hit = _matches(table[spec.column], str(spec.value))
        p = float(hit.mean()) if n else 0.0
        return [p], [p * (1 - p) / max(n, 1)], max(n - 1, 1)
    x = _design(table, spec.terms, levels)
    coef, var = ols(_numbers(table, spec.column), x)
    return [float(c) for c in coef], [float(v) for v in var], max(n - x.shape[1] - 1, 1)


def _matches(column: pd.Series, value: str) -> np.ndarray:
    """Cells equal to ``value``: as numbers when both are, else as text."""
    text = column.astype(str).to_numpy()
    try:
        number = float(value)
    except ValueError:
        return text == value
    numbers = pd.to_numeric(column, errors="coerce").to_numpy(float)
    return np.where(np.isnan(numbers), text == value, numbers == number)


def term_names(spec: EstimateSpec, levels: Mapping[str, list[str]]) -> list[str]:
    """The names of an estimate's figures: the estimate itself, or an OLS's intercept and
    coefficients (``sex[Male]`` for an indicator). O(terms + levels)."""
    if spec.kind != "ols":
        return [spec.text]
    names = ["(intercept)"]
    for term in spec.terms:
        if term in levels:
            names.extend(f"{term}[{level}]" for level in levels[term][1:])
        else:
            names.append(term)
    return names


def combine(
    tables: Sequence[pd.DataFrame], spec: EstimateSpec | str, level: float = 0.95
) -> dict[str, RubinEstimate]:
    """An estimate on each of m tables, combined by Rubin's rules.

    Parameters
    ----------
    tables : sequence of pandas.DataFrame
        The m draws (plain tables).
    spec : EstimateSpec or str
        The estimate (:func:`parse_estimate`).
    level : float, default 0.95
        The intervals' coverage.

    Returns
    -------
    dict of str to RubinEstimate
        One entry per figure (:func:`term_names`): the combined estimate, its interval (Barnard
        & Rubin's df) and the fraction of missing information.

    Raises
    ------
    InputError
        No table, a column a table lacks or that holds non-numbers where numbers are needed.

    Notes
    -----
    Time O(m·n) for a mean or a proportion, O(m·n·p²) for an OLS with p coefficients.

    Examples
    --------
    >>> import pandas as pd
    >>> tables = [pd.DataFrame({"x": [1.0, 2.0, 3.0]}), pd.DataFrame({"x": [2.0, 3.0, 4.0]})]
    >>> r = combine(tables, "mean(x)")["mean(x)"]
    >>> r.estimate, r.m
    (2.5, 2)
    """
    if isinstance(spec, str):
        spec = parse_estimate(spec)
    if not tables:
        raise InputError("no table to estimate on")
    levels = _levels(tables, spec.terms) if spec.kind == "ols" else {}
    results = [_one(t, spec, levels) for t in tables]
    names = term_names(spec, levels)
    return {
        name: rubin_combine(
            [r[0][j] for r in results], [r[1][j] for r in results], results[0][2], level
        )
        for j, name in enumerate(names)
    }


def complete_data(
    table: pd.DataFrame, spec: EstimateSpec, levels: Mapping[str, list[str]] | None = None
) -> dict[str, float]:
    """The estimate on one complete table (the original): each figure's value. O(n·p²)."""
    if levels is None:
        levels = _levels([table], spec.terms) if spec.kind == "ols" else {}
    values = _one(table, spec, levels)[0]
    return dict(zip(term_names(spec, levels), values, strict=True))


def estimate_levels(tables: Sequence[pd.DataFrame], spec: EstimateSpec) -> dict[str, list[str]]:
    """The text regressors' levels of an OLS estimate over ``tables`` (empty otherwise). O(m·n)."""
    return _levels(tables, spec.terms) if spec.kind == "ols" else {}


def manifest(
    release_path: str,
    files: Sequence[str],
    *,
    weights: str,
    degree: int | None,
    seeded: bool,
    guarantee: Mapping[str, Any] | None,
    in_database: bool = False,
    release_table: str | None = None,
) -> dict[str, Any]:
    """The draws manifest ``DIR/draws.json`` (``schema`` ``anonymatch-draws/1``): the release
    drawn from (name and digest), the files (or, ``in_database``, the tables of the release's
    database that ``files`` names: ``tables``), the model, the release's guarantee as its
    manifest states it (null without one), :data:`STATEMENT`, and where the randomness came
    from (never a seed); a database release is its URL without the password and
    ``release_table``. O(size of the files) for the digests."""
    from anonymatch.core.files import current_path, sha256_file
    from anonymatch.core.manifest import randomness_block, utc_now
    from anonymatch.core.version import __version__
    from anonymatch.tables.io.sql import is_database_url, redact_url

    source: dict[str, Any]
    if is_database_url(release_path):
        source = {"path": redact_url(release_path), "table": release_table}
    else:
        from anonymatch.core.manifest import file_digest

        source = {"path": Path(release_path).name, "sha256": file_digest(release_path)}
    return {
        "schema": DRAWS_SCHEMA,
        "tool": {"name": "anonymatch", "version": __version__},
        "created": utc_now(),
        "release": source,
        "m": len(files),
        "weights": weights,
        "degree": degree,
        **(
            {"tables": [{"table": t} for t in files]}
            if in_database
            else {
                "files": [
                    {"path": Path(f).name, "sha256": sha256_file(current_path(f))} for f in files
                ]
            }  # fmt: skip
        ),
        "guarantee": dict(guarantee) if guarantee is not None else None,
        "statement": STATEMENT,
        "randomness": randomness_block(seeded),
    }
