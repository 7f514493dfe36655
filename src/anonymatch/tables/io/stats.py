"""Statistical packages' files as table sources, through pyreadstat (the ``stats`` extra):
SPSS ``.sav``/``.zsav``, Stata ``.dta``, SAS ``.sas7bdat`` and ``.xpt``.

Value labels are applied (a column coded ``0``/``1`` with labels ``male``/``female`` is read as
``male``/``female``; a code without a label stays as it is), so that the release shows what
the codes mean. Variable labels are kept in the frame's ``attrs["variable_labels"]``
(``{column: label}``), which the manifest records. User-defined missing values and system
missing values are read as missing. SAS files carry no value labels without a formats
catalog: their codes are read as they are.

What a release needs to give the codes back is kept too: ``attrs["value_labels"]``
(``{column: {code: label}}``, SPSS and Stata) and ``attrs["missing_ranges"]`` (``{column:
[{"lo": …, "hi": …}]}``, SPSS user-missing values and ranges). An SPSS file is read with its
user-missing codes (``user_missing=True``) and they are made missing afterwards
(:func:`user_missing_as_na`), on every column unless ``keep_user_missing``: ``anonymize``
keeps them in the columns it publishes untouched, and :func:`write_stats_release` writes such a
labelled column back as its codes with its value labels and user-missing definitions.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Collection, Hashable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anonymatch.core.errors import InputError, OutputError

STATS_EXTENSIONS = {
    ".sav": "read_sav",
    ".zsav": "read_sav",
    ".dta": "read_dta",
    ".sas7bdat": "read_sas7bdat",
    ".xpt": "read_xport",
}
"""Extension → pyreadstat reader."""

WRITERS = {".sav": "write_sav", ".zsav": "write_sav", ".dta": "write_dta"}
"""Release extension → pyreadstat writer."""

_LABELLED = ("read_sav", "read_dta")  # readers that apply value labels themselves


def is_stats_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an SPSS, Stata or SAS file (by its extension). O(1)."""
    return Path(str(path)).suffix.lower() in STATS_EXTENSIONS


def read_stats_file(
    path: Path, nrows: int | None = None, keep_user_missing: bool = False
) -> pd.DataFrame:
    """Read ``path`` with its value labels applied, its variable labels in
    ``attrs["variable_labels"]``, its value labels and SPSS user-missing definitions in
    ``attrs["value_labels"]`` and ``attrs["missing_ranges"]``; user-missing codes read as
    missing unless ``keep_user_missing`` (then :func:`user_missing_as_na` makes them missing in
    the columns given). InputError (one line) when the extra is missing or the file cannot be
    read. O(file size), O(nrows) with ``nrows``."""
    try:
        import pyreadstat
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise InputError(
            f"reading {path.suffix} files needs the stats extra: pip install 'anonymatch[stats]'"
        ) from exc
    name = STATS_EXTENSIONS[path.suffix.lower()]
    if name == "read_xport" and path.is_file() and path.stat().st_size % 80:
        # a transport file is whole 80-byte records: cut short, pyreadstat reads what is left
        raise InputError(f"cannot read {path}: cut short (not a whole number of 80-byte records)")
    options: dict[str, Any] = {"row_limit": nrows or 0}
    if name in _LABELLED:
        options.update(apply_value_formats=True, formats_as_category=False)
    if name == "read_sav":
        options["user_missing"] = True  # the codes, made missing below (user_missing_as_na)
    try:
        frame, meta = getattr(pyreadstat, name)(str(path), **options)
    except Exception as exc:  # ReadstatError, PyreadstatError, OSError, UnicodeError, …
        text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(f"cannot read {path}: {text}") from exc
    nameless = [i for i, c in enumerate(frame.columns) if not isinstance(c, str) or not c.strip()]
    if nameless:  # a damaged file: pyreadstat names such a column None
        raise InputError(f"cannot read {path}: its variable {nameless[0] + 1} has no name")
    if len(set(frame.columns)) != len(frame.columns):
        raise InputError(f"{path} repeats a column name")
    labels = {
        str(column): str(label)
        for column, label in (meta.column_names_to_labels or {}).items()
        if label
    }
    frame.attrs["variable_labels"] = labels
    frame.attrs["value_labels"] = {
        str(column): dict(codes)
        for column, codes in (getattr(meta, "variable_value_labels", None) or {}).items()
        if codes and name in _LABELLED
    }
    frame.attrs["missing_ranges"] = {
        str(column): [{"lo": r["lo"], "hi": r["hi"]} for r in ranges]
        for column, ranges in (getattr(meta, "missing_ranges", None) or {}).items()
        if ranges and name == "read_sav"
    }
    return frame if keep_user_missing else user_missing_as_na(frame)


def user_missing_as_na(frame: pd.DataFrame, columns: Collection[str] | None = None) -> pd.DataFrame:
    """Make the SPSS user-missing cells (``attrs["missing_ranges"]``; a labelled code is shown
    by its label) of ``columns`` (None: every column) missing, in place; returns ``frame``.
    O(rows × columns with user-missing definitions)."""
    ranges = frame.attrs.get("missing_ranges") or {}
    labels = frame.attrs.get("value_labels") or {}
    for column, spans in ranges.items():
        if column not in frame.columns or (columns is not None and column not in columns):
            continue
        reverse = _reverse(labels.get(column) or {})
        codes = frame[column].map(lambda v, r=reverse: r.get(v, v) if isinstance(v, str) else v)
        mask = codes.map(lambda v, s=spans: _within(v, s)).astype(bool)
        if mask.any():
            cells = [float("nan") if m else v for v, m in zip(frame[column], mask, strict=True)]
            frame[column] = pd.Series(cells, index=frame.index)  # dtype as pyreadstat infers it
    return frame


