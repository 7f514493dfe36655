"""Statistical packages' files as table sources, through pyreadstat (the ``stats`` extra):
SPSS ``.sav``/``.zsav``, Stata ``.dta``, SAS ``.sas7bdat`` and ``.xpt``.

Value labels are applied (a column coded ``0``/``1`` with labels ``male``/``female`` is read as
``male``/``female``; a code without a label stays as it is), so that the release shows what
the codes mean. Variable labels are kept in the frame's ``attrs["variable_labels"]``
(``{column: label}``), which the manifest records. User-defined missing values and system
missing values are read as missing. SAS files carry no value labels without a formats
catalog: their codes are read as they are.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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


def read_stats_file(path: Path, nrows: int | None = None) -> pd.DataFrame:
    """Read ``path`` with its value labels applied and its variable labels in
    ``attrs["variable_labels"]``. InputError (one line) when the extra is missing or the file
    cannot be read. O(file size), O(nrows) with ``nrows``."""
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
    try:
        frame, meta = getattr(pyreadstat, name)(str(path), **options)
    except Exception as exc:  # ReadstatError, PyreadstatError, OSError, UnicodeError, …
        text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(f"cannot read {path}: {text}") from exc
    if len(set(frame.columns)) != len(frame.columns):
        raise InputError(f"{path} repeats a column name")
    labels = {
        str(column): str(label)
        for column, label in (meta.column_names_to_labels or {}).items()
        if label
    }
    frame.attrs["variable_labels"] = labels
    return frame


def is_stats_release(path: str | os.PathLike[str]) -> bool:
    """Whether a release written to ``path`` is an SPSS or Stata file. O(1)."""
    return Path(str(path)).suffix.lower() in WRITERS


def write_stats_release(path: str | os.PathLike[str], frame: pd.DataFrame) -> None:
    """Write a release as an SPSS (``.sav``, compressed ``.zsav``) or Stata (``.dta``) file,
    atomically: the published cells as text, numbers as numbers, the variable labels of
    ``frame.attrs["variable_labels"]`` as the file's column labels (the value labels were
    applied on reading: the cells show them). OutputError (one line) on failure."""
    from anonymatch.core.files import write_atomically

    try:
        import pyreadstat
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise InputError(
            "writing .sav/.dta releases needs the stats extra: pip install 'anonymatch[stats]'"
        ) from exc
    suffix = Path(str(path)).suffix.lower()
    out = frame.copy()
    for column in out.columns:
        if not pd.api.types.is_numeric_dtype(out[column]) or pd.api.types.is_bool_dtype(
            out[column]
        ):
            out[column] = out[column].map(lambda v: "" if _missing(v) else str(v)).astype(object)
    labels = dict(frame.attrs.get("variable_labels") or {})
    column_labels = [labels.get(str(c)) for c in out.columns] if labels else None
    options: dict[str, Any] = {"column_labels": column_labels}
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
