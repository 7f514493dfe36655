"""Relational-transaction inputs larger than memory: joined on disk, partitioned, anonymized on
worker processes, verified partition by partition, written atomically.

The people table and the long items table (or one long table) are never held whole:

1. **Route** — both inputs are read in batches (``tables.io.stream.iter_table_batches``, the
   tables' reader) and every row is appended to one of H on-disk buckets by a hash of its id
   (Parquet files in a private 0700 directory, ``core.lifecycle.private_directory``: removed on
   every exit path, signals included). Null items and the ``na_items`` codes mean "no item".
2. **Join** — bucket by bucket, in memory one bucket at a time: ids are compared exactly (as
   text, as ``relational.io`` does), so a repeated id of the people table, a person whose
   attributes differ between rows of a long table (whichever batches they were read in) and an
   item id absent from the people table are refused with one line naming them (InputError,
   exit 2) before anything is written. Each bucket leaves (person, item) pairs on disk; a long
   table also leaves its people (first row per id), which become the people table of step 3.
3. **Scan and order** — the people table is scanned by the tables' streamed scan
   (``tables.streamed.scan_table``: QIs encoded batch by batch with global domains, the other
   columns spilled to a memory-mapped Arrow file); the joint order is the in-memory path's
   (``relational.order.keyed_order``: QIs lexicographically, people without items first), from
   a bounded summary of each person's set — whether they hold an item — and cut into partitions
   of the in-memory size (``RelationalJob.size_for``), grouped into chunks of about
   ``chunk_rows`` people.
4. **Chunks** — the pairs are routed to their person's chunk (raw int64 files); one job per
   chunk on the shared runner (``core.runner.iter_partitions``: this process, local processes
   or Dask), each partition with its own seed spawned from the run's: the method's graph
   (``hungarian``, ``sortgreedy`` on the joint cost, or the ``classes`` baseline within the
   partition), the privacy step, both parts recoded, a shuffle inside the partition; the
   chunk's JSON lines are written as they will be published, parsed back and **verified
   partition by partition** by the independent verifier (``relational.verify``).
5. **Write** — in chunk order the driver appends the other columns of each record's true
   preimage to its line and writes the lines to a temporary file beside the output, renamed
   into place at the end (``core.files.write_atomically``): nothing on failure.

Why per-partition checks prove the whole release: the partitions' people and records are
disjoint and a joint compatibility edge inside a partition is one of the whole release, so the
union of the partitions' k-factors is a k-factor of the whole joint compatibility graph
(docs/guarantees/relational.md, "Streamed releases"). ``verify-rt`` on the written release
checks the whole graph and passes.

Memory (driver): the encoded QIs, the order and a few integers per person, about
(24·d + 40)·n bytes (measured: 171 bytes per person with d = 4, docs/results.md), one bucket
of about ``BUCKET_ROWS`` input rows while joining, the memory-mapped other columns and
``window`` chunks in flight; each worker one chunk (its people's QIs and items) plus O(P²) for
a partition of P people. Rows and items are never all in memory.

Leakage: each chunk also returns the distinct QI cells of its lines (``tables.risk.leakage.
distinct_cells``, about P / k rows a partition); the driver gathers them with one integer per
person (``StreamedCells``) and runs the tables' release checks (``tables.risk.checks``) on the
kept columns, read one at a time from the spill file (``tables.streamed.streamed_view``: the
in-memory checks' rules and figures), before the release is renamed into place — refused with
nothing written under the job's ``strict`` (``anonymize-rt --strict``). The
manifest's ``leakage`` block is the tables'.

Sensitive models (``l``/``t``): the scan codes the sensitive columns through global
dictionaries (``tables.streamed.scan_table``, the whole table's distributions Q kept); each
partition publishes the classes of the tables' ``diverse_clusters`` on the partition alone (as
the in-memory path builds them on the whole input; never merged across partitions, so chunks
stay independent) and is checked by ``check_sensitive_partition`` on its joint graph. A
partition that cannot satisfy a model even as one class stops the run (InfeasibleError,
nothing written). Why per-partition checks prove the whole release: docs/guarantees/sensitive.md
§3–§4 and docs/guarantees/relational.md, "Streamed releases".
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import scipy.sparse as sp
from tqdm import tqdm

from anonymatch.core import lifecycle
from anonymatch.core.classes import privacy_step
from anonymatch.core.criteria import refuse_unsupported
from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.core.files import write_atomically
from anonymatch.core.params import Execution, check_level_fits, param
from anonymatch.core.release import Produced, publish, refuse
from anonymatch.core.runner import ExecutorName, child_seeds, iter_partitions, partition_bounds
from anonymatch.relational.io import (
    SET_FIELDS,
    People,
    RelationalRelease,
    _constant_attributes,
    _is_int,
    _json_value,
    check_join_columns,
    release_from_objects,
    release_lines,
)
from anonymatch.relational.job import RelationalJob, check_columns
from anonymatch.relational.methods.joint import classes, cover_vote, freeform
from anonymatch.relational.order import keyed_order
from anonymatch.relational.verify import joint_view, verify_relational
from anonymatch.sets.io import SetRelease, Transactions
from anonymatch.sets.methods.nonreciprocal import bit_vote
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.io import CsvOptions
from anonymatch.tables.io.cells import format_cells
from anonymatch.tables.io.stream import DEFAULT_BATCH_ROWS, count_rows, iter_table_batches
from anonymatch.tables.methods.diverse import diverse_clusters
from anonymatch.tables.metrics import loss_from_sums, ncp_sums
from anonymatch.tables.models.levels import KAnonymity
from anonymatch.tables.models.sensitive import (
    EncodedSensitive,
    SensitiveCheck,
    SensitiveTarget,
    check_model,
    describe_model,
    merge_checks,
)
from anonymatch.tables.recode import GeneralizedQI, concat_cells, recode
from anonymatch.tables.risk.checks import release_checks
from anonymatch.tables.risk.leakage import DistinctCells, StreamedCells, distinct_cells
from anonymatch.tables.streamed import (
    DEFAULT_CHUNK_ROWS,
    ScannedTable,
    chunk_ranges,
    failing_group,
    scan_table,
    scanned_sensitive_target,
    streamed_view,
)

BUCKET_ROWS = 500_000
"""Input rows per on-disk bucket of the join (the bucket joined in memory at a time)."""
ROW = "__anonymatch_row"
"""The routed rows' position in the input (first appearance of a person)."""
ID = "__anonymatch_id"
"""The routed rows' id, as text."""


