"""Relational-transaction data: people with a row of attributes and a set of items.

Inputs (``read_relational``, Parquet/CSV like every other command, through
``anonymatch.tables.io.read_table``):

- a **people table** (one row per person, an id column) plus a **long items table** (one row per
  (person id, item)), joined on the id column;
- or **one long table** with one row per (person, item) and the person's attributes repeated on
  each of their rows: the attributes must be constant per person (a person whose attributes
  differ between rows is an error naming them).

Item codes listed as missing (``na_items``, e.g. ``-1`` for INFORMS' ``ICD9CODX``) or null mean
"no item": a person may hold no item at all. Repeated (person, item) rows count once.

Release (docs/release-format.md › Relational-transaction releases): JSON Lines, one object per
person in publication order — the QI cells in the table grammar (``anonymatch.tables.io.cells``),
then the set part in the set-valued grammar (``items``, ``uncertain``, ``max_errors``, as
``anonymatch.sets.io``), then the other columns, taken from the person chosen by the privacy
step. The id column is never published.

Every function is O(rows + total items) unless noted.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from anonymatch.core.errors import InputError
from anonymatch.core.params import param
from anonymatch.sets.io import SetRelease, Transactions, set_release_from_objects
from anonymatch.tables.io import CsvOptions, read_table

SET_FIELDS = ("items", "uncertain", "max_errors")
"""The keys of a release line's set part (a people column may not use them)."""


@dataclass(frozen=True)
class PeopleOrigin:
    """Where people came from, for the manifest of the Python front (``anonymatch report``
    reads them again): the people table's path (None: DataFrames, :func:`from_frames`), the
    items table's (None: none, or DataFrames), whether there was a separate items table (else
    one long table), the item codes meaning "no item" and the reading format."""

    people_path: str | None
    items_path: str | None
    items_table: bool
    na_items: tuple[str, ...] = ()
    fmt: str = "auto"


@dataclass(frozen=True)
class People:
    """n people: a table of attributes (row i = person i, id column included) and their items.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per person, in order of first appearance; the item column is not in it.
    items : Transactions
        Row i = the items of person i (possibly empty), over the universe of codes seen.
    id_column, item_column : str
        The join column and the name of the items column of the input.
    duplicates_removed : int
        Repeated (person, item) rows dropped.
    origin : PeopleOrigin or None
        The files (:func:`read_relational`) or DataFrames (:func:`from_frames`) they came from.
    """

    table: pd.DataFrame
    items: Transactions
    id_column: str
    item_column: str
    duplicates_removed: int = 0
    origin: PeopleOrigin | None = None

    @property
    def n(self) -> int:
        return len(self.table)

    def take(self, rows: np.ndarray) -> People:
        """The same people restricted to ``rows`` (same item universe)."""
        return People(
            self.table.iloc[rows].reset_index(drop=True),
            self.items.take(rows),
            self.id_column,
            self.item_column,
            self.duplicates_removed,
        )


def check_join_columns(id_column: str, item_column: str) -> None:
    """The one rule on the two column names every reader of people applies (:func:`from_frames`
    in memory, ``relational.streamed.RelationalFiles`` streamed): the item column is not the id
    column — a person's items would be their own id, published in ``uncertain`` on the
    streamed path.

    Raises
    ------
    InputError
        ``item_column`` equals ``id_column``. O(1).
    """
    if item_column == id_column:
        raise InputError(
            f"the item column {item_column!r} ({param('item_column')}) is the id column "
            f"({param('id_column')}): name the column holding the items"
        )


def _ids(column: pd.Series) -> pd.Series:
    """Ids as text (a CSV column read as numbers and the same ids as text join)."""
    return column.astype(str)


def _constant_attributes(long: pd.DataFrame, id_column: str, item_column: str) -> pd.DataFrame:
    """The first row of each person of a long table, after checking that every other column
    is constant per person (a null equals a null). O(rows · columns)."""
    attributes = [c for c in long.columns if c not in (id_column, item_column)]
    ids = _ids(long[id_column])
    first = ~ids.duplicated()
    if first.all():
        return long.loc[:, [id_column, *attributes]].reset_index(drop=True)
    head = long.loc[first, [id_column, *attributes]].reset_index(drop=True)
    index = pd.Index(ids[first])
    person = index.get_indexer(ids)
    for name in attributes:
        values = long[name].to_numpy()
        expected = head[name].to_numpy()[person]
        same = (values == expected) | (pd.isna(values) & pd.isna(expected))
        if not np.all(same):
            row = int(np.flatnonzero(~np.asarray(same))[0])
            raise InputError(
                f"person {ids.iloc[row]!r} has conflicting values of {name!r} "
                f"({expected[row]!r} and {values[row]!r}); the attributes of a person must be "
                "the same on each of their rows"
            )
    return head


