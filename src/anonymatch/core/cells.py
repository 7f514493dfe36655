"""The cell grammar shared by table and set-valued releases (DESIGN.md › Release formats).

A categorical cell is a value set joined by ``|`` (a single value stays plain); ``\\``, ``|`` and
``*`` inside a value are escaped by ``\\``; ``*`` alone is a suppressed cell. A cell starting
with an unescaped ``~`` is a hierarchy node (``~Government``, ``tables.columns.hierarchy``), so
a value starting with ``~`` is written ``\\~…``. Numeric ranges (``lo..hi``) and typed Parquet
cells are table-specific: ``tables.io.cells``.
"""

from __future__ import annotations

STAR = "*"
NODE_MARK = "~"


def escape_label(label: str) -> str:
    out = label.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*")
    return "\\" + out if out.startswith(NODE_MARK) else out


def split_cell(cell: str) -> list[str]:
    """Split a categorical cell on unescaped ``|`` and unescape the parts."""
    if "\\" not in cell:
        return cell.split("|")
    parts, cur, i = [], [], 0
    while i < len(cell):
        ch = cell[i]
        if ch == "\\" and i + 1 < len(cell):
            cur.append(cell[i + 1])
            i += 2
            continue
        if ch == "|":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return parts


def canonical_cell(cell: str) -> str:
    """Canonical text of a categorical release cell: value sets sorted, escapes normalized."""
    if "|" not in cell and "\\" not in cell:
        return cell
    return "|".join(escape_label(v) for v in sorted(set(split_cell(cell))))
