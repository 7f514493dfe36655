"""Typed quasi-identifiers: ordinal categories, dates and hierarchies.

* **Ordinal** (``--ordinal 'Installs=0+|1+|5+|10+'``): a categorical attribute with a declared
  order of its L values. It is encoded as its rank 0…L−1 and treated as a numeric QI: published
  as a range over the order, ``10+..1,000+`` (a single value stays plain), and scored as ranks,
  NCP = (rank span)/(L − 1) — the span is the declared order's, not the data's. A value outside
  the order is an input error. A label may contain ``..``: a cell is read back as the one split
  ``lo..hi`` whose both sides are labels of the order.
* **Date / datetime** (``--date 'Last Updated=month'``): values parsed by pandas
  (``pd.to_datetime``), truncated to the granularity (``year``, ``quarter``, ``month``,
  ``week``, ``day``, ``hour``, ``minute``, ``second``) and encoded as the number of such periods
  since 1970 (weeks start on Monday). Published as a range of periods in ISO-like text,
  ``2018-01..2018-06`` (``2018``, ``2018Q1``, ``2018-W05``, ``2018-01-07``,
  ``2018-01-07T13``, ``2018-01-07T13:05``, ``2018-01-07T13:05:09``), scored like a numeric QI
  (width in periods over the data's span), read back by parsing the two ends.
* **Hierarchy** (``--hierarchy workclass=workclass.csv``): see ``tables.columns.hierarchy``;
  ``--hierarchy-cells node`` (default) publishes lowest covering nodes, ``set`` the value sets
  as without a hierarchy (the hierarchy then only fixes the domain |A| and the record order).

In the Parquet layout an ordinal or date cell is a ``struct{lo, hi}`` of the two end labels
(text, as in the CSV cell), a hierarchy cell a ``struct{node, values}`` (node label or null,
and the leaves it covers); null is ``*``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from anonymatch.core.errors import InputError
from anonymatch.tables.columns.hierarchy import Hierarchy

GRANULARITIES = ("year", "quarter", "month", "week", "day", "hour", "minute", "second")
_SECONDS = {"day": 86400, "hour": 3600, "minute": 60, "second": 1}
_EPOCH_MONDAY = pd.Timestamp("1969-12-29")  # weeks counted from the Monday before 1970-01-01


@dataclass(frozen=True)
class OrdinalScale:
    """The declared order of an ordinal QI (labels, lowest first)."""

    order: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.order) < 1:
            raise InputError("an ordinal order needs at least one value")
        if len(set(self.order)) != len(self.order):
            dup = next(v for v in self.order if self.order.count(v) > 1)
            raise InputError(f"value {dup!r} is listed twice in an ordinal order")
        for v in self.order:
            if v == "*" or not v:
                raise InputError(f"{v!r} cannot be a value of an ordinal order")

    @property
    def span(self) -> float:
        return float(len(self.order) - 1)

    def encode(self, column: pd.Series, name: str, row_offset: int = 0) -> np.ndarray:
        """Ranks of the values; ``InputError`` on the first value outside the order."""
        text = column.astype(str).str.strip()
        ranks = text.map({v: i for i, v in enumerate(self.order)})
        bad = ranks.isna().to_numpy()
        _refuse_first(
            bad, text, f"ordinal quasi-identifier {name!r}", row_offset, "is not in its order"
        )
        return ranks.to_numpy(dtype=np.float64)

    def text(self, values: np.ndarray) -> list[str]:
        return [self.order[int(v)] for v in values]

    def parse(self, cells: pd.Series, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) ranks of range cells (``*`` must be removed by the caller)."""
        index = {v: i for i, v in enumerate(self.order)}
        lo, hi = np.empty(len(cells)), np.empty(len(cells))
        memo: dict[str, tuple[int, int]] = {}
        for p, cell in enumerate(cells):
            if cell not in memo:
                memo[cell] = _split_range(cell, index, name, p)
            lo[p], hi[p] = memo[cell]
        return lo, hi


def _refuse_first(
    bad: np.ndarray, text: pd.Series, what: str, row_offset: int, problem: str
) -> None:
    """``InputError`` naming the first value flagged in ``bad`` (its 1-based row), if any."""
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"value {text.iloc[row]!r} of {what} (row {row_offset + row + 1}) {problem}"
        )


def _split_range(cell: str, index: Mapping[str, int], name: str, row: int) -> tuple[int, int]:
    if cell in index:
        return index[cell], index[cell]
    start = cell.find("..")
    while start >= 0:
        left, right = cell[:start], cell[start + 2 :]
        if left in index and right in index and index[left] <= index[right]:
            return index[left], index[right]
        start = cell.find("..", start + 1)
    raise InputError(f"malformed ordinal cell {cell!r} in column {name!r} (row {row + 1})")


