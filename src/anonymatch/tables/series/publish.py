"""Publishing the next release of a series under m-invariance on classes (issue 40).

A series release publishes classes (every class ≥ k people, all generalized to one cell, the
sensitive column distinct-ℓ-diverse per class); each published row carries its own person's
sensitive value. A person's **signature** in a release is the set of distinct sensitive values
of their class. The invariant (Xiao and Tao, SIGMOD 2007, on classes): every person published
in two releases with an unchanged sensitive value has the same signature in both, so the
composition attacker who intersects the values shown to a person across releases learns the
signature, ≥ ℓ values, never fewer (docs/series.md).

The next release (:func:`publish_next`):

1. reads each continuing person's signature from the last release they were published in
   (private map → class → that class's values in the published file);
2. buckets the people whose value is unchanged by their class there (followed forward to the
   class most of its members went to, so that people coming back join their classmates); a
   bucket missing a value of its signature takes a new person holding it, one short of k
   people takes new people holding values of the signature, all buckets at once by a
   minimum-cost assignment (``series.fill``); the buckets left incomplete are merged by
   signature and filled again; what is still incomplete joins the nearest class of its
   signature, or is **suppressed** (not published, counted: no counterfeit rows);
3. splits a bucket holding room for several classes into classes of ≥ k people each showing
   the whole signature (``methods.diverse.diverse_clusters`` with ℓ = |signature| on the
   bucket alone: every class then shows exactly the signature);
4. lets the remaining new people (and those whose value changed) form ordinary ℓ-diverse
   classes (``diverse_clusters``), or, when they are too few for that, join the nearest class
   whose signature holds their value (suppressed if none does);
5. publishes through the ordinary release machinery (the same cells, a shuffle from OS
   entropy unless a seed, the k-anonymity verifier and the ℓ-diversity check, ``publish``) and
   checks the invariant again from the published file and the private map
   (:func:`check_signatures`): any failure is a ``VerificationError``, nothing written.

The first release of a series is an ordinary classes release plus the map.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.params import require_frame
from anonymatch.core.release import Produced, publish, refuse
from anonymatch.tables.series.store import SeriesSettings, SeriesStore, value_text

if TYPE_CHECKING:
    from anonymatch.tables.columns.schema import EncodedQI
    from anonymatch.tables.job import TableJob
    from anonymatch.tables.models.sensitive import SensitiveTarget
    from anonymatch.tables.pipeline import Release

Signature = tuple[str, ...]
"""The distinct sensitive values of a class, sorted (value texts of ``store.value_text``)."""


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
        raise InputError("--series needs one level k (-k), not per-record levels")
    if len(models) != 1 or models[0].l is None or models[0].diversity != "distinct":
        raise InputError(
            "--series needs one sensitive column under distinct l-diversity (--sensitive S --l L)"
        )
    if models[0].t is not None:
        raise InputError("--series supports distinct l-diversity only, not t-closeness")
    if job.unprotected:
        raise InputError("--series protects every sensitive column: drop --l 1 columns")
    if not job.method.partitioned:  # the classes are the freeform methods' (issue 36)
        raise InputError(
            f"--series builds the classes of the freeform methods, not --method {job.method.name}"
        )
    if job.structure != "classes":
        raise InputError(f"--series publishes classes, not --structure {job.structure}")
    if job.criteria:
        raise InputError("--series does not support a population criterion")
    if job.limit is not None:
        raise InputError("--series does not support --time-limit")
    if job.suppression_limit > 0:
        raise InputError("--series does not support --suppression-limit")
    if person_id in job.schema.qi or person_id == models[0].column:
        raise InputError(f"--person-id {person_id!r} must be neither a QI nor the sensitive column")
    return SeriesSettings(
        person_id, tuple(job.schema.qi), models[0].column, job.k, int(models[0].l)
    )


def series_job(job: TableJob, person_id: str) -> TableJob:
    """The job with the person-id column among its identifiers (never published). O(1)."""
    identifiers = list(job.schema.identifiers)
    if person_id in identifiers:
        return job
    return job.replace({"identifiers": [*identifiers, person_id]})


def anonymize_series(
    data: pd.DataFrame,
    *,
    series: str | os.PathLike[str],
    person_id: str,
    csv_safe: bool = True,
    **keywords: Any,
) -> Release:
    """Publish the next release of the series in directory ``series``, verified, and record it
    there (the release, its manifest, the private map, the index).

    Parameters
    ----------
    data : pandas.DataFrame
        This release's original table, one row per person, with the person-id column.
    series : path-like
        The series directory (created by the first release; docs/series.md).
    person_id : str
        The steward's person-id column: links a person across releases, never published.
    csv_safe : bool, default True
        Guard formula-like text cells of the CSV copy kept in the directory.
    **keywords
        The parameters of :func:`anonymatch.tables.anonymize` (``k``, ``qi``, ``numeric``,
        ``sensitive``, ``l``, ``seed``, …); a series needs ``sensitive`` with distinct ``l``.

    Returns
    -------
    Release
        As :func:`anonymatch.tables.anonymize`; ``report["series"]`` states the release's
        number, the previous releases' SHA-256, the counts (continuing, new, changed,
        departed, suppressed) and the signature check.

    Raises
    ------
    InputError
        Bad parameters, a job a series cannot run (:func:`series_settings`), a person id
        missing or repeated, a series directory of other settings or modified.
    InfeasibleError
        No class can be formed (k larger than the people, ℓ more than their values).
    VerificationError
        The release or the invariant failed verification; nothing written.

    Notes
    -----
    Time: that of ``diverse_clusters`` on the new people and on each signature's bucket, plus
    O(buckets · new people · d) to fill the buckets, plus the verification. Memory O(n·d).
    """
    from anonymatch.core.files import all_or_nothing
    from anonymatch.tables.job import TableJob

    job = TableJob.build(keywords)
    settings = series_settings(job, person_id)
    store = SeriesStore.open(series, settings)
    made = publish_next(require_frame(data, "data"), series_job(job, person_id), store)
    with all_or_nothing():
        release = made.release
        store.commit(release.table, release.cells, release.qi, release.report, made.rows, csv_safe)
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
            raise InputError("--series DIR and --person-id COLUMN go together")
        if refused is not None:
            raise InputError(f"--series publishes in memory: {refused}")
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
        As :func:`anonymize_series`.

    Notes
    -----
    As :func:`anonymize_series`.
    """
    from anonymatch.tables.job import plan
    from anonymatch.tables.methods.diverse import diverse_clusters
    from anonymatch.tables.pipeline import prepare, sensitive_target

    started = time.perf_counter()
    settings = store.settings
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
    if store.releases:
        previous = _previous(store, ids)
        labels, counts = _next_classes(enc, target, ids, values, previous, k, size)
    else:
        previous = None
        first = diverse_clusters(enc, k, target, size)[0].classes
        assert first is not None  # a graph of classes
        labels = first[0]
        counts = {"continuing": 0, "new": enc.n, "changed": 0, "departed": 0, "suppressed": 0}
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
    checked = check_signatures(published, rows, previous)
    refuse(checked["passed"] is True, checked.get("reason"))
    release.report["series"] = {
        "release": store.next_release,
        "previous_sha256": store.previous_sha256,
        "person_id": "the steward's person-id column, kept in a private map, never published",
        "invariant": "m-invariance on classes: a person published again with an unchanged "
        "sensitive value has the same signature (their class's distinct values)",
        "counts": {**counts, "suppressed": suppressed},
        "verification": checked,
    }
    return SeriesRelease(release, rows, store.next_release)