def kept_value_labels(
    attrs: Mapping[Hashable, Any], protected: Collection[str]
) -> dict[Hashable, Any]:
    """The ``value_labels`` and ``missing_ranges`` of ``attrs`` for the columns not in
    ``protected`` (the QIs and sensitive columns, published changed or as missing): what
    :func:`write_stats_release` gives back as codes. O(columns)."""
    return {
        key: {c: v for c, v in (attrs.get(key) or {}).items() if c not in protected}
        for key in ("value_labels", "missing_ranges")
    }


def is_stats_release(path: str | os.PathLike[str]) -> bool:
    """Whether a release written to ``path`` is an SPSS or Stata file. O(1)."""
    return Path(str(path)).suffix.lower() in WRITERS


def keeps_user_missing(path: str | os.PathLike[str]) -> bool:
    """Whether a release written to ``path`` carries user-missing codes and definitions (an
    SPSS file; any other release shows them as missing). O(1)."""
    return Path(str(path)).suffix.lower() in (".sav", ".zsav")


def write_stats_release(path: str | os.PathLike[str], frame: pd.DataFrame) -> None:
    """Write a release as an SPSS (``.sav``, compressed ``.zsav``) or Stata (``.dta``) file,
    atomically: the published cells as text, numbers as numbers, the variable labels of
    ``frame.attrs["variable_labels"]`` as the file's column labels. A column of
    ``frame.attrs["value_labels"]`` (a kept column, :func:`kept_value_labels`) whose every cell
    is a label or a number is written as its numeric codes with its value labels, and in SPSS
    with its user-missing definitions (``frame.attrs["missing_ranges"]``); other cells show the
    labels applied on reading, as text. OutputError (one line) on failure."""
    from anonymatch.core.files import write_atomically

    try:
        import pyreadstat
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise InputError(
            "writing .sav/.dta releases needs the stats extra: pip install 'anonymatch[stats]'"
        ) from exc
    suffix = Path(str(path)).suffix.lower()
    out = frame.copy()
    value_labels: dict[str, dict[Any, str]] = {}
    for column, codes in (frame.attrs.get("value_labels") or {}).items():
        coded = _codes(out[column], codes) if column in out.columns else None
        if coded is not None:
            out[column], value_labels[column] = coded, dict(codes)
    spss = suffix in (".sav", ".zsav")
    missing = {  # a discrete code as itself, a range as {"lo", "hi"} (what SPSS counts)
        column: [span["lo"] if span["lo"] == span["hi"] else dict(span) for span in spans]
        for column, spans in (frame.attrs.get("missing_ranges") or {}).items()
        if spss and column in out.columns and pd.api.types.is_float_dtype(out[column])
    }
    user_missing_as_na(out, [c for c in out.columns if c not in missing])  # a text column's
    for column in out.columns:
        if column in value_labels:
            continue
        if not pd.api.types.is_numeric_dtype(out[column]) or pd.api.types.is_bool_dtype(
            out[column]
        ):
            out[column] = out[column].map(lambda v: "" if _missing(v) else str(v)).astype(object)
    labels = dict(frame.attrs.get("variable_labels") or {})
    column_labels = [labels.get(str(c)) for c in out.columns] if labels else None
    options: dict[str, Any] = {"column_labels": column_labels}
    if value_labels:
        options["variable_value_labels"] = value_labels
    if missing:
        options["missing_ranges"] = missing
    if suffix == ".zsav":
        options["compress"] = True

    def write(tmp: Path) -> None:
        getattr(pyreadstat, WRITERS[suffix])(out, str(tmp), **options)

    try:
        write_atomically(path, write)
    except (OSError, InputError, OutputError):
        raise
    except Exception as exc:  # PyreadstatError, ReadstatError: a name or value the format refuses
        text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise OutputError(f"cannot write {path}: {text}") from exc


def _missing(value: object) -> bool:
    try:
        return bool(pd.isna(value))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return False


def _reverse(codes: Mapping[Any, str]) -> dict[str, Any]:
    """``{label: code}`` for the labels naming one code only."""
    seen: dict[str, list[Any]] = {}
    for code, label in codes.items():
        seen.setdefault(str(label), []).append(code)
    return {label: found[0] for label, found in seen.items() if len(found) == 1}


def _within(value: object, spans: list[dict[str, Any]]) -> bool:
    if _missing(value):
        return False
    for span in spans:
        try:
            if span["lo"] <= value <= span["hi"]:
                return True
        except TypeError:
            continue
    return False


def _codes(column: pd.Series, codes: Mapping[Any, str]) -> pd.Series | None:
    """``column`` as numeric codes (a label → its code, a number kept, missing → NaN), or None
    when a cell is neither (a generalized cell) or the codes are not numbers. O(rows)."""
    if not codes or not all(_number(c) for c in codes):
        return None
    reverse = _reverse(codes)
    values: list[float] = []
    for cell in column.tolist():
        if _missing(cell):
            values.append(float("nan"))
        elif isinstance(cell, str):
            if cell not in reverse:
                return None
            values.append(float(reverse[cell]))
        elif _number(cell):
            values.append(float(cell))
        else:
            return None
    return pd.Series(values, index=column.index, dtype="float64")


def _number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
