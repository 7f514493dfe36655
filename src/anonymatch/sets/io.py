"""Set-valued (transaction) data: readers, the CSR bitmap representation, the JSONL release.

Inputs (one record = one set of items, optionally one sensitive label):

- FIMI ``.dat``: integer item ids separated by whitespace, one transaction per line;
- basket CSV: one record per line, items separated by a chosen separator (default ``,``);
- long format CSV with a header: one (record id, item) pair per row, records in order of first
  appearance; an optional label column (constant within a record);
- JSON Lines: one object per record with an ``items`` list (and the label under a chosen key).

Labels may also come from a parallel file (one label per line, one line per record).
Internally the records are a boolean ``scipy.sparse.csr_array`` of shape n × b (b = number of
distinct items) with sorted column indices: item universes of tens of thousands are never
materialized densely. Memory O(n + total items).

Release (DESIGN.md › Release formats): JSON Lines, one object per published record with
``items`` (base bitmap), ``uncertain`` (distance bitmap), ``max_errors`` (threshold t) and
``label`` when labels exist.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from anonymatch.core.errors import InputError

FORMATS = ("auto", "dat", "basket", "long", "jsonl")


@dataclass(frozen=True)
class Transactions:
    """n records over a universe of b items.

    ``matrix``: n × b boolean CSR (sorted indices), row i = the items of record i;
    ``items``: the item tokens (column j ↔ ``items[j]``), as text;
    ``labels``: one sensitive label per record (text) or None;
    ``integer_items``: True when every item token is an integer (written back as numbers);
    ``duplicates_removed``: repeated (record, item) rows of a long-format input dropped on
    reading (``dedupe``).
    """

    matrix: sp.csr_array
    items: list[str]
    labels: np.ndarray | None = None
    integer_items: bool = False
    duplicates_removed: int = 0
    _index: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    @property
    def n(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def n_items(self) -> int:
        return int(self.matrix.shape[1])

    def item_index(self) -> dict[str, int]:
        if not self._index:
            self._index.update({tok: j for j, tok in enumerate(self.items)})
        return self._index

    def sizes(self) -> np.ndarray:
        return np.diff(self.matrix.indptr)

    def with_labels(self, labels: Sequence[str] | np.ndarray | None) -> Transactions:
        if labels is not None:
            labels = np.asarray(labels, dtype=object)
            if len(labels) != self.n:
                raise InputError(
                    f"the label file has {len(labels)} labels but the input has {self.n} records"
                )
        return Transactions(
            self.matrix, self.items, labels, self.integer_items, self.duplicates_removed
        )

    def take(self, rows: np.ndarray) -> Transactions:
        labels = None if self.labels is None else self.labels[rows]
        m = self.matrix[rows]
        m.sort_indices()
        return Transactions(
            sp.csr_array(m), self.items, labels, self.integer_items, self.duplicates_removed
        )


def from_sets(
    sets: Sequence[Sequence[object]],
    labels: Sequence[object] | None = None,
    *,
    where: str = "input",
    check_duplicates: bool = True,
) -> Transactions:
    """Build Transactions from Python item collections. Items are compared as text; an integer
    universe (every token an integer) is ordered numerically, any other lexicographically.
    Raises InputError on an empty record or (with ``check_duplicates``) a repeated item.
    O(total items · log b)."""
    if len(sets) == 0:
        raise InputError(f"{where} has no records")
    tokens: list[list[str]] = []
    for i, s in enumerate(sets):
        row = [str(x) for x in s]
        if not row:
            raise InputError(f"{where}: record {i + 1} is an empty transaction")
        if check_duplicates and len(set(row)) != len(row):
            dup = next(x for x in row if row.count(x) > 1)
            raise InputError(f"{where}: record {i + 1} lists item {dup!r} twice")
        tokens.append(row)
    universe = sorted({t for row in tokens for t in row})
    integer = all(_is_int(t) for t in universe)
    if integer:
        universe = sorted(universe, key=int)
    index = {t: j for j, t in enumerate(universe)}
    indptr = np.zeros(len(tokens) + 1, np.int64)
    indptr[1:] = np.cumsum([len(r) for r in tokens])
    indices = np.fromiter((index[t] for row in tokens for t in row), np.int64, int(indptr[-1]))
    m = sp.csr_array(
        (np.ones(len(indices), bool), indices, indptr), shape=(len(tokens), len(universe))
    )
    m.sum_duplicates()
    m.sort_indices()
    lab = None if labels is None else np.asarray([str(x) for x in labels], dtype=object)
    t = Transactions(m, universe, None, integer)
    return t.with_labels(lab) if lab is not None else t


def _is_int(token: str) -> bool:
    try:
        int(token)
    except ValueError:
        return False
    return True


def _check_file(path: str | os.PathLike[str]) -> Path:
    p = Path(path)
    if not p.exists():
        raise InputError(f"input file not found: {path}")
    if p.is_dir():
        raise InputError(f"input is a directory, not a file: {path}")
    if not os.access(p, os.R_OK):
        raise InputError(f"input file is not readable: {path}")
    return p


def _lines(p: Path) -> list[str]:
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not UTF-8 text ({exc.reason})") from None
    lines = text.splitlines()
    while lines and not lines[-1].strip():  # trailing blank lines are not records
        lines.pop()
    return lines


def read_dat(path: str | os.PathLike[str]) -> Transactions:
    """FIMI ``.dat``: whitespace-separated non-negative integer ids, one transaction per line.
    InputError on a non-integer id, a repeated id in a line, or an empty line. O(file size)."""
    p = _check_file(path)
    rows: list[list[int]] = []
    for no, line in enumerate(_lines(p), 1):
        parts = line.split()
        if not parts:
            raise InputError(f"{p}:{no}: empty transaction")
        try:
            ids = [int(x) for x in parts]
        except ValueError:
            bad = next(x for x in parts if not _is_int(x))
            raise InputError(f"{p}:{no}: item id {bad!r} is not an integer") from None
        if any(x < 0 for x in ids):
            raise InputError(f"{p}:{no}: negative item id")
        if len(set(ids)) != len(ids):
            dup = next(x for x in ids if ids.count(x) > 1)
            raise InputError(f"{p}:{no}: item {dup} appears twice in the transaction")
        rows.append(ids)
    if not rows:
        raise InputError(f"input has no transactions: {p}")
    # Fast path: build CSR directly over the integer ids actually used.
    lengths = np.fromiter((len(r) for r in rows), np.int64, len(rows))
    flat = np.fromiter((x for r in rows for x in r), np.int64, int(lengths.sum()))
    used, inverse = np.unique(flat, return_inverse=True)
    indptr = np.zeros(len(rows) + 1, np.int64)
    indptr[1:] = np.cumsum(lengths)
    m = sp.csr_array(
        (np.ones(len(flat), bool), inverse.reshape(-1).astype(np.int64), indptr),
        shape=(len(rows), len(used)),
    )
    m.sort_indices()
    return Transactions(m, [str(x) for x in used.tolist()], None, True)


def read_basket(path: str | os.PathLike[str], item_sep: str = ",") -> Transactions:
    """Basket CSV: one record per line, items separated by ``item_sep`` (surrounding spaces
    ignored). InputError on an empty line or a repeated item. O(file size)."""
    p = _check_file(path)
    rows = []
    for no, line in enumerate(_lines(p), 1):
        parts = [x.strip() for x in line.split(item_sep)]
        parts = [x for x in parts if x]
        if not parts:
            raise InputError(f"{p}:{no}: empty transaction")
        if len(set(parts)) != len(parts):
            dup = next(x for x in parts if parts.count(x) > 1)
            raise InputError(f"{p}:{no}: item {dup!r} appears twice in the transaction")
        rows.append(parts)
    if not rows:
        raise InputError(f"input has no transactions: {p}")
    return from_sets(rows, where=str(p))


def read_long(
    path: str | os.PathLike[str],
    id_column: str | None = None,
    item_column: str | None = None,
    label_column: str | None = None,
    sep: str = ",",
    dedupe: bool = False,
) -> Transactions:
    """Long format CSV with a header: one row per (record id, item); records in order of first
    appearance. Defaults: the first column is the id, the second the item. A repeated
    (id, item) pair is an error, or with ``dedupe`` dropped and counted
    (``Transactions.duplicates_removed``); a label must be the same on every row of a record
    (a dropped duplicate row's label too). O(rows)."""
    p = _check_file(path)
    with p.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh, delimiter=sep)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise InputError(f"input has no header line: {p}") from None
        cols = {}
        for role, name, default in (
            ("id", id_column, 0),
            ("item", item_column, 1),
            ("label", label_column, None),
        ):
            if name is None:
                if default is None:
                    continue
                if default >= len(header):
                    raise InputError(f"{p}: long format needs at least two columns")
                cols[role] = default
            elif name not in header:
                raise InputError(f"{p}: no column named {name!r} (columns: {', '.join(header)})")
            else:
                cols[role] = header.index(name)
        records: dict[str, list[str]] = {}
        labels: dict[str, str] = {}
        seen: set[tuple[str, str]] = set()
        removed = 0
        for no, row in enumerate(reader, 2):
            if not row or all(not x.strip() for x in row):
                continue
            if len(row) < len(header):
                raise InputError(f"{p}:{no}: expected {len(header)} fields, got {len(row)}")
            rid, item = row[cols["id"]].strip(), row[cols["item"]].strip()
            if not item:
                raise InputError(f"{p}:{no}: empty item")
            duplicate = (rid, item) in seen
            if duplicate and not dedupe:
                raise InputError(
                    f"{p}:{no}: item {item!r} appears twice in record {rid!r}; pass `dedupe` "
                    "to drop repeated (record, item) rows"
                )
            if duplicate:
                removed += 1
            else:
                seen.add((rid, item))
                records.setdefault(rid, []).append(item)
            if "label" in cols:
                lab = row[cols["label"]].strip()
                if labels.setdefault(rid, lab) != lab:
                    raise InputError(f"{p}:{no}: record {rid!r} has two different labels")
    if not records:
        raise InputError(f"input has no data rows: {p}")
    sets = list(records.values())
    lab_list = [labels[r] for r in records] if "label" in cols else None
    t = from_sets(sets, lab_list, where=str(p), check_duplicates=False)
    return dataclasses.replace(t, duplicates_removed=removed) if removed else t


