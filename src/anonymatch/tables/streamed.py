"""Tables of millions of rows: streamed, partitioned, anonymized on every core or on a Dask
cluster, verified partition by partition, written atomically (Doka et al. §8.1 at scale).

1. **Scan** — the input is read in batches (``tables.stream``); each batch's QIs are encoded and the
   encodings merged (global domains, ``schema.concat_encoded``); the other published columns are
   spilled to an Arrow IPC file on local disk and memory-mapped.
2. **Order** — the lexicographic order of the encoded QIs (``order.lexicographic_order``, the
   function the in-memory path and ``verify`` use), cut into ``partition_bounds`` partitions of
   about P records; consecutive partitions are grouped into chunks of about ``chunk_rows`` records.
3. **Chunks** — one job per chunk on the shared runner (``runner.iter_partitions``: this
   process, local processes or Dask). Per partition: the method's graph, the privacy step with
   the partition's own seed (spawned from the run's seed, so the release depends on the seed
   only, never on the executor, the workers or the chunk size), recoding and a shuffle inside
   the partition. The chunk's cells are formatted exactly as they will be written, parsed back
   and verified partition by partition: each partition's compatibility graph (its published
   rows against its originals) must have a k-factor.
4. **Write** — in chunk order the driver attaches the other columns of each row's true
   preimage and appends the batch to the release (``tables.stream.ReleaseWriter``, atomic).

With sensitive models (``--l``/``--t``) the scan also codes the sensitive columns through
global dictionaries, each partition publishes classes that satisfy the models
(``methods.diverse.diverse_clusters`` on the partition as one segment) — or, with the job's
``structure`` ``rings`` and where cheaper, a sensitive ring drawn among its k shifts
(``methods.circulant``, as in memory; the manifest then carries the rings' certificate,
``verify --manifest`` checks it) — and the models are
checked partition by partition (``check_sensitive_partitions``); a partition that cannot
satisfy them stops the run (InfeasibleError, nothing written), docs/guarantees/sensitive.md §4
and §6.

Release layout: partitions follow the lexicographic order of the originals, rows are shuffled
within each partition, and the manifest records ``layout = "partitioned"`` and the partition
count. The k-factors of the partitions together form a k-factor of the whole compatibility
graph (the partitions' originals and rows are disjoint and every partition edge is a
compatibility edge), which is the guarantee ``verify`` checks; see docs/guarantees/scale.md.

Memory (``memory_bound``, docs/guarantees/scale.md): the driver holds the encoded QIs and the
order, (24·d + 32)·n bytes, plus the memory-mapped other columns and ``window`` chunk results;
each worker one chunk, O(chunk_rows·d) plus O(P²) for the method. Rows are never all in memory.

Departure from the issue's "distributed sort": the global order is computed in the driver on
the compact encoded QIs (numpy, O(n log n); 10 M rows in seconds), not by a distributed sort of
the rows; only these arrays, not the rows, grow with n. A dask-dataframe sort would bound the
driver too but makes the partitions depend on its sampled divisions, and with them the release
on the executor.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd
import pyarrow as pa
import scipy.sparse as sp
from tqdm import tqdm

from anonymatch.core import lifecycle
from anonymatch.core.classes import privacy_step
from anonymatch.core.csvsafe import unescape_table
from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.params import Execution, param
from anonymatch.core.release import Produced, publish, refuse
from anonymatch.core.runner import (
    ExecutorName,
    child_seeds,
    iter_partitions,
    partition_bounds,
    partition_bounds_count,
)
from anonymatch.core.view import AttackerView
from anonymatch.tables.columns.schema import (
    DEFAULT_NA_VALUES,
    EncodedQI,
    NAValues,
    Schema,
    check_missing_codes,
    concat_encoded,
    encode_qi,
    missing_codes,
    missing_qi_mask,
)
from anonymatch.tables.io import CsvOptions
from anonymatch.tables.io.cells import format_cells, parse_cells, typed_cells
from anonymatch.tables.io.sidecar import release_schema, write_schema
from anonymatch.tables.io.stream import DEFAULT_BATCH_ROWS, ReleaseWriter, iter_table_batches
from anonymatch.tables.job import ReleaseCheck, TableJob, plan
from anonymatch.tables.methods import BuildOptions, registry
from anonymatch.tables.methods.blocks import block_labels
from anonymatch.tables.methods.diverse import diverse_clusters
from anonymatch.tables.metrics import loss_from_sums, ncp_sums
from anonymatch.tables.models.disclosure import SensitiveModel, SensitiveModels
from anonymatch.tables.models.levels import KAnonymity
from anonymatch.tables.models.sensitive import (
    EncodedSensitive,
    SensitiveCheck,
    SensitiveCodebook,
    SensitiveTarget,
    check_model,
    describe_model,
    merge_checks,
)
from anonymatch.tables.order import lexicographic_order
from anonymatch.tables.pipeline import plan_blocks, sensitive_claims
from anonymatch.tables.recode import GeneralizedQI, concat_cells, recode
from anonymatch.tables.risk.checks import ReleaseView, release_checks
from anonymatch.tables.risk.leakage import DistinctCells, RowCells, StreamedCells, distinct_cells
from anonymatch.tables.verify import attacker_view, verify

DEFAULT_CHUNK_ROWS = 50_000
# Memory model of the streamed path (docs/guarantees/scale.md), in bytes.
BASE_PROCESS_BYTES = 400 * 2**20  # interpreter, numpy/scipy/pandas/pyarrow, numba kernels
PER_ROW_BYTES_PER_QI = 24  # encoded QIs (8 B per cell) while merging the batches + order keys
PER_ROW_BYTES = 32  # the order and its sort scratch
PER_ROW_BYTES_PER_MODEL = 24  # sensitive codes (8 B) and their renumbering while packed
CHUNK_BYTES_PER_CELL = 256  # a chunk's cells as arrays, as text and parsed back


@dataclass
class ScannedTable:
    """The encoded QIs of every kept input row, the published column order, the other
    published columns (memory-mapped from the spill file; None if there are none), and the
    global codes and value counts m of the sensitive columns that have a model (in the models'
    order)."""

    qi: EncodedQI
    columns: list[str]
    others: pa.Table | None
    dropped: int
    sensitive: tuple[tuple[np.ndarray, int], ...] = ()


def scan_table(
    path: object,
    schema: Schema,
    csv: CsvOptions | None = None,
    na_values: NAValues = DEFAULT_NA_VALUES,
    drop_missing: bool = False,
    spill_dir: str | os.PathLike[str] | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    models: Sequence[SensitiveModel] = (),
) -> ScannedTable:
    """Read ``path`` in batches, encode its QIs, (with ``spill_dir``) spill the other output
    columns and code the columns of the sensitive ``models`` through global dictionaries
    (``sensitive.SensitiveCodebook``). One pass over the input; memory O(n·d) for the QI codes,
    one int64 per row and model for the sensitive codes, plus one batch."""
    books = [SensitiveCodebook(m.column, m.ordered) for m in models]
    parts: list[EncodedQI] = []
    columns: list[str] = []
    writer: pa.ipc.RecordBatchFileWriter | None = None
    sink: pa.NativeFile | None = None
    fd, spill = -1, None
    read = dropped = 0
    try:
        for batch in iter_table_batches(path, csv, batch_rows):
            if not columns:
                schema.check_columns(batch.column_names)
                check_missing_codes(na_values, batch.column_names)
                columns = schema.output_columns(batch.column_names)
            # integers stay integers when a batch holds a NULL (not float64): a category's
            # text, "100" not "100.0", is the same whichever batch a row falls in
            frame = batch.select(list(schema.qi)).to_pandas(types_mapper=_nullable_integers)
            keep = None
            if drop_missing:
                missing = missing_qi_mask(frame, schema, na_values)
                if missing.any():
                    keep = ~missing
                    dropped += int(missing.sum())
                    frame = frame.loc[keep].reset_index(drop=True)
            if len(frame):
                parts.append(encode_qi(frame, schema, na_values, row_offset=read))
            if books:
                rows = read + (np.arange(batch.num_rows) if keep is None else np.flatnonzero(keep))
                for book in books:
                    values = batch.column(book.column)
                    if pa.types.is_dictionary(values.type):  # Parquet dictionary pages
                        values = values.cast(values.type.value_type)
                    values = values.take(pa.array(rows - read)) if keep is not None else values
                    book.add(values.to_pandas(), rows)
            read += batch.num_rows
            others = [c for c in columns if c not in schema.qi]
            if spill_dir is not None and others:
                table = batch.select(others)
                if keep is not None:
                    table = table.filter(pa.array(keep))
                if writer is None:
                    # the non-QI columns, sensitive ones included: 0600, unlinked at once
                    fd, spill = lifecycle.anonymous_file(spill_dir, "others.arrow")
                    sink = pa.OSFile(spill, "wb")
                    writer = pa.ipc.new_file(sink, table.schema)
                writer.write_table(table)
        others_table = None
        if writer is not None and sink is not None and spill is not None:
            writer.close()
            sink.close()
            writer = sink = None
            others_table = pa.ipc.open_file(pa.memory_map(spill)).read_all()
    finally:
        if writer is not None:
            with contextlib.suppress(OSError, pa.ArrowException):
                writer.close()
        if sink is not None:
            sink.close()
        if fd >= 0:
            os.close(fd)  # the memory map, if any, keeps the data
    if not parts:
        raise InputError("no rows left to anonymize" if dropped else "input has no data rows")
    qi = parts[0] if len(parts) == 1 else concat_encoded(parts)
    return ScannedTable(qi, columns, others_table, dropped, tuple(b.finish() for b in books))


def _nullable_integers(kind: pa.DataType) -> object:
    """pandas' nullable integer dtypes for Arrow's integers (``to_pandas`` types_mapper)."""
    if pa.types.is_signed_integer(kind):
        return pd.Int64Dtype()
    if pa.types.is_unsigned_integer(kind):
        return pd.UInt64Dtype()
    return None


def chunk_ranges(bounds: np.ndarray, chunk_rows: int) -> list[tuple[int, int]]:
    """Group consecutive partitions (indices into ``bounds``) into chunks of about
    ``chunk_rows`` records, at least one partition each: [(first, last + 1), …]."""
    out, first = [], 0
    for p in range(1, len(bounds)):
        if bounds[p] - bounds[first] >= chunk_rows or p == len(bounds) - 1:
            out.append((first, p))
            first = p
    return out


@dataclass(frozen=True)
class ChunkJob:
    """One chunk of partitions: its records' QIs in global order, the partition boundaries
    within the chunk, one seed per partition, and what to build. With sensitive models,
    ``sensitive`` holds the chunk's records' sensitive codes in the same order (the table's
    distributions Q stay global) and ``partition`` numbers the chunk's first partition."""

    start: int
    qi: EncodedQI
    bounds: np.ndarray
    seeds: list[np.random.SeedSequence]
    k: int
    method: str
    options: BuildOptions
    typed: bool
    sensitive: SensitiveTarget | None = None
    partition: int = 0