def _item_matrix(person: np.ndarray, codes: pd.Series, n: int) -> tuple[Transactions, int]:
    """The n × b CSR of (person, item code) pairs (duplicates merged, how many)."""
    text = codes.astype(str).to_numpy()
    universe = sorted(set(text.tolist()))
    integer = bool(universe) and all(_is_int(t) for t in universe)
    if integer:
        universe = sorted(universe, key=int)
    index = pd.Index(universe)
    col = index.get_indexer(text).astype(np.int64)
    m = sp.csr_array(
        (np.ones(len(col), np.int32), (person.astype(np.int64), col)), shape=(n, len(universe))
    )
    m.sum_duplicates()
    duplicates = int(m.data.sum()) - int(m.nnz)
    m = sp.csr_array((np.ones(m.nnz, bool), m.indices, m.indptr), shape=m.shape)
    m.sort_indices()
    return Transactions(m, list(universe), None, integer), duplicates


def _is_int(token: str) -> bool:
    try:
        int(token)
    except ValueError:
        return False
    return True


def from_frames(
    people: pd.DataFrame,
    items: pd.DataFrame | None,
    id_column: str,
    item_column: str,
    na_items: Sequence[object] = (),
) -> People:
    """People from a people table and a long items table, or from one long table.

    Parameters
    ----------
    people : pandas.DataFrame
        One row per person; or, with ``items`` None, one row per (person, item) with the
        person's attributes repeated.
    items : pandas.DataFrame or None
        One row per (person id, item); every id must be a person of ``people``.
    id_column, item_column : str
        The id column (in both tables) and the item column.
    na_items : sequence
        Item codes meaning "no item" (compared as text); null items always do.

    Returns
    -------
    People

    Raises
    ------
    InputError
        The item column is the id column, unknown id or item column, repeated id in the people
        table, a person with conflicting attributes, an item id absent from the people table,
        or no item at all.

    Notes
    -----
    Time O(rows · columns + total items log b).
    """
    check_join_columns(id_column, item_column)
    where = "the people table" if items is not None else "the input"
    for frame, what in ((people, where), (items, "the items table")):
        if frame is not None and id_column not in frame.columns:
            raise InputError(
                f"unknown id column {id_column!r} ({param('id_column')}); {what} has: "
                f"{', '.join(map(str, frame.columns))}"
            )
    source = people if items is None else items
    if item_column not in source.columns:
        what = "the input" if items is None else "the items table"
        raise InputError(
            f"unknown item column {item_column!r} ({param('item_column')}); {what} has: "
            f"{', '.join(map(str, source.columns))}"
        )
    if items is None:
        table = _constant_attributes(people, id_column, item_column)
        long = people
    else:
        if item_column in people.columns:
            people = people.drop(columns=[item_column])
        ids = _ids(people[id_column])
        repeated = ids.duplicated()
        if repeated.any():
            raise InputError(
                f"id {ids[repeated].iloc[0]!r} appears on more than one row of the people "
                f"table ({param('id_column')} must identify a person)"
            )
        table = people.reset_index(drop=True)
        long = items
    for name in SET_FIELDS:
        if name in table.columns:
            raise InputError(
                f"column {name!r} of the people table would clash with the release's set part"
            )
    index = pd.Index(_ids(table[id_column]))
    codes = long[item_column]
    absent = codes.isna() | codes.astype(str).isin([str(x) for x in na_items])
    kept = long.loc[~absent.to_numpy()]
    person = index.get_indexer(_ids(kept[id_column]))
    if np.any(person < 0):
        stranger = _ids(kept[id_column]).iloc[int(np.flatnonzero(person < 0)[0])]
        raise InputError(f"the items table names id {stranger!r}, which is not in the people table")
    if len(kept) == 0:
        raise InputError(
            "every person's item set is empty (all item codes are missing): nothing to publish "
            "as a set; use anonymize for the table alone"
        )
    transactions, duplicates = _item_matrix(person, kept[item_column], len(table))
    origin = PeopleOrigin(None, None, items is not None, tuple(str(x) for x in na_items))
    return People(table, transactions, id_column, item_column, duplicates, origin)


def read_relational(
    people_path: str | os.PathLike[str],
    items_path: str | os.PathLike[str] | None,
    id_column: str,
    item_column: str,
    na_items: Sequence[object] = (),
    options: CsvOptions | None = None,
) -> People:
    """Read a people table and its items table (or one long table, ``items_path`` None) and
    join them (:func:`from_frames`). InputError (one line) on unreadable or bad input."""
    people = read_table(people_path, options)
    items = None if items_path is None else read_table(items_path, options)
    origin = PeopleOrigin(
        os.fspath(people_path),
        None if items_path is None else os.fspath(items_path),
        items_path is not None,
        tuple(str(x) for x in na_items),
        (options or CsvOptions()).fmt,
    )
    return replace(from_frames(people, items, id_column, item_column, na_items), origin=origin)