def read_jsonl(path: str | os.PathLike[str], label_column: str | None = None) -> Transactions:
    """JSON Lines: one object per record with an ``items`` list; the label under
    ``label_column``. Parsed with ``json`` only (no eval/pickle)."""
    p = _check_file(path)
    sets, labels = [], []
    for no, line in enumerate(_lines(p), 1):
        if not line.strip():
            raise InputError(f"{p}:{no}: empty line")
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{p}:{no}: invalid JSON ({exc.msg})") from None
        except RecursionError:  # [[[[…]]]]: Python's parser recurses
            raise InputError(f"{p}:{no}: JSON nested too deeply") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("items"), list):
            raise InputError(f"{p}:{no}: expected an object with an 'items' list")
        if any(isinstance(x, dict | list) for x in obj["items"]):
            raise InputError(f"{p}:{no}: items must be numbers or strings")
        sets.append(obj["items"])
        if label_column is not None:
            if label_column not in obj:
                raise InputError(f"{p}:{no}: no label field {label_column!r}")
            labels.append(obj[label_column])
    if not sets:
        raise InputError(f"input has no records: {p}")
    try:
        return from_sets(sets, labels if label_column else None, where=str(p))
    except InputError as exc:
        raise InputError(str(exc).replace("record ", "line ")) from None