def _person_ids(data: pd.DataFrame, column: str) -> np.ndarray:
    """The person ids as texts; ``InputError`` if one is missing or repeated. O(n)."""
    if column not in data.columns:
        raise InputError(f"--person-id column {column!r} is not in the input")
    raw = data[column]
    if raw.isna().any():
        raise InputError(f"--person-id column {column!r} has a missing value")
    ids = np.asarray(value_text(raw), dtype=object)
    if len(np.unique(ids)) != len(ids):
        raise InputError(f"--person-id column {column!r} holds a person twice")
    return ids


@dataclass(frozen=True)
class Previous:
    """What the series' earlier releases say about this release's people.

    ``signature[p]``: person p's signature in the last release they were published in (absent:
    not published before); ``value[p]``: the value published on their row there;
    ``group[p]``: that release and p's class in it; ``departed``: people of the last release
    absent from this one."""

    signature: dict[str, Signature]
    value: dict[str, str]
    group: dict[str, tuple[int, int]]
    departed: int


def _previous(store: SeriesStore, ids: np.ndarray) -> Previous:
    """Each person's signature and published value in the last release they were in, from the
    private map and the published files (``store.release_values``). O(map + releases).

    A person's group is the class of that release, followed forward: the class of the next
    release where most of its members who kept its signature went, and so on — so that a
    person who comes back after a release away joins the classmates they left (same
    signature, near in the QIs) instead of a bucket of their own."""
    table = store.read_map()
    signature: dict[str, Signature] = {}
    value: dict[str, str] = {}
    group: dict[str, tuple[int, int]] = {}
    votes: dict[tuple[int, int], Counter[tuple[int, int]]] = {}
    for number in sorted(set(table["release"].tolist())):  # later releases overwrite
        part = table[table["release"] == number]
        shown = store.release_values(number)
        rows = part["row"].to_numpy()
        if len(rows) and (rows.min() < 0 or rows.max() >= len(shown)):
            raise InputError(f"--series: the private map names a row release {number} lacks")
        mine = shown[rows]
        sigs = _class_signatures(part["class"].to_numpy(), mine)
        for pid, c, v in zip(part["person_id"].tolist(), part["class"].tolist(), mine.tolist(),
                             strict=True):  # fmt: skip
            before = group.get(pid)
            if before is not None and signature[pid] == sigs[c]:
                votes.setdefault(before, Counter())[(number, c)] += 1
            signature[pid] = sigs[c]
            value[pid] = v
            group[pid] = (number, c)
    successor = {g: count.most_common(1)[0][0] for g, count in votes.items()}
    for pid, g in group.items():
        while g in successor:  # releases increase along the chain: it ends
            g = successor[g]
        group[pid] = g
    here = set(ids.tolist())
    last = table[table["release"] == store.next_release - 1]["person_id"]
    departed = int((~last.isin(here)).sum())
    return Previous(signature, value, group, departed)