@dataclass(frozen=True)
class RelationalFiles:
    """Where the people are: the people table (``people``: a CSV/TSV/Parquet path, a directory
    of Parquet parts) and the long items table (``items``; None: ``people`` is one long table
    with each person's attributes repeated), joined on ``id_column``; ``item_column`` names the
    items, ``na_items`` the codes meaning "no item" (compared as text; nulls always do), ``csv``
    how to read a CSV input."""

    people: str | os.PathLike[str]
    items: str | os.PathLike[str] | None
    id_column: str
    item_column: str
    na_items: tuple[str, ...] = ()
    csv: CsvOptions | None = None

    def __post_init__(self) -> None:
        check_join_columns(self.id_column, self.item_column)  # InputError: item column = id


@dataclass
class _Joined:
    """What the join leaves: the people table to scan (the input's, or the long table's people
    written to the private directory), the number of people, the pair buckets on disk, the
    sorted item universe, whether each person holds an item and the duplicates dropped."""

    people: str | os.PathLike[str]
    n: int
    pairs: list[Path]
    universe: list[str]
    integer_items: bool
    has_items: np.ndarray
    duplicates: int
    item_rows: int


# --------------------------------------------------------------------------- route and join


def _text_ids(batch: pa.Table, column: str) -> np.ndarray:
    """The ids of a batch as text (``relational.io._ids``: numbers and text ids join)."""
    return cast(pd.Series, batch.column(column).to_pandas()).astype(str).to_numpy(object)


def _bucket_of(ids: np.ndarray, buckets: int) -> np.ndarray:
    """The bucket of each id: a stable 64-bit hash of its text modulo ``buckets``. O(len)."""
    return (pd.util.hash_array(ids) % np.uint64(buckets)).astype(np.int64)


def _check_column(names: Sequence[str], column: str, what: str, role: str) -> None:
    if column not in names:
        raise InputError(
            f"unknown {role.replace('_', ' ').removesuffix(' column')} column {column!r} "
            f"({param(role)}); {what} has: {', '.join(map(str, names))}"
        )


class _Buckets:
    """H bucket directories under ``root``; ``write`` appends a part to each bucket of a batch
    (one Parquet file per batch and bucket: batches of a CSV may type a column differently, so
    parts are unified when a bucket is read back)."""

    def __init__(self, root: Path, name: str, count: int) -> None:
        self.dirs = [root / f"{name}-{b}" for b in range(count)]
        for d in self.dirs:
            d.mkdir(mode=0o700)
        self.parts = 0

    def write(self, table: pa.Table, bucket: np.ndarray) -> None:
        order = np.argsort(bucket, kind="stable")
        cuts = np.searchsorted(bucket[order], np.arange(len(self.dirs) + 1))
        for b, d in enumerate(self.dirs):
            rows = order[cuts[b] : cuts[b + 1]]
            if len(rows):
                pq.write_table(table.take(pa.array(rows)), d / f"{self.parts}.parquet")
        self.parts += 1

    def read(self, b: int) -> pa.Table | None:
        files = sorted(self.dirs[b].glob("*.parquet"), key=lambda p: int(p.stem))
        if not files:
            return None
        return pa.concat_tables([pq.read_table(f) for f in files], promote_options="permissive")


def _absent(items: pa.Array, na_items: Sequence[str]) -> np.ndarray:
    """Null items and the codes meaning "no item" (compared as text)."""
    text = cast(pd.Series, items.to_pandas())
    return np.asarray(text.isna() | text.astype(str).isin(list(na_items)))


