"""Publishing the next release of a series under the running intersection (issue 40).

A series release publishes classes (every class ≥ k people, all generalized to one cell, the
sensitive column distinct-ℓ-diverse per class); each published row carries its own person's
sensitive value. Person p's **running intersection** R_p is the set of values shown by p's
class in *every* release p was published in (∩ over those releases of vals(C_t(p))). The
invariant: |R_p| ≥ ℓ for every person, whose value changed or not, so the composition attacker
who intersects the values shown to p across releases keeps ≥ ℓ values (docs/guarantees/
series.md §3). Unlike signature equality (m-invariance), it only asks of the next release that
each continuing p's class show ≥ ℓ values of R_p — anyone may join any class.

The next release (:func:`publish_next`):

1. reads every earlier person's R_p from the private map and the published files
   (:func:`running_intersection`);
2. clusters this year's people exactly as an independent release
   (``methods.diverse.diverse_clusters``);
3. repairs the people whose class shows fewer than ℓ values of their R_p by the cheapest local
   change in GCP — a move to another class, a holder of a missing value pulled in from a
   neighbouring class, an exchange with a person of a nearby class, a merge of two classes —
   or suppresses them (not published, counted: no counterfeit rows), ``series.repair``;
4. publishes through the ordinary release machinery (the same cells, a shuffle from OS entropy
   unless a seed, the k-anonymity verifier and the ℓ-diversity check, ``publish``) and checks
   the invariant again for everyone of the release from the published files and the private
   map (:func:`check_intersections`): any failure is a ``VerificationError``, nothing written.

The first release of a series is an ordinary classes release plus the map.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.params import param, require_frame
from anonymatch.core.release import Produced, publish, refuse
from anonymatch.tables.series.store import SeriesSettings, SeriesStore, value_text

SERIES = param("series")
"""The series directory's parameter as messages name it (the CLI: ``--series``)."""

if TYPE_CHECKING:
    from anonymatch.tables.columns.schema import EncodedQI
    from anonymatch.tables.job import TableJob
    from anonymatch.tables.models.sensitive import SensitiveTarget
    from anonymatch.tables.pipeline import Release


@dataclass
class SeriesRelease:
    """The next release of a series, verified, before it is written.

    Attributes
    ----------
    release : Release
        The release (table, cells, graph, encoded QIs, manifest with its ``series`` block).
    rows : pandas.DataFrame
        This release's rows of the private map (``store.MAP_COLUMNS``).
    number : int
        The release's number in the series (1 for the first).
    """

    release: Release
    rows: pd.DataFrame
    number: int


def series_settings(job: TableJob, person_id: str) -> SeriesSettings:
    """The settings of a series run, or ``InputError`` (exit 2) for a job a series cannot run.

    A series needs exactly one sensitive column under distinct ℓ-diversity, published as the
    classes of the freeform methods (``methods.diverse``), in memory, without t-closeness, a
    population criterion, a time limit, a suppression limit or per-record levels; the person
    id a column that is neither a QI nor the sensitive column. O(columns)."""
    models = job.models
    if job.k is None or job.method.levels:
        raise InputError(f"{SERIES} needs one level k ({param('k')}), not per-record levels")
    if len(models) != 1 or models[0].l is None or models[0].diversity != "distinct":
        raise InputError(
            f"{SERIES} needs one sensitive column under distinct l-diversity "
            f"({param('sensitive')} S {param('l')} L)"
        )
    if models[0].t is not None:
        raise InputError(f"{SERIES} supports distinct l-diversity only, not t-closeness")
    if job.unprotected:
        raise InputError(f"{SERIES} protects every sensitive column: drop {param('l')} 1 columns")
    if not job.method.partitioned:  # the classes are the freeform methods' (issue 36)
        raise InputError(
            f"{SERIES} builds the classes of the freeform methods, "
            f"not {param('method')} {job.method.name}"
        )
    if job.structure != "classes":
        raise InputError(f"{SERIES} publishes classes, not {param('structure')} {job.structure}")
    if job.criteria:
        raise InputError(f"{SERIES} does not support a population criterion")
    if job.limit is not None:
        raise InputError(f"{SERIES} does not support {param('time_limit')}")
    if job.suppression_limit > 0:
        raise InputError(f"{SERIES} does not support {param('suppression_limit')}")
    if person_id in job.schema.qi or person_id == models[0].column:
        raise InputError(
            f"{param('person_id')} {person_id!r} must be neither a QI nor the sensitive column"
        )
    return SeriesSettings(
        person_id, tuple(job.schema.qi), models[0].column, job.k, int(models[0].l)
    )


