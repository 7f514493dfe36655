"""SQL databases as table sources and release targets, through SQLAlchemy (the ``sql`` extra).

A source is a database URL (``postgresql://user@host/db``, ``sqlite:///file.db``,
``duckdb:///file.duckdb`` through duckdb-engine) with a
``table`` or a ``query``. Credentials come from the URL or the environment (``PGPASSWORD``,
``~/.pgpass`` / ``PGPASSFILE``: libpq reads them); they are never recorded or printed —
:func:`redact_url` (SQLAlchemy's ``hide_password``) is what manifests and messages show, and
every message raised here has the password scrubbed out. Any ``scheme://user:password@…`` is
a database URL (:func:`is_database_url`); one other than PostgreSQL, SQLite or DuckDB, or with
an unknown driver, is refused (:func:`_url`).

A source is read in a read-only transaction (:func:`_read_only`), its columns faithfully or
refused naming the column (:func:`_faithful`); a SQLite/DuckDB source file must exist.

A release is written to a table in one transaction: the table's existence is checked, the
table created (or, with ``replace``, dropped and created again) and filled, then committed; on
any failure or interrupt the transaction is rolled back and nothing is visible (a SQLite/DuckDB
file the write created is removed). A release is never its own input
(:func:`check_output_table`) and keeps its source's column types but for the QIs
(:class:`ColumnTypes`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pandas as pd
import pyarrow as pa

from anonymatch.core.errors import InputError, OutputError
from anonymatch.core.params import param

_URL = re.compile(r"^[a-z][a-z0-9+.\-]*://", re.IGNORECASE)
_CREDENTIALS = re.compile(r"^[a-z][a-z0-9+.\-]*://[^:/@]*:.*@", re.IGNORECASE | re.DOTALL)
_SCHEMES = ("postgresql", "postgres", "sqlite", "duckdb")
_BACKENDS = {"postgresql": "postgresql", "postgres": "postgresql", "sqlite": "sqlite",
             "duckdb": "duckdb"}  # fmt: skip
# what follows the ``@`` that ends the user information: host, port, database, query
_AFTER_USERINFO = re.compile(r"(\[[^\]]*\]|[^/:?@]*)(:[0-9]*)?(/[^?@]*)?(\?.*)?", re.DOTALL)
_QUERY_PASSWORD = re.compile(r"(?i)([?&]password=)[^&]*")


def is_database_url(text: object) -> bool:
    """Whether ``text`` names a database (``postgresql://…``, ``sqlite:///…``,
    ``duckdb:///…``) rather than a file; any ``scheme://user:password@…`` is one too (so that
    an unsupported ``mysql://`` or ``oracle://`` is refused as a database, with its password
    hidden, never read as a file path). O(len(text))."""
    if not isinstance(text, str) or not _URL.match(text):
        return False
    scheme = text.split("://", 1)[0].split("+", 1)[0].lower()
    return scheme in _SCHEMES or _CREDENTIALS.match(text) is not None


def _userinfo_end(rest: str) -> int:
    """The index of the ``@`` ending the user information in ``rest`` (the URL after
    ``scheme://``), -1 when there is none. A password may hold unencoded ``/``, ``@``, ``:``,
    ``?`` and ``%`` (SQLAlchemy reads ``/`` and ``:``; ``@`` is ours): the **last** ``@``
    after which a host, port, database and query follow — never a part of the password
    taken for a host, at the price of an ``@`` in a query parameter, which must be
    percent-encoded. O(len(rest)²) worst case, tiny in practice."""
    if rest.startswith("/"):  # sqlite:///file: no user information
        return -1
    at = rest.rfind("@")
    while at >= 0:
        if _AFTER_USERINFO.fullmatch(rest, at + 1):
            return at
        at = rest.rfind("@", 0, at)
    return -1


def _normalized(text: str) -> str:
    """``text`` with its password percent-encoded (an unencoded ``/``, ``@``, ``:`` or ``%``
    in it kept as a character of the password), for ``make_url``. O(len(text))."""
    head, sep, rest = text.partition("://")
    end = _userinfo_end(rest) if sep else -1
    if end < 0:
        return text
    user, colon, password = rest[:end].partition(":")
    if not colon:
        return text
    return f"{head}://{user}:{quote(unquote(password), safe='')}@{rest[end + 1 :]}"


def _parse(text: str) -> Any:
    """SQLAlchemy's URL of ``text`` (:func:`_normalized` first). ImportError without the sql
    extra; ValueError/ArgumentError on a malformed URL."""
    from sqlalchemy.engine import make_url

    return make_url(_normalized(text))


def _url(text: str) -> Any:
    """The SQLAlchemy URL of ``text``, with ``postgres``/``postgresql`` on psycopg 3.
    InputError (one line, no password) on a malformed URL, a database other than PostgreSQL,
    SQLite and DuckDB, or an unknown driver (``postgresql+nosuch://``)."""
    try:
        from sqlalchemy.exc import NoSuchModuleError
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise InputError(
            "reading or writing a database needs the sql extra: pip install 'anonymatch[sql]'"
        ) from exc
    try:
        url = _parse(text)
    except Exception:  # ArgumentError, ValueError (a port that is no number): malformed URL
        raise InputError(f"malformed database URL {redact_url(text)}") from None
    backend = _BACKENDS.get(url.get_backend_name().lower())
    if backend is None:
        raise InputError(
            f"unsupported database {url.get_backend_name()!r} in {redact_url(text)} "
            "(anonymatch reads and writes postgresql://, sqlite:/// and duckdb:/// URLs)"
        )
    if backend != "postgresql" and (url.username or url.password or url.host or url.port
                                    or (backend == "duckdb" and url.query)):  # fmt: skip
        raise InputError(
            f"a {backend} URL names a file, with no user, password, host or port: "
            f"{backend}:///relative/file or {backend}:////absolute/file, got {redact_url(text)}"
        )
    if url.drivername.lower() in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    elif backend == "postgresql":
        url = url.set(drivername="postgresql+" + url.get_driver_name())
    try:
        url.get_dialect().import_dbapi()  # the driver's module: psycopg, duckdb_engine, …
    except (NoSuchModuleError, ImportError):
        raise InputError(
            f"unknown database driver {url.drivername!r} in {redact_url(text)} (try {backend}://)"
        ) from None
    return url


def redact_url(text: str) -> str:
    """``text`` without its password (``postgresql://ann:***@host/db``, also a ``password=``
    query parameter); what manifests and messages show. Parsed by SQLAlchemy
    (``render_as_string(hide_password=True)``), so a password with unencoded ``/``, ``@``,
    ``:`` or ``%`` is hidden whole; a URL it cannot parse shows only the user and what follows
    the last ``@``. O(len(text))."""
    try:
        url = _parse(text)
        shown = url.render_as_string(hide_password=True) if url.password is not None else text
    except Exception:  # not parseable (or no sqlalchemy): hide all the user information
        head, sep, rest = text.partition("://")
        if not sep:
            return text
        user, at, host = rest.rpartition("@")
        if at and not rest.startswith("/"):
            name = re.split(r"[:/]", user, maxsplit=1)[0]
            rest = f"{name}:***@{host}"
        shown = f"{head}://{rest}"
    return _QUERY_PASSWORD.sub(r"\1***", shown)


def without_password(text: str) -> str:
    """``text`` with no password at all (``postgresql://ann@host/db``): a URL to write in a
    job file, where libpq then takes the password from ``PGPASSWORD`` or ``~/.pgpass``.
    O(len(text))."""
    try:
        url = _parse(text)
    except Exception:
        return redact_url(text)
    query = {k: v for k, v in url.query.items() if k.lower() != "password"}
    if url.password is None and len(query) == len(url.query):
        return text
    return str(url._replace(password=None).set(query=query).render_as_string(False))


def _scrub(message: str, text: str, url: Any) -> str:
    """One line of ``message`` with the password of ``text``/``url`` replaced by ``***``."""
    line = (message.strip().splitlines() or [""])[0]
    password = getattr(url, "password", None)
    if password:
        for shown in (str(password), quote(str(password), safe="")):
            line = line.replace(shown, "***")
    return line.replace(text, redact_url(text))


def _engine(text: str, read_only: bool = False) -> Any:
    """The engine and URL of ``text``; with ``read_only`` (a source), a SQLite or DuckDB file
    must exist (it is never created empty) and DuckDB opens it read-only."""
    from sqlalchemy import create_engine

    url = _url(text)
    args: dict[str, Any] = {}
    if url.drivername.startswith("postgresql"):
        args["connect_timeout"] = 10
    if read_only:
        path = database_file(url)
        if path is not None and not path.is_file():
            raise InputError(f"no database file {path} (from {redact_url(text)})")
        if url.get_backend_name() == "duckdb":
            args["read_only"] = True
    engine = create_engine(url, connect_args=args, poolclass=_null_pool())
    if url.drivername.startswith("sqlite"):
        _transactional_sqlite(engine)
    return engine, url


def database_file(url: Any) -> Path | None:
    """The file of a SQLite or DuckDB ``url`` (None for a server, or an in-memory database)."""
    if url.get_backend_name() not in ("sqlite", "duckdb"):
        return None
    database = str(url.database or "")
    if database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(database)


def _read_only(connection: Any) -> Any:
    """``connection`` made unable to write, before its first statement: PostgreSQL's
    ``SET TRANSACTION READ ONLY`` and a server-side (named) cursor for every statement — a
    ``DECLARE … CURSOR`` holds exactly one SELECT, so ``commit; drop table …`` is a syntax
    error, not two statements; SQLite's ``PRAGMA query_only`` (and Python's sqlite3 runs one
    statement at a time); DuckDB is opened read-only (:func:`_engine`)."""
    name = str(connection.dialect.name)
    if name.startswith("postgresql"):
        connection.exec_driver_sql("SET TRANSACTION READ ONLY")
        return connection.execution_options(stream_results=True)
    if name == "sqlite":
        connection.exec_driver_sql("PRAGMA query_only = ON")
        connection.connection.driver_connection.set_authorizer(_sqlite_reader)
    return connection


_SQLITE_READ_PRAGMAS = frozenset(
    {"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
     "foreign_key_list", "database_list", "collation_list", "compile_options", "encoding"}
)  # fmt: skip


def _sqlite_reader(action: int, arg1: Any, arg2: Any, *_: Any) -> int:
    """SQLite's authorizer on a source's connection: no ATTACH/DETACH (a file made beside
    the database) and no PRAGMA setting a value (``query_only = off``); everything else as
    ``PRAGMA query_only`` allows. O(1) per statement's step."""
    import sqlite3

    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and arg2 is not None:
        return (
            sqlite3.SQLITE_OK if str(arg1).lower() in _SQLITE_READ_PRAGMAS else sqlite3.SQLITE_DENY
        )
    return sqlite3.SQLITE_OK


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
        _url(self.text)  # a supported database and driver, before anything else
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

    engine, url = _engine(source.text, read_only=True)
    try:
        try:
            opened = engine.connect()
        except sa_exc.SQLAlchemyError as exc:
            raise _connect_error(exc, source.text, url) from None
        with opened:
            try:
                connection = _read_only(opened)
            except sa_exc.SQLAlchemyError as exc:
                raise _read_error(exc, source, url) from None
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
            result = connection.execute(sql_text(statement))
            names = _check_columns([str(c) for c in result.keys()], source)  # noqa: SIM118
            json_columns = _json_columns(result)
            rows = result.fetchall()
        except (sa_exc.SQLAlchemyError, pd.errors.DatabaseError) as exc:
            raise _read_error(exc, source, url) from None
    if len(rows) == 0:
        raise InputError(f"{source.what} in {source.where} has no rows")
    columns = _faithful(list(zip(*rows, strict=True)), names, json_columns, source)
    return _frame(columns, names)


def _frame(columns: list[tuple[Any, ...]], names: list[str]) -> pd.DataFrame:
    """The frame ``pd.read_sql`` builds from these columns (``from_records`` with
    ``coerce_float``, time zones converted to UTC), except that an integer column with NULLs
    stays integer (pandas' nullable ``Int64``, not float: ``3``, never ``3.0``). O(cells)."""
    frame = pd.DataFrame.from_records(
        list(zip(*columns, strict=True)), columns=names, coerce_float=True
    )
    for i, dtype in enumerate(frame.dtypes):
        if isinstance(dtype, pd.DatetimeTZDtype):
            frame.isetitem(i, frame.iloc[:, i].dt.tz_convert("UTC"))
        elif {type(v) for v in columns[i]} == {int, type(None)}:
            frame.isetitem(i, pd.array(columns[i], dtype="Int64"))
    return frame


_JSON_OIDS = frozenset({114, 3802})  # PostgreSQL json, jsonb
_REFUSED_KINDS = {bytes: "binary (bytea, BLOB)", bytearray: "binary (bytea, BLOB)",
                  memoryview: "binary (bytea, BLOB)", list: "array (or list)",
                  tuple: "array (or list)", dict: "structured (hstore, struct, map)",
                  set: "array (or list)"}  # fmt: skip


def _json_columns(result: Any) -> frozenset[int]:
    """The positions of the PostgreSQL ``json``/``jsonb`` columns of ``result`` (psycopg
    parses them into dicts and lists: they are given back as their JSON text)."""
    description = getattr(getattr(result, "cursor", None), "description", None) or ()
    return frozenset(
        i for i, column in enumerate(description)
        if getattr(column, "type_code", None) in _JSON_OIDS
    )  # fmt: skip


def _faithful(
    columns: list[tuple[Any, ...]], names: list[str], json_columns: frozenset[int], source: Any
) -> list[tuple[Any, ...]]:
    """The ``columns`` of a database result as anonymatch reads them: a ``json``/``jsonb``
    column as its JSON text; a binary (bytea, BLOB), array, list or structured column refused
    with an InputError naming it (they have no faithful cell; a query can cast them to text).
    O(cells)."""
    import json

    out = []
    for i, values in enumerate(columns):
        if i in json_columns:
            out.append(tuple(None if v is None else json.dumps(v, ensure_ascii=False)
                             for v in values))  # fmt: skip
            continue
        for kind in {type(v) for v in values}:
            refused = next((w for t, w in _REFUSED_KINDS.items() if issubclass(kind, t)), None)
            if refused is not None:
                raise InputError(
                    f"column {names[i]!r} of {source.what} in {source.where} is {refused}, "
                    f"which anonymatch does not read: leave it out or cast it to text in a "
                    f"{param('query')}"
                )
        out.append(values)
    return out


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
            json_columns = _json_columns(result)
            types: list[pa.DataType] | None = None
            read = 0
            for rows in result.partitions(batch_rows):
                if not rows:
                    continue
                batch, types = _arrow_batch(rows, names, types, _Where(source, read, json_columns))
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
    json_columns: frozenset[int] = frozenset()  # given back as their JSON text


def _arrow_batch(
    rows: Sequence[Sequence[Any]], names: list[str], types: list[pa.DataType] | None, at: _Where
) -> tuple[pa.Table, list[pa.DataType]]:
    """One batch of database rows as an Arrow table of the fixed ``types`` (inferred from
    this batch when None: the first batch). O(len(rows) · len(names))."""
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    columns = _faithful(columns, names, at.json_columns, at.source)
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


def source_types(source: SqlSource) -> dict[str, Any]:
    """The SQL types of ``source``'s columns (SQLAlchemy types, by column name): reflected for
    a table; for a query on PostgreSQL from its result's description (``LIMIT 0``); empty
    otherwise (a SQLite/DuckDB query: the release's values decide, as pandas infers them).
    InputError as for reading. O(columns)."""
    from sqlalchemy import exc as sa_exc
    from sqlalchemy import inspect
    from sqlalchemy import text as sql_text

    with _opened(source) as (connection, statement, url):
        try:
            if source.table is not None:
                schema, name = _split(source.table)
                try:
                    found = inspect(connection).get_columns(name, schema=schema)
                except (sa_exc.SQLAlchemyError, NotImplementedError):
                    if _is_postgresql(connection):
                        raise
                    return {}  # duckdb-engine's reflection fails on some versions
                return {str(c["name"]): c["type"] for c in found}
            if not _is_postgresql(connection):
                return {}
            import psycopg

            result = connection.execute(
                sql_text(f"SELECT * FROM ({statement}) AS source LIMIT 0")  # noqa: S608
            )
            names = [str(c) for c in result.keys()]  # noqa: SIM118
            described = result.cursor.description or ()
            result.close()
        except sa_exc.SQLAlchemyError as exc:
            raise _read_error(exc, source, url) from None
        types: dict[str, Any] = {}
        for name, column in zip(names, described, strict=False):
            info = psycopg.postgres.types.get(column.type_code)
            kind = connection.dialect.ischema_names.get(getattr(info, "regtype", None) or "")
            if kind is not None:
                types[name] = kind()
        return types


def _fitted(values: pd.Series, kind: Any) -> pd.Series | None:
    """``values`` (release cells of one column) as the SQL type ``kind`` of the source column,
    or None when they do not fit it (a generalized cell, a text type, a type not handled
    here): an integer type gets integers (``Int64``), a numeric type numbers, a boolean,
    date or time type values of that kind; a missing or suppressed cell (``*``) is NULL.
    O(rows)."""
    import datetime as dt
    import decimal

    from sqlalchemy import types as t

    from anonymatch.core.cells import STAR

    if isinstance(kind, t.Integer):
        accepted: tuple[type, ...] = (int,)
    elif isinstance(kind, t.Numeric):
        accepted = (int, float, decimal.Decimal)
    elif isinstance(kind, t.Boolean):
        accepted = (bool,)
    elif isinstance(kind, t.DateTime):
        accepted = (dt.datetime,)
    elif isinstance(kind, t.Date):
        accepted = (dt.date,)
    elif isinstance(kind, t.Time):
        accepted = (dt.time,)
    else:
        return None
    out: list[Any] = []
    for v in values.tolist():
        if v is None or (not isinstance(v, (str, list, tuple)) and bool(pd.isna(v))):
            out.append(None)
        elif isinstance(v, str):
            if v in (STAR, ""):
                out.append(None)
            elif isinstance(kind, t.Integer) and re.fullmatch(r"[+-]?[0-9]+", v):
                out.append(int(v))
            elif isinstance(kind, t.Numeric) and _is_number(v):
                out.append(float(v))
            else:
                return None
        elif isinstance(kind, t.Integer) and isinstance(v, float) and v.is_integer():
            out.append(int(v))
        elif isinstance(v, accepted) and not (isinstance(v, bool) and bool not in accepted):
            out.append(v)
        else:
            return None
    if isinstance(kind, t.Integer):
        return pd.Series(pd.array(out, dtype="Int64"), index=values.index, name=values.name)
    return pd.Series(out, index=values.index, name=values.name, dtype=object)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip().lower() not in ("nan", "inf", "-inf", "+inf", "infinity")


@dataclass(frozen=True)
class ColumnTypes:
    """What a database release keeps of its source's column types: ``types`` (by column
    name, :func:`source_types`), applied to every column but ``text`` (the QIs, published as
    text cells)."""

    types: dict[str, Any]
    text: frozenset[str] = frozenset()

    @classmethod
    def of(cls, source: SqlSource | None, text: Sequence[str] = ()) -> ColumnTypes | None:
        return None if source is None else cls(source_types(source), frozenset(text))

    def apply(self, frame: pd.DataFrame, dialect: Any) -> tuple[pd.DataFrame, dict[str, Any]]:
        """``frame`` with its columns converted to their source types where they fit, and the
        ``dtype`` mapping for ``to_sql`` (a type of another database as its generic form).
        O(cells)."""
        dtypes: dict[str, Any] = {}
        out = frame
        for name in frame.columns:
            kind = self.types.get(str(name))
            if kind is None or name in self.text:
                continue
            fitted = _fitted(frame[name], kind)
            if fitted is None:
                continue
            module = type(kind).__module__
            if not module.startswith("sqlalchemy.sql.") and f".{dialect.name}" not in module:
                try:  # another database's own type (PostgreSQL's TIMESTAMP into SQLite)
                    kind = kind.as_generic()
                except NotImplementedError:
                    continue
            if out is frame:
                out = frame.copy()
            out[name] = fitted
            dtypes[str(name)] = kind
        return out, dtypes


def check_output_table(
    text: str, table: str | None, force: bool, source: SqlSource | None = None
) -> None:
    """Up-front check of a database release: a supported URL and a table name are given, the
    release is not its own input (``source``: the same table of the same database, or a query
    that reads it — refused even with ``force``), the server is reachable and the table does
    not exist unless ``force``. A SQLite/DuckDB file that does not exist yet is not created
    here. InputError (one line, no password). The write checks existence again in its own
    transaction (:func:`write_sql_release`, :class:`SqlReleaseWriter`)."""
    from sqlalchemy import exc as sa_exc
    from sqlalchemy import inspect

    url = _url(text)
    if not table:
        raise InputError(f"the database output {redact_url(text)} needs {param('output_table')}")
    check_identifier(table, param("output_table"))
    if source is not None:
        _check_not_input(source, text, table)
    path = database_file(url)
    if path is not None and not path.exists():
        if not path.parent.is_dir():
            raise InputError(f"no directory {path.parent} for the database file {path}")
        return  # a new file: no table in it yet
    schema, name = _split(table)
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


def _same_database(a: str, b: str) -> bool:
    """Whether the URLs ``a`` and ``b`` name the same database (whoever connects): the same
    SQLite/DuckDB file, or the same server (host or socket directory, port) and database."""
    ua, ub = _url(a), _url(b)
    if ua.get_backend_name() != ub.get_backend_name():
        return False
    fa, fb = database_file(ua), database_file(ub)
    if fa is not None or fb is not None:
        return fa is not None and fb is not None and fa.resolve() == fb.resolve()

    def where(u: Any) -> tuple[str, int, str]:
        host = u.host or u.query.get("host") or ""
        return str(host).rstrip("/"), int(u.port or u.query.get("port") or 5432), u.database

    return where(ua) == where(ub)


def _default_schema(text: str) -> str:
    return "public" if _url(text).get_backend_name() == "postgresql" else "main"


def _check_not_input(source: SqlSource, text: str, table: str) -> None:
    """InputError when the release table ``table`` of ``text`` is the input ``source``: the
    same table of the same database, or a query naming it (directly, or through the views it
    names, as far as they can be read). O(len(query) + views)."""
    if not _same_database(source.text, text):
        return
    default = _default_schema(text)

    def key(name: str) -> tuple[str, str]:
        schema, bare = _split(name)
        return (schema or default).lower(), bare.lower()

    target = key(table)
    refused = (
        f"the release table {table!r} is the input; no output may be an input, "
        f"not even with {param('force')}"
    )
    if source.table is not None:
        if key(source.table) == target:
            raise InputError(refused)
        return
    if target[1] in _names_read(source, text):
        raise InputError(
            f"the query reads the release table {table!r}; no output may be an input, "
            f"not even with {param('force')}"
        )


def _words(sql: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_$]*", sql)}


def _names_read(source: SqlSource, text: str) -> set[str]:
    """Every identifier of ``source``'s query, and of the definitions of the views it names
    (recursively): a superset of the tables it reads."""
    from sqlalchemy import exc as sa_exc
    from sqlalchemy import inspect

    names = _words(str(source.query))
    path = database_file(_url(text))
    if path is not None and not path.exists():
        return names
    engine, _ = _engine(source.text, read_only=True)
    try:
        with engine.connect() as connection:
            inspector = inspect(connection)
            views = {v.lower(): v for v in inspector.get_view_names()}
            todo = [v for v in names if v in views]
            seen: set[str] = set()
            while todo:
                view = todo.pop()
                if view in seen:
                    continue
                seen.add(view)
                found = _words(str(inspector.get_view_definition(views[view]) or ""))
                names |= found
                todo += [v for v in found if v in views]
    except (sa_exc.SQLAlchemyError, NotImplementedError):
        pass  # the words of the query alone
    finally:
        engine.dispose()
    return names


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
    types: ColumnTypes | None = None,
) -> None:
    """Create ``table`` holding ``frame`` in one transaction (an existing table is dropped in
    the same transaction when ``replace``, else refused), with ``typing`` — the sidecar of a
    CSV release (``tables.io.sidecar.release_schema``) — stored beside it in that transaction
    (:func:`write_typing`). With ``types`` (a database source's), each column keeps its
    source's type where its cells fit it (``smallint`` stays ``smallint``, NULL for a missing
    or suppressed cell). Nothing is visible unless the whole write commits. O(rows)."""
    write_sql_tables(text, {table: frame}, replace, {table: typing} if typing else None, types)


def write_sql_tables(
    text: str,
    frames: Mapping[str, pd.DataFrame],
    replace: bool,
    typings: Mapping[str, dict[str, object]] | None = None,
    types: ColumnTypes | None = None,
) -> None:
    """Create every table of ``frames`` (name → rows) in **one** transaction: all of them
    appear, or none (the draws of ``anonymatch draw``, one table each; a single release,
    :func:`write_sql_release`). An existing table is dropped in that transaction when
    ``replace``, else refused (InputError); ``typings`` (name → sidecar) are stored beside
    their tables, ``types`` applied as in :func:`write_sql_release`. OutputError (one line,
    no password) when the database refuses a write. O(rows)."""
    from sqlalchemy import exc as sa_exc
    from sqlalchemy import inspect

    names = {table: _split(check_identifier(table, param("output_table"))) for table in frames}
    engine, url = _engine(text)
    fresh = _fresh_file(url)
    table = next(iter(frames), "")
    try:
        try:
            with engine.begin() as connection:  # one transaction: committed or rolled back
                for table, frame in frames.items():
                    schema, name = names[table]
                    if inspect(connection).has_table(name, schema=schema):
                        if not replace:
                            raise InputError(
                                f"table {table!r} already exists in {redact_url(text)} "
                                f"(use {param('force')} to replace it)"
                            )
                        quoted = connection.dialect.identifier_preparer.quote
                        source = ".".join(quoted(p) for p in (schema, name) if p)
                        connection.exec_driver_sql(f"DROP TABLE {source}")
                    frame, dtypes = (
                        (frame, {}) if types is None else types.apply(frame, connection.dialect)
                    )
                    frame.to_sql(name, connection, schema=schema, index=False, if_exists="fail",
                                 method=_insert_method(connection), dtype=dtypes)  # fmt: skip
                    typing = (typings or {}).get(table)
                    if typing is not None:
                        write_typing(connection, table, typing)
        except sa_exc.SQLAlchemyError as exc:
            raise OutputError(
                f"cannot write table {table!r} to {redact_url(text)}: "
                f"{_scrub(str(getattr(exc, 'orig', None) or exc), text, url)}"
            ) from None
    except BaseException:
        engine.dispose()
        _remove_file(fresh)
        raise
    finally:
        engine.dispose()


def _fresh_file(url: Any) -> Path | None:
    """The SQLite/DuckDB file of ``url`` when it does not exist yet (a write creates it, and
    :func:`_remove_file` removes it again when the write fails), else None."""
    path = database_file(url)
    return path if path is not None and not path.exists() else None


def _remove_file(path: Path | None) -> None:
    """Remove the database file ``path`` created by a failed write, with its journals."""
    if path is None:
        return
    for suffix in ("", "-journal", "-wal", "-shm", ".wal"):
        with contextlib.suppress(OSError):
            Path(str(path) + suffix).unlink(missing_ok=True)


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

    def __init__(
        self, text: str, table: str, replace: bool = False, types: ColumnTypes | None = None
    ) -> None:
        self.text, self.table, self.replace, self.types = text, table, replace, types
        self._dtypes: dict[str, Any] | None = None  # fixed by the first batch
        self.schema, self.name = _split(check_identifier(table, param("output_table")))
        self.rows = 0
        self.typing: dict[str, object] | None = None  # written by commit, in the transaction
        self._engine: Any = None
        self._url: Any = None
        self._connection: Any = None
        self._transaction: Any = None
        self._fresh: Path | None = None  # a SQLite/DuckDB file this writer creates

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
        self._fresh = _fresh_file(self._url)
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
        # with source types, integers with NULLs come as Python ints (exact beyond 2**53)
        frame = table.to_pandas(integer_object_nulls=self.types is not None)
        if self.types is not None:
            frame, dtypes = self.types.apply(frame, self._connection.dialect)
            if self._dtypes is None:
                self._dtypes = dtypes
            elif set(dtypes) != set(self._dtypes):
                unfit = sorted(set(self._dtypes) - set(dtypes))
                raise OutputError(
                    f"cannot write table {self.table!r} to {redact_url(self.text)}: column "
                    f"{unfit[0] if unfit else '?'} no longer fits its source's type"
                )
        try:
            frame.to_sql(self.name, self._connection, schema=self.schema, index=False,
                         if_exists="append", method=_insert_method(self._connection),
                         dtype=self._dtypes)  # fmt: skip
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
            self._fresh = None  # committed: the file is the release's
        except sa_exc.SQLAlchemyError as exc:
            self.abort()
            raise self._failed(exc) from None
        finally:
            self._close()

    def abort(self) -> None:
        """Roll the transaction back (nothing was visible) and close the connection."""
        if self._transaction is not None and self._transaction.is_active:
            with contextlib.suppress(Exception):
                self._transaction.rollback()
        self._close()
        _remove_file(self._fresh)
        self._fresh = None

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