def _route_items(files: RelationalFiles, root: Path, count: int, batch_rows: int) -> _Buckets:
    """The kept (id, item) rows of the items table, by id bucket. O(rows)."""
    assert files.items is not None
    out = _Buckets(root, "items", count)
    for batch in iter_table_batches(files.items, files.csv, batch_rows):
        lifecycle.check()
        _check_column(batch.column_names, files.id_column, "the items table", "id_column")
        _check_column(batch.column_names, files.item_column, "the items table", "item_column")
        keep = ~_absent(batch.column(files.item_column), files.na_items)
        ids = _text_ids(batch, files.id_column)[keep]
        codes = cast(pd.Series, batch.column(files.item_column).to_pandas()).astype(str)
        table = pa.table({ID: pa.array(ids, pa.string()), "item": codes.to_numpy(object)[keep]})
        out.write(table, _bucket_of(ids, count))
    return out


def _route_people(
    files: RelationalFiles, root: Path, count: int, batch_rows: int
) -> tuple[_Buckets, int, pa.Schema | None]:
    """The people's rows by id bucket with their input position (``ROW``): all columns of a
    long table (and their unified schema), the ids of a people table. Returns the buckets, the
    number of rows and the schema (None for a people table)."""
    out = _Buckets(root, "people", count)
    read = 0
    long = files.items is None
    schemas: list[pa.Schema] = []
    where = "the input" if long else "the people table"
    for batch in iter_table_batches(files.people, files.csv, batch_rows):
        lifecycle.check()
        names = batch.column_names
        _check_column(names, files.id_column, where, "id_column")
        if long:
            _check_column(names, files.item_column, where, "item_column")
        ids = _text_ids(batch, files.id_column)
        position = pa.array(np.arange(read, read + batch.num_rows, dtype=np.int64))
        if long:
            body = batch.drop_columns([files.id_column])
            schemas.append(body.schema)
            table = body.append_column(ID, pa.array(ids, pa.string())).append_column(ROW, position)
        else:
            table = pa.table({ID: pa.array(ids, pa.string()), ROW: position})
        out.write(table, _bucket_of(ids, count))
        read += batch.num_rows
    if read == 0:
        raise InputError("input has no data rows")
    unified = pa.unify_schemas(schemas, promote_options="permissive") if long else None
    return out, read, unified


@dataclass
class _PairSink:
    """(person, item) pairs of the buckets, written to ``root``; the item universe and who
    holds an item are gathered on the way."""

    root: Path
    tokens: set[str]
    files: list[Path]
    duplicates: int = 0
    rows: int = 0

    def add(self, person: np.ndarray, items: np.ndarray) -> None:
        frame = pd.DataFrame({"person": person.astype(np.int64), "item": items})
        unique = frame.drop_duplicates()
        self.duplicates += len(frame) - len(unique)
        self.rows += len(unique)
        self.tokens.update(unique["item"].unique().tolist())
        path = self.root / f"pairs-{len(self.files)}.parquet"
        pq.write_table(pa.Table.from_pandas(unique, preserve_index=False), path)
        self.files.append(path)


def _join_people_table(
    files: RelationalFiles, people: _Buckets, items: _Buckets, sink: _PairSink
) -> None:
    """Join a people table's id buckets with the items' bucket by bucket: a repeated id and
    an item id absent from the people table are refused. Memory: one bucket."""
    for b in range(len(people.dirs)):
        lifecycle.check()
        side = people.read(b)
        ids = pd.Series([], dtype=object) if side is None else side.column(ID).to_pandas()
        repeated = ids.duplicated()
        if repeated.any():
            raise InputError(
                f"id {ids[repeated].iloc[0]!r} appears on more than one row of the people "
                f"table ({param('id_column')} must identify a person)"
            )
        held = items.read(b)
        if held is None:
            continue
        index = pd.Index(ids)
        item_ids = held.column(ID).to_pandas()
        at = index.get_indexer(item_ids)
        if np.any(at < 0):
            stranger = item_ids.iloc[int(np.flatnonzero(at < 0)[0])]
            raise InputError(
                f"the items table names id {stranger!r}, which is not in the people table"
            )
        assert side is not None
        rows = side.column(ROW).to_numpy()[at]
        sink.add(rows, held.column("item").to_numpy(zero_copy_only=False))