@dataclass(frozen=True)
class ChunkBuild:
    """What every chunk builds (the same for all chunks of a run): the level ``k``, the
    ``method`` and its ``options``, and whether the release is ``typed`` (Parquet)."""

    k: int
    method: str
    options: BuildOptions
    typed: bool


@dataclass(frozen=True)
class ChunkResult:
    """A chunk of the release: its QI columns as they are written, the order position of the
    true preimage of each row, per-attribute NCP sums, and the verification outcome."""

    cells: pa.Table
    source: np.ndarray
    ncp_sums: np.ndarray
    partitions: int
    failure: str | None
    min_matches: int
    compatible_pairs: int
    infeasible: str | None = None
    sensitive: tuple[SensitiveCheck, ...] = ()
    stars: int = 0
    rings: tuple[np.ndarray, ...] = ()
    distinct: DistinctCells | None = None  # the chunk's distinct cells, for the leakage check


def anonymize_chunk(job: ChunkJob) -> ChunkResult:
    """Anonymize, format, re-parse and verify one chunk (runs on a worker). Time: the method's
    cost per partition (e.g. Hungarian O(k·P³)) plus O(chunk·d) formatting and parsing.

    With sensitive models each partition is one segment of ``diverse_clusters``: classes of
    ≥ k of its records that satisfy the models, published as bicliques — or a sensitive ring
    drawn among its k shifts where one costs less GCP (``_sensitive_partition``; its rows go
    to the certificate, ``ChunkResult.rings``). A partition whose
    records cannot, even as one class, makes the chunk report ``infeasible`` (nothing of it is
    published); the greedy clustering itself falls back to that one class, so no other case
    fails. Partitions are not merged across chunks, unlike in memory (``diverse_clusters``
    merges a failing segment into the next): a partition would then depend on its neighbours'
    outcome, chunks could no longer run independently on the workers, and the partition
    boundaries — which fix the release's layout, its seeds and ``verify_file``'s blocks —
    would move. A larger ``--partition-size`` is the remedy."""
    build = registry()[job.method].build
    assert build is not None, "the streamed path runs graph builders only"
    parts, sources = [], []
    rings: dict[int, np.ndarray] = {}  # partition → its ring's rows (chunk positions), §6
    for p, seed in enumerate(job.seeds):
        lo, hi = int(job.bounds[p]), int(job.bounds[p + 1])
        qi = job.qi.take(np.arange(lo, hi))
        ring = None
        if job.options.blocks:  # the plan's blocks, partition by partition
            graph = GeneralizationGraph.from_classes(block_labels(qi, job.k))
        elif job.sensitive is None:
            graph = build(qi, job.k, job.options)
        else:
            target = job.sensitive.take(np.arange(lo, hi))
            unmet = target.first_unmet()
            try:
                if unmet is not None:
                    model, distinct = unmet
                    raise InfeasibleError(
                        f"its column {model.column!r} has {distinct} distinct value(s) and "
                        f"cannot satisfy {describe_model(model)} even as one class"
                    )
                graph, ring = _sensitive_partition(qi, job.k, target, job.options.rings)
            except InfeasibleError as error:
                reason = str(error).removeprefix("infeasible: ")
                return _infeasible(
                    f"{_partition_name(job, p)}: {reason}; partitions are anonymized "
                    "independently on the streamed path (never merged), so a larger "
                    "`partition_size` gives each more records to mix"
                )
        rng = np.random.default_rng(seed)
        if ring is None:
            assigned = privacy_step(graph, rng, workers=1)
        else:  # one of the ring's k shifts (§6)
            assigned = _ring_shift(graph, ring, job.k, rng)
        truth_of = np.empty(qi.n, dtype=np.int64)
        truth_of[assigned] = np.arange(qi.n)
        shuffle = rng.permutation(qi.n)  # row r of the partition shows published record shuffle[r]
        parts.append(recode(graph, qi).take(shuffle))
        sources.append(job.start + lo + truth_of[shuffle])
        if ring is not None:
            position = np.empty(qi.n, dtype=np.int64)
            position[shuffle] = np.arange(qi.n)
            rings[p] = lo + position[ring]
    table = cells_table(concat_cells(parts), job.qi, job.typed)
    written = parse_cells(table.to_pandas(), job.qi)  # what is written is what is verified
    failure, min_matches, pairs = verify_partitions(written, job.qi, job.bounds, job.k)
    source = np.concatenate(sources)
    checks: tuple[SensitiveCheck, ...] = ()
    if job.sensitive is not None and failure is None:
        failure, checks = check_sensitive_partitions(written, job, source - job.start, rings)
    return ChunkResult(
        table,
        source,
        ncp_sums(written, job.qi),
        len(job.seeds),
        failure,
        min_matches,
        pairs,
        sensitive=checks,
        stars=int(written.num_star.sum() + written.cat_star.sum()),
        rings=tuple(rings[p] for p in sorted(rings)),
        distinct=distinct_cells(written),
    )


