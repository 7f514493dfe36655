"""Streaming table I/O for inputs and releases larger than memory.

``iter_table_batches`` reads a CSV/TSV file, a Parquet file or a directory of Parquet parts as
Arrow tables of at most ``batch_rows`` rows (CSV cells as text, exactly as ``read_table`` reads
them). ``ReleaseWriter`` writes a release batch by batch to one CSV/TSV file, one Parquet file
(a row group per batch) or a directory of Parquet parts, under a temporary name that is renamed
into place only when the whole release has been written (``commit``): an interrupted or failed
run leaves nothing under the final name.
"""

from __future__ import annotations

import contextlib
import csv
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa

from anonymatch.core import lifecycle
from anonymatch.core.csvsafe import escape_table
from anonymatch.core.errors import InputError
from anonymatch.core.files import output_error, staging
from anonymatch.tables.io import (
    CsvOptions,
    _first_line,
    check_header,
    check_names,
    csv_separator,
    is_parquet,
    read_csv_options,
    refuse_short_rows,
)

if TYPE_CHECKING:  # imported where used: ``anonymize`` of a small table never needs them
    import pyarrow.csv as pacsv
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq

DEFAULT_BATCH_ROWS = 100_000


def is_directory_output(path: str | os.PathLike[str]) -> bool:
    """A release path names a directory of Parquet parts if it ends with a separator or has no
    file extension."""
    text = str(path)
    return text.endswith(("/", os.sep)) or not Path(text).suffix


def count_rows(path: str | os.PathLike[str], options: CsvOptions | None = None) -> int:
    """Data rows of a table: exact from Parquet metadata; for CSV estimated from the file size
    and the first MiB of lines (cheap; used only to choose between in-memory and streaming); for
    a database URL, ``SELECT count(*)`` of ``options.table``/``options.query`` on the server."""
    from anonymatch.tables.io.sql import count_sql_rows, is_database_url

    if is_database_url(path):
        options = options or CsvOptions()
        return count_sql_rows(str(path), options.table, options.query)
    p = Path(path)
    if p.is_dir() or (options or CsvOptions()).reads_parquet(p):
        return int(_parquet_dataset(p).count_rows())
    size = p.stat().st_size
    with open(p, "rb") as fh:
        head = fh.read(1 << 20)
    lines = max(1, head.count(b"\n"))
    estimate = size * lines // max(1, len(head))
    return int(estimate) - (0 if options and options.names else 1)


def is_dask_frame(value: object) -> bool:
    """Whether ``value`` is a Dask DataFrame (told by its type's module: Dask is never
    imported for anything else). O(1)."""
    library = type(value).__module__.split(".", 1)[0]
    return library in ("dask", "dask_expr") and type(value).__name__ == "DataFrame"


def is_spark_frame(value: object) -> bool:
    """Whether ``value`` is a Spark DataFrame (classic or Spark Connect; told by its type's
    module: pyspark is never imported for anything else). O(1)."""
    library = type(value).__module__.split(".", 1)[0]
    return library == "pyspark" and type(value).__name__ == "DataFrame"


def iter_table_batches(
    path: object,
    options: CsvOptions | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
) -> Iterator[pa.Table]:
    """Arrow tables of consecutive rows of the input: a CSV/TSV or Parquet file, a directory of
    Parquet parts, a database URL with ``options.table``/``options.query`` (a server-side
    cursor, ``tables.io.sql.iter_sql_batches``), a Dask DataFrame (its partitions computed
    one at a time, :func:`_dask_batches`) or a Spark DataFrame (one partition at a time,
    :func:`_spark_batches`). Raises InputError (one line) on an
    unreadable or malformed input; the first batch is read before anything is yielded, so a
    bad header fails early. Memory O(batch_rows · row width) (a Dask partition's rows)."""
    options = options or CsvOptions()
    from anonymatch.tables.io.sql import is_database_url, iter_sql_batches

    if is_dask_frame(path):
        yield from _dask_batches(path, batch_rows)
        return
    if is_spark_frame(path):
        yield from _spark_batches(path, batch_rows)
        return
    if not isinstance(path, str | os.PathLike):
        raise InputError(
            "a table input is a path, a database URL, a Dask or a Spark DataFrame, got "
            + type(path).__name__
        )
    if is_database_url(path):
        yield from iter_sql_batches(str(path), options.table, options.query, batch_rows)
        return
    p = Path(path)
    if not p.exists():
        raise InputError(f"input file not found: {path}")
    if not os.access(p, os.R_OK):
        raise InputError(f"input file is not readable: {path}")
    if p.is_dir() or options.reads_parquet(p):
        yield from _parquet_batches(p, batch_rows)
    else:
        yield from _csv_batches(p, options, batch_rows)