def _class_signatures(klass: np.ndarray, shown: np.ndarray) -> dict[int, Signature]:
    """Each class's signature: the sorted distinct values ``shown`` by its rows (``klass``: each
    row's class). O(n log n)."""
    order = np.argsort(klass, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(klass[order]) != 0])
    sigs: dict[int, Signature] = {}
    for a, b in zip(starts, [*starts[1:], len(order)], strict=True):
        sigs[int(klass[order[a]])] = tuple(sorted(set(shown[order[a:b]].tolist())))
    return sigs


def _next_classes(
    enc: EncodedQI,
    target: SensitiveTarget,
    ids: np.ndarray,
    values: np.ndarray,
    previous: Previous,
    k: int,
    size: int,
) -> tuple[np.ndarray, dict[str, int]]:
    """Class labels of this release's people (−1: suppressed) under the invariant (module
    docstring, steps 2–4), and the counts. O(buckets · new people · d) plus the clustering."""
    n = enc.n
    labels = np.full(n, -1, dtype=np.int64)
    # a bucket: the continuing people of one class of the release they were last in (a
    # signature's classes lie apart in the QI space: merged, they would widen every cell)
    buckets: dict[tuple[int, int], list[int]] = {}
    signature_of: dict[tuple[int, int], Signature] = {}
    fresh = np.zeros(n, dtype=bool)  # new people and changed values: not bound
    changed = 0
    for i in range(n):
        sig = previous.signature.get(ids[i])
        if sig is not None and previous.value.get(ids[i]) == values[i]:
            key = previous.group[ids[i]]
            buckets.setdefault(key, []).append(i)
            signature_of[key] = sig
        else:
            fresh[i] = True
            changed += sig is not None
    counts = {
        "continuing": int(n - fresh.sum()),
        "new": int(fresh.sum()) - changed,
        "changed": changed,
        "departed": previous.departed,
    }
    from anonymatch.tables.series.fill import fill_buckets

    codes = target.codes[:, 0]
    code_of = dict(zip(values.tolist(), codes.tolist(), strict=True))
    # a signature holding a value nobody holds this year cannot be shown: suppressed
    keys = [g for g in sorted(buckets) if all(v in code_of for v in signature_of[g])]
    sigs = [signature_of[g] for g in keys]
    members = [np.array(buckets[g], dtype=np.int64) for g in keys]
    wanted = [np.array([code_of[v] for v in sig], dtype=np.int64) for sig in sigs]
    classes: list[np.ndarray] = []
    signatures: list[Signature] = []
    free = fresh.copy()
    # first each class's bucket on its own; then the buckets left incomplete merged by
    # signature (two halves of one signature together need fewer new people)
    for attempt in range(2):
        fills = fill_buckets(enc, codes, members, wanted, free, k)
        failed: dict[Signature, list[np.ndarray]] = {}
        for sig, mem, got in zip(sigs, members, fills, strict=True):
            if got is None:
                failed.setdefault(sig, []).append(mem)
                continue
            free[got] = False
            for part in _split(enc, target, np.concatenate([mem, got]), sig, k):
                classes.append(part)
                signatures.append(sig)
        if attempt == 0:
            sigs = sorted(failed)
            members = [np.concatenate(failed[sig]) for sig in sigs]
            wanted = [np.array([code_of[v] for v in sig], dtype=np.int64) for sig in sigs]
    # what is still incomplete joins the nearest class of its signature, if there is one
    # (any class of ≥ k people showing the signature keeps it with them); else suppressed
    for sig, parts in failed.items():
        fits = [c for c, s in enumerate(signatures) if s == sig]
        together = np.concatenate(parts)
        if fits:
            best = min(fits, key=lambda c: float(_distance(enc, classes[c], together).sum()))
            classes[best] = np.concatenate([classes[best], together])
    left = np.flatnonzero(free)
    for part in _fresh_classes(enc, target, left, k, size):
        classes.append(part)
        signatures.append(tuple(sorted(set(values[part].tolist()))))
    for c, part in enumerate(classes):
        labels[part] = c
    alone = left[labels[left] < 0]
    if len(alone) and classes:  # too few for classes of their own: each joins the class
        # showing their value whose cell grows least with them (``fill._costs``)
        from anonymatch.tables.series.fill import _boxes, _costs

        boxes = _boxes(enc, classes)
        shows = np.zeros((len(classes), int(codes.max()) + 1), dtype=bool)
        for c, part in enumerate(classes):
            shows[c, codes[part]] = True
        for r in alone.tolist():
            cost = np.where(
                shows[:, codes[r]], _costs(enc, boxes, np.full((len(classes), 1), r))[:, 0], np.inf
            )
            if np.isfinite(cost.min()):
                labels[r] = int(np.argmin(cost))
    return labels, counts