def series_job(job: TableJob, person_id: str) -> TableJob:
    """The job with the person-id column among its identifiers (never published). O(1)."""
    identifiers = list(job.schema.identifiers)
    if person_id in identifiers:
        return job
    return job.replace({"identifiers": [*identifiers, person_id]})


def publish_series(
    data: pd.DataFrame,
    job: TableJob,
    series: str | os.PathLike[str],
    person_id: str,
) -> Release:
    """Publish the next release of the series in directory ``series``, verified, and record it
    there (the release, its manifest, the private map, the index): what
    ``anonymatch.tables.anonymize(data, series=…, person_id=…, …)`` runs.

    Parameters
    ----------
    data : pandas.DataFrame
        This release's original table, one row per person, with the person-id column.
    job : TableJob
        The run (``tables.anonymize``'s keywords, validated); a series needs ``sensitive``
        with distinct ``l``.
    series : path-like
        The series directory (created by the first release; docs/series.md).
    person_id : str
        The steward's person-id column: links a person across releases, never published.

    Returns
    -------
    Release
        As :func:`anonymatch.tables.anonymize`; ``report["series"]`` states the release's
        number, the previous releases' SHA-256, the counts (continuing, new, changed,
        departed, suppressed), the repairs and the running-intersection check.

    Raises
    ------
    InputError
        Bad parameters, a job a series cannot run (:func:`series_settings`), a kept column
        (:func:`refuse_kept_columns`), a person id missing or repeated, a series directory of
        other settings or modified.
    InfeasibleError
        No class can be formed (k larger than the people, ℓ more than their values).
    VerificationError
        The release or the invariant failed verification; nothing written.

    Notes
    -----
    Time: that of ``diverse_clusters`` (as an independent release), plus the repairs
    (``series.repair``: O(violations · (classes · (d + values) + n))), plus reading the earlier
    releases and the verification. Memory O(n · (d + values) + map).
    """
    from anonymatch.core.files import all_or_nothing

    settings = series_settings(job, person_id)
    store = SeriesStore.open(series, settings)
    made = publish_next(require_frame(data, "data"), series_job(job, person_id), store)
    with all_or_nothing():
        release = made.release
        store.commit(release.table, release.cells, release.qi, release.report, made.rows)
    return release


class SeriesRun:
    """The series of a command-line run (``anonymize --series DIR --person-id COLUMN``):
    opened and checked before the input is read (:meth:`open`), the release made in memory
    (:meth:`publish`), recorded in the directory once the command's own outputs are written
    (:meth:`commit`; the CLI commits every output together, ``core.files.all_or_nothing``).

    Parameters
    ----------
    store : SeriesStore
        The opened directory.
    job : TableJob
        The run, the person id among its identifiers.
    """

    def __init__(self, store: SeriesStore, job: TableJob) -> None:
        self.store = store
        self.job = job
        self.made: SeriesRelease | None = None

    @classmethod
    def open(
        cls,
        directory: str | None,
        person_id: str | None,
        job: TableJob,
        refused: str | None = None,
    ) -> SeriesRun | None:
        """The run's series, or None without ``--series``. ``refused``: why the command's
        other options cannot make a series release (the streamed path, a database, …), or
        None. Raises ``InputError`` (one line, exit 2): ``--series`` without ``--person-id``
        or the reverse, ``refused``, a job a series cannot run (:func:`series_settings`), a
        directory of other settings or modified (``SeriesStore.open``). O(the directory's
        releases, for their digests)."""
        if directory is None and person_id is None:
            return None
        if directory is None or person_id is None:
            raise InputError(f"{SERIES} DIR and {param('person_id')} COLUMN go together")
        if refused is not None:
            raise InputError(f"{SERIES} publishes in memory: {refused}")
        settings = series_settings(job, person_id)
        return cls(SeriesStore.open(directory, settings), series_job(job, person_id))

    def publish(self, data: pd.DataFrame) -> Release:
        """The next release of the series from ``data`` (:func:`publish_next`), kept for
        :meth:`commit`."""
        self.made = publish_next(data, self.job, self.store)
        return self.made.release

    def summary(self) -> str:
        """One line on the release made: its number in the series and the people counted."""
        assert self.made is not None, "publish first"
        block = self.made.release.report["series"]
        assert isinstance(block, dict)
        counts = ", ".join(f"{n:,} {what}" for what, n in block["counts"].items())
        return f"series {self.store.path}: release {block['release']} ({counts})"

    def commit(self, manifest: Mapping[str, Any], csv_safe: bool = True) -> None:
        """Record the release published by :meth:`publish` in the directory, with its
        finished ``manifest`` (``SeriesStore.commit``)."""
        assert self.made is not None, "publish first"
        release = self.made.release
        self.store.commit(
            release.table, release.cells, release.qi, manifest, self.made.rows, csv_safe
        )