def _dask_batches(frame: Any, batch_rows: int) -> Iterator[pa.Table]:
    """Batches of a Dask DataFrame in partition order, never collecting it: each partition is
    one delayed object (``to_delayed``) computed on its own — by the scheduler in use (a
    ``dask.distributed`` client's cluster, else Dask's default) — when the previous one's
    batches have been consumed, so one partition's rows are held at a time. Every partition
    is cast to the first one's Arrow schema (a partition of NULLs only has no type of its
    own); a column that cannot be is an InputError. Memory O(one partition); time O(rows)."""
    names = [str(c) for c in frame.columns]
    schema: pa.Schema | None = None
    rows = 0
    for index, part in enumerate(frame.to_delayed()):
        pandas_part = part.compute()
        table = pa.Table.from_pandas(pandas_part, preserve_index=False).rename_columns(names)
        del pandas_part
        if schema is None:
            schema = pa.schema([f.with_type(pa.string()) if pa.types.is_null(f.type) else f
                                for f in table.schema])  # fmt: skip
        try:
            table = table.cast(schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
            raise InputError(
                f"partition {index} of the Dask DataFrame does not have the types of the first "
                f"({_first_line(exc)})"
            ) from None
        for start in range(0, table.num_rows, batch_rows):
            rows += min(batch_rows, table.num_rows - start)
            yield table.slice(start, batch_rows)
    if rows == 0:
        raise InputError("the Dask DataFrame has no rows")


def _spark_batches(frame: Any, batch_rows: int) -> Iterator[pa.Table]:
    """Batches of a Spark DataFrame in partition order, never collecting it:
    ``toLocalIterator(prefetchPartitions=False)`` brings one partition at a time to this
    process (Spark computes each as it is asked for). Column types are fixed by the first
    batch (NULL-only columns as text), as for a database cursor. Memory O(one partition);
    time O(rows)."""
    names = [str(c) for c in frame.columns]
    schema: pa.Schema | None = None
    rows: list[tuple[Any, ...]] = []
    read = 0

    def table() -> pa.Table:
        nonlocal schema
        columns = list(zip(*rows, strict=True))
        batch = pa.Table.from_arrays([pa.array(c, from_pandas=True) for c in columns], names=names)
        if schema is None:
            schema = pa.schema([f.with_type(pa.string()) if pa.types.is_null(f.type) else f
                                for f in batch.schema])  # fmt: skip
        try:
            return batch.cast(schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
            raise InputError(
                f"the Spark DataFrame changes type after row {read} ({_first_line(exc)})"
            ) from None

    for row in frame.toLocalIterator(prefetchPartitions=False):
        rows.append(tuple(row))
        if len(rows) == batch_rows:
            yield table()
            read += len(rows)
            rows = []
    if rows:
        yield table()
        read += len(rows)
    if read == 0:
        raise InputError("the Spark DataFrame has no rows")


def _parquet_dataset(path: Path) -> pads.Dataset:
    import pyarrow.dataset as pads

    try:
        return pads.dataset(str(path), format="parquet")
    except Exception as exc:  # pyarrow raises many types for corrupt files
        raise InputError(f"cannot read Parquet input {path}: {_first_line(exc)}") from exc


def _parquet_batches(path: Path, batch_rows: int) -> Iterator[pa.Table]:
    """Batches of a Parquet file, or of a directory's files in sorted path order (so that a
    directory of ``part-NNNNN.parquet`` files reads in part order)."""
    import pyarrow.parquet as pq

    files = sorted(_parquet_dataset(path).files)
    rows = 0
    try:
        for name in files:
            for batch in pq.ParquetFile(name).iter_batches(batch_size=batch_rows):
                if batch.num_rows:
                    rows += batch.num_rows
                    yield pa.Table.from_batches([batch])
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"cannot read Parquet input {path}: {_first_line(exc)}") from exc
    if rows == 0:
        raise InputError(f"input has no data rows: {path}")


def _csv_header(path: Path, sep: str, options: CsvOptions) -> list[str]:
    if len(sep) != 1:  # the csv module splits on one character: pandas' reader for the rest
        try:
            first_row = pd.read_csv(path, nrows=1, **read_csv_options(options, sep))  # type: ignore[call-overload]
        except pd.errors.EmptyDataError:
            raise InputError(f"input is empty: {path}") from None
        except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
            raise InputError(f"malformed CSV in {path}: {_first_line(exc)}") from exc
        return check_header([str(x) for x in first_row.iloc[0]], path)
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            first = next(csv.reader(fh, delimiter=sep, quotechar=options.quotechar), None)
    except UnicodeDecodeError as exc:
        raise InputError(f"malformed CSV in {path}: {_first_line(exc)}") from exc
    if first is None:
        raise InputError(f"input is empty: {path}")
    return check_header(first, path)


def _csv_batches(path: Path, options: CsvOptions, batch_rows: int) -> Iterator[pa.Table]:
    sep = csv_separator(path, options)
    if options.names:
        names = list(options.names)
        check_names(names)
        skip, first_line = 0, 1
    else:
        names = _csv_header(path, sep, options)
        skip, first_line = 1, 2
    try:
        # no names= here: with them pandas drops the extra fields of a longer row (a warning)
        # where read_table refuses the row; the width is checked against the header instead
        reader = pd.read_csv(  # type: ignore[call-overload]
            path,
            skiprows=skip,
            chunksize=batch_rows,
            **read_csv_options(options, sep),
        )
        rows, checked = 0, False
        for chunk in reader:
            if chunk.shape[1] != len(names):
                more = "more" if chunk.shape[1] > len(names) else "fewer"
                raise InputError(
                    f"malformed CSV in {path}: line {rows + first_line} has {more} fields "
                    "than the header"
                )
            chunk.columns = pd.Index(names)
            short = chunk.isna().any(axis=1).to_numpy()
            if short.any():
                line = rows + int(short.argmax()) + first_line
                raise InputError(
                    f"malformed CSV in {path}: line {line} has fewer fields than the header"
                )
            if not checked and len(sep) == 1 and len(names) > 1 and (chunk.iloc[:, -1] == "").any():
                checked = True  # the C engine pads a short row with "": one pass over the file
                refuse_short_rows(path, sep, options.quotechar)
            rows += len(chunk)
            yield pa.Table.from_pandas(chunk, preserve_index=False)
    except pd.errors.EmptyDataError as exc:
        raise InputError(f"input is empty: {path}") from exc
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError, csv.Error) as exc:
        raise InputError(f"malformed CSV in {path}: {_first_line(exc)}") from exc
    if rows == 0:
        raise InputError(f"input has no data rows: {path}")


