"""Generalization hierarchies of categorical quasi-identifiers, in ARX's file format.

File format (ARX, Prasser et al.): one line per leaf, fields separated by ``;``, the leaf value
first and then its ancestors from the most specific to the most general, usually ending in
``*``::

    Private;Non-Government;*
    Self-emp-inc;Non-Government;*
    Federal-gov;Government;*

Every line has the same number of fields (one per level); a leaf is listed once; a label of
level ℓ has one parent (the same label on two lines of the same level must be followed by the
same ancestors). A node is identified by its level and label; the leaves under a node are the
lines that name it. If the last level holds more than one label an implicit root ``*`` is added
above it. A label that names two different sets of leaves at two levels is refused (a published
node label must say which leaves it stands for). Surrounding whitespace of a field is ignored;
the file is UTF-8 (a byte-order mark is skipped). Violations raise ``InputError`` with one
located line, ``hierarchy FILE:LINE: …``.

What the release publishes (``tables.io.cells``): a categorical cell of a QI with a hierarchy is
the *lowest node covering* the values of the originals that the published row must cover (their
lowest common ancestor, Doka §3 with a hierarchy instead of free value sets), written
``~label`` — the ``~`` marker tells a node from a leaf value, which may have the same text (a
leaf value starting with ``~`` is written ``\\~…``). A node with one leaf is written as the
leaf; the root is written ``*`` (it covers every value, as a suppressed cell does). Its NCP is
(leaves under the node − 1)/(|A| − 1) with |A| the number of leaves of the hierarchy, the Loss
metric of ARX (Iyengar 2002); see ``tables.metrics``.

Lowest common ancestors: all leaves sit at level 0 and every node at level ℓ has its parent at
level ℓ + 1, so the lowest node covering a set S of leaves is ``anc[x, ℓ*]`` for any x in S,
with ℓ* the lowest level at which all of S share their ancestor. O(|S|·L) for L levels.
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from anonymatch.core.cells import NODE_MARK
from anonymatch.core.errors import InputError

ROOT_LABEL = "*"


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """A validated generalization hierarchy.

    ``leaves`` are the leaf labels in sorted order: leaf code c (the categorical code of the
    encoded QI) is ``leaves[c]``. Nodes are numbered with the leaves first (node c = leaf c,
    level 0), then level by level. ``anc[c, ℓ]`` is the ancestor of leaf c at level ℓ
    (``anc[:, 0]`` = c; the last level is the root). ``count[v]`` is the number of leaves under
    node v, ``level[v]`` its level and ``labels[v]`` its label; ``node_leaves`` is a
    (nodes × leaves) 0/1 CSR matrix of the leaves under each node; ``rank[c]`` is the position
    of leaf c in a depth-first order of the tree (siblings next to each other), used to order
    records and to cut them (Mondrian) along the hierarchy.
    """

    source: str
    leaves: np.ndarray
    anc: np.ndarray
    level: np.ndarray
    labels: tuple[str, ...]
    count: np.ndarray
    node_leaves: sp.csr_array
    rank: np.ndarray
    sha256: str
    by_label: dict[str, int] = field(default_factory=dict)

    @property
    def n_leaves(self) -> int:
        return len(self.leaves)

    @property
    def height(self) -> int:
        """Number of levels, leaves included (root at level ``height − 1``)."""
        return int(self.anc.shape[1])

    @property
    def root(self) -> int:
        return int(self.anc[0, -1]) if self.n_leaves else 0

    def describe(self) -> dict[str, object]:
        """JSON-ready summary for manifests: file name and path as given, SHA-256, leaves and
        levels (enough to find and check the file again, e.g. for ``verify --manifest``)."""
        return {
            "file": Path(self.source).name,
            "path": self.source,
            "sha256": self.sha256,
            "leaves": self.n_leaves,
            "levels": self.height,
        }

    @cached_property
    def spans(self) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi): node v covers exactly the leaves c with ``lo[v] <= rank[c] < hi[v]``.

        ``rank`` numbers the leaves depth first (the leaves are sorted on their path from the
        root), so the leaves under a node are contiguous in it: a node is an interval of
        ranks, of length ``count[v]``. This is what lets a release of nodes be checked without
        expanding a node into its leaves (``tables.verify``: a node cell is a range over the
        ranks). O(N·L) time once per hierarchy, O(nodes) memory."""
        nodes = len(self.labels)
        lo = np.full(nodes, self.n_leaves, np.int64)
        for lvl in range(self.height):
            np.minimum.at(lo, self.anc[:, lvl], self.rank)
        return lo, lo + self.count

    def node(self, label: str) -> int:
        """Node id of a node label (a non-leaf node; ``InputError`` if there is none)."""
        try:
            return self.by_label[label]
        except KeyError:
            raise InputError(
                f"{NODE_MARK}{label!r} is not a node of hierarchy {Path(self.source).name}"
            ) from None

    def codes(self, values: np.ndarray, column: str, row_offset: int = 0) -> np.ndarray:
        """Leaf codes of data values; ``InputError`` naming the first value that is no leaf."""
        values = np.asarray(values, dtype=str)
        pos = np.searchsorted(self.leaves, values)
        pos = np.minimum(pos, max(self.n_leaves - 1, 0))
        bad = self.leaves[pos] != values if self.n_leaves else np.ones(len(values), bool)
        if np.any(bad):
            row = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"hierarchy {Path(self.source).name}: value {str(values[row])!r} of column "
                f"{column!r} (row {row_offset + row + 1}) is not a leaf of the hierarchy"
            )
        return pos.astype(np.int64)

    def lowest_nodes(self, sets: sp.csr_array) -> np.ndarray:
        """Per row of ``sets`` (rows × ≥ leaves, 0/1, every row non-empty), the lowest node
        covering its leaves. O(nnz·L)."""
        ptr, idx = sets.indptr, sets.indices
        n = len(ptr) - 1
        out = np.full(n, self.root, np.int64)
        if n == 0:
            return out
        if idx.size and int(idx.max()) >= self.n_leaves:
            raise ValueError("a set holds a code outside the hierarchy's leaves")
        starts = ptr[:-1]
        done = np.zeros(n, bool)
        for lvl in range(self.height):
            a = self.anc[idx, lvl]
            same = np.minimum.reduceat(a, starts) == np.maximum.reduceat(a, starts)
            new = same & ~done
            out[new] = a[starts[new]]
            done |= same
            if done.all():
                break
        return out

    def close(self, sets: sp.csr_array) -> sp.csr_array:
        """Replace each row's leaf set by the leaves under its lowest covering node."""
        return self.leaf_sets(self.lowest_nodes(sets), int(sets.shape[1]))

    def leaf_sets(self, nodes: np.ndarray, width: int | None = None) -> sp.csr_array:
        """(len(nodes) × width) 0/1 CSR of the leaves under each node."""
        m = self.node_leaves[nodes]
        width = self.n_leaves if width is None else width
        out = sp.csr_array((m.data, m.indices, m.indptr), shape=(len(nodes), width))
        out.sort_indices()
        return out

    def node_text(self, node: int) -> str | None:
        """The label a release shows for ``node``: None for a leaf or a one-leaf node (shown
        as the leaf), ``*`` for the root or any node covering every leaf, else the node's label
        (the caller adds the marker)."""
        if self.count[node] == 1:
            return None
        if self.count[node] == self.n_leaves:  # the root, or a node as wide as it
            return ROOT_LABEL
        return self.labels[node]


