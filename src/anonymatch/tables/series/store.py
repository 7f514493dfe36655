"""The series directory: the releases of a series, their index and the private map.

A series directory ``DIR`` holds (docs/series.md)::

    DIR/series.json              the index: the series' settings and one entry per release
    DIR/001.release.csv          release 1 as published (with its sidecar .schema.json)
    DIR/001.manifest.json        its manifest
    ...
    DIR/private/                 mode 0700, never published
    DIR/private/map.parquet      mode 0600: person_id, release, row, class

``series.json`` is publishable: it names the columns, k and ℓ, each release's files and their
SHA-256, never a person id nor a seed. The private map links the steward's person id to the
row and class of every release the person was published in; it is written atomically, is
never named in a published file (a manifest says only "a private map"), and is what the next
release reads each person's running intersection from (``tables.series.publish``).

Opening a directory checks it against the run: the settings in ``series.json`` must be the
run's (person id, QIs, sensitive column, k, ℓ), every listed release file must still have the
SHA-256 recorded when it was published, the private directory and the map must not be
readable by others; any failure is one ``InputError`` line (exit 2).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from anonymatch.core.errors import InputError
from anonymatch.core.files import current_path, sha256_file, write_atomically
from anonymatch.core.params import param

SERIES = param("series")
"""The series directory's parameter as messages name it (the CLI: ``--series``)."""

if TYPE_CHECKING:
    from anonymatch.tables.columns.schema import EncodedQI
    from anonymatch.tables.recode import GeneralizedQI

INDEX = "series.json"
"""The index file of a series directory."""
PRIVATE = "private"
"""The private subdirectory (mode 0700) holding the map."""
MAP = "map.parquet"
"""The private map file (mode 0600) in ``PRIVATE``."""
FORMAT = "anonymatch-series/1"
"""The ``format`` of ``series.json``."""
MAP_COLUMNS = ("person_id", "release", "row", "class")
"""The private map's columns: the steward's person id (text), the release number, the
person's row in that release file (0-based data row) and the class id in that release."""


@dataclass(frozen=True)
class SeriesSettings:
    """What every release of a series shares: the person-id column, the QIs, the sensitive
    column and the levels k and ℓ (distinct ℓ-diversity)."""

    person_id: str
    qi: tuple[str, ...]
    sensitive: str
    k: int
    l: int  # noqa: E741 - the model's own name

    def to_dict(self) -> dict[str, object]:
        """The settings as ``series.json`` records them. O(columns)."""
        return {
            "person_id": self.person_id,
            "qi": list(self.qi),
            "sensitive": self.sensitive,
            "k": self.k,
            "l": self.l,
        }

    def mismatch(self, recorded: Mapping[str, Any]) -> str | None:
        """The first setting of ``recorded`` (a ``series.json``) that differs from this run's,
        in words, or None. O(columns)."""
        mine = self.to_dict()
        for key, value in mine.items():
            theirs = recorded.get(key)
            if key == "qi" and isinstance(theirs, list):
                theirs = list(theirs)
            if theirs != value:
                return f"{key} {theirs!r} (this run: {value!r})"
        return None


def _private_mode_problem(path: Path, directory: bool) -> str | None:
    """Why ``path`` is not private enough (group or others may read it), or None. O(1)."""
    mode = stat.S_IMODE(path.lstat().st_mode)
    if path.is_symlink():
        return f"{path} is a symbolic link"
    if directory != path.is_dir():
        return f"{path} is not a {'directory' if directory else 'regular file'}"
    if mode & 0o077:
        return f"{path} has mode {mode:04o}; the private map must not be readable by others"
    return None