def read_labels(path: str | os.PathLike[str]) -> np.ndarray:
    """A label file: one label per line (trailing blank lines ignored)."""
    p = _check_file(path)
    lines = [x.strip() for x in _lines(p)]
    if any(not x for x in lines):
        raise InputError(f"{p}: empty label on line {lines.index('') + 1}")
    return np.asarray(lines, dtype=object)


def detect_format(path: str | os.PathLike[str]) -> str:
    name = str(path).lower()
    if name.endswith(".dat"):
        return "dat"
    if name.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    return "basket"


def read_transactions(
    path: str | os.PathLike[str],
    fmt: str = "auto",
    *,
    item_sep: str = ",",
    labels_path: str | os.PathLike[str] | None = None,
    label_column: str | None = None,
    id_column: str | None = None,
    item_column: str | None = None,
    dedupe: bool = False,
) -> Transactions:
    """Read a transaction file in any supported format, with optional labels (a column of a
    long/JSONL file or a parallel label file). ``dedupe`` drops repeated (record, item) rows of
    a long-format file (counted in ``duplicates_removed``) instead of refusing them. Raises
    InputError (one line) on bad input."""
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r} (expected one of {', '.join(FORMATS)})")
    if fmt == "auto":
        fmt = detect_format(path)
    if label_column is not None and labels_path is not None:
        raise InputError("give either `labels_path` or `label_column`, not both")
    if label_column is not None and fmt not in ("long", "jsonl"):
        raise InputError(f"`label_column` needs a long or JSONL input, not {fmt}")
    if fmt == "dat":
        t = read_dat(path)
    elif fmt == "basket":
        t = read_basket(path, item_sep)
    elif fmt == "long":
        t = read_long(path, id_column, item_column, label_column, dedupe=dedupe)
    else:
        t = read_jsonl(path, label_column)
    if labels_path is not None:
        t = t.with_labels(read_labels(labels_path))
    return t


# --------------------------------------------------------------------------- release (JSONL)


@dataclass(frozen=True)
class SetRelease:
    """Published records: base bitmap, distance bitmap, threshold, label (in publication
    order). ``base`` and ``uncertain`` are n × b CSR over the original item universe."""

    base: sp.csr_array
    uncertain: sp.csr_array
    max_errors: np.ndarray
    labels: np.ndarray | None
    items: list[str]
    integer_items: bool = False

    @property
    def n(self) -> int:
        return int(self.base.shape[0])


