"""SQL databases as table sources and release targets, through SQLAlchemy (the ``sql`` extra).

A source is a database URL (``postgresql://user@host/db``, ``sqlite:///file.db``,
``duckdb:///file.duckdb`` through duckdb-engine) with a
``table`` or a ``query``. Credentials come from the URL or the environment (``PGPASSWORD``,
``~/.pgpass`` / ``PGPASSFILE``: libpq reads them); they are never recorded or printed —
:func:`redact_url` is what manifests and messages show, and every message raised here has the
password scrubbed out.

A release is written to a table in one transaction: the table is created (or, with
``replace``, dropped and created again) and filled, then committed; on any failure or
interrupt the transaction is rolled back and nothing is visible.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow as pa

from anonymatch.core.errors import InputError, OutputError
from anonymatch.core.params import param

_URL = re.compile(r"^[a-z][a-z0-9+]*://", re.IGNORECASE)
_SCHEMES = ("postgresql", "postgres", "sqlite", "duckdb")


def is_database_url(text: object) -> bool:
    """Whether ``text`` names a database (``postgresql://…``, ``sqlite:///…``,
    ``duckdb:///…``) rather than a file. O(len(text))."""
    if not isinstance(text, str) or not _URL.match(text):
        return False
    scheme = text.split("://", 1)[0].split("+", 1)[0].lower()
    return scheme in _SCHEMES


def _url(text: str) -> Any:
    """The SQLAlchemy URL of ``text``, with ``postgres``/``postgresql`` on psycopg 3."""
    try:
        from sqlalchemy.engine import make_url
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise InputError(
            "reading or writing a database needs the sql extra: pip install 'anonymatch[sql]'"
        ) from exc
    try:
        url = make_url(text)
    except Exception as exc:  # ArgumentError and friends: malformed URL
        raise InputError(f"malformed database URL {redact_url(text)}") from exc
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    return url


def redact_url(text: str) -> str:
    """``text`` without its password (``postgresql://ann:***@host/db``); what manifests and
    messages show. O(len(text))."""
    head, sep, rest = text.partition("://")
    if not sep:
        return text
    netloc, slash, path = rest.partition("/")
    userinfo, at, host = netloc.rpartition("@")
    if at and ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + ":***"
    netloc = f"{userinfo}@{host}" if at else host
    path = re.sub(r"(?i)(password=)[^&]*", r"\1***", path)
    return f"{head}://{netloc}{slash}{path}"


def without_password(text: str) -> str:
    """``text`` with no password at all (``postgresql://ann@host/db``): a URL to write in a
    job file, where libpq then takes the password from ``PGPASSWORD`` or ``~/.pgpass``.
    O(len(text))."""
    head, sep, rest = text.partition("://")
    if not sep:
        return text
    netloc, slash, path = rest.partition("/")
    userinfo, at, host = netloc.rpartition("@")
    if at:
        userinfo = userinfo.split(":", 1)[0]
    netloc = f"{userinfo}@{host}" if at else host
    path = re.sub(r"(?i)[?&]password=[^&]*", "", path)
    if "?" not in path and "&" in path:
        path = path.replace("&", "?", 1)
    return f"{head}://{netloc}{slash}{path}"


def _scrub(message: str, text: str, url: Any) -> str:
    """One line of ``message`` with the password of ``text``/``url`` replaced by ``***``."""
    line = (message.strip().splitlines() or [""])[0]
    password = getattr(url, "password", None)
    if password:
        line = line.replace(str(password), "***")
    return line.replace(text, redact_url(text))


def _engine(text: str) -> Any:
    from sqlalchemy import create_engine

    url = _url(text)
    args: dict[str, Any] = {}
    if url.drivername.startswith("postgresql"):
        args["connect_timeout"] = 10
    engine = create_engine(url, connect_args=args, poolclass=_null_pool())
    if url.drivername.startswith("sqlite"):
        _transactional_sqlite(engine)
    return engine, url


def _transactional_sqlite(engine: Any) -> None:
    """Make SQLite's DDL part of the transaction (Python's sqlite3 commits before a CREATE or
    DROP by default), so that a release table appears only when the whole write commits."""
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _no_implicit_commit(dbapi_connection: Any, record: Any) -> None:
        dbapi_connection.isolation_level = None

    @event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN")


def _null_pool() -> Any:
    from sqlalchemy.pool import NullPool

    return NullPool


def _connect_error(exc: BaseException, text: str, url: Any) -> InputError:
    return InputError(f"cannot connect to {redact_url(text)}: {_scrub(str(exc), text, url)}")


def check_identifier(name: str, flag: str) -> str:
    """A table name: letters, digits, ``_`` and at most one ``.`` (schema.table)."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?", name or ""):
        raise InputError(f"{flag} must be a table name (letters, digits, _), got {name!r}")
    return name


def _split(name: str) -> tuple[str | None, str]:
    schema, _, table = name.rpartition(".")
    return (schema or None), table


@dataclass(frozen=True)
class SqlSource:
    """A database input: the URL (with its password, never shown: ``where`` is the redacted
    form), and exactly one of ``table`` and ``query``."""

    text: str
    table: str | None = None
    query: str | None = None

    def __post_init__(self) -> None:
        if (self.table is None) == (self.query is None):
            raise InputError(
                f"a database input needs exactly one of {param('table')} and {param('query')}"
            )

    @property
    def where(self) -> str:
        return redact_url(self.text)

    @property
    def what(self) -> str:
        return f"table {self.table!r}" if self.table is not None else "the query"


@contextmanager
def _opened(source: SqlSource) -> Iterator[tuple[Any, str, Any]]:
    """A connection to ``source``'s database, the SELECT statement of its table or query and
    the URL (for scrubbing); the engine is disposed of on exit. InputError (one line, no
    password) on an unreachable server, wrong credentials or a missing table."""
    from sqlalchemy import exc as sa_exc
    from sqlalchemy import inspect

    engine, url = _engine(source.text)
    try:
        try:
            connection = engine.connect()
        except sa_exc.SQLAlchemyError as exc:
            raise _connect_error(exc, source.text, url) from None
        with connection:
            if source.table is not None:
                schema, name = _split(check_identifier(source.table, param("table")))
                try:
                    found = inspect(connection).has_table(name, schema=schema)
                except sa_exc.SQLAlchemyError as exc:
                    raise _read_error(exc, source, url) from None
                if not found:
                    raise InputError(f"no table {source.table!r} in {source.where}")
                quoted = connection.dialect.identifier_preparer.quote
                name = ".".join(quoted(p) for p in (schema, name) if p)
                statement = f"SELECT * FROM {name}"  # noqa: S608 - a checked identifier
            else:
                statement = str(source.query).strip().rstrip(";")
            yield connection, statement, url
    finally:
        engine.dispose()


def _read_error(exc: BaseException, source: SqlSource, url: Any) -> InputError:
    cause = getattr(exc, "orig", None) or exc.__cause__ or exc
    return InputError(
        f"cannot read {source.what} from {source.where}: {_scrub(str(cause), source.text, url)}"
    )


def _check_columns(names: list[str], source: SqlSource) -> list[str]:
    if len(set(names)) != len(names):
        raise InputError(
            f"the columns of {source.table or 'the query'} in {source.where} repeat a name"
        )
    return names


def read_sql_source(
    text: str, table: str | None = None, query: str | None = None, nrows: int | None = None
) -> pd.DataFrame:
    """Read ``table`` (or the rows of ``query``) from the database ``text`` into pandas, NULL
    as a missing value. InputError (one line, no password) on an unreachable server, wrong
    credentials, a missing table, a failing query or no rows. O(rows)."""
    from sqlalchemy import exc as sa_exc
    from sqlalchemy import text as sql_text

    source = SqlSource(text, table, query)
    with _opened(source) as (connection, statement, url):
        if nrows is not None:
            statement = f"SELECT * FROM ({statement}) AS sample LIMIT {int(nrows)}"  # noqa: S608
        try:
            frame = pd.read_sql(sql_text(statement), connection)
        except (sa_exc.SQLAlchemyError, pd.errors.DatabaseError) as exc:
            raise _read_error(exc, source, url) from None
    if len(frame) == 0:
        raise InputError(f"{source.what} in {source.where} has no rows")
    frame.columns = pd.Index(_check_columns([str(c) for c in frame.columns], source))
    return frame


def count_sql_rows(text: str, table: str | None = None, query: str | None = None) -> int:
    """The rows of ``table`` or ``query`` (``SELECT count(*)`` on the server: the query runs
    once more there, nothing comes over the wire). Used to choose the streamed path."""
    from sqlalchemy import exc as sa_exc
    from sqlalchemy import text as sql_text

    source = SqlSource(text, table, query)
    with _opened(source) as (connection, statement, url):
        try:
            counted = connection.execute(
                sql_text(f"SELECT count(*) FROM ({statement}) AS source")  # noqa: S608
            ).scalar()
        except sa_exc.SQLAlchemyError as exc:
            raise _read_error(exc, source, url) from None
    return int(counted or 0)


def iter_sql_batches(
    text: str,
    table: str | None = None,
    query: str | None = None,
    batch_rows: int = 100_000,
) -> Iterator[pa.Table]:
    """Arrow tables of at most ``batch_rows`` consecutive rows of ``table`` or ``query``,
    fetched through a server-side cursor (SQLAlchemy ``stream_results``/``yield_per``: a
    named cursor on PostgreSQL, so the server keeps the result and only one batch is ever
    held here). The streamed path's source (``tables.io.stream.iter_table_batches``).

    Column types are fixed by the first batch (numeric as float64, a column NULL throughout
    it or of a type Arrow cannot hold — uuid, intervals, … — as text); a later value that does
    not fit them is an InputError naming the column. The first batch is fetched before
    anything is yielded, so a bad source fails early; an empty result is an InputError.
    Memory O(batch_rows · row width); time O(rows)."""
    from sqlalchemy import exc as sa_exc
    from sqlalchemy import text as sql_text

    if batch_rows < 1:
        raise InputError(f"{param('chunk_rows')} must be at least 1, got {batch_rows}")
    source = SqlSource(text, table, query)
    with _opened(source) as (connection, statement, url):
        try:
            streaming = connection.execution_options(stream_results=True, yield_per=batch_rows)
            result = streaming.execute(sql_text(statement))
            names = _check_columns([str(c) for c in result.keys()], source)  # noqa: SIM118
            types: list[pa.DataType] | None = None
            read = 0
            for rows in result.partitions(batch_rows):
                if not rows:
                    continue
                batch, types = _arrow_batch(rows, names, types, _Where(source, read))
                read += len(rows)
                yield batch
        except sa_exc.SQLAlchemyError as exc:
            raise _read_error(exc, source, url) from None
    if read == 0:
        raise InputError(f"{source.what} in {source.where} has no rows")


@dataclass(frozen=True)
class _Where:
    source: SqlSource
    row: int  # rows read before this batch


def _arrow_batch(
    rows: Sequence[Sequence[Any]], names: list[str], types: list[pa.DataType] | None, at: _Where
) -> tuple[pa.Table, list[pa.DataType]]:
    """One batch of database rows as an Arrow table of the fixed ``types`` (inferred from
    this batch when None: the first batch). O(len(rows) · len(names))."""
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    arrays: list[pa.Array] = []
    for i, values in enumerate(columns):
        if types is None:
            arrays.append(_first_array(values))
            continue
        try:
            arrays.append(_later_array(values, types[i]))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
            if pa.types.is_string(types[i]):
                arrays.append(pa.array(_as_text(values), type=pa.string()))
                continue
            raise InputError(
                f"column {names[i]!r} of {at.source.what} in {at.source.where} changes type "
                f"after row {at.row} (its first rows were {types[i]}); cast it in a "
                f"{param('query')}"
            ) from None
    table = pa.Table.from_arrays(arrays, names=names)
    return table, [a.type for a in arrays] if types is None else types


def _later_array(values: Sequence[Any], type_: pa.DataType) -> pa.Array:
    """A later batch's column as ``type_`` (decimals are cast to the first batch's float64)."""
    try:
        return pa.array(values, type=type_, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array(values, from_pandas=True).cast(type_)


def _first_array(values: Sequence[Any]) -> pa.Array:
    """The first batch's column: Arrow's own type when it has one (decimals as float64, as
    pandas reads them), else text (uuid, binary, a column of NULLs, …)."""
    try:
        array = pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
        return pa.array(_as_text(values), type=pa.string())
    kind = array.type
    if pa.types.is_null(kind) or isinstance(kind, pa.BaseExtensionType):
        return pa.array(_as_text(values), type=pa.string())
    if pa.types.is_binary(kind) or pa.types.is_fixed_size_binary(kind):
        return pa.array(_as_text(values), type=pa.string())
    if pa.types.is_decimal(array.type):
        return array.cast(pa.float64())
    if pa.types.is_integer(array.type):
        return array.cast(pa.int64())
    return array


def _as_text(values: Sequence[Any]) -> list[str | None]:
    return [None if v is None else str(v) for v in values]


def check_output_table(text: str, table: str | None, force: bool) -> None:
    """Up-front check of a database release: a table name is given, the server is reachable
    and the table does not exist unless ``force``. InputError (one line, no password)."""
    from sqlalchemy import exc as sa_exc
    from sqlalchemy import inspect

    if not table:
        raise InputError(f"the database output {redact_url(text)} needs {param('output_table')}")
    schema, name = _split(check_identifier(table, param("output_table")))
    engine, url = _engine(text)
    try:
        try:
            with engine.connect() as connection:
                exists = inspect(connection).has_table(name, schema=schema)
        except sa_exc.SQLAlchemyError as exc:
            raise _connect_error(exc, text, url) from None
    finally:
        engine.dispose()
    if exists and not force:
        raise InputError(
            f"table {table!r} already exists in {redact_url(text)} "
            f"(use {param('force')} to replace it)"
        )


def _insert_method(connection: Any) -> Any:
    """How ``DataFrame.to_sql`` inserts rows on ``connection``: PostgreSQL's ``COPY … FROM
    STDIN`` (:func:`_copy_rows`), else pandas' default INSERTs."""
    return _copy_rows if connection.dialect.name == "postgresql" else None