def _join_long_table(
    files: RelationalFiles, people: _Buckets, schema: pa.Schema, root: Path, sink: _PairSink
) -> tuple[Path, int]:
    """Check each bucket of a long table for attributes constant per person and keep each
    person's first row (numbered bucket by bucket, by first appearance within a bucket) in a
    people table written to ``root``; the items become pairs. Returns the people table and
    the number of people. Memory: one bucket."""
    out = root / "people-table"
    out.mkdir(mode=0o700)
    fields = {f.name: f for f in schema if f.name != files.item_column}
    n = 0
    for b in range(len(people.dirs)):
        lifecycle.check()
        side = people.read(b)
        if side is None:
            continue
        side = side.take(pc.sort_indices(side, [(ROW, "ascending")]))
        frame = side.drop_columns([ROW]).to_pandas()
        _constant_attributes(frame, ID, files.item_column)  # refuses a conflicting person
        ids = frame[ID]
        first = np.flatnonzero(~ids.duplicated().to_numpy())
        head = side.take(pa.array(first)).drop_columns([files.item_column])
        target = [fields.get(c, head.schema.field(c)) for c in head.column_names]
        head = head.cast(pa.schema(target))
        head = head.rename_columns([files.id_column if c == ID else c for c in head.column_names])
        pq.write_table(head, out / f"{b:06d}.parquet")
        keep = ~_absent(side.column(files.item_column), files.na_items)
        person = n + pd.Index(ids.iloc[first]).get_indexer(ids[keep])
        codes = cast(pd.Series, side.column(files.item_column).to_pandas()).astype(str)
        if keep.any():
            sink.add(person, codes.to_numpy(object)[keep])
        n += len(first)
    return out, n


def _universe(tokens: set[str]) -> tuple[list[str], bool]:
    """The item universe sorted as ``relational.io`` sorts it (as integers if all are)."""
    universe = sorted(tokens)
    integer = bool(universe) and all(_is_int(t) for t in universe)
    if integer:
        universe = sorted(universe, key=int)
    return universe, integer


def join_files(
    files: RelationalFiles, root: Path, buckets: int, batch_rows: int = DEFAULT_BATCH_ROWS
) -> _Joined:
    """Route both inputs to ``buckets`` id buckets under ``root`` and join them bucket by
    bucket (module docstring, steps 1–2). InputError on bad input, before anything is
    written. Time O(rows); memory O(one bucket + one batch + n bytes)."""
    people, rows, schema = _route_people(files, root, buckets, batch_rows)
    sink = _PairSink(root, set(), [])
    if files.items is None:
        assert schema is not None
        source: str | os.PathLike[str]
        source, n = _join_long_table(files, people, schema, root, sink)
    else:
        items = _route_items(files, root, buckets, batch_rows)
        _join_people_table(files, people, items, sink)
        source, n = files.people, rows
    if not sink.tokens:
        raise InputError(
            "every person's item set is empty (all item codes are missing): nothing to publish "
            "as a set; use anonymize for the table alone"
        )
    has_items = np.zeros(n, bool)
    for path in sink.files:
        has_items[pq.read_table(path, columns=["person"]).column(0).to_numpy()] = True
    universe, integer = _universe(sink.tokens)
    return _Joined(source, n, sink.files, universe, integer, has_items, sink.duplicates, sink.rows)


# --------------------------------------------------------------------------- chunks


@dataclass(frozen=True)
class ChunkJob:
    """One chunk of partitions: its people's QIs in the joint order, their items (CSR over
    the universe), the partition boundaries within the chunk, one seed per partition, the
    universe and what to build. With sensitive models, ``sensitive`` holds the chunk's
    people's sensitive codes in the same order (the distributions Q stay global)."""

    start: int
    qi: EncodedQI
    items: sp.csr_array
    bounds: np.ndarray
    seeds: list[np.random.SeedSequence]
    universe: tuple[list[str], bool]
    spec: tuple[int, str, bool, float]  # k, freeform step ("" for classes), classes, λ
    sensitive: SensitiveTarget | None = None


@dataclass(frozen=True)
class ChunkResult:
    """The chunk's lines (QI cells and set part, as written and verified), the order position
    of each line's true preimage and the figures: per-attribute NCP sums, uncertain items and
    thresholds summed, the verifier's counts, the first failure (None if every partition
    passed), why a partition cannot satisfy the sensitive models (``infeasible``) and one
    sensitive check per model over the chunk's people."""

    lines: list[str]
    source: np.ndarray
    ncp_sums: np.ndarray
    totals: np.ndarray  # uncertain items, max_errors, compatible pairs
    min_matches: tuple[int, int]  # fewest per person, per record
    failure: str | None
    partitions: int = 0
    infeasible: str | None = None
    sensitive: tuple[SensitiveCheck, ...] = ()
    distinct: DistinctCells | None = None  # the lines' distinct cells, for the leakage check