def _tokens(items: list[str], integer: bool) -> list[object]:
    return [int(x) for x in items] if integer else list(items)


def release_lines(release: SetRelease) -> list[str]:
    """The JSONL text of a release, one line per published record. O(total items)."""
    tok = np.asarray(_tokens(release.items, release.integer_items), dtype=object)
    bp, bi = release.base.indptr, release.base.indices
    up, ui = release.uncertain.indptr, release.uncertain.indices
    out = []
    for j in range(release.n):
        obj: dict[str, object] = {
            "items": tok[bi[bp[j] : bp[j + 1]]].tolist(),
            "uncertain": tok[ui[up[j] : up[j + 1]]].tolist(),
            "max_errors": int(release.max_errors[j]),
        }
        if release.labels is not None:
            obj["label"] = release.labels[j]
        out.append(json.dumps(obj, separators=(",", ":")))
    return out


def write_set_release(path: str | os.PathLike[str], release: SetRelease) -> None:
    """Write the JSONL release atomically."""
    from anonymatch.core.files import write_atomically

    text = "\n".join(release_lines(release)) + "\n"
    write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def read_set_release(path: str | os.PathLike[str], universe: Transactions) -> SetRelease:
    """Parse a JSONL release against the original item universe. Items unknown to the
    original get new columns (no original can contain them). InputError on malformed lines."""
    p = _check_file(path)
    objects = []
    for no, line in enumerate(_lines(p), 1):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{p}:{no}: invalid JSON ({exc.msg})") from None
        except RecursionError:  # [[[[…]]]]: Python's parser recurses
            raise InputError(f"{p}:{no}: JSON nested too deeply") from None
        objects.append(obj)
    if not objects:
        raise InputError(f"the release has no records: {p}")
    return set_release_from_objects(objects, universe, str(p))


def set_release_from_objects(
    objects: Sequence[object], universe: Transactions, where: str, label: bool = True
) -> SetRelease:
    """The set part of parsed release lines (``items``, ``uncertain``, ``max_errors`` and,
    with ``label``, an optional ``label``), against the original item universe: the JSONL
    release of this kind and the set part of a relational release (``anonymatch.relational``)
    share it. Messages say ``where:line``. O(total items)."""
    index = dict(universe.item_index())
    items = list(universe.items)
    b_rows: list[list[int]] = []
    u_rows: list[list[int]] = []
    t: list[int] = []
    labels: list[object] = []
    has_label = None

    def col(x: object, no: int) -> int:
        if isinstance(x, dict | list | bool) or x is None:
            raise InputError(f"{where}:{no}: items must be numbers or strings")
        key = str(x)
        if key not in index:
            index[key] = len(items)
            items.append(key)
        return index[key]

    for no, obj in enumerate(objects, 1):
        if not isinstance(obj, dict):
            raise InputError(f"{where}:{no}: expected a JSON object")
        for key in ("items", "uncertain", "max_errors"):
            if key not in obj:
                raise InputError(f"{where}:{no}: missing field {key!r}")
        if not isinstance(obj["items"], list) or not isinstance(obj["uncertain"], list):
            raise InputError(f"{where}:{no}: 'items' and 'uncertain' must be lists")
        me = obj["max_errors"]
        if not isinstance(me, int) or isinstance(me, bool) or me < 0:
            raise InputError(f"{where}:{no}: 'max_errors' must be a non-negative integer")
        if has_label is None:
            has_label = label and "label" in obj
        elif label and has_label != ("label" in obj):
            raise InputError(f"{where}:{no}: 'label' present on some lines only")
        b_rows.append(sorted({col(x, no) for x in obj["items"]}))
        u_rows.append(sorted({col(x, no) for x in obj["uncertain"]}))
        t.append(me)
        if has_label:
            labels.append(str(obj["label"]))
    b = len(items)
    return SetRelease(
        _csr(b_rows, b),
        _csr(u_rows, b),
        np.asarray(t, np.int64),
        np.asarray(labels, dtype=object) if has_label else None,
        items,
        universe.integer_items,
    )


def _csr(rows: list[list[int]], b: int) -> sp.csr_array:
    indptr = np.zeros(len(rows) + 1, np.int64)
    indptr[1:] = np.cumsum([len(r) for r in rows])
    idx = np.fromiter((x for r in rows for x in r), np.int64, int(indptr[-1]))
    return sp.csr_array((np.ones(len(idx), bool), idx, indptr), shape=(len(rows), b))


def extend_universe(t: Transactions, b: int) -> sp.csr_array:
    """The original matrix with extra (empty) columns up to width b."""
    m = t.matrix
    if m.shape[1] == b:
        return m
    return sp.csr_array((m.data, m.indices, m.indptr), shape=(m.shape[0], b))
