"""The composition attacker's figures of one release joined to a published series (issue 40):
what ``anonymatch risk --series`` and the report's series section show.

A published series directory (``store``: ``series.json`` and the release files, not the private
map, which the attacker never has and a reader of the published part may not have either) is
opened read-only by :func:`open_published`: the index must be an ``anonymatch-series/1`` index
and every release file must still have the SHA-256 it records. :func:`series_risk` then joins a
release to it — the release is the series' release j when its SHA-256 is the index's entry j
(the series is then releases 1..j), otherwise the next one (the series is every release of the
directory, then it) — and runs the attacker of ``verify.verify_series`` on the whole; nothing of
the attacker is re-implemented here.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anonymatch.core.errors import InputError
from anonymatch.core.params import param
from anonymatch.tables.columns.schema import DEFAULT_NA_VALUES, NAValues
from anonymatch.tables.series.store import (
    FORMAT,
    INDEX,
    MAP,
    PRIVATE,
    SeriesSettings,
    SeriesStore,
    value_text,
)
from anonymatch.tables.series.verify import SeriesReport, verify_series

SERIES = param("series")
"""The series directory's parameter as messages name it (the CLI: ``--series``)."""


@dataclass(frozen=True)
class PublishedSeries:
    """A series directory opened read-only: its root, settings and index entries (each
    ``release``, ``manifest``, ``release_file``, ``sha256``), every file checked."""

    path: Path
    settings: SeriesSettings
    releases: tuple[dict[str, Any], ...]

    def people(self, release: int, table: pd.DataFrame, published: int) -> pd.DataFrame:
        """``table`` (a release's input) narrowed to the ``published`` people release
        ``release`` publishes, by the private map when the directory holds a readable one (the
        steward's copy); ``table`` unchanged when it has no more rows than that, or without a
        map, or when the map does not give ``published`` of its rows (``verify_series`` then
        says the table is not the release's people). O(rows + map)."""
        path = self.path / PRIVATE / MAP
        column = self.settings.person_id
        if len(table) <= published or column not in table.columns or not path.is_file():
            return table
        try:
            mapped = pd.read_parquet(path, columns=["person_id", "release"])
        except (OSError, ValueError, KeyError):
            return table
        ids = set(mapped.loc[mapped["release"] == release, "person_id"].astype(str))
        keep = pd.Series(value_text(table[column])).isin(ids).to_numpy()  # hashed: O(rows)
        if int(keep.sum()) != published:
            return table
        return table.loc[keep].reset_index(drop=True)

    def position(self, sha256: str | None) -> int | None:
        """The number (1-based) of the release with this SHA-256, or None. O(releases)."""
        for entry in self.releases:
            if sha256 is not None and entry["sha256"] == sha256:
                return int(entry["release"])
        return None