def _padded(fields: list[str], width: int) -> list[str]:
    """A ragged line made ``width`` long by repeating its last label below the root (the hint
    of the ragged-levels error)."""
    body = fields[:-1] if len(fields) > 1 else fields
    return body + [body[-1]] * (width - 1 - len(body)) + fields[-1:]


def read_hierarchy(path: str | Path) -> Hierarchy:
    """Load and validate an ARX hierarchy file (see the module docstring).

    Raises
    ------
    InputError
        One located line: an unreadable file, an empty file or label, lines of different
        lengths (ragged levels), a leaf listed twice, a label with two parents, a label naming
        two different leaf sets.

    Notes
    -----
    A plain file (UTF-8 without quotes, whitespace around labels, blank lines or irregular
    rows) is read column-wise by ``pyarrow.csv`` and its nodes numbered with
    ``dictionary_encode`` (``_arrow_levels``): no Python string per field. Anything else
    takes ``parse_hierarchy``, which reads line by line and locates errors; both give the
    same ``Hierarchy``.

    Complexity: O(N·L) time and memory for N leaves and L levels.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"hierarchy {path}: cannot read: {exc.strerror or exc}") from None
    sha256 = hashlib.sha256(raw).hexdigest()
    columns = _arrow_levels(raw)
    if columns is not None:
        del raw
        return _assemble(*columns, name=path.name, sha256=sha256, source=str(path))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"hierarchy {path.name}: not UTF-8 text") from None
    return parse_hierarchy(text, path.name, sha256, str(path))


def parse_hierarchy(
    text: str, name: str = "<hierarchy>", sha256: str = "", source: str | None = None
) -> Hierarchy:
    """Validate the text of an ARX hierarchy (``read_hierarchy`` without the file).

    A well-formed file without quotes takes a vectorized path (``_fast_table``: 100,000 ZIP
    leaves in a fraction of a second instead of seconds); any irregularity — a quote, ragged
    levels, an empty label, a leaf twice, a label with two parents — falls back to the line by
    line reading below, which locates the problem."""
    fast = _fast_table(text)
    if fast is not None:
        return _build(*fast, name=name, sha256=sha256, source=source)
    rows: list[tuple[int, list[str]]] = []
    where = f"hierarchy {name}"
    reader = csv.reader(io.StringIO(text), delimiter=";")
    try:
        for number, fields in enumerate(reader, start=1):
            if not fields or all(not f.strip() for f in fields):
                continue
            rows.append((number, [f.strip() for f in fields]))
    except csv.Error as exc:  # e.g. a lone carriage return inside a line
        why = "a carriage return inside the line" if "new-line" in str(exc) else str(exc)
        raise InputError(f"{where}:{reader.line_num}: not a CSV line ({why})") from None
    if not rows:
        raise InputError(f"{where}: the file has no lines")
    longest = max(rows, key=lambda r: len(r[1]))
    width = len(longest[1])
    for number, fields in rows:
        if len(fields) != width:
            raise InputError(
                f"{where}:{number}: {len(fields)} levels where line {longest[0]} has {width} "
                "(ragged levels; every leaf needs a label at every level: repeat one, e.g. "
                f"{';'.join(_padded(fields, width))})"
            )
    if width < 2:
        raise InputError(f"{where}:{rows[0][0]}: a line needs a leaf and at least one level")
    seen_leaf: dict[str, int] = {}
    parent: list[dict[str, tuple[str, int]]] = [{} for _ in range(width)]
    for number, fields in rows:
        for lvl, label in enumerate(fields):
            if not label:
                raise InputError(f"{where}:{number}: empty label at level {lvl}")
        leaf = fields[0]
        if leaf in seen_leaf:
            raise InputError(
                f"{where}:{number}: leaf {leaf!r} is listed twice (first on line {seen_leaf[leaf]})"
            )
        seen_leaf[leaf] = number
        for lvl in range(1, width - 1):
            label, up = fields[lvl], fields[lvl + 1]
            known = parent[lvl].setdefault(label, (up, number))
            if known[0] != up:
                raise InputError(
                    f"{where}:{number}: {label!r} (level {lvl}) has two parents: "
                    f"{known[0]!r} (line {known[1]}) and {up!r}"
                )
    table = np.array([fields for _, fields in rows], dtype=str)
    lines = np.array([number for number, _ in rows], np.int64)
    return _build(table, lines, name=name, sha256=sha256, source=source)


def _fast_table(text: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(fields, line numbers) of a regular hierarchy file, read with plain string splits, or
    None when the line-by-line path must read it (a quote, ragged levels, an empty label, a
    repeated leaf or a label with two parents). O(N·L)."""
    if '"' in text:
        return None
    numbered = [
        (i, line) for i, line in enumerate(text.splitlines(), 1) if line.replace(";", "").strip()
    ]
    if not numbered:
        return None
    rows = [line.split(";") for _, line in numbered]
    widths = set(map(len, rows))
    if len(widths) != 1 or widths.pop() < 2:
        return None
    table = np.array(rows, dtype=str)
    if any(c in text for c in " \t\r\f\v"):
        table = np.char.strip(table)
    if (table == "").any():
        return None
    if len(set(table[:, 0].tolist())) != len(table):
        return None
    for lvl in range(1, table.shape[1] - 1):  # every label has one parent
        labels = table[:, lvl].tolist()
        if len(set(zip(labels, table[:, lvl + 1].tolist(), strict=True))) != len(set(labels)):
            return None
    return table, np.array([i for i, _ in numbered], np.int64)