def _partition_release(
    qi: EncodedQI,
    items: sp.csr_array,
    job: ChunkJob,
    p: int,
    target: SensitiveTarget | None = None,
) -> tuple[RelationalRelease, np.ndarray, np.ndarray, GeneralizedQI]:
    """Anonymize partition p of a chunk: graph, privacy step with its seed, both parts
    recoded, shuffled. Returns the release, the true preimage (partition position) of each
    record, the per-attribute NCP sums of its cells (``tables.metrics.ncp_sums``, as the
    in-memory path's ``information_loss``) and the cells in publication order. With
    sensitive models (``target``: the partition's codes) the graph is the classes of
    ``diverse_clusters`` on the partition as one segment, as the in-memory path builds them
    on the whole input (InfeasibleError if the partition cannot satisfy a model). Time: the
    method's (Hungarian O(k·P³))."""
    k, step, baseline, weight = job.spec
    if target is not None:
        graph, _ = diverse_clusters(qi, k, target, qi.n)
    elif baseline:
        graph = classes(qi, k)
    else:
        graph = freeform(qi, items, k, step, weight)
    rng = np.random.default_rng(job.seeds[p])
    assigned = privacy_step(graph, rng, workers=1)
    truth_of = np.empty(qi.n, np.int64)
    truth_of[assigned] = np.arange(qi.n)
    cells = recode(graph, qi)
    vote = cover_vote if baseline or graph.classes is not None else bit_vote
    base, unc, t = vote(items, graph)
    shuffle = rng.permutation(qi.n)
    shown = cells.take(shuffle)
    text = format_cells(shown, qi)
    universe, integer = job.universe
    sets = SetRelease(
        sp.csr_array(base[shuffle]), sp.csr_array(unc[shuffle]), t[shuffle], None, universe,
        integer,
    )  # fmt: skip
    release = RelationalRelease(pd.DataFrame(text), sets, qi.names)
    return release, truth_of[shuffle], ncp_sums(shown, qi), shown


def anonymize_chunk(job: ChunkJob) -> ChunkResult:
    """Anonymize, write as text, parse back and verify each partition of a chunk (runs on a
    worker). Time: the method's cost per partition plus O(chunk·(d + items)) for the text and
    the verifier's joint compatibility per partition."""
    universe, integer = job.universe
    lines: list[str] = []
    sources: list[np.ndarray] = []
    sums = np.zeros(len(job.qi.names))
    totals = np.zeros(3, np.int64)
    least = [np.iinfo(np.int64).max] * 2
    checks: list[SensitiveCheck] = []
    cells: list[GeneralizedQI] = []
    for p in range(len(job.seeds)):
        lo, hi = int(job.bounds[p]), int(job.bounds[p + 1])
        name = f"partition of people {job.start + lo + 1}–{job.start + hi} of the joint order"
        qi = job.qi.take(np.arange(lo, hi))
        items = sp.csr_array(job.items[lo:hi])
        target = None if job.sensitive is None else job.sensitive.take(np.arange(lo, hi))
        try:
            if target is not None and (unmet := target.first_unmet()) is not None:
                raise InfeasibleError(
                    f"its column {unmet[0].column!r} has {unmet[1]} distinct value(s) and "
                    f"cannot satisfy {describe_model(unmet[0])} even as one class"
                )
            release, truth, ncp, shown = _partition_release(qi, items, job, p, target)
        except InfeasibleError as error:
            reason = str(error).removeprefix("infeasible: ")
            return ChunkResult(
                [], np.empty(0, np.int64), sums, totals, (0, 0), None,
                infeasible=f"{name}: {reason}; partitions are anonymized independently on the "
                "streamed path (never merged), so a larger `partition_size` gives each more "
                "people to mix",
            )  # fmt: skip
        text = release_lines(release)
        people = People(
            pd.DataFrame(index=pd.RangeIndex(hi - lo)),
            Transactions(items, universe, None, integer),
            "",
            "",
        )
        written = release_from_objects([json.loads(x) for x in text], people, qi.names)
        report = verify_relational(written, people, qi, job.spec[0])
        failure = None if report.passed else report.reason
        if failure is None and target is not None:
            failure, found = check_sensitive_partition(
                SensitivePartition(written, people, qi, text, target.take(truth), target)
            )
            checks = (
                [merge_checks(a, b) for a, b in zip(checks, found, strict=True)]
                if checks
                else found
            )
        if failure is not None:
            return ChunkResult(
                [], np.empty(0, np.int64), sums, totals, (0, 0), f"{name}: {failure}"
            )
        sums += ncp
        totals += [
            written.sets.uncertain.nnz,
            int(written.sets.max_errors.sum()),
            report.compatible_pairs,
        ]
        least[0] = min(least[0], report.min_matches_original)
        least[1] = min(least[1], report.min_matches_published)
        lines.extend(text)
        sources.append(job.start + lo + truth)
        cells.append(shown)
    source = np.concatenate(sources)
    distinct = distinct_cells(cells[0] if len(cells) == 1 else concat_cells(cells))
    return ChunkResult(
        lines, source, sums, totals, (least[0], least[1]), None, len(job.seeds),
        sensitive=tuple(checks), distinct=distinct,
    )  # fmt: skip


@dataclass(frozen=True)
class SensitivePartition:
    """A partition's release as written and parsed back (``release``, its JSON ``lines``),
    its people (``people``, ``qi``) and the sensitive codes of the published records
    (``shown``: their true preimages') and of the people (``target``, with the global Q)."""

    release: RelationalRelease
    people: People
    qi: EncodedQI
    lines: list[str]
    shown: SensitiveTarget
    target: SensitiveTarget