def _sensitive_partition(
    qi: EncodedQI, k: int, target: SensitiveTarget, rings: bool = False
) -> tuple[GeneralizationGraph, np.ndarray | None]:
    """A partition's graph under sensitive models, as the in-memory path chooses it for a
    partition it did not merge (``circulant.sensitive_build``): the classes of
    ``diverse_clusters`` (the partition as one segment), or — with ``rings`` (the job's
    ``structure`` ``rings``) — a sensitive ring (``circulant.cheaper_ring``) where one exists
    and costs less GCP. Returns (graph, ring
    order or None). Raises InfeasibleError like ``diverse_clusters``. Time: the class
    construction plus the ring's O(P²·(d + slots)); memory O(P²)."""
    from anonymatch.tables.methods.circulant import cheaper_ring

    classes, _ = diverse_clusters(qi, k, target, qi.n)  # one segment
    if not rings:  # structure "classes" (the default)
        return classes, None
    ring = cheaper_ring(qi, k, target, classes)
    return (classes, None) if ring is None else (ring[1], ring[0])


def _ring_shift(
    graph: GeneralizationGraph, ring: np.ndarray, k: int, rng: np.random.Generator
) -> np.ndarray:
    """The privacy step of a partition that is one ring: one of its k shifts, uniformly
    (``circulant.shift_assignment``). O(P)."""
    from anonymatch.tables.methods.circulant import RingRelease, shift_assignment

    release = RingRelease(graph, (ring,), np.full(len(ring), -1, np.int64), 1, k)
    return shift_assignment(release, rng)