@dataclass(frozen=True)
class DateScale:
    """A date/datetime QI truncated to ``granularity`` (one of ``GRANULARITIES``)."""

    granularity: str

    def __post_init__(self) -> None:
        if self.granularity not in GRANULARITIES:
            raise InputError(
                f"unknown date granularity {self.granularity!r}; "
                f"choose one of: {', '.join(GRANULARITIES)}"
            )

    def encode(self, column: pd.Series, name: str, row_offset: int = 0) -> np.ndarray:
        """Periods since 1970 of the values; ``InputError`` on the first unparsable one."""
        if pd.api.types.is_datetime64_any_dtype(column.dtype):
            stamps = pd.Series(column).dt.tz_localize(None) if _has_tz(column) else column
            bad = pd.Series(stamps).isna().to_numpy()
            text = pd.Series(column).astype(str)
        else:
            text = column.astype(str).str.strip()
            stamps = _to_datetime(text, name)
            if _has_tz(stamps):  # one time zone throughout: its wall-clock times, as above
                stamps = stamps.dt.tz_localize(None)
            bad = stamps.isna().to_numpy()
        _refuse_first(bad, text, f"date quasi-identifier {name!r}", row_offset, "is not a date")
        return self.periods(pd.DatetimeIndex(stamps))

    def periods(self, stamps: pd.DatetimeIndex) -> np.ndarray:
        g = self.granularity
        out: Any
        if g == "year":
            out = stamps.year - 1970
        elif g == "quarter":
            out = (stamps.year - 1970) * 4 + (stamps.month - 1) // 3
        elif g == "month":
            out = (stamps.year - 1970) * 12 + stamps.month - 1
        elif g == "week":
            out = (stamps.normalize() - _EPOCH_MONDAY).days // 7
        else:
            seconds = (stamps - pd.Timestamp("1970-01-01")) // pd.Timedelta(seconds=1)
            out = np.floor_divide(np.asarray(seconds, np.int64), _SECONDS[g])
        return np.asarray(out, dtype=np.float64)

    def start(self, period: int) -> pd.Timestamp:
        """First instant of a period."""
        g = self.granularity
        if g == "year":
            return pd.Timestamp(year=1970 + period, month=1, day=1)
        if g == "quarter":
            return pd.Timestamp(year=1970 + period // 4, month=3 * (period % 4) + 1, day=1)
        if g == "month":
            return pd.Timestamp(year=1970 + period // 12, month=period % 12 + 1, day=1)
        if g == "week":
            return _EPOCH_MONDAY + pd.Timedelta(weeks=period)
        return pd.Timestamp("1970-01-01") + pd.Timedelta(seconds=period * _SECONDS[g])

    def label(self, period: int) -> str:
        t, g = self.start(period), self.granularity
        if g == "year":
            return f"{t.year:04d}"
        if g == "quarter":
            return f"{t.year:04d}Q{(t.month - 1) // 3 + 1}"
        if g == "month":
            return f"{t.year:04d}-{t.month:02d}"
        if g == "week":
            iso = t.isocalendar()
            return f"{iso[0]:04d}-W{iso[1]:02d}"
        fmt = {"day": "%Y-%m-%d", "hour": "%Y-%m-%dT%H", "minute": "%Y-%m-%dT%H:%M"}
        return t.strftime(fmt.get(g, "%Y-%m-%dT%H:%M:%S"))

    def parse_label(self, text: str) -> int | None:
        """Period of a published label, None if it is not one at this granularity."""
        g = self.granularity
        try:
            if g == "quarter":
                year, _, q = text.partition("Q")
                if not (q.isdigit() and 1 <= int(q) <= 4 and len(year) == 4):
                    return None
                return (int(year) - 1970) * 4 + int(q) - 1
            if g == "week":
                stamp = pd.Timestamp.fromisocalendar(int(text[:4]), int(text[6:]), 1)
                if text[4:6] != "-W":
                    return None
            else:
                stamp = pd.Timestamp(text)
        except (ValueError, TypeError, OverflowError):
            return None
        if stamp is pd.NaT or stamp.tzinfo is not None:  # labels carry no time zone
            return None
        period = int(self.periods(pd.DatetimeIndex([stamp]))[0])
        return period if self.label(period) == text else None

    def text(self, values: np.ndarray) -> list[str]:
        return [self.label(int(v)) for v in values]

    def parse(self, cells: pd.Series, name: str) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = np.empty(len(cells)), np.empty(len(cells))
        memo: dict[str, int | None] = {}
        for p, cell in enumerate(cells):
            left, sep, right = cell.partition("..")
            ends = []
            for part in (left, right if sep else left):
                if part not in memo:
                    memo[part] = self.parse_label(part)
                ends.append(memo[part])
            if ends[0] is None or ends[1] is None or ends[0] > ends[1]:
                raise InputError(
                    f"malformed {self.granularity} cell {cell!r} in column {name!r} (row {p + 1})"
                )
            lo[p], hi[p] = ends
        return lo, hi


def _has_tz(column: pd.Series) -> bool:
    return getattr(column.dtype, "tz", None) is not None


def _to_datetime(text: pd.Series, name: str = "") -> pd.Series:
    """The instants of date texts (NaT where unparsable). Values in different time zones
    (``+01:00`` beside ``Z``) have no common calendar day: InputError naming two of them."""
    try:
        try:
            return pd.to_datetime(text, errors="coerce", format="mixed")
        except (ValueError, TypeError):
            return pd.to_datetime(text, errors="coerce")
    except (ValueError, TypeError) as exc:
        zones: dict[str, str] = {}
        for value in pd.unique(text):
            try:
                stamp = pd.Timestamp(value)
            except (ValueError, TypeError, OverflowError):
                continue
            zone = str(stamp.utcoffset()) if stamp is not pd.NaT else "none"
            zones.setdefault(zone, str(value))
            if len(zones) > 1:
                a, b = list(zones.values())[:2]
                raise InputError(
                    f"date quasi-identifier {name!r} mixes time zones ({a!r}, {b!r}); give "
                    "every value in one time zone"
                ) from None
        raise InputError(f"date quasi-identifier {name!r}: {exc}") from None


Scale = OrdinalScale | DateScale


@dataclass(frozen=True)
class QITypes:
    """Types of QIs beyond plain numeric/categorical, by column name."""

    ordinal: Mapping[str, OrdinalScale] = field(default_factory=dict)
    dates: Mapping[str, DateScale] = field(default_factory=dict)
    hierarchies: Mapping[str, Hierarchy] = field(default_factory=dict)
    hierarchy_cells: str = "node"

    def __post_init__(self) -> None:
        if self.hierarchy_cells not in ("node", "set"):
            raise InputError(f"`hierarchy_cells` must be node or set, got {self.hierarchy_cells!r}")
        for name in set(self.ordinal) & set(self.dates):
            raise InputError(f"column {name!r} is both ordinal and a date")
        for name in set(self.hierarchies) & (set(self.ordinal) | set(self.dates)):
            raise InputError(f"column {name!r} has a hierarchy and is ordinal or a date")

    def __bool__(self) -> bool:
        return bool(self.ordinal or self.dates or self.hierarchies)

    @property
    def scaled(self) -> dict[str, Scale]:
        """Ordinal and date QIs (encoded as numbers, published as ranges of labels)."""
        return {**self.ordinal, **self.dates}

    def node_cells(self, name: str) -> Hierarchy | None:
        """The hierarchy whose nodes a release publishes for ``name`` (None: value sets)."""
        if self.hierarchy_cells != "node":
            return None
        return self.hierarchies.get(name)

    def describe(self) -> dict[str, object]:
        """JSON-ready description for manifests."""
        out: dict[str, object] = {}
        if self.ordinal:
            out["ordinal"] = {a: list(s.order) for a, s in self.ordinal.items()}
        if self.dates:
            out["dates"] = {a: s.granularity for a, s in self.dates.items()}
        if self.hierarchies:
            out["hierarchies"] = {a: h.describe() for a, h in self.hierarchies.items()}
            out["hierarchy_cells"] = self.hierarchy_cells
        return out


def build_types(
    ordinal: Mapping[str, str | list[str] | tuple[str, ...]] | None = None,
    dates: Mapping[str, str] | None = None,
    hierarchies: Mapping[str, str | Hierarchy] | None = None,
    hierarchy_cells: str = "node",
) -> QITypes:
    """``QITypes`` from plain values: an order as ``a|b|c`` text or a list, a granularity, a
    hierarchy file path (loaded and validated) or a loaded ``Hierarchy``."""
    from anonymatch.tables.columns.hierarchy import read_hierarchy

    orders = {
        name: OrdinalScale(tuple(v.split("|")) if isinstance(v, str) else tuple(v))
        for name, v in (ordinal or {}).items()
    }
    return QITypes(
        orders,
        {name: DateScale(g) for name, g in (dates or {}).items()},
        {
            name: h if isinstance(h, Hierarchy) else read_hierarchy(h)
            for name, h in (hierarchies or {}).items()
        },
        hierarchy_cells,
    )