def open_published(path: str | os.PathLike[str]) -> PublishedSeries:
    """Open the published part of a series directory, checked.

    Parameters
    ----------
    path : path-like
        The series directory (``anonymize --series DIR``).

    Returns
    -------
    PublishedSeries

    Raises
    ------
    InputError
        ``path`` is not a directory with an ``anonymatch-series/1`` ``series.json``, the index
        is malformed or lists no release, or a release file is missing or its SHA-256 is not
        the one the index records (the directory was modified).

    Notes
    -----
    O(size of the release files) for their digests (the checks of ``store.SeriesStore``).
    """
    from anonymatch.core.documents import load_json

    root = Path(path)
    if not (root / INDEX).is_file():
        raise InputError(f"{SERIES} {root}: not a series directory (no {INDEX})")
    recorded = load_json(root / INDEX, what="series index")
    if not isinstance(recorded, dict) or recorded.get("format") != FORMAT:
        raise InputError(f"{SERIES} {root}: {INDEX} is not an {FORMAT} index")
    try:
        settings = SeriesSettings(
            person_id=_text(recorded["person_id"]),
            qi=tuple(_text(c) for c in recorded["qi"]),
            sensitive=_text(recorded["sensitive"]),
            k=_level(recorded["k"]),
            l=_level(recorded["l"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{SERIES} {root}: {INDEX} has no valid settings ({exc})") from None
    entries = recorded.get("releases")
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{SERIES} {root}: {INDEX} lists no release")
    store = SeriesStore(root, settings)
    for number, entry in enumerate(entries, start=1):
        store._check_entry(entry, number)  # malformed, missing or modified: one line
    return PublishedSeries(root, settings, tuple(entries))


def _text(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{value!r} is not a column name")
    return value


def _level(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{value!r} is not a level ≥ 1")
    return value


@dataclass(frozen=True, eq=False)
class SeriesRisk:
    """The attacker's figures of a release joined to a series.

    Attributes
    ----------
    report : SeriesReport
        ``verify_series`` on the series' releases 1..``release`` (its figures, verbatim).
    release : int
        The release's number in the series.
    in_directory : bool
        The release is the directory's release ``release`` (same SHA-256); False: it is
        joined after the directory's releases, as the next one.
    directory : str
        The directory's name (no path).
    """

    report: SeriesReport
    release: int
    in_directory: bool
    directory: str

    def after_intersection(self) -> dict[str, dict[str, float | int | None]]:
        """Per attacker, the fewest and the median number of sensitive values left after
        intersection (the candidates after intersection) over the people in two releases or
        more whose value is unchanged (None when there are none). O(P log P)."""
        r = self.report
        steady = r.repeated & ~r.changed
        out: dict[str, dict[str, float | int | None]] = {}
        for name, values in (("strong", r.strong_values), ("weak", r.weak_values)):
            chosen = values[steady]
            out[name] = {
                "fewest": int(chosen.min()) if len(chosen) else None,
                "median": float(np.median(chosen)) if len(chosen) else None,
            }
        return out

    def this_release(self) -> dict[str, int]:
        """The figures over the people of this release only: how many, how many are in an
        earlier release too, and of those with an unchanged value how many are below ℓ and
        certain (one value left) for the strong and the weak attacker and how many have fewer
        than k candidates after intersection in a release. O(P·T)."""
        r = self.report
        mine = r.present[:, -1]
        seen = mine & (r.present[:, :-1].sum(axis=1) >= 1)
        steady = seen & ~r.changed
        out = {"people": int(mine.sum()), "in_an_earlier_release": int(seen.sum())}
        for name, values in (("strong", r.strong_values), ("weak", r.weak_values)):
            out[f"{name}_below_l"] = int((steady & (values < r.l)).sum())
            out[f"{name}_certain"] = int((steady & (values == 1)).sum())
        out["below_k_after_intersection"] = int((steady & (r.fewest_after < r.k)).sum())
        out["changed"] = int((seen & r.changed).sum())
        return out

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: the release's place, ``verify_series``'s ``to_dict()`` keys unchanged,
        then ``after_intersection`` and ``this_release``. O(P log P)."""
        return {
            "directory": self.directory,
            "release": self.release,
            "in_directory": self.in_directory,
            **self.report.to_dict(),
            "after_intersection": self.after_intersection(),
            "this_release": self.this_release(),
        }


def series_risk(
    original: pd.DataFrame,
    release: pd.DataFrame,
    series: PublishedSeries,
    originals: Sequence[pd.DataFrame],
    *,
    release_sha256: str | None,
    qi: Sequence[str],
    numeric: Sequence[str] = (),
    sensitive: Sequence[str] = (),
    na_values: NAValues | None = DEFAULT_NA_VALUES,
    drop_missing: bool = False,
) -> SeriesRisk:
    """The composition attacker's figures of ``release`` joined to ``series``.

    Parameters
    ----------
    original, release : pandas.DataFrame
        The release's people (with the series' person-id column) and the release, in the cell
        format ``verify_series`` reads (``tables.io.cells.read_release_text``).
    series : PublishedSeries
        The series directory (:func:`open_published`).
    originals : sequence of pandas.DataFrame
        The people of each earlier release of the series, in its order: releases
        1..j−1 when ``release`` is the directory's release j, else every release of the
        directory. A person the series suppressed from a release is not in its table; a
        table with more rows than its release (the whole input) is narrowed to the release's
        people by the directory's private map when it holds one
        (:meth:`PublishedSeries.people`), ``original`` too when ``release`` is in the
        directory.
    release_sha256 : str or None
        The release file's SHA-256 (None: not a file; it is then joined as the next release).
    qi, numeric, sensitive : sequence of str
        The caller's columns: the QIs must be the series' (in any order), ``sensitive`` must
        name the series' sensitive column; ``numeric`` says which QIs are numbers.
    na_values, drop_missing :
        How the originals are read, as for ``verify_series``.

    Returns
    -------
    SeriesRisk

    Raises
    ------
    InputError
        No sensitive column, another sensitive column or other QIs than the series', not one
        table per earlier release, and whatever ``verify_series`` refuses.

    Notes
    -----
    Reads the series' release files (O(size)) and runs ``verify_series`` once on the j
    releases: time O(T · (view + n log n) + E log E) as documented there.
    """
    from anonymatch.tables.io.cells import read_release_text

    settings, root = series.settings, series.path
    if not list(sensitive):
        raise InputError(
            f"{SERIES} needs the series' sensitive column: "
            f"give {param('sensitive')} {settings.sensitive}"
        )
    if settings.sensitive not in set(sensitive):
        raise InputError(
            f"{SERIES} {root}: the series' sensitive column is {settings.sensitive!r}, not "
            f"one of {list(sensitive)}"
        )
    if set(qi) != set(settings.qi):
        raise InputError(
            f"{SERIES} {root}: the series' QIs are {list(settings.qi)}, not {list(qi)}"
        )
    position = series.position(release_sha256)
    earlier = series.releases if position is None else series.releases[: position - 1]
    if len(originals) != len(earlier):
        where = (
            f"the release is release {position} of the series"
            if position is not None
            else f"the release follows the series' {len(series.releases)} releases"
        )
        raise InputError(
            f"{SERIES} {root}: {where}: give one {param('series_original')} per earlier release "
            f"({len(earlier)}, in the series' order), not {len(originals)}"
        )
    releases = [*(read_release_text(root / e["release_file"]) for e in earlier), release]
    tables = [*originals, original]
    mapped = len(earlier) + (position is not None)  # a release joined after is in no map
    for t in range(1, mapped + 1):  # whole inputs narrowed to their published people
        tables[t - 1] = series.people(t, tables[t - 1], len(releases[t - 1]))
    report = verify_series(
        tables,
        releases,
        person_id=settings.person_id,
        qi=list(settings.qi),
        numeric=[c for c in numeric if c in set(settings.qi)],
        sensitive=settings.sensitive,
        k=settings.k,
        l=settings.l,
        na_values=na_values,
        drop_missing=drop_missing,
    )
    return SeriesRisk(report, len(earlier) + 1, position is not None, root.name)