def _infeasible(message: str) -> ChunkResult:
    return ChunkResult(pa.table({}), np.empty(0, np.int64), np.zeros(0), 0, None, 0, 0, message)


def _partition_name(job: ChunkJob, p: int) -> str:
    """Partition p of the chunk, for messages: its number and its records' positions in the
    lexicographic order (1-based)."""
    first, last = job.start + int(job.bounds[p]) + 1, job.start + int(job.bounds[p + 1])
    return f"partition {job.partition + p + 1} (records {first}–{last} of the QI order)"


def check_sensitive_partitions(
    written: GeneralizedQI,
    job: ChunkJob,
    preimage: np.ndarray,
    rings: dict[int, np.ndarray] | None = None,
) -> tuple[str | None, tuple[SensitiveCheck, ...]]:
    """Check the sensitive models of a chunk partition by partition, from the written cells and
    the values each published row carries (its true preimage's: ``preimage[r]`` is the chunk
    position of row r's original). Returns (first failure or None, one check per model over
    the chunk's people).

    Two checks per partition, both from what is published and the originals' QIs:

    1. **classes**: every group of identical published rows satisfies each model on the values
       its rows show;
    2. **candidates**: every person's candidates in the partition (the attacker's view of the
       partition's rows against its originals, ``verify.attacker_view``) satisfy each model
       (``check_model``, the
       check of the in-memory path; its figures go to the manifest).

    Why partition checks suffice for the whole release (docs/guarantees/sensitive.md §3, §4):
    rows with identical cells are compatible with the same people, so any perfect matching of
    the whole compatibility graph can exchange them, and a person's candidates in the whole
    release are a union of whole groups of identical rows; within a partition these groups are
    the classes (bicliques) the partition published, or unions of them. Each group satisfies
    the model (check 1), and a union of value multisets that satisfy a class-based model
    satisfies it (distinct values only grow, entropy and recursive diversity are monotone, the
    EMD to Q is convex). The rows of the release are the partitions' rows, so nothing else
    can be a candidate. Time per partition of P rows: O(P·d log P) for the groups plus the
    candidates' max-flow on groups.

    A partition published as a sensitive ring (``rings[p]``: its rows, chunk positions, in
    ring order) is checked as ``models.certified`` checks a certificate, for every draw: the
    certified graph must fit its rows and originals, and every cyclic window of k rows must
    satisfy each model (``_ring_units``; docs/guarantees/sensitive.md §6)."""
    target = job.sensitive
    assert target is not None
    merged: list[SensitiveCheck | None] = [None] * len(target.models)
    for p in range(len(job.bounds) - 1):
        rows = np.arange(job.bounds[p], job.bounds[p + 1])
        cells = written.take(rows)
        shown = target.take(preimage[rows])  # the values on the partition's published rows
        cand: sp.csr_array | AttackerView | None
        if rings and p in rings:
            cand = _ring_units(cells, job.qi.take(rows), job.k, rings[p] - rows[0])
            if cand is None:
                return f"{_partition_name(job, p)}: its ring graph does not fit its rows", ()
            bad = None
        else:
            view = attacker_view(cells, job.qi.take(rows))
            groups = view.group  # the groups of identical published rows
            bad = failing_group(shown, groups)
            cand = view.candidates()
        if bad is not None:
            unmet = shown.take(np.flatnonzero(groups == bad)).first_unmet()
            assert unmet is not None
            model, distinct = unmet
            size = int((groups == bad).sum())
            return (
                f"{_partition_name(job, p)}: a class of {size} identical rows shows "
                f"{distinct} distinct value(s) of {model.column!r}, short of "
                f"{describe_model(model)}"
            ), ()
        if cand is None:
            return f"{_partition_name(job, p)}: no perfect matching", ()
        for s, model in enumerate(target.models):
            lo, hi = target.offsets[s], target.offsets[s + 1]
            sens = EncodedSensitive(
                model.column,
                np.arange(hi - lo),
                shown.codes[:, s],
                target.codes[rows, s],
                model.ordered,
                target.q[lo:hi],
            )
            check = check_model(cand, sens, model)
            if not check.passed:
                return f"{_partition_name(job, p)}: {check.reason}", ()
            previous = merged[s]
            merged[s] = check if previous is None else merge_checks(previous, check)
    return None, tuple(c for c in merged if c is not None)