def publish_next(data: pd.DataFrame, job: TableJob, store: SeriesStore) -> SeriesRelease:
    """The next release of ``store``'s series from ``data`` (module docstring), verified;
    nothing is written (``SeriesStore.commit`` writes it).

    Parameters
    ----------
    data : pandas.DataFrame
        This release's original table with the person-id column.
    job : TableJob
        The run (``series_job``: the person id among the identifiers).
    store : SeriesStore
        The opened series directory.

    Returns
    -------
    SeriesRelease

    Raises
    ------
    InputError, InfeasibleError, VerificationError
        As :func:`publish_series`.

    Notes
    -----
    As :func:`publish_series`.
    """
    from anonymatch.tables.job import plan
    from anonymatch.tables.methods.diverse import diverse_clusters
    from anonymatch.tables.pipeline import prepare, sensitive_target

    started = time.perf_counter()
    settings = store.settings
    refuse_kept_columns(list(data.columns), job, settings)
    assert job.k is not None
    k = job.k
    data, enc, dropped = prepare(data, job.schema, job.na, job.drop_missing)
    ids = _person_ids(data, settings.person_id)
    values = value_text(data[settings.sensitive])
    run = plan(job, rows=enc.n, missing=int(enc.missing_records().sum()) if enc.has_missing else 0)
    target = sensitive_target(data, job.models)
    assert target is not None
    t0 = time.perf_counter()
    size = run.partition_size or enc.n
    parts = _parts(store)
    repairs: dict[str, int] = {}
    if parts:
        previous = _previous(parts, ids)
        labels, counts, repairs = _next_classes(enc, target, ids, values, previous, k, size)
    else:
        first = diverse_clusters(enc, k, target, size)[0].classes
        assert first is not None  # a graph of classes
        labels = first[0]
        counts = {"continuing": 0, "new": enc.n, "changed": 0, "departed": 0}
    t_build = time.perf_counter() - t0
    keep = np.flatnonzero(labels >= 0)
    suppressed = enc.n - len(keep)
    if len(keep) == 0:
        raise InfeasibleError("infeasible: every person of this release would be suppressed")
    if suppressed:
        data = data.iloc[keep].reset_index(drop=True)
        enc = enc.take(keep)
        ids, values, labels = ids[keep], values[keep], labels[keep]
    classes = np.unique(labels, return_inverse=True)[1]
    timing = {"build": t_build, "started": started}
    release, position = _release(data, enc, job, run, classes, (dropped, suppressed), timing)
    rows = pd.DataFrame(
        {
            "person_id": ids,
            "release": store.next_release,
            "row": position,
            "class": classes,
        }
    )
    published = value_text(release.table[settings.sensitive])
    current = (ids, classes, published[position])
    checked = check_intersections(parts, current, settings.l)
    refuse(checked["passed"] is True, checked.get("reason"))
    release.report["series"] = {
        "release": store.next_release,
        "previous_sha256": store.previous_sha256,
        "person_id": "the steward's person-id column, kept in a private map, never published",
        "invariant": "running intersection: for every person, the values their classes showed "
        "in all their releases number at least l",
        "counts": {**counts, "suppressed": suppressed},
        "repairs": repairs,
        "verification": checked,
    }
    return SeriesRelease(release, rows, store.next_release)