def _distance(enc: EncodedQI, members: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """How far each of ``rows`` lies from the records ``members`` (GCP weights:
    ``methods.diverse._profile_cost``). O((|members| + |rows|)·d)."""
    from anonymatch.tables.methods.diverse import _profile_cost

    return _profile_cost(enc, members, rows)


def _split(
    enc: EncodedQI, target: SensitiveTarget, members: np.ndarray, sig: Signature, k: int
) -> list[np.ndarray]:
    """A completed bucket as classes of ≥ k people each showing every value of ``sig``:
    ``diverse_clusters`` with distinct ℓ = |sig| on the bucket (it holds no other value), one
    class when there is no room for two. O(|bucket|² · d)."""
    from anonymatch.tables.methods.diverse import diverse_clusters
    from anonymatch.tables.models.disclosure import SensitiveModel

    values = target.codes[members, 0]
    fewest = int(np.bincount(values)[np.unique(values)].min())
    if min(fewest, len(members) // k) < 2:
        return [members]
    model = SensitiveModel(target.models[0].column, l=len(sig))
    bucket = dataclasses.replace(target.take(members), ls=np.array([len(sig)], np.int64),
                                 models=(model,))  # fmt: skip
    try:
        graph, _ = diverse_clusters(enc.take(members), k, bucket, len(members))
    except InfeasibleError:  # (the greedy failing: one class is always valid)
        return [members]
    classes = graph.classes
    assert classes is not None
    local = classes[0]
    return [members[local == c] for c in range(int(local.max()) + 1)]


def _fresh_classes(
    enc: EncodedQI, target: SensitiveTarget, rows: np.ndarray, k: int, size: int
) -> list[np.ndarray]:
    """Ordinary ℓ-diverse classes of the people ``rows`` (``diverse_clusters``), or none when
    they are too few or too uniform for one. O(that of diverse_clusters)."""
    from anonymatch.tables.methods.diverse import diverse_clusters

    if len(rows) < k or not target.ok(target.counts(rows)[None])[0]:
        return []
    try:
        graph, _ = diverse_clusters(enc.take(rows), k, target.take(rows), min(size, len(rows)))
    except InfeasibleError:
        return []
    classes = graph.classes
    assert classes is not None
    local = classes[0]
    return [rows[local == c] for c in range(int(local.max()) + 1)]


def check_signatures(
    published: np.ndarray, rows: pd.DataFrame, previous: Previous | None
) -> dict[str, object]:
    """The invariant, from the published file and the private map: every continuing person
    (published before with the value now published on their row) has in this release the
    signature of the last release they were in. ``published``: the value texts of this
    release's rows; ``rows``: this release's map rows. Returns the check as the manifest states
    it (``passed``, ``reason`` on a failure). O(n)."""
    method = "signatures from the published files and the private map"
    if previous is None:
        return {"passed": True, "method": method, "continuing_checked": 0}
    klass = rows["class"].to_numpy()
    shown = published[rows["row"].to_numpy()]  # each person's own value, on their row
    sigs = _class_signatures(klass, shown)
    checked = 0
    for pid, c, v in zip(rows["person_id"].tolist(), klass.tolist(), shown.tolist(), strict=True):
        before = previous.signature.get(pid)
        if before is None or previous.value.get(pid) != v:
            continue
        checked += 1
        if sigs[c] != before:
            return {
                "passed": False,
                "method": method,
                "reason": f"a continuing person's signature changed ({len(before)} values "
                f"before, {len(sigs[c])} now)",
            }
    return {"passed": True, "method": method, "continuing_checked": checked}


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
    from anonymatch.tables.metrics import information_loss
    from anonymatch.tables.models.certified import SensitiveView
    from anonymatch.tables.models.levels import KAnonymity
    from anonymatch.tables.pipeline import (
        Release,
        _known_person,
        _release_table,
        plan_blocks,
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
    figures = information_loss(cells, enc)
    loss = figures.to_dict()
    loss["suppressed_cells"] = int(cells.num_star.sum() + cells.cat_star.sum())
    if suppressed:  # each suppressed person a row of NCP 1, as the suppression limit counts it
        loss["gcp_with_suppressed"] = (float(figures.gcp) * enc.n + suppressed) / (
            enc.n + suppressed
        )
    produced = Produced(
        kind="table",
        method=job.method.name,
        parameters={**schema.roles(), "partition_size": run.partition_size, **suppression},
        guarantee=KAnonymity(k).describe(),
        # the people of this release, as the verifier counts them: the published ones have a
        # k-factor, ``suppressed`` were left out (their signature could not be shown)
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
        input_extra={
            "dropped_missing": dropped,
            "suppressed": suppressed,
            "missing_values": int(enc.num_missing.sum() + enc.cat_missing.sum()),
        },
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