@dataclass
class SeriesStore:
    """A series directory opened for the next release.

    Attributes
    ----------
    path : Path
        The directory.
    settings : SeriesSettings
        The run's settings (checked against ``series.json`` when the series exists).
    releases : list of dict
        The index entries of the releases published so far (``release``, ``manifest``,
        ``release_file``, ``sha256``), in order.
    """

    path: Path
    settings: SeriesSettings
    releases: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def open(cls, path: str | os.PathLike[str], settings: SeriesSettings) -> SeriesStore:
        """Open (or prepare to create) the series directory ``path`` for a run.

        Parameters
        ----------
        path : path-like
            The series directory; it need not exist yet (the first release creates it), but
            an existing directory without ``series.json`` must be empty.
        settings : SeriesSettings
            The run's settings.

        Returns
        -------
        SeriesStore

        Raises
        ------
        InputError
            ``series.json`` is unreadable or names other settings than the run's; a release
            file is missing or its SHA-256 is not the one recorded (the directory was
            modified); the private directory or map is readable by others.

        Notes
        -----
        O(size of the release files) to check their digests.
        """
        from anonymatch.core.documents import load_json

        root = Path(path)
        store = cls(root, settings)
        if root.exists() and not root.is_dir():
            raise InputError(f"{SERIES} {root}: not a directory")
        index = root / INDEX
        if not index.exists():
            # an empty private directory may stay from a run refused after creating it
            if root.exists() and any(
                p.name != PRIVATE or not p.is_dir() or any(p.iterdir()) for p in root.iterdir()
            ):
                raise InputError(
                    f"{SERIES} {root}: not a series directory (no {INDEX}) and not empty"
                )
            return store
        recorded = load_json(index, what="series index")
        if not isinstance(recorded, dict) or recorded.get("format") != FORMAT:
            raise InputError(f"{SERIES} {root}: {INDEX} is not an {FORMAT} index")
        differs = settings.mismatch(recorded)
        if differs is not None:
            raise InputError(f"{SERIES} {root}: the series was published with {differs}")
        entries = recorded.get("releases")
        if not isinstance(entries, list) or not entries:
            raise InputError(f"{SERIES} {root}: {INDEX} lists no release")
        for number, entry in enumerate(entries, start=1):
            store._check_entry(entry, number)
        store.releases = list(entries)
        for problem in (
            _private_mode_problem(root / PRIVATE, True),
            _private_mode_problem(root / PRIVATE / MAP, False),
        ):
            if problem is not None:
                raise InputError(f"{SERIES}: {problem}")
        return store

    def _check_entry(self, entry: object, number: int) -> None:
        """Refuse an index entry that is malformed or whose release file changed. O(file)."""
        keys = ("release", "manifest", "release_file", "sha256")
        if not isinstance(entry, dict) or any(key not in entry for key in keys):
            raise InputError(f"{SERIES} {self.path}: {INDEX} entry {number} is malformed")
        if entry["release"] != number:
            raise InputError(
                f"{SERIES} {self.path}: {INDEX} entry {number} is release {entry['release']!r}"
            )
        for key in ("manifest", "release_file"):
            name = entry[key]
            if (
                not isinstance(name, str)
                or Path(name).name != name
                or not (self.path / name).is_file()
            ):
                raise InputError(
                    f"{SERIES} {self.path}: release {number}'s {key} {name!r} is missing"
                )
        digest = sha256_file(self.path / entry["release_file"])
        if digest != entry["sha256"]:
            raise InputError(
                f"{SERIES} {self.path}: {entry['release_file']} was modified since it was "
                f"published (SHA-256 {digest[:12]}…, recorded {str(entry['sha256'])[:12]}…)"
            )

    @property
    def next_release(self) -> int:
        """The number of the release being made (1 for a new series)."""
        return len(self.releases) + 1

    @property
    def previous_sha256(self) -> list[str]:
        """The SHA-256 of every release published so far, in order."""
        return [str(entry["sha256"]) for entry in self.releases]

    def release_values(self, release: int) -> np.ndarray:
        """The sensitive column of release ``release`` as published, one text per row (the
        file's data rows in order; ``value_text``). O(file size)."""
        from anonymatch.tables.io.cells import read_release_text

        entry = self.releases[release - 1]
        frame = read_release_text(self.path / entry["release_file"])
        column = self.settings.sensitive
        if column not in frame.columns:
            raise InputError(f"{SERIES}: release {release} has no column {column!r}")
        return value_text(frame[column])

    def read_map(self) -> pd.DataFrame:
        """The private map (columns :data:`MAP_COLUMNS`; empty for a new series), checked:
        releases within the series, no person twice in one release. O(map rows)."""
        if not self.releases:
            return pd.DataFrame({c: pd.Series(dtype=object if c == "person_id" else "int64")
                                 for c in MAP_COLUMNS})  # fmt: skip
        frame = pd.read_parquet(self.path / PRIVATE / MAP)
        if list(frame.columns) != list(MAP_COLUMNS):
            raise InputError(f"{SERIES}: the private map's columns are not {list(MAP_COLUMNS)}")
        frame["person_id"] = frame["person_id"].astype(str)
        release = frame["release"].to_numpy()
        if len(frame) and (release.min() < 1 or release.max() > len(self.releases)):
            raise InputError(f"{SERIES}: the private map names a release the index lacks")
        if frame.duplicated(["person_id", "release"]).any():
            raise InputError(f"{SERIES}: the private map holds a person twice in one release")
        return frame

    def commit(
        self,
        table: pd.DataFrame,
        cells: GeneralizedQI,
        qi: EncodedQI,
        manifest: Mapping[str, Any],
        rows: pd.DataFrame,
        csv_safe: bool = True,
    ) -> None:
        """Write release :attr:`next_release` into the directory: the release file (CSV, with
        its sidecar), its manifest, the private map extended by ``rows`` (mode 0600 in a 0700
        directory) and the index, each atomically (inside ``core.files.all_or_nothing`` all
        together). ``rows``: the map rows of this release (:data:`MAP_COLUMNS`). O(release +
        map)."""
        from anonymatch.core.manifest import write_manifest
        from anonymatch.tables.io.cells import write_release

        number = self.next_release
        self.path.mkdir(parents=True, exist_ok=True)
        private = self.path / PRIVATE
        private.mkdir(mode=0o700, exist_ok=True)
        os.chmod(private, 0o700)
        release_file = f"{number:03d}.release.csv"
        manifest_file = f"{number:03d}.manifest.json"
        write_release(self.path / release_file, table, cells, qi, csv_safe)
        write_manifest(str(self.path / manifest_file), dict(manifest))
        whole = pd.concat([self.read_map(), rows[list(MAP_COLUMNS)]], ignore_index=True)
        whole = whole.astype(
            {"person_id": str, "release": "int64", "row": "int64", "class": "int64"}
        )
        write_atomically(private / MAP, lambda tmp: _write_private(whole, tmp))
        entry = {
            "release": number,
            "manifest": manifest_file,
            "release_file": release_file,
            "sha256": sha256_file(current_path(self.path / release_file)),
        }
        index = {"format": FORMAT, **self.settings.to_dict(), "releases": [*self.releases, entry]}
        text = json.dumps(index, indent=2) + "\n"
        write_atomically(self.path / INDEX, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        self.releases.append(entry)


def _write_private(frame: pd.DataFrame, tmp: Path) -> None:
    """The map as Parquet into ``tmp``, kept at mode 0600. O(rows)."""
    frame.to_parquet(tmp, index=False)
    os.chmod(tmp, 0o600)


def value_text(values: pd.Series | Sequence[object]) -> np.ndarray:
    """Sensitive values as comparable texts, the same for a value read from the steward's
    table and from a published CSV: a whole number as its digits (``3`` and ``3.0`` alike),
    other numbers by ``repr``, text as it is, a missing value as ``"\\x00NA"``. O(n)."""
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(pd.Series(values, dtype=object).tolist()):
        if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
            out[i] = "\x00NA"
        elif isinstance(v, bool | np.bool_):
            out[i] = str(bool(v))
        elif isinstance(v, int | np.integer):
            out[i] = str(int(v))
        elif isinstance(v, float | np.floating):
            out[i] = str(int(v)) if float(v).is_integer() else repr(float(v))
        else:
            out[i] = str(v)
    return out