def check_sensitive_partition(part: SensitivePartition) -> tuple[str | None, list[SensitiveCheck]]:
    """Check the sensitive models on one partition of the joint release, as the tables'
    streamed path does (``tables.streamed.check_sensitive_partitions``): every class of
    identical published records (same QI cells and same set part: same JSON line) satisfies
    each model on the values its records show (``tables.streamed.failing_group``), and every
    person's candidates on the joint graph (``relational.verify.joint_view``) satisfy
    each model (``check_model``, with the table's Q). Returns (failure or None, one check per
    model).

    Why partition checks prove the whole release (docs/guarantees/sensitive.md §3–§4, on the
    joint compatibility): identical records are compatible with the same people, so a
    person's candidates in the whole release are a union of whole groups of identical
    records of their partition, and a union of groups that satisfy a class-based model
    satisfies it. Time: the joint compatibility and the matching of the partition,
    O(pairs·√P), plus O(P·s) for the groups.
    """
    groups = pd.factorize(pd.Series(part.lines))[0].astype(np.int64)
    bad = failing_group(part.shown, groups)
    if bad is not None:
        unmet = part.shown.take(np.flatnonzero(groups == bad)).first_unmet()
        assert unmet is not None
        size = int((groups == bad).sum())
        return (
            f"a class of {size} identical records shows {unmet[1]} distinct value(s) of "
            f"{unmet[0].column!r}, short of {describe_model(unmet[0])}"
        ), []
    cand = joint_view(part.release, part.people, part.qi).candidates()
    if cand is None:  # the k-factor check fails such a partition first
        raise ValueError("the joint compatibility graph has no perfect matching")
    target, checks = part.target, []
    for s, model in enumerate(target.models):
        lo, hi = target.offsets[s], target.offsets[s + 1]
        sens = EncodedSensitive(
            model.column,
            np.arange(hi - lo),
            part.shown.codes[:, s],
            target.codes[:, s],
            model.ordered,
            target.q[lo:hi],
        )
        check = check_model(cand, sens, model)
        if not check.passed:
            return check.reason, []
        checks.append(check)
    return None, checks


def _chunk_items(path: Path, start: int, size: int, width: int) -> sp.csr_array:
    """The items of a chunk's people (rows: order positions ``start`` … ``start + size − 1``)
    from its pairs file."""
    if path.exists():
        pairs = np.fromfile(path, dtype=np.int64).reshape(-1, 2)
    else:
        pairs = np.empty((0, 2), np.int64)
    m = sp.csr_array(
        (np.ones(len(pairs), bool), (pairs[:, 0] - start, pairs[:, 1])), shape=(size, width)
    )
    m.sum_duplicates()
    m.sort_indices()
    return m


def _route_pairs(joined: _Joined, rank: np.ndarray, chunk_of: np.ndarray, root: Path) -> list[Path]:
    """Each (person, item) pair, coded against the universe, appended to its person's chunk
    file as (order position, item code). One pair bucket in memory at a time."""
    index = pd.Index(joined.universe)
    paths = [root / f"chunk-{c}.bin" for c in range(int(chunk_of.max()) + 1)]
    for path in joined.pairs:
        lifecycle.check()
        table = pq.read_table(path)
        person = table.column("person").to_numpy()
        code = index.get_indexer(table.column("item").to_numpy(zero_copy_only=False))
        chunk = chunk_of[person]
        order = np.argsort(chunk, kind="stable")
        cuts = np.searchsorted(chunk[order], np.arange(len(paths) + 1))
        for c, target in enumerate(paths):
            rows = order[cuts[c] : cuts[c + 1]]
            if len(rows):
                with target.open("ab") as handle:
                    np.column_stack([rank[person[rows]], code[rows]]).astype(np.int64).tofile(
                        handle
                    )
        path.unlink()
    return paths


def _others_json(table: ScannedTable, rows: np.ndarray) -> list[str] | None:
    """The other published columns of the given people (scan positions), as the tail of each
    JSON line (``relational.io.release_lines``' values); None if there are none."""
    if table.others is None:
        return None
    frame = table.others.take(pa.array(rows)).to_pandas()
    values = {c: [_json_value(v) for v in frame[c].tolist()] for c in frame.columns}
    names = list(frame.columns)
    return [
        json.dumps({c: values[c][r] for c in names}, separators=(",", ":"), ensure_ascii=False)
        for r in range(len(rows))
    ]


# --------------------------------------------------------------------------- the run