def _build(
    table: np.ndarray, lines: np.ndarray, *, name: str, sha256: str, source: str | None
) -> Hierarchy:
    """The hierarchy of a validated (rows × levels) label table and the rows' line numbers:
    rows sorted by leaf, each level's labels numbered in order of first appearance
    (``pd.factorize``), then ``_assemble``. O(N·L) vectorized."""
    order = np.argsort(table[:, 0], kind="stable")
    table = table[order]  # line of leaf code c is table[c]
    levels: list[tuple[np.ndarray, list[str]]] = []
    for lvl in range(1, table.shape[1]):
        codes, uniques = pd.factorize(table[:, lvl])  # in order of first appearance
        levels.append((codes, [str(u) for u in uniques]))
    return _assemble(
        table[:, 0].copy(), levels, lines[order], name=name, sha256=sha256, source=source
    )


# every character str.isspace() or str.splitlines() treats specially, and the quote: a file
# holding none of them reads the same split on ";" by pyarrow as line by line
_IRREGULAR = tuple(
    ch.encode()
    for ch in (
        '"\x00\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000'
        + "".join(chr(c) for c in range(0x2000, 0x200B))
    )
    if ch != "\n"
)


def _arrow_levels(
    raw: bytes,
) -> tuple[np.ndarray, list[tuple[np.ndarray, list[str]]], np.ndarray] | None:
    """(leaves, per level (codes, labels), line numbers) of a plain hierarchy file read
    column-wise with ``pyarrow.csv``, rows sorted by leaf and each level's labels numbered in
    order of first appearance — what ``_build`` gives ``_assemble`` for the same file — or
    None when the line-by-line reading must decide (not UTF-8, a quote, whitespace other than
    a space inside a label, a line break other than ``\\n`` or ``\\r\\n``, a blank line,
    ragged levels, an empty label, a repeated leaf, a label with two parents, fewer than two
    levels).

    Complexity: O(N·L) time, O(N·L) bytes of Arrow buffers (no Python object per field)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv as pacsv

    body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
    crlf = b"\r" in body  # Windows line ends (ARX's files): each \r must start a \r\n
    if crlf and body.count(b"\r") != body.count(b"\r\n"):
        return None
    end = b"\r\n" if crlf else b"\n"
    if not body or body.startswith((b"\n", end)) or b"\n\n" in body or end + end in body:
        return None
    plain = body.isascii()
    if any(ch in body for ch in _IRREGULAR if (len(ch) == 1 or not plain) and ch not in b"\r "):
        return None
    width = body[: body.find(b"\n") if b"\n" in body else len(body)].count(b";") + 1
    if width < 2:
        return None
    names = [f"f{i}" for i in range(width)]
    try:
        table = pacsv.read_csv(
            pa.py_buffer(body),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter=";", quote_char=False),
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()), strings_can_be_null=False
            ),
        )
        columns = [table.column(i).combine_chunks() for i in range(width)]
    except (pa.ArrowException, UnicodeDecodeError):  # ragged rows, not UTF-8, a 2 GiB column
        return None
    n = table.num_rows
    del table
    if any(pc.any(pc.equal(pc.utf8_length(c), 0)).as_py() for c in columns):
        return None
    if b" " in body and any(  # a space inside a label is kept, one around it is stripped
        pc.any(pc.or_(pc.starts_with(c, " "), pc.ends_with(c, " "))).as_py() for c in columns
    ):
        return None
    order = pc.sort_indices(columns[0])
    leaf = columns[0].take(order)
    if n > 1 and pc.any(pc.equal(leaf[1:], leaf[:-1])).as_py():  # sorted: twice = adjacent
        return None
    size = max(pc.max(pc.utf8_length(c)).as_py() for c in columns)
    if plain:  # ASCII: pad with NULs (numpy's own padding) and view the bytes, no str objects
        padded = pc.utf8_rpad(leaf, width=size, padding="\x00")
        start = int(np.frombuffer(padded.buffers()[1], np.int32)[padded.offset])
        chars = np.frombuffer(padded.buffers()[2], np.uint8, n * size, start)
        leaves = chars.view(f"S{size}").astype(f"<U{size}")
    else:
        leaves = np.array(leaf.to_pylist(), dtype=f"<U{size}")
    del leaf
    levels: list[tuple[np.ndarray, list[str]]] = []
    for lvl in range(1, width):
        encoded = pc.dictionary_encode(columns[lvl].take(order))  # first-appearance order
        columns[lvl] = pa.nulls(0, pa.string())  # release the column
        codes = encoded.indices.to_numpy().astype(np.int64)
        if levels:  # one parent per label of the level below
            below = levels[-1][0]
            parent = np.empty(len(levels[-1][1]), np.int64)
            parent[below] = codes
            if not np.array_equal(parent[below], codes):
                return None
        levels.append((codes, encoded.dictionary.to_pylist()))
    lines = order.to_numpy().astype(np.int64) + 1
    del order, columns, encoded
    pa.default_memory_pool().release_unused()  # give the parsed text back before the nodes
    return leaves, levels, lines


def _assemble(
    leaves: np.ndarray,
    levels: list[tuple[np.ndarray, list[str]]],
    lines: np.ndarray,
    *,
    name: str,
    sha256: str,
    source: str | None,
) -> Hierarchy:
    """The hierarchy of sorted leaves, their labels at each level above (codes per leaf and
    the labels in order of first appearance) and the line number of each leaf: nodes
    numbered level by level, an implicit root ``*`` when the last level holds more than one
    label. O(N·L) vectorized, plus a Python step per non-leaf node."""
    where = f"hierarchy {name}"
    n = len(leaves)
    if len(levels[-1][1]) > 1:
        levels = [*levels, (np.zeros(n, np.int64), [ROOT_LABEL])]
    anc = np.empty((n, len(levels) + 1), np.int64)
    anc[:, 0] = np.arange(n)
    labels = list(leaves.tolist())
    sizes = [n, *(len(uniques) for _, uniques in levels)]
    level_of = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    first_line = [lines]  # line order of first appearance, for the depth-first rank
    next_id = n
    for lvl, (codes, uniques) in enumerate(levels, start=1):
        first = np.full(len(uniques), n, np.int64)
        np.minimum.at(first, codes, np.arange(n))
        anc[:, lvl] = next_id + codes
        labels.extend(uniques)
        first_line.append(lines[first])
        next_id += len(uniques)
    line_of = np.concatenate(first_line).astype(np.int64, copy=False)
    del first_line
    levels_n = anc.shape[1]
    count = np.bincount(anc.ravel(), minlength=next_id).astype(np.int64)
    # CSR of the leaves under each node, built directly: nodes are numbered level by level, so
    # a level's stable argsort lists its nodes' leaves in node order (no COO triplets)
    indptr = np.zeros(next_id + 1, np.int64)
    np.cumsum(count, out=indptr[1:])
    indices = np.empty(n * levels_n, np.int64)
    for lvl in range(levels_n):
        indices[lvl * n : (lvl + 1) * n] = np.argsort(anc[:, lvl], kind="stable")
    node_leaves = sp.csr_array(
        (np.ones(n * levels_n, np.int8), indices, indptr), shape=(next_id, n)
    )
    node_leaves.sort_indices()
    by_label: dict[str, int] = {}
    for v in range(n, next_id):
        label = labels[v]
        other = by_label.get(label)
        if other is None:
            by_label[label] = v
            continue
        same = np.array_equal(node_leaves[[other]].indices, node_leaves[[v]].indices)
        if not same:
            raise InputError(
                f"{where}:{line_of[v]}: label {label!r} names different groups of leaves at "
                f"levels {level_of[other]} and {level_of[v]}"
            )
        # the same leaves under the same label: keep the lowest node (what releases show)
    # depth-first rank: sort leaves by their ancestors from the root down, in file order
    keys = tuple(line_of[anc[:, lvl]] for lvl in range(levels_n))  # lexsort: last key primary
    rank = np.empty(n, np.int64)
    rank[np.lexsort(keys)] = np.arange(n)
    return Hierarchy(
        source=source or name,
        leaves=leaves,
        anc=anc,
        level=level_of,
        labels=tuple(labels),
        count=count,
        node_leaves=node_leaves,
        rank=rank,
        sha256=sha256,
        by_label=by_label,
    )
