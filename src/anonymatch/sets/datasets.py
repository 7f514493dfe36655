"""Set-valued datasets for examples, tests and benchmarks (read from a path or ANONYMATCH_DATA).

- FIMI transactions (``fimi/<name>.dat``): chess, pumsb (first 4,334), retail, BMS1, ...
- INFORMS 2008 (``informs/conditions05.csv`` + ``demographics05test.csv``): one set of ICD-9
  codes per person, with a demographic column as the sensitive label.
- Synthetic sensitive labels for FIMI data, as Xue et al. §5 do (they sample each record's
  label from the 1990 census occupation histogram, 470 values). We sample from a histogram of
  UCI Adult (``adult/adult.data``, rows with a known occupation): Adult's ``occupation`` has
  only 14 values, its largest at 13.5 %, so no input labelled from it alone is ℓ-eligible for
  ℓ > 7 (and the paper goes to ℓ = 12). ``occupation_labels`` therefore refines occupation by
  relationship and age decade: 514 distinct values (close to the paper's 470), the largest at
  2.8 %. ``refine=()`` gives plain occupation.
"""

from __future__ import annotations

import csv
import os
from collections import Counter
from collections.abc import Sequence

import numpy as np

from anonymatch.core.errors import InputError
from anonymatch.sets.io import Transactions, from_sets, read_dat
from anonymatch.tables.datasets import ADULT_COLUMNS, dataset_path

FIMI = {
    "chess": "fimi/chess.dat",
    "pumsb": "fimi/pumsb_first4334.dat",
    "retail": "fimi/retail.dat",
    "bms1": "fimi/BMS1.dat",
    "mushroom": "fimi/mushroom.dat",
    "t10i4d100k": "fimi/T10I4D100K.dat",
}


def load_fimi(name: str, path: str | os.PathLike[str] | None = None) -> Transactions:
    """A FIMI dataset by short name (see ``FIMI``) or explicit path."""
    if name not in FIMI and path is None:
        raise InputError(f"unknown FIMI dataset {name!r} (known: {', '.join(FIMI)})")
    return read_dat(dataset_path(FIMI.get(name, ""), path))


def occupation_histogram(
    refine: Sequence[str] = ("relationship", "age-decade"),
    path: str | os.PathLike[str] | None = None,
) -> tuple[list[str], np.ndarray]:
    """(values, probabilities) of Adult's occupation, optionally crossed with other columns
    (``age-decade`` = age // 10), over adult.data rows with a known occupation."""
    p = dataset_path("adult/adult.data", path)
    cols = {name: i for i, name in enumerate(ADULT_COLUMNS)}
    counter: Counter[str] = Counter()
    with p.open(newline="") as fh:
        for row in csv.reader(fh):
            if len(row) < len(ADULT_COLUMNS):
                continue
            row = [x.strip() for x in row]
            if row[cols["occupation"]] == "?":
                continue
            parts = [row[cols["occupation"]]]
            for name in refine:
                if name == "age-decade":
                    parts.append(f"age{int(row[cols['age']]) // 10}0s")
                else:
                    parts.append(row[cols[name]])
            counter["/".join(parts)] += 1
    values = sorted(counter)
    counts = np.array([counter[v] for v in values], float)
    return values, counts / counts.sum()


def occupation_labels(
    n: int,
    seed: int = 0,
    refine: Sequence[str] = ("relationship", "age-decade"),
    path: str | os.PathLike[str] | None = None,
) -> np.ndarray:
    """n labels drawn independently from ``occupation_histogram(refine)`` with a seeded
    generator (documented in the module docstring)."""
    values, prob = occupation_histogram(refine, path)
    rng = np.random.default_rng(seed)
    return np.asarray(values, dtype=object)[rng.choice(len(values), n, p=prob)]


def load_informs(
    label_column: str | None = "DOBYY",
    conditions: str | os.PathLike[str] | None = None,
    demographics: str | os.PathLike[str] | None = None,
) -> Transactions:
    """INFORMS 2008: per person (DUPERSID, in order of first appearance) the set of ICD-9
    codes in conditions05.csv (26,854 persons, 601 codes); with ``label_column`` the person's
    value of that column of demographics05test.csv (default DOBYY, the birth year: 86 values,
    the largest on 1.8 % of persons). Persons without a demographic row get the label ``?``."""
    cpath = dataset_path("informs/conditions05.csv", conditions)
    sets: dict[str, list[str]] = {}
    with cpath.open(newline="") as fh:
        for row in csv.DictReader(fh):
            items = sets.setdefault(row["DUPERSID"], [])
            code = row["ICD9CODX"].strip()
            if code not in items:
                items.append(code)
    labels = None
    if label_column is not None:
        dpath = dataset_path("informs/demographics05test.csv", demographics)
        with dpath.open(newline="") as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames is None or label_column not in reader.fieldnames:
                raise InputError(f"no column {label_column!r} in {dpath}")
            demo = {row["DUPERSID"]: row[label_column].strip() for row in reader}
        labels = [demo.get(pid, "?") for pid in sets]
    return from_sets(list(sets.values()), labels, where=str(cpath), check_duplicates=False)