def refuse_kept_columns(columns: Sequence[Any], job: TableJob, settings: SeriesSettings) -> None:
    """``InputError`` (exit 2) if the input has a **kept column**: one published unchanged
    (``schema.output_columns``) that is neither a QI, the sensitive column nor the person id.
    Published unchanged in every release, its cells link a person's rows across releases (the
    attacker intersects them and reads the row's value), which the series guarantee does not
    cover (docs/guarantees/series.md §1). O(columns)."""
    shown = {settings.person_id, settings.sensitive, *settings.qi}
    kept = [str(c) for c in job.schema.output_columns(columns) if c not in shown]
    if kept:
        names = ", ".join(repr(c) for c in kept)
        raise InputError(
            f"{SERIES} refuses kept columns ({names}): published unchanged in every release, "
            f"they link a person's rows across releases; drop them with {param('identifiers')} or "
            f"generalize them with {param('qi')}"
        )


def _person_ids(data: pd.DataFrame, column: str) -> np.ndarray:
    """The person ids as texts; ``InputError`` if one is missing or repeated. O(n)."""
    if column not in data.columns:
        raise InputError(f"{param('person_id')} column {column!r} is not in the input")
    raw = data[column]
    if raw.isna().any():
        raise InputError(f"{param('person_id')} column {column!r} has a missing value")
    ids = np.asarray(value_text(raw), dtype=object)
    if len(np.unique(ids)) != len(ids):
        raise InputError(f"{param('person_id')} column {column!r} holds a person twice")
    return ids


Part = tuple[np.ndarray, np.ndarray, np.ndarray]
"""One release as the series reads it: each published person's id (text), class, and the
value shown on their row (text, ``store.value_text``)."""


@dataclass(frozen=True)
class Running:
    """The running intersection of the people of a series' releases.

    Attributes
    ----------
    person_ids : numpy.ndarray
        (P,) the people published so far (text), sorted.
    texts : numpy.ndarray
        (U,) the sensitive value texts shown so far, sorted.
    kept : numpy.ndarray
        (P, U) bool: R_p, the values every class of person p showed.
    last : numpy.ndarray
        (P,) the value shown on p's row in the last release p was in.
    departed : int
        People of the last release absent from this one (0 until set by :func:`_previous`).
    """

    person_ids: np.ndarray
    texts: np.ndarray
    kept: np.ndarray
    last: np.ndarray
    departed: int = 0

    def find(self, ids: np.ndarray) -> np.ndarray:
        """Each of ``ids``' position in :attr:`person_ids`, −1 if never published. O(m log P)."""
        at = np.searchsorted(self.person_ids, ids)
        at = np.minimum(at, max(len(self.person_ids) - 1, 0))
        found = len(self.person_ids) > 0
        hit = (self.person_ids[at] == ids) if found else np.zeros(len(ids), dtype=bool)
        return np.where(hit, at, -1)


def running_intersection(parts: Sequence[Part]) -> Running:
    """R_p = ∩ over the releases t containing p of vals(C_t(p)), for every person of
    ``parts`` (the releases in order). One sort of the ids and of the values, then per
    release a classes × values table. O(N log N + Σ classes · U) for N map rows."""
    every_id = np.concatenate([np.asarray(p[0], dtype=object) for p in parts])
    every_value = np.concatenate([np.asarray(p[2], dtype=object) for p in parts])
    person_ids, person = np.unique(every_id, return_inverse=True)
    texts, value = np.unique(every_value, return_inverse=True)
    person, value = person.reshape(-1), value.reshape(-1)
    kept = np.ones((len(person_ids), len(texts)), dtype=bool)
    last = np.empty(len(person_ids), dtype=object)
    start = 0
    for ids, klass, shown in parts:
        stop = start + len(ids)
        who, what = person[start:stop], value[start:stop]
        _, inverse = np.unique(klass, return_inverse=True)
        inverse = inverse.reshape(-1)
        shows = np.zeros((int(inverse.max(initial=-1)) + 1, len(texts)), dtype=bool)
        shows[inverse, what] = True
        kept[who] &= shows[inverse]
        last[who] = np.asarray(shown, dtype=object)
        start = stop
    return Running(person_ids, texts, kept, last)