def _copy_rows(table: Any, connection: Any, keys: list[str], data_iter: Any) -> int:
    """pandas' ``to_sql`` insertion by PostgreSQL's ``COPY`` (psycopg 3's ``cursor.copy``):
    one stream per batch instead of INSERT statements, on the same connection, so in the same
    transaction. Returns the rows written. O(rows)."""
    quote = connection.dialect.identifier_preparer.quote
    target = ".".join(quote(part) for part in (table.schema, table.name) if part)
    columns = ", ".join(quote(key) for key in keys)
    rows = 0
    cursor = connection.connection.cursor()
    with cursor, cursor.copy(f"COPY {target} ({columns}) FROM STDIN") as copy:
        for row in data_iter:
            copy.write_row(row)
            rows += 1
    return rows


def write_sql_release(
    text: str,
    table: str,
    frame: pd.DataFrame,
    replace: bool,
    typing: dict[str, object] | None = None,
) -> None:
    """Create ``table`` holding ``frame`` in one transaction (an existing table is dropped in
    the same transaction when ``replace``, else refused), with ``typing`` — the sidecar of a
    CSV release (``tables.io.sidecar.release_schema``) — stored beside it in that transaction
    (:func:`write_typing`). Nothing is visible unless the whole write commits. O(rows)."""
    from sqlalchemy import exc as sa_exc
    from sqlalchemy import inspect

    schema, name = _split(check_identifier(table, param("output_table")))
    engine, url = _engine(text)
    try:
        try:
            with engine.begin() as connection:  # one transaction: committed or rolled back
                if inspect(connection).has_table(name, schema=schema):
                    if not replace:
                        raise InputError(
                            f"table {table!r} already exists in {redact_url(text)} "
                            f"(use {param('force')} to replace it)"
                        )
                    quoted = connection.dialect.identifier_preparer.quote
                    source = ".".join(quoted(p) for p in (schema, name) if p)
                    connection.exec_driver_sql(f"DROP TABLE {source}")
                frame.to_sql(name, connection, schema=schema, index=False, if_exists="fail",
                             method=_insert_method(connection))  # fmt: skip
                if typing is not None:
                    write_typing(connection, table, typing)
        except sa_exc.SQLAlchemyError as exc:
            raise OutputError(
                f"cannot write table {table!r} to {redact_url(text)}: "
                f"{_scrub(str(getattr(exc, 'orig', None) or exc), text, url)}"
            ) from None
    finally:
        engine.dispose()