def manifest_inputs(people: People, codes: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the Python front's manifest records of its inputs, as ``anonymize-rt`` does: the
    ``input`` keys (the people table's path and SHA-256, the items table's — None for one long
    table — and the format; or ``from_frames`` when the people were built from DataFrames,
    with ``frames_items`` telling whether an items table was among them) and
    ``parameters.missing`` (``codes``, the QIs' ``MissingCodes``, with the item codes meaning
    "no item"). O(size of the files) for the digests."""
    from anonymatch.core.manifest import file_digest

    columns = {c: [str(x) for x in v] for c, v in codes.columns.items()}
    origin = people.origin or PeopleOrigin(None, None, True)
    if origin.na_items:
        columns[people.item_column] = list(origin.na_items)
    missing = {"tokens": list(codes.tokens), "columns": columns}
    if origin.people_path is None:
        return {"from_frames": True, "frames_items": origin.items_table}, missing
    block = {
        "path": origin.people_path,
        "sha256": file_digest(origin.people_path),
        "items_path": origin.items_path,
        "items_sha256": None if origin.items_path is None else file_digest(origin.items_path),
        "format": origin.fmt,
    }
    return block, missing


# --------------------------------------------------------------------------- release (JSONL)


@dataclass(frozen=True)
class RelationalRelease:
    """A relational-transaction release in publication order.

    ``table``: the QI cells as text (table grammar) and the other published columns, one row
    per published record; ``sets``: the set part (base, uncertain, threshold per record);
    ``qi``: the names of the QI columns (written first)."""

    table: pd.DataFrame
    sets: SetRelease
    qi: tuple[str, ...]

    @property
    def n(self) -> int:
        return len(self.table)


def _json_value(value: object) -> object:
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, str | int | float | bool):
        return value
    return str(value)


def release_lines(release: RelationalRelease) -> list[str]:
    """The JSONL text of a release: QI cells, set part, other columns. O(total size)."""
    tokens = (
        [int(x) for x in release.sets.items]
        if release.sets.integer_items
        else list(release.sets.items)
    )
    tok = np.asarray(tokens, dtype=object)
    bp, bi = release.sets.base.indptr, release.sets.base.indices
    up, ui = release.sets.uncertain.indptr, release.sets.uncertain.indices
    qi = [c for c in release.table.columns if c in release.qi]
    other = [c for c in release.table.columns if c not in release.qi]
    qi_values = {c: release.table[c].astype(str).tolist() for c in qi}
    other_values = {c: [_json_value(v) for v in release.table[c].tolist()] for c in other}
    out = []
    for j in range(release.n):
        obj: dict[str, object] = {c: qi_values[c][j] for c in qi}
        obj["items"] = tok[bi[bp[j] : bp[j + 1]]].tolist()
        obj["uncertain"] = tok[ui[up[j] : up[j + 1]]].tolist()
        obj["max_errors"] = int(release.sets.max_errors[j])
        for c in other:
            obj[c] = other_values[c][j]
        out.append(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))
    return out


def write_release(path: str | os.PathLike[str], release: RelationalRelease) -> None:
    """Write the JSONL release atomically (``core.files.write_atomically``: nothing on
    failure)."""
    from anonymatch.core.files import write_atomically

    text = "\n".join(release_lines(release)) + "\n"
    write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def release_from_objects(
    objects: Sequence[object], people: People, qi: Sequence[str], where: str = "release"
) -> RelationalRelease:
    """A release from its parsed lines, against the original people (their item universe).
    The QI columns must be on every line (as text cells); InputError otherwise. O(size)."""
    if not objects:
        raise InputError(f"the release has no records: {where}")
    sets = set_release_from_objects(objects, people.items, where, label=False)
    rows = []
    for no, obj in enumerate(objects, 1):
        assert isinstance(obj, dict)  # checked by set_release_from_objects
        for name in qi:
            if name not in obj:
                raise InputError(f"{where}:{no}: missing QI cell {name!r}")
        rows.append({c: v for c, v in obj.items() if c not in SET_FIELDS})
    table = pd.DataFrame(rows)
    for name in qi:
        table[name] = table[name].map(lambda v: "" if v is None else str(v)).astype(object)
    return RelationalRelease(table, sets, tuple(qi))


def read_release_lines(path: str | os.PathLike[str]) -> list[object]:
    """The parsed JSON objects of a JSONL file (blank lines skipped). InputError on a missing
    file or a bad line."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"release file not found: {path}")
    objects: list[object] = []
    with p.open(encoding="utf-8") as handle:
        for no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                objects.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise InputError(f"{p}:{no}: invalid JSON ({exc.msg})") from None
            except RecursionError:
                raise InputError(f"{p}:{no}: JSON nested too deeply") from None
    return objects


def read_release(
    path: str | os.PathLike[str], people: People, qi: Sequence[str]
) -> RelationalRelease:
    """Read a JSONL relational release against the original people."""
    return release_from_objects(read_release_lines(path), people, qi, str(path))