def _ring_units(
    cells: GeneralizedQI, qi: EncodedQI, k: int, ring: np.ndarray
) -> sp.csr_array | None:
    """The units whose values a ring partition's models are checked on: its k-row cyclic
    windows (``certified.units``), or None if the certified ring graph does not exist on its
    rows and originals (``certified.structure_exists``). O(P·k) plus the matching."""
    from anonymatch.tables.models.certified import structure_exists, units

    if not structure_exists(cells, qi, k, [ring]):
        return None
    return units(cells, k, [ring])


def failing_group(shown: SensitiveTarget, groups: np.ndarray) -> int | None:
    """The first group (label) whose rows' values fail a model, or None."""
    n_groups, slots = int(groups.max()) + 1 if len(groups) else 0, int(shown.offsets[-1])
    counts = np.zeros((n_groups, slots), np.int64)
    for s in range(shown.codes.shape[1]):
        np.add.at(counts, (groups, shown.offsets[s] + shown.codes[:, s]), 1)
    ok = shown.ok(counts)
    return None if ok.all() else int(np.flatnonzero(~ok)[0])


def cells_table(cells: GeneralizedQI, qi: EncodedQI, typed: bool) -> pa.Table:
    """The QI columns of a release as Arrow: typed (Parquet layout) or CSV text."""
    if typed:
        return pa.table(typed_cells(cells, qi))
    text = format_cells(cells, qi)
    return pa.table({name: pa.array(text[name], pa.string()) for name in qi.names})


def verify_partitions(
    cells: GeneralizedQI, qi: EncodedQI, bounds: np.ndarray, k: int, offset: int = 0
) -> tuple[str | None, int, int]:
    """Verify every partition [bounds[p], bounds[p+1]) of published rows against the same
    positions of ``qi``. Returns (first failure or None, fewest matches of any original, total
    compatible pairs). ``offset`` numbers the rows in messages."""
    min_matches, pairs = np.iinfo(np.int64).max, 0
    for p in range(len(bounds) - 1):
        rows = np.arange(bounds[p], bounds[p + 1])
        report = verify(cells.take(rows), qi.take(rows), k)
        pairs += report.compatible_pairs
        min_matches = min(min_matches, report.min_matches_original)
        if not report.passed:
            first, last = offset + rows[0] + 1, offset + rows[-1] + 1
            return f"partition of rows {first}–{last}: {report.reason}", min_matches, pairs
    return None, int(min_matches), pairs


def _chunk_jobs(
    qi: EncodedQI,
    order: np.ndarray,
    bounds: np.ndarray,
    chunks: list[tuple[int, int]],
    seeds: list[np.random.SeedSequence],
    build: ChunkBuild,
    target: SensitiveTarget | None = None,
) -> Iterator[ChunkJob]:
    """One ``ChunkJob`` per (first, last) partition range of ``chunks``: the records
    ``order[bounds[first]:bounds[last]]`` with their seeds, what to ``build``, and their slice
    of ``target``'s sensitive codes."""
    for first, last in chunks:
        start, stop = int(bounds[first]), int(bounds[last])
        yield ChunkJob(
            start,
            qi.take(order[start:stop]),
            bounds[first : last + 1] - start,
            seeds[first:last],
            build.k,
            build.method,
            build.options,
            build.typed,
            None if target is None else target.take(order[start:stop]),
            first,
        )


def scanned_sensitive_target(
    table: ScannedTable, models: Sequence[SensitiveModel]
) -> SensitiveTarget | None:
    """The sensitive codes of every kept row (coded during the scan: O(n) ints per model in
    the driver) packed for the builders; None without models. Raises InfeasibleError if the
    whole table cannot satisfy a model — before any partition is anonymized."""
    if not models:
        return None
    target = SensitiveTarget.build(
        [codes for codes, _ in table.sensitive], [m for _, m in table.sensitive], tuple(models)
    )
    table.sensitive = ()  # the packed copy is the only one kept
    target.check_table()
    return target


