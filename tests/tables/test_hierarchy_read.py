"""The column-wise reader of hierarchy files (``pyarrow.csv``) gives exactly the ``Hierarchy``
— or exactly the error — of the line-by-line reading, on random small ARX files."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymatch.core.errors import InputError
from anonymatch.tables.columns.hierarchy import (
    _IRREGULAR,
    Hierarchy,
    _arrow_levels,
    parse_hierarchy,
    read_hierarchy,
)

# labels that collide across levels and groups (two parents, one label for two leaf sets),
# with spaces inside, non-ASCII letters and a leading space now and then
POOL = ["a", "b", "x", "y", "*", "0-9", "Not Hispanic", "Zürich", "é", " p", "q ", "~n"]
FLAWS = [None, None, None, "ragged", "blank", "twice", "quote", "tab", "cr", "empty", "nul"]


@st.composite
def files(draw: st.DrawFn) -> tuple[bytes, bool]:
    """(bytes of a random ARX hierarchy file, whether it is plain): a random tree of 1–14
    leaves and 1–3 levels of groups, labels from ``POOL`` (collisions on purpose), written
    with ``;`` or ``,``, LF or CRLF, maybe a BOM, maybe one flaw."""
    n = draw(st.integers(1, 14))
    leaves = draw(st.lists(st.sampled_from([*POOL, *map(str, range(20))]), min_size=n, max_size=n))
    groups = list(range(n))
    rows = [[leaf] for leaf in leaves]
    for _ in range(draw(st.integers(1, 3))):
        up = draw(st.lists(st.integers(0, 3), min_size=max(groups) + 1, max_size=max(groups) + 1))
        groups = [up[g] for g in groups]
        names = draw(st.lists(st.sampled_from(POOL), min_size=4, max_size=4))
        for row, g in zip(rows, groups, strict=True):
            row.append(names[g])
    if draw(st.booleans()):
        for row in rows:
            row.append("*")
    sep = draw(st.sampled_from([";", ";", ","]))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    flaw = draw(st.sampled_from(FLAWS))
    lines = [sep.join(row) for row in rows]
    at = draw(st.integers(0, len(lines) - 1))
    if flaw == "ragged":
        lines[at] += sep + "extra"
    elif flaw == "blank":
        lines.insert(at, draw(st.sampled_from(["", sep, " "])))
    elif flaw == "twice":
        lines.append(lines[at])
    elif flaw in ("quote", "tab", "cr", "nul"):
        mark = {"quote": '"', "tab": "\t", "cr": "\r", "nul": "\x00"}[flaw]
        lines[at] = mark + lines[at] if draw(st.booleans()) else lines[at] + mark
    elif flaw == "empty":
        lines[at] = sep + lines[at]
    text = end.join(lines) + (end if draw(st.booleans()) else "")
    raw = (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + text.encode()
    plain = (
        flaw is None
        and sep == ";"
        and all(not (f.startswith(" ") or f.endswith(" ")) for row in rows for f in row)
    )
    return raw, plain


def line_by_line(path: Path) -> Hierarchy:
    """``read_hierarchy`` as it was: decode, then ``parse_hierarchy``."""
    raw = path.read_bytes()
    text = raw.decode("utf-8-sig")
    return parse_hierarchy(text, path.name, hashlib.sha256(raw).hexdigest(), str(path))


def outcome(read: object, path: Path) -> tuple[str, object]:
    try:
        h = read(path)  # type: ignore[operator]
    except InputError as exc:
        return "error", str(exc)
    assert isinstance(h, Hierarchy)
    n, levels = h.anc.shape  # node_leaves as the COO triplets built it before
    coo = sp.csr_array(
        (np.ones(n * levels, np.int8), (h.anc.T.ravel(), np.tile(np.arange(n), levels))),
        shape=(len(h.labels), n),
    )
    assert (coo != h.node_leaves).nnz == 0
    spans = h.spans
    return "ok", (
        h.source,
        h.sha256,
        h.leaves.dtype.str,
        h.leaves.tolist(),
        *(getattr(h, f).dtype.str for f in ("anc", "level", "count", "rank")),
        *(getattr(h, f).tolist() for f in ("anc", "level", "count", "rank")),
        h.labels,
        h.by_label,
        h.node_leaves.dtype.str,
        h.node_leaves.indptr.dtype.str,
        h.node_leaves.indices.dtype.str,
        h.node_leaves.has_canonical_format,
        h.node_leaves.shape,
        h.node_leaves.indptr.tolist(),
        h.node_leaves.indices.tolist(),
        h.node_leaves.data.tolist(),
        spans[0].tolist(),
        spans[1].tolist(),
        h.describe(),
    )


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files())
def test_column_wise_reader_equals_line_by_line(tmp_path: Path, case: tuple[bytes, bool]) -> None:
    raw, plain = case
    path = tmp_path / "h.csv"
    path.write_bytes(raw)
    got, want = outcome(read_hierarchy, path), outcome(line_by_line, path)
    assert got == want
    if plain and want[0] == "ok":  # a plain, valid file takes the column-wise path
        assert _arrow_levels(raw) is not None


def test_irregular_characters_are_every_whitespace_and_line_break() -> None:
    """The fast path refuses a file with any character ``str.strip`` or ``str.splitlines``
    would treat specially (but ``\\n``, and ``\\r``/`` `` that it checks itself)."""
    special = {
        chr(c) for c in range(0x110000) if chr(c).isspace() or len(f"a{chr(c)}b".splitlines()) > 1
    }
    assert special - {b.decode() for b in _IRREGULAR} == {"\n"}


def test_big_regular_file_takes_the_column_wise_path(tmp_path: Path) -> None:
    codes = [f"{v:04d}" for v in range(10_000)]
    text = "".join(f"{c};{c[:3]}*;{c[:2]}**;{c[:1]}***;*\r\n" for c in codes)
    path = tmp_path / "four.csv"
    path.write_text(text, newline="")
    assert _arrow_levels(path.read_bytes()) is not None
    h = read_hierarchy(path)
    assert outcome(read_hierarchy, path) == outcome(line_by_line, path)
    assert h.n_leaves == 10_000 and h.height == 5 and len(h.labels) == 10_000 + 1000 + 100 + 10 + 1
    assert np.array_equal(h.rank, np.arange(10_000))


def test_a_lone_carriage_return_is_bad_input_not_a_crash() -> None:
    with pytest.raises(InputError, match=r":2: not a CSV line \(a carriage return inside"):
        parse_hierarchy("a;x;*\nb\rc;y;*\n")