def _scan(
    joined: _Joined, files: RelationalFiles, job: RelationalJob, spill: Path, rows: int
) -> ScannedTable:
    """The tables' streamed scan of the people (QIs encoded, other columns spilled), the id,
    the job's identifiers (and a long table's item and position columns) dropped; the roles
    checked against the people's columns first (``relational.job.check_columns``)."""
    dropped = [files.id_column, files.item_column, ROW]
    schema = job.schema
    first = next(iter_table_batches(joined.people, files.csv, 1))
    names = [c for c in first.column_names if c not in (ROW, files.item_column)]
    check_columns(job, files.id_column, names)
    ids = [c for c in dict.fromkeys((*schema.identifiers, *dropped)) if c in first.column_names]
    full = dataclasses.replace(schema, identifiers=tuple(ids))
    table = scan_table(
        joined.people,
        full,
        files.csv,
        job.na,
        spill_dir=spill,
        batch_rows=rows,
        models=job.models,
    )
    clash = [c for c in table.columns if c in SET_FIELDS]
    if clash:
        raise InputError(
            f"column {clash[0]!r} of the people table would clash with the release's set part"
        )
    if table.qi.n != joined.n:  # pragma: no cover - the join and the scan read the same rows
        raise InputError(f"the people table changed while it was read ({table.qi.n} ≠ {joined.n})")
    return table


def buckets_for(files: RelationalFiles, bucket_rows: int = BUCKET_ROWS) -> int:
    """Buckets of the join: about ``bucket_rows`` input rows each (counted from Parquet
    metadata, estimated for CSV)."""
    rows = count_rows(files.people, files.csv)
    if files.items is not None:
        rows += count_rows(files.items, files.csv)
    return max(1, math.ceil(rows / bucket_rows))