def _parts(store: SeriesStore) -> list[Part]:
    """The series' releases so far, from the private map and the published files. O(map +
    releases)."""
    table = store.read_map()
    parts: list[Part] = []
    for number in range(1, store.next_release):
        part = table[table["release"] == number]
        shown = store.release_values(number)
        rows = part["row"].to_numpy()
        if len(rows) and (rows.min() < 0 or rows.max() >= len(shown)):
            raise InputError(f"{SERIES}: the private map names a row release {number} lacks")
        ids = part["person_id"].to_numpy(dtype=object)
        parts.append((ids, part["class"].to_numpy(), shown[rows]))
    return parts


def _previous(parts: Sequence[Part], ids: np.ndarray) -> Running:
    """The running intersection of the earlier releases' people, and how many people of the
    last release are not in this one (``ids``). O(that of :func:`running_intersection`)."""
    running = running_intersection(parts)
    here = set(ids.tolist())
    departed = sum(pid not in here for pid in parts[-1][0].tolist())
    return dataclasses.replace(running, departed=departed)


def _next_classes(
    enc: EncodedQI,
    target: SensitiveTarget,
    ids: np.ndarray,
    values: np.ndarray,
    previous: Running,
    k: int,
    size: int,
) -> tuple[np.ndarray, dict[str, int], dict[str, int]]:
    """Class labels of this release's people (−1: suppressed) keeping the running intersection
    (module docstring, steps 1–2), the counts (continuing, new, changed, departed) and the
    repairs made. O(diverse_clusters + repair)."""
    from anonymatch.tables.methods.diverse import diverse_clusters
    from anonymatch.tables.order import lexicographic_order
    from anonymatch.tables.series.repair import repair

    n = enc.n
    codes = target.codes[:, 0]
    graph = diverse_clusters(enc, k, target, size)[0]
    assert graph.classes is not None  # a graph of classes
    labels = graph.classes[0]
    at = previous.find(ids)
    seen = at >= 0
    same = seen & (previous.last[np.maximum(at, 0)] == values)
    counts = {
        "continuing": int(same.sum()),
        "new": int((~seen).sum()),
        "changed": int((seen & ~same).sum()),
        "departed": previous.departed,
    }
    # R_p over this release's value codes: a value nobody holds this year cannot be shown
    n_values = int(target.offsets[1])
    text_of = np.empty(n_values, dtype=object)
    text_of[codes] = values
    column = np.searchsorted(previous.texts, text_of.astype(str))
    column = np.minimum(column, max(len(previous.texts) - 1, 0))
    known = previous.texts[column] == text_of if len(previous.texts) else np.zeros(0, bool)
    kept = np.ones((n, n_values), dtype=bool)
    kept[seen] = previous.kept[at[seen]][:, column] & known[None, :]
    rank = np.empty(n, dtype=np.int64)
    rank[lexicographic_order(enc)] = np.arange(n)
    ell = int(target.ls[0])
    labels, repairs = repair(enc, codes, labels, kept, rank, k, ell)
    return labels, counts, repairs


def check_intersections(
    parts: Sequence[Part],
    current: Part,
    l: int,  # noqa: E741 - the model's own name
) -> dict[str, object]:
    """The invariant, from the published files and the private map (``parts``: the earlier
    releases, ``current``: this one): every person of this release keeps ≥ ℓ values in
    R_p = ∩ over their releases of their class's values. Returns the check as the manifest
    states it (``passed``, ``reason`` on a failure). O(that of :func:`running_intersection`)."""
    method = "running intersections from the published files and the private map"
    running = running_intersection([*parts, current])
    mine = running.find(np.asarray(current[0], dtype=object))
    left = running.kept[mine].sum(axis=1)
    if len(left) and left.min() < l:
        return {
            "passed": False,
            "method": method,
            "reason": f"{int((left < l).sum())} people keep fewer than l = {l} values after "
            f"intersecting their classes' values (fewest {int(left.min())})",
        }
    return {"passed": True, "method": method, "people_checked": len(left)}