def anonymize_file(
    input_path: object,
    output: str | os.PathLike[str],
    job: TableJob,
    *,
    csv: CsvOptions | None = None,
    executor: ExecutorName | None = None,
    replace: bool = False,
    csv_safe: bool = True,
    output_table: str | None = None,
) -> dict[str, object]:
    """Anonymize a table file into a verified, partition-ordered release file (or directory of
    Parquet parts, or database table) without holding more than a few chunks of rows; returns
    the manifest.

    Parameters
    ----------
    input_path, output : path-like
        The table file (or directory of Parquet parts, or database URL with ``csv.table`` or
        ``csv.query``, or a **Dask DataFrame**: its partitions are computed one at a time in
        order and never collected, ``tables.io.stream.iter_table_batches``) and the release.
    job : TableJob
        The validated run (``anonymatch.tables.job``): a method with the ``streamable``
        capability, its k, models, partition size, rows per job (``execution.chunk_rows``,
        default ``DEFAULT_CHUNK_ROWS``), workers and scheduler.
    csv : CsvOptions, optional
        How to read a CSV input.
    executor : {"inline", "threads", "processes", "dask"}, optional
        Where the partitions run; default the job's (``auto``: processes, or Dask with a
        scheduler).
    replace : bool
        Let an existing directory of parts be replaced (at the end, atomically).
    csv_safe : bool
        Neutralize formula-like text cells of a CSV/TSV release (``core.csvsafe``; recorded as
        ``output.csv_safe``).
    output_table : str, optional
        With ``output`` a database URL: the release table, written batch by batch in one
        transaction (``tables.io.sql.SqlReleaseWriter``; ``replace`` drops an existing one in
        that transaction).

    Returns
    -------
    dict
        The manifest (with the run's ``plan``).

    Notes
    -----
    ``job.models`` (ℓ-diversity / t-closeness; a sensitive column also in ``numeric`` gets the
    ordered distance): each partition then publishes classes that satisfy the models, or (with
    ``job.structure`` ``rings``) a sensitive ring where cheaper (``anonymize_chunk``), checked
    partition by partition (``check_sensitive_partitions``), and the manifest gets
    ``guarantee.sensitive``, ``verification.sensitive``, ``guarantee.construction``,
    ``verification.ring_records`` and, with rings, ``guarantee.certificate`` (every ring's
    release rows; O(ring records) ints in the driver) and ``guarantee.insider_weakness`` as on
    the in-memory path. The sensitive values are coded during the scan, one
    int64 per row and model.

    Raises InputError, InfeasibleError (k > rows; a model that the whole table — checked before
    any partition is anonymized — or one partition cannot satisfy) or VerificationError (a
    partition failed verification; nothing is written). Complexity: O(n·d log n) for the order
    plus the method's cost per partition, spread over the workers.
    """
    started = time.perf_counter()
    run = plan(job, streamed=True)
    size = run.partition_size
    assert job.k is not None and size is not None
    k, method, schema, models, seed = job.k, job.method.name, job.schema, job.models, job.seed
    na_values, drop_missing, time_limit = job.na, job.drop_missing, job.time_limit
    chunk_rows = job.execution.chunk_rows or DEFAULT_CHUNK_ROWS
    if executor is None:
        asked = job.execution.executor
        executor = "processes" if asked == "auto" else asked
    scheduler, workers, progress = (
        job.execution.scheduler,
        job.execution.workers,
        job.execution.progress,
    )
    if output_table is not None:
        from anonymatch.tables.io.sql import (
            ColumnTypes,
            SqlReleaseWriter,
            SqlSource,
            is_database_url,
        )

        source = None  # a database source's column types, kept but for the QIs
        if is_database_url(input_path) and csv is not None:
            source = SqlSource(str(input_path), csv.table, csv.query)
        release: ReleaseWriter | SqlReleaseWriter = SqlReleaseWriter(
            str(output), output_table, replace, ColumnTypes.of(source, schema.qi)
        )
    else:
        release = ReleaseWriter(output, replace=replace, csv_safe=csv_safe)
    with release as writer, lifecycle.private_directory("anonymatch-spill-") as spill:
        t0 = time.perf_counter()
        table = scan_table(input_path, schema, csv, na_values, drop_missing, spill, models=models)
        qi, n = table.qi, table.qi.n
        missing = int(qi.missing_records().sum()) if qi.has_missing else 0
        run = plan(job, rows=n, missing=missing, streamed=True)
        target = scanned_sensitive_target(table, models)
        order = lexicographic_order(qi)
        bounds = partition_bounds(n, size)
        chunks = chunk_ranges(bounds, chunk_rows)
        seeds = child_seeds(seed, len(bounds) - 1)
        t_scan = time.perf_counter() - t0
        jobs = _chunk_jobs(
            qi,
            order,
            bounds,
            chunks,
            seeds,
            ChunkBuild(
                k,
                method,
                BuildOptions(
                    time_limit, rings=job.structure == "rings", blocks=run.blocks is not None
                ),
                writer.parquet,
            ),
            target,
        )
        checks: list[SensitiveCheck] = []
        rings: list[np.ndarray] = []  # every ring's release rows, for the certificate
        columns: list[str] = []  # of the release, for the sidecar of a CSV release
        executor = _effective(executor, scheduler, len(chunks))
        sums = np.zeros(len(qi.names))
        min_matches, pairs, stars = np.iinfo(np.int64).max, 0, 0
        published = StreamedCells(n)
        bar = tqdm(
            total=len(bounds) - 1, desc=f"{method} partitions", unit="part", disable=not progress
        )
        with bar:
            for result in iter_partitions(
                anonymize_chunk, jobs, executor=executor, scheduler=scheduler, workers=workers
            ):
                if result.infeasible is not None:
                    raise InfeasibleError(f"infeasible: {result.infeasible}")
                refuse(result.failure is None, result.failure)
                batch = _release_batch(result, table, order)
                rings.extend(_release_rows(result.rings, writer.rows))
                columns = batch.column_names
                writer.write(batch)
                sums += result.ncp_sums
                min_matches = min(min_matches, result.min_matches)
                pairs += result.compatible_pairs
                stars += result.stars
                assert result.distinct is not None
                published.add(result.distinct, order[result.source])
                checks = (
                    [merge_checks(a, b) for a, b in zip(checks, result.sensitive, strict=True)]
                    if checks
                    else list(result.sensitive)
                )
                bar.update(result.partitions)
        view = streamed_view(table, schema, published.rows())
        loss = loss_from_sums(sums, n, qi)
        codes = missing_codes(na_values)
        verdict = SensitiveModels.verdict(checks) if models else None
        models_claim, models_figures = sensitive_claims(
            job.check.sensitive_models, verdict, k, rings
        )
        suppression, run_plan = plan_blocks(run, job, len(bounds) - 1 if run.blocks else 0)
        produced = Produced(
            kind="table",
            method=method,
            parameters={
                **schema.roles(),
                "partition_size": size,
                "partitions": len(bounds) - 1,
                "chunk_rows": chunk_rows,
                "executor": "dask" if scheduler else executor,
                "workers": workers,
                **(
                    {"na_codes": {c: list(v) for c, v in codes.columns.items()}}
                    if codes.columns
                    else {}
                ),
                **suppression,
            },
            guarantee=KAnonymity(k).describe(),
            verification={
                "passed": True,
                "k": k,
                "checked": "every partition has a k-factor (so the whole release has one)"
                + (
                    "; in every partition, every class of identical rows and every person's "
                    "candidates satisfy the sensitive models (so the whole release does)"
                    if models
                    else ""
                )
                + (_RING_CHECKED if rings else ""),
                "partitions": len(bounds) - 1,
                "min_matches_original": int(min_matches),
                "compatible_pairs": int(pairs),
            },
            loss={**loss.to_dict(), "suppressed_cells": stars},
            seconds={
                "scan_and_order": t_scan,
                "wall": time.perf_counter() - started,
            },
            seeded=seed is not None,
            records_in=n + table.dropped,
            records_out=n,
            input_extra={
                "dropped_missing": table.dropped,
                "suppressed": 0,
                "missing_values": int(qi.num_missing.sum() + qi.cat_missing.sum()),
            },
            output_extra={
                "layout": "partitioned",
                **({"csv_safe": csv_safe} if writer.sidecar else {}),
            },
            models=models_claim,
            model_figures=models_figures,
            plan=run_plan,
        )
        found = release_checks("table", "streamed", schema.identifiers, job.strict)
        manifest = publish(produced, checks=found, shown=view)  # refused: nothing committed
        sidecar = None
        if writer.sidecar:  # kept columns are text here: the batches never meet
            sidecar = write_schema(output, release_schema(None, qi, columns))
        elif output_table is not None and isinstance(
            writer, SqlReleaseWriter
        ):  # in its transaction
            writer.typing = release_schema(None, qi, columns)
        try:
            writer.commit()
        except BaseException:
            if sidecar is not None:
                Path(sidecar).unlink(missing_ok=True)
            raise
    return manifest


