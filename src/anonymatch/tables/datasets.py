"""Loaders for the public datasets used in examples, tests and benchmarks.

Data is never shipped with the package: a loader reads an explicit path, or the directory named
by ``ANONYMATCH_DATA`` (laid out like the project's ``shared/datasets``: ``adult/adult.data``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from anonymatch.core.errors import InputError
from anonymatch.tables.io import CsvOptions, read_table

ADULT_COLUMNS: tuple[str, ...] = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)
# The 8 QIs of Doka et al.'s CENSUS set, as found in Adult; numeric ones are published as ranges.
ADULT_QI: tuple[str, ...] = (
    "age",
    "workclass",
    "education-num",
    "marital-status",
    "occupation",
    "race",
    "sex",
    "native-country",
)
ADULT_NUMERIC: tuple[str, ...] = ("age", "education-num")


def data_dir() -> Path | None:
    """The ``ANONYMATCH_DATA`` directory, if set."""
    value = os.environ.get("ANONYMATCH_DATA")
    return Path(value) if value else None


def dataset_path(relative: str, path: str | os.PathLike[str] | None = None) -> Path:
    """Resolve ``path`` or ``$ANONYMATCH_DATA/relative``; InputError if it does not exist."""
    if path is not None:
        resolved = Path(path)
    else:
        base = data_dir()
        if base is None:
            raise InputError(
                f"set ANONYMATCH_DATA to the datasets directory (looking for {relative})"
            )
        resolved = base / relative
    if not resolved.is_file():
        raise InputError(f"dataset file not found: {resolved}")
    return resolved


def load_adult(path: str | os.PathLike[str] | None = None, complete: bool = True) -> pd.DataFrame:
    """UCI Adult (``adult/adult.data``), 32,561 rows, every cell as text; with ``complete`` only
    the 30,162 rows without a ``?`` (the usual k-anonymity benchmark set)."""
    frame = read_table(dataset_path("adult/adult.data", path), CsvOptions(names=ADULT_COLUMNS))
    if complete:
        frame = frame.loc[~(frame == "?").any(axis=1)].reset_index(drop=True)
    return frame