def _release(
    data: pd.DataFrame,
    enc: EncodedQI,
    job: TableJob,
    run: Any,
    labels: np.ndarray,
    left_out: tuple[int, int],
    timing: Mapping[str, float],
) -> tuple[Release, np.ndarray]:
    """The verified release of classes ``labels`` (0..G−1, each ≥ k people) over ``data``
    (``left_out``: the rows dropped for a missing QI and the people suppressed before it;
    ``timing``: the build's seconds and the run's start), as
    the in-memory path makes a classes release (``tables.pipeline.anonymize``): each class's
    one cell, every row its own person's other columns, the rows shuffled (OS entropy unless
    the job's seed), the k-anonymity verifier and the sensitive models' check from what is
    published, the leakage and known-person checks, ``core.release.publish``. Returns the
    release and each person's row in it. O(n·d) plus the verification."""
    from anonymatch.tables.io.cells import parse_cells
    from anonymatch.tables.models.certified import SensitiveView
    from anonymatch.tables.models.levels import KAnonymity
    from anonymatch.tables.pipeline import (
        Release,
        _known_person,
        _release_table,
        input_counts,
        plan_blocks,
        release_loss,
        sensitive_claims,
    )
    from anonymatch.tables.recode import recode
    from anonymatch.tables.risk.checks import ReleaseView, release_checks
    from anonymatch.tables.verify import verify

    assert job.k is not None
    k, schema = job.k, job.schema
    dropped, suppressed = left_out
    t0 = time.perf_counter()
    graph = GeneralizationGraph.from_classes(labels)
    recoded = recode(graph, enc)  # published record i: person i's class cell, i's own columns
    rng = np.random.default_rng(job.seed)
    shuffle = rng.permutation(enc.n)  # output position p shows person shuffle[p]
    position = np.empty(enc.n, dtype=np.int64)
    position[shuffle] = np.arange(enc.n)
    cells = recoded.take(shuffle)
    table = _release_table(data, schema, enc, cells, shuffle)
    published_graph = graph.with_published_order(position)
    t_recode = time.perf_counter() - t0
    t0 = time.perf_counter()
    published = parse_cells(table, enc)  # what is written is what is verified
    check = verify(published, enc, k, blocks=published_graph.blocks())
    refuse(check.passed, check.reason)
    sensitive = job.check.sensitive_models.check(SensitiveView(published, enc, table, data))
    refuse(sensitive.passed, sensitive.reason)
    t_verify = time.perf_counter() - t0
    t0 = time.perf_counter()
    known = _known_person(published, enc, table, data, schema, (k, []), position)
    models_claim, models_figures = sensitive_claims(job.check.sensitive_models, sensitive, k, [])
    suppression, run_plan = plan_blocks(run, job)
    loss = release_loss(cells, enc, suppressed)
    produced = Produced(
        kind="table",
        method=job.method.name,
        parameters={**schema.roles(), "partition_size": run.partition_size, **suppression},
        guarantee=KAnonymity(k).describe(),
        # the people of this release, as the verifier counts them: the published ones have a
        # k-factor, ``suppressed`` were left out (no class kept their intersection ≥ ℓ)
        verification=dataclasses.replace(
            check, n_original=check.n_original + suppressed, suppressed=suppressed
        ).to_dict(),
        loss=loss,
        seconds={
            "build": timing["build"],
            "recode": t_recode,
            "verify": t_verify,
            "leakage": 0.0,  # publish's checks (leakage, headline) add their time
            "known_person": time.perf_counter() - t0,
            "wall": time.perf_counter() - timing["started"],
        },
        seeded=job.seed is not None,
        records_in=enc.n + dropped + suppressed,
        records_out=enc.n,
        input_extra=input_counts(enc, dropped, suppressed),
        models=models_claim,
        model_figures=models_figures,
        plan=run_plan,
    )
    report = publish(  # the release checks (identifiers, leakage, headline) as every table path
        produced,
        checks=release_checks("table", "memory", schema.identifiers, job.strict),
        shown=ReleaseView.of(data, enc, published, table, schema),
        risk={"known_person": known},
    )
    return Release(table, cells, published_graph, enc, report), position