def streamed_view(table: ScannedTable, schema: Schema, published: RowCells) -> ReleaseView:
    """What the release checks read of a streamed release (``risk.checks.ReleaseView``): row
    i shows original i's kept values beside ``published`` row i, each kept column read in turn
    from the memory-mapped spill file (the in-memory checks' rules and figures). Memory O(n)
    per column and categorical QI, one column at a time."""
    others = table.others
    names = [c for c in table.columns if c not in schema.qi]

    def kept() -> Iterator[tuple[str, pd.Series, None]]:
        for name in names:
            assert others is not None
            values = others.column(name)
            if pa.types.is_dictionary(values.type):
                values = values.cast(values.type.value_type)
            yield name, values.to_pandas(types_mapper=_nullable_integers), None

    return ReleaseView(table.qi, published, schema, tuple(table.columns), kept)


_RING_CHECKED = (
    "; in a partition published as a ring, the certified ring graph fits and every cyclic "
    "window of k rows satisfies them, for every draw (guarantee.certificate)"
)


def _release_rows(rings: tuple[np.ndarray, ...], before: int) -> list[np.ndarray]:
    """A chunk's rings as release rows: its rows follow the ``before`` rows written so far."""
    return [before + ring for ring in rings]


def memory_bound(
    n: int,
    d: int,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    workers: int = 0,
    window: int | None = None,
    other_bytes_per_row: int = 64,
    models: int = 0,
) -> int:
    """Estimated peak memory (bytes) of a streamed run over n rows with d QIs: the driver
    holds the encoded QIs and the order, (24·d + 32)·n bytes, the memory-mapped other columns
    (``other_bytes_per_row``·n, page cache the kernel may reclaim) and ``window`` chunk results
    (default 2 per worker) and, with ``models`` sensitive models, 24 bytes per row and model for
    the sensitive codes; each of ``workers`` worker processes (0 = the driver does the work)
    one chunk of 256·d bytes per row, the method's O(P²) being negligible next to it."""
    window = (2 * workers if workers else 0) if window is None else window
    chunk = CHUNK_BYTES_PER_CELL * d * chunk_rows
    driver = BASE_PROCESS_BYTES + n * (
        PER_ROW_BYTES_PER_QI * d + PER_ROW_BYTES + PER_ROW_BYTES_PER_MODEL * models
    )
    driver += n * other_bytes_per_row + (1 + window) * chunk
    return driver + workers * (BASE_PROCESS_BYTES + chunk)