class SqlReleaseWriter:
    """Write a release to a database table batch by batch, in **one transaction** — the
    streamed path's counterpart of :func:`write_sql_release` (``tables.io.stream``'s
    ``ReleaseWriter`` interface: ``write``, ``commit``, ``abort``, a context manager).

    The first batch opens the connection and the transaction, drops an existing table when
    ``replace`` (else refuses it) and creates the table; every batch is inserted in that
    transaction; ``commit`` commits it. An exception or interrupt before ``commit`` rolls it
    back: nothing is visible. Cells are stored as text like :func:`write_sql_release`'s (no
    CSV formula guard: a database has no formulas). Memory O(one batch)."""

    parquet = False  # the published cells as text, as in a CSV release
    sidecar = False  # no file beside a table: ``typing`` goes into the database instead

    def __init__(self, text: str, table: str, replace: bool = False) -> None:
        self.text, self.table, self.replace = text, table, replace
        self.schema, self.name = _split(check_identifier(table, param("output_table")))
        self.rows = 0
        self.typing: dict[str, object] | None = None  # written by commit, in the transaction
        self._engine: Any = None
        self._url: Any = None
        self._connection: Any = None
        self._transaction: Any = None

    def _failed(self, exc: BaseException) -> OutputError:
        cause = getattr(exc, "orig", None) or exc
        return OutputError(
            f"cannot write table {self.table!r} to {redact_url(self.text)}: "
            f"{_scrub(str(cause), self.text, self._url)}"
        )

    def _open(self) -> None:
        from sqlalchemy import exc as sa_exc
        from sqlalchemy import inspect

        self._engine, self._url = _engine(self.text)
        try:
            self._connection = self._engine.connect()
            self._transaction = self._connection.begin()
            if inspect(self._connection).has_table(self.name, schema=self.schema):
                if not self.replace:
                    raise InputError(
                        f"table {self.table!r} already exists in {redact_url(self.text)} "
                        f"(use {param('force')} to replace it)"
                    )
                quoted = self._connection.dialect.identifier_preparer.quote
                source = ".".join(quoted(p) for p in (self.schema, self.name) if p)
                self._connection.exec_driver_sql(f"DROP TABLE {source}")
        except sa_exc.SQLAlchemyError as exc:
            raise self._failed(exc) from None

    def write(self, table: pa.Table) -> None:
        """Insert a batch (all batches share one schema) in the run's transaction."""
        from sqlalchemy import exc as sa_exc

        if self._connection is None:
            self._open()
        frame = table.to_pandas()
        try:
            frame.to_sql(self.name, self._connection, schema=self.schema, index=False,
                         if_exists="append", method=_insert_method(self._connection))  # fmt: skip
        except (sa_exc.SQLAlchemyError, pd.errors.DatabaseError) as exc:
            raise self._failed(exc) from None
        self.rows += table.num_rows

    def commit(self) -> None:
        """Store ``typing`` (if set) and commit the transaction: the table and its typing
        appear whole, or not at all."""
        from sqlalchemy import exc as sa_exc

        if self._connection is None:  # no batch: an empty release is never written
            raise OutputError(f"no rows to write to table {self.table!r}")
        try:
            if self.typing is not None:
                write_typing(self._connection, self.table, self.typing)
            self._transaction.commit()
        except sa_exc.SQLAlchemyError as exc:
            raise self._failed(exc) from None
        finally:
            self._close()

    def abort(self) -> None:
        """Roll the transaction back (nothing was visible) and close the connection."""
        if self._transaction is not None and self._transaction.is_active:
            with contextlib.suppress(Exception):
                self._transaction.rollback()
        self._close()

    def _close(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(Exception):
                self._connection.close()
        if self._engine is not None:
            self._engine.dispose()
        self._connection = self._transaction = self._engine = None

    def __enter__(self) -> SqlReleaseWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self._connection is not None:
            self.abort()


COMPANION_SUFFIX = "__anonymatch"
"""The companion table of a SQLite/DuckDB release ``T``: ``T__anonymatch``, one row, one
column ``sidecar`` holding the JSON of the CSV release's sidecar."""


def _quoted(connection: Any, table: str) -> str:
    quote = connection.dialect.identifier_preparer.quote
    schema, name = _split(table)
    return ".".join(quote(p) for p in (schema, name) if p)


def _is_postgresql(connection: Any) -> bool:
    return str(connection.dialect.name).startswith("postgresql")


def write_typing(connection: Any, table: str, typing: dict[str, object]) -> None:
    """Store the typing of the release ``table`` (the sidecar JSON of a CSV release,
    ``docs/release-format.md``) in the open transaction of ``connection``: on PostgreSQL as
    ``COMMENT ON TABLE`` (the whole JSON) and ``COMMENT ON COLUMN`` (each column's
    description); elsewhere (SQLite, DuckDB) in the companion table ``TABLE__anonymatch``,
    replaced when it exists. Committed or rolled back with the release. O(columns)."""
    import json

    from sqlalchemy import String
    from sqlalchemy import text as sql_text

    document = json.dumps(typing, separators=(",", ":"))
    if _is_postgresql(connection):
        literal = String().literal_processor(connection.dialect)
        assert literal is not None
        target = _quoted(connection, table)
        connection.exec_driver_sql(f"COMMENT ON TABLE {target} IS {literal(document)}")
        quote = connection.dialect.identifier_preparer.quote
        for column in typing.get("columns") or ():  # type: ignore[attr-defined]
            described = literal(json.dumps(column, separators=(",", ":")))
            connection.exec_driver_sql(
                f"COMMENT ON COLUMN {target}.{quote(column['name'])} IS {described}"
            )
        return
    check_identifier(table + COMPANION_SUFFIX, param("output_table"))
    companion = _quoted(connection, table + COMPANION_SUFFIX)
    connection.exec_driver_sql(f"DROP TABLE IF EXISTS {companion}")
    connection.exec_driver_sql(f"CREATE TABLE {companion} (sidecar TEXT NOT NULL)")
    connection.execute(
        sql_text(f"INSERT INTO {companion} (sidecar) VALUES (:doc)"),  # noqa: S608
        {"doc": document},
    )


def read_typing(connection: Any, table: str) -> dict[str, Any] | None:
    """The typing stored with the release ``table`` by :func:`write_typing` (the table comment
    on PostgreSQL, the companion table elsewhere), None when there is none (a table written by
    another tool). ValueError on a stored text that is not JSON."""
    import json

    from sqlalchemy import inspect
    from sqlalchemy import text as sql_text

    schema, name = _split(table)
    if _is_postgresql(connection):
        found = inspect(connection).get_table_comment(name, schema=schema).get("text")
    else:
        companion = name + COMPANION_SUFFIX
        if not inspect(connection).has_table(companion, schema=schema):
            return None
        target = _quoted(connection, table + COMPANION_SUFFIX)
        found = connection.execute(
            sql_text(f"SELECT sidecar FROM {target}")  # noqa: S608 - a checked identifier
        ).scalar()
    if not found:
        return None
    document = json.loads(found)
    if not isinstance(document, dict):
        raise ValueError("the stored typing is not a JSON object")
    return document


def read_sql_release(text: str, table: str) -> tuple[pd.DataFrame, dict[str, Any] | None]:
    """The cells of the release ``table`` in the database ``text`` and its stored typing
    (:func:`read_typing`; None if it has none). InputError (one line, no password) on an
    unreachable server, a missing table or unreadable typing. O(rows)."""
    from sqlalchemy import exc as sa_exc

    frame = read_sql_source(text, table=table)
    source = SqlSource(text, table)
    engine, url = _engine(text)
    try:
        with engine.connect() as connection:
            typing = read_typing(connection, table)
    except sa_exc.SQLAlchemyError as exc:
        raise _read_error(exc, source, url) from None
    except ValueError as exc:
        raise InputError(
            f"cannot read the typing of table {table!r} in {source.where}: {exc}"
        ) from None
    finally:
        engine.dispose()
    return frame, typing