class ReleaseWriter:
    """Write a release batch by batch, atomically.

    Kinds by path: ``.csv``/``.tsv`` one text file, ``.parquet`` one Parquet file, a path with
    no extension (or ending in ``/``) a directory of ``part-NNNNN.parquet`` files. Everything
    goes to a temporary name beside the target; ``commit`` renames it into place (replacing an
    existing file; an existing directory is refused up front unless ``replace``, then swapped
    out at ``commit``). Used as a context manager, an exception or Ctrl-C before ``commit``
    removes the temporary output."""

    def __init__(
        self, path: str | os.PathLike[str], replace: bool = False, csv_safe: bool = True
    ) -> None:
        self.csv_safe = csv_safe  # CSV/TSV text: neutralize formula-like cells (core.csvsafe)
        self.target = Path(str(path).rstrip("/" + os.sep) or str(path))
        self.directory = is_directory_output(path)
        parent = self.target.parent if str(self.target.parent) else Path(".")
        if not parent.is_dir():
            raise InputError(f"output directory does not exist: {parent}")
        if self.directory and self.target.exists() and not replace:
            raise InputError(f"output {self.target} already exists; remove it or pick a new name")
        self.parent = parent
        self._tmp: Path | None = None  # created at the first write: nothing beside the target
        self.parquet = self.directory or is_parquet(self.target)
        self.sep = "\t" if str(self.target).lower().endswith((".tsv", ".tab")) else ","
        self._writer: pq.ParquetWriter | pacsv.CSVWriter | None = None
        self._parts = 0
        self.rows = 0

    @property
    def sidecar(self) -> bool:
        """Whether the release gets a sidecar ``PATH.schema.json`` (CSV/TSV text)."""
        return not self.parquet

    @property
    def tmp(self) -> Path:
        """The temporary output beside the target (``lifecycle.hidden_temp``: 0600/0700,
        locked, removed on cancellation, swept by the next run if this one is killed)."""
        if self._tmp is None:
            try:
                self._tmp = lifecycle.hidden_temp(
                    self.parent, f".{self.target.name}.", directory=self.directory
                )
            except OSError as exc:
                raise output_error(self.target, exc) from exc
        return self._tmp

    def write(self, table: pa.Table) -> None:
        """Append a batch (all batches must share one schema). A write the OS refuses (disk
        full, ...) raises ``OutputError`` naming the release."""
        try:
            self._write(table)
        except OSError as exc:
            raise output_error(self.target, exc) from exc

    def _write(self, table: pa.Table) -> None:
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq

        if self.directory:
            pq.write_table(table, self.tmp / f"part-{self._parts:05d}.parquet")
            self._parts += 1
        elif self.parquet:
            if self._writer is None:
                self._writer = pq.ParquetWriter(self.tmp, table.schema)
            self._writer.write_table(table)
        else:
            table = escape_table(table, self.csv_safe)
            if self._writer is None:
                options = pacsv.WriteOptions(delimiter=self.sep, quoting_style="needed")
                self._writer = pacsv.CSVWriter(str(self.tmp), table.schema, write_options=options)
            self._writer.write_table(table)
        self.rows += table.num_rows

    def commit(self) -> None:
        """Close the output and rename it to the target (inside ``core.files.all_or_nothing``:
        stage it, renamed with the run's other outputs when the run ends)."""
        if self._writer is not None:
            try:
                self._writer.close()
            except OSError as exc:
                raise output_error(self.target, exc) from exc
            self._writer = None
        outputs = staging()
        if outputs is not None:
            outputs.add(self.target, self.tmp)
            self._handed_over = True
            return
        tmp = self.tmp
        if self.directory and self.target.is_dir():  # replace=True: swap the old one out
            lifecycle.check()
            old = Path(tempfile.mkdtemp(prefix=f".{self.target.name}.", suffix=".old",
                                        dir=tmp.parent))  # fmt: skip
            os.replace(self.target, old / "release")
            try:
                lifecycle.commit(tmp, self.target)
            except BaseException:
                os.replace(old / "release", self.target)  # put the old release back
                raise
            finally:
                shutil.rmtree(old, ignore_errors=True)
        else:
            lifecycle.commit(tmp, self.target)
        self._tmp = None

    def abort(self) -> None:
        if self._writer is not None:
            with contextlib.suppress(OSError, pa.ArrowException):
                self._writer.close()
            self._writer = None
        if self._tmp is not None:
            lifecycle.remove_temp(self._tmp)
            self._tmp = None

    def __enter__(self) -> ReleaseWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if getattr(self, "_handed_over", False):
            return  # staged: the enclosing all_or_nothing block owns it now
        if exc_type is not None or self._tmp is not None:
            self.abort()