def _effective(executor: ExecutorName, scheduler: str | None, jobs: int) -> ExecutorName:
    """A single chunk runs in this process (no pool to start) unless Dask was asked for."""
    if jobs <= 1 and executor != "dask" and not scheduler:
        return "inline"
    return executor


def _release_batch(result: ChunkResult, table: ScannedTable, order: np.ndarray) -> pa.Table:
    """The chunk's QI cells plus the other columns of each row's true preimage, in the
    release's column order."""
    columns = {name: result.cells.column(name) for name in result.cells.column_names}
    if table.others is not None:
        others = table.others.take(pa.array(order[result.source]))
        columns.update((name, others.column(name)) for name in others.column_names)
    arrays = [columns[name] for name in table.columns]
    return pa.Table.from_arrays(arrays, names=table.columns)


@dataclass(frozen=True)
class VerifyJob:
    """Published rows of consecutive partitions and the QIs of their originals."""

    offset: int
    published: pa.Table
    qi: EncodedQI
    bounds: np.ndarray
    k: int


def verify_chunk(job: VerifyJob) -> tuple[str | None, int, int]:
    cells = parse_cells(job.published.to_pandas(), job.qi)
    return verify_partitions(cells, job.qi, job.bounds, job.k, job.offset)


def verify_file(
    original: str | os.PathLike[str],
    published: str | os.PathLike[str],
    check: ReleaseCheck,
    partitions: int,
    *,
    csv: CsvOptions | None = None,
    execution: Execution | None = None,
) -> dict[str, object]:
    """Verify a partition-ordered release (``layout = "partitioned"``) partition by partition,
    streaming both files: partition p holds the published rows at positions
    [b_p, b_{p+1}) of ``partition_bounds_count(n, partitions)`` and the originals at the same
    positions of the lexicographic order. A k-factor in every partition is a k-factor of the
    whole compatibility graph, so passing proves the release's guarantee; a release whose rows
    are not laid out so fails (verify it with the global check instead).

    ``check`` gives the level, the QIs and how the original's missing values are read;
    ``execution`` the executor (default: processes), workers, scheduler, rows per job and
    progress. Returns a report dict (``passed``, ``reason``, counts). Memory O(n·d) for the
    original's codes plus a few chunks."""
    run = execution or Execution("processes")
    if check.k is None:
        raise InputError(f"missing {param('k')}")
    k, schema = check.k, check.schema
    table = scan_table(original, schema, csv, check.na, check.drop_missing)
    qi, n = table.qi, table.qi.n
    if partitions < 1 or partitions > n:
        raise InputError(f"the manifest's partition count {partitions} does not fit {n} rows")
    order = lexicographic_order(qi)
    bounds = partition_bounds_count(n, partitions)
    rows_per_job = run.chunk_rows or DEFAULT_CHUNK_ROWS
    chunks = chunk_ranges(bounds, rows_per_job)
    state = {"rows": 0}
    executor = _effective(cast(ExecutorName, run.executor), run.scheduler, len(chunks))

    def jobs() -> Iterator[VerifyJob]:
        pending: list[pa.Table] = []
        held = 0
        batches = iter_table_batches(published, CsvOptions(), rows_per_job)  # a release: header
        text_release = not CsvOptions().reads_parquet(published)  # CSV cells may be escaped
        for first, last in chunks:
            start, stop = int(bounds[first]), int(bounds[last])
            while held < stop - start:
                batch = next(batches, None)
                if batch is None:
                    break
                missing = [c for c in qi.names if c not in batch.column_names]
                if missing:
                    raise InputError(f"the release has no column {missing[0]!r}")
                cells = batch.select(list(qi.names))
                pending.append(unescape_table(cells) if text_release else cells)
                held += batch.num_rows
            if held < stop - start:
                state["rows"] = start + held
                return
            rows = pa.concat_tables(pending)
            yield VerifyJob(
                start,
                rows.slice(0, stop - start),
                qi.take(order[start:stop]),
                bounds[first : last + 1] - start,
                k,
            )
            rest = rows.slice(stop - start)
            pending, held = ([rest] if rest.num_rows else []), rest.num_rows
        state["rows"] = n + held + sum(b.num_rows for b in batches)

    failure, min_matches, pairs = None, np.iinfo(np.int64).max, 0
    with tqdm(total=len(chunks), desc="verify", unit="chunk", disable=not run.progress) as bar:
        for result in iter_partitions(
            verify_chunk, jobs(), executor=executor, scheduler=run.scheduler, workers=run.workers
        ):
            bar.update()
            min_matches, pairs = min(min_matches, result[1]), pairs + result[2]
            if result[0] is not None:
                failure = result[0]
                break
    if failure is None and state["rows"] != n:
        failure = f"the release has {state['rows']} rows but the original has {n}"
    return {
        "passed": failure is None,
        "k": k,
        "n_original": n,
        "partitions": partitions,
        "min_matches_original": int(min_matches) if pairs else 0,
        "compatible_pairs": int(pairs),
        "reason": failure or "ok",
    }


def release_frame(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A whole (small) release read back, for tests and examples."""
    return pa.concat_tables(list(iter_table_batches(path))).to_pandas()