def anonymize_files(
    files: RelationalFiles,
    output: str | os.PathLike[str],
    job: RelationalJob,
    execution: Execution | None = None,
    *,
    buckets: int | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
) -> dict[str, object]:
    """Anonymize people too many for memory into a verified JSON Lines release; returns the
    manifest.

    Parameters
    ----------
    files : RelationalFiles
        The people table and the items table (or one long table), the id and item columns,
        the "no item" codes and the CSV options.
    output : path-like
        The release (JSON Lines), written atomically (nothing on failure).
    job : RelationalJob
        The validated run: method, k, QIs, λ, partition size, seed, sensitive models.
    execution : Execution, optional
        Where the chunks run (``auto``: local processes), workers, Dask scheduler, people per
        chunk (``chunk_rows``, default 50,000), progress.
    buckets : int, optional
        Buckets of the on-disk join (default :func:`buckets_for`: about 500,000 input rows
        each).
    batch_rows : int
        Rows per batch read from the inputs.

    Returns
    -------
    dict
        The manifest: the in-memory path's, with ``plan.path = "streamed"``,
        ``output.layout = "partitioned"`` and the verification's partition count; with
        sensitive models ``guarantee.sensitive`` and ``verification.sensitive`` (one check per
        model, merged over the partitions) as in memory.

    Raises
    ------
    InputError
        Bad input (unknown column, repeated id, conflicting attributes, an item id absent
        from the people table, no item at all), or a population criterion (in memory only);
        nothing is written.
    InfeasibleError
        k larger than the number of people, or a sensitive model that the whole table or a
        partition cannot satisfy even as one class; nothing is written.
    VerificationError
        A partition failed verification (never expected); nothing is written.

    Notes
    -----
    Time O(rows) for the join, O(n·d log n) for the order, plus the method's cost per
    partition (Hungarian O(k·P³)) spread over the workers and the verifier's per partition.
    Memory: module docstring. References: Doka et al., ASIACCS 2015 (freeform, §8.1
    partitions); Xue et al., KDD 2012 (the set part).
    """
    refuse_unsupported(job.criteria, "streamed", "in memory only (`executor` threads)")
    started = time.perf_counter()
    run = execution or Execution.build()
    executor = cast(ExecutorName, "processes" if run.executor == "auto" else run.executor)
    chunk_rows = run.chunk_rows or DEFAULT_CHUNK_ROWS
    seconds: dict[str, float] = {}
    with lifecycle.private_directory("anonymatch-rt-") as root:
        clock = time.perf_counter()
        joined = join_files(files, root, buckets or buckets_for(files), batch_rows)
        table = _scan(joined, files, job, root, batch_rows)
        n, qi = joined.n, table.qi
        check_level_fits(job.k, n, "k", "people")
        target = scanned_sensitive_target(table, job.models)  # InfeasibleError if the whole fails
        seconds["join_and_scan"] = time.perf_counter() - clock
        clock = time.perf_counter()
        size = job.size_for(n)
        order = keyed_order(qi, joined.has_items.astype(np.int64))
        rank = np.empty(n, np.int64)
        rank[order] = np.arange(n)
        bounds = partition_bounds(n, size)
        chunks = chunk_ranges(bounds, chunk_rows)
        chunk_of = np.empty(n, np.int32)
        for c, (first, last) in enumerate(chunks):
            chunk_of[order[bounds[first] : bounds[last]]] = c
        pair_files = _route_pairs(joined, rank, chunk_of, root)
        seeds = child_seeds(job.seed, len(bounds) - 1)
        seconds["order"] = time.perf_counter() - clock
        spec = (job.k, job.method.step, job.method.classes, job.item_weight)

        def jobs() -> Iterator[ChunkJob]:
            for c, (first, last) in enumerate(chunks):
                start, stop = int(bounds[first]), int(bounds[last])
                items = _chunk_items(pair_files[c], start, stop - start, len(joined.universe))
                pair_files[c].unlink(missing_ok=True)
                yield ChunkJob(
                    start,
                    qi.take(order[start:stop]),
                    items,
                    bounds[first : last + 1] - start,
                    seeds[first:last],
                    (joined.universe, joined.integer_items),
                    spec,
                    None if target is None else target.take(order[start:stop]),
                )

        sums = np.zeros(len(qi.names))
        totals = np.zeros(3, np.int64)
        least = [np.iinfo(np.int64).max] * 2
        checks: list[SensitiveCheck] = []
        published = StreamedCells(n)
        manifests: list[dict[str, object]] = []
        clock = time.perf_counter()

        def write(tmp: Path) -> None:
            nonlocal sums, totals
            bar = tqdm(
                total=len(bounds) - 1,
                desc=f"{job.method.name} partitions",
                unit="part",
                disable=not run.progress,
            )
            with tmp.open("w", encoding="utf-8") as handle, bar:
                for result in iter_partitions(
                    anonymize_chunk,
                    jobs(),
                    executor=executor if len(chunks) > 1 or run.scheduler else "inline",
                    scheduler=run.scheduler,
                    workers=run.workers,
                ):
                    if result.infeasible is not None:
                        raise InfeasibleError(f"infeasible: {result.infeasible}; nothing written")
                    refuse(result.failure is None, result.failure)
                    tails = _others_json(table, order[result.source])
                    if tails is None:
                        handle.write("\n".join(result.lines) + "\n")
                    else:
                        handle.write(
                            "".join(
                                f"{line[:-1]},{tail[1:]}\n" if tail != "{}" else line + "\n"
                                for line, tail in zip(result.lines, tails, strict=True)
                            )
                        )
                    sums += result.ncp_sums
                    totals += result.totals
                    if checks:
                        merged = zip(checks, result.sensitive, strict=True)
                        checks[:] = [merge_checks(a, b) for a, b in merged]
                    else:
                        checks[:] = result.sensitive
                    least[0] = min(least[0], result.min_matches[0])
                    least[1] = min(least[1], result.min_matches[1])
                    assert result.distinct is not None
                    published.add(result.distinct, order[result.source])
                    bar.update(result.partitions)
            # publish runs the checks before the release is renamed into place: a refused one
            # (an identifier shown; anonymize-rt --strict and a leak) leaves nothing
            seconds["anonymize_verify_write"] = time.perf_counter() - clock
            view = streamed_view(table, job.schema, published.rows())
            loss = loss_from_sums(sums, n, qi)
            partitions = len(bounds) - 1
            produced = Produced(
                kind="relational",
                method=job.method.name,
                parameters={
                    **job.schema.roles(),
                    "id_column": files.id_column,
                    "item_column": files.item_column,
                    "item_weight": job.item_weight,
                    "partition_size": size,
                    "partitions": partitions,
                    "chunk_rows": chunk_rows,
                    "executor": "dask" if run.scheduler else executor,
                    "workers": run.workers,
                },
                guarantee={**KAnonymity(job.k).describe(), "over": "joint compatibility"},
                verification={
                    "passed": True,
                    "k": job.k,
                    "n_original": n,
                    "n_published": n,
                    "min_matches_original": int(least[0]),
                    "min_matches_published": int(least[1]),
                    "k_factor_flow": job.k * n,
                    "k_factor_required": job.k * n,
                    "compatible_pairs": int(totals[2]),
                    "reason": "ok",
                    "partitions": partitions,
                    "checked": "every partition's joint compatibility graph has a k-factor "
                    "(so the whole release's has one)"
                    + (
                        "; in every partition, every class of identical records and every person's "
                        "candidates satisfy the sensitive models (so the whole release does)"
                        if job.models
                        else ""
                    ),
                },
                loss={
                    **loss.to_dict(),
                    "mean_uncertain": float(totals[0]) / n,
                    "mean_max_errors": float(totals[1]) / n,
                },
                seconds={**seconds, "wall": time.perf_counter() - started},
                seeded=job.seed is not None,
                records_in=n,
                records_out=n,
                input_extra={
                    "items": len(joined.universe),
                    "item_rows": joined.item_rows,
                    "people_without_items": int(n - joined.has_items.sum()),
                    "duplicates_removed": joined.duplicates,
                },
                output_extra={"layout": "partitioned"},
                models=job.sensitive_models.describe(),
                model_figures={"sensitive": [c.to_dict() for c in checks]} if job.models else {},
                plan={"path": "streamed", "partition_size": size},
            )
            ids = (*job.schema.identifiers, files.id_column)
            found = release_checks("relational", "streamed", ids, job.strict)
            manifests.append(publish(produced, checks=found, shown=view))

        write_atomically(output, write)
    return manifests[0]
