"""SQL databases as table sources and release targets, through SQLAlchemy (the ``sql`` extra).

A source is a database URL (``postgresql://user@host/db``, ``sqlite:///file.db``) with a
``table`` or a ``query``. Credentials come from the URL or the environment (``PGPASSWORD``,
``~/.pgpass`` / ``PGPASSFILE``: libpq reads them); they are never recorded or printed —
:func:`redact_url` is what manifests and messages show, and every message raised here has the
password scrubbed out.

A release is written to a table in one transaction: the table is created (or, with
``replace``, dropped and created again) and filled, then committed; on any failure or
interrupt the transaction is rolled back and nothing is visible.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from anonymatch.core.errors import InputError, OutputError
from anonymatch.core.params import param

_URL = re.compile(r"^[a-z][a-z0-9+]*://", re.IGNORECASE)
_SCHEMES = ("postgresql", "postgres", "sqlite")


def is_database_url(text: object) -> bool:
    """Whether ``text`` names a database (``postgresql://…``, ``sqlite:///…``) rather than a
    file. O(len(text))."""
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


def read_sql_source(
    text: str, table: str | None = None, query: str | None = None, nrows: int | None = None
) -> pd.DataFrame:
    """Read ``table`` (or the rows of ``query``) from the database ``text`` into pandas, NULL
    as a missing value. InputError (one line, no password) on an unreachable server, wrong
    credentials, a missing table, a failing query or no rows. O(rows)."""
    from sqlalchemy import exc as sa_exc
    from sqlalchemy import inspect
    from sqlalchemy import text as sql_text

    if (table is None) == (query is None):
        raise InputError(
            f"a database input needs exactly one of {param('table')} and {param('query')}"
        )
    engine, url = _engine(text)
    where = redact_url(text)
    try:
        try:
            connection = engine.connect()
        except sa_exc.SQLAlchemyError as exc:
            raise _connect_error(exc, text, url) from None
        with connection:
            if table is not None:
                schema, name = _split(check_identifier(table, param("table")))
                if not inspect(connection).has_table(name, schema=schema):
                    raise InputError(f"no table {table!r} in {where}")
                quoted = connection.dialect.identifier_preparer.quote
                source = ".".join(quoted(p) for p in (schema, name) if p)
                statement = f"SELECT * FROM {source}"  # noqa: S608 - a checked identifier
            else:
                statement = str(query)
            if nrows is not None:
                statement = f"SELECT * FROM ({statement}) AS sample LIMIT {int(nrows)}"  # noqa: S608
            try:
                frame = pd.read_sql(sql_text(statement), connection)
            except (sa_exc.SQLAlchemyError, pd.errors.DatabaseError) as exc:
                what = f"table {table!r}" if table is not None else "the query"
                cause = getattr(exc, "orig", None) or exc.__cause__ or exc
                raise InputError(
                    f"cannot read {what} from {where}: {_scrub(str(cause), text, url)}"
                ) from None
    finally:
        engine.dispose()
    if len(frame) == 0:
        what = f"table {table!r}" if table is not None else "the query"
        raise InputError(f"{what} in {where} has no rows")
    if len(set(frame.columns)) != len(frame.columns):
        raise InputError(f"the columns of {table or 'the query'} in {where} repeat a name")
    frame.columns = pd.Index([str(c) for c in frame.columns])
    return frame


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


def write_sql_release(text: str, table: str, frame: pd.DataFrame, replace: bool) -> None:
    """Create ``table`` holding ``frame`` in one transaction (an existing table is dropped in
    the same transaction when ``replace``, else refused). Nothing is visible unless the whole
    write commits. O(rows)."""
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
                frame.to_sql(name, connection, schema=schema, index=False, if_exists="fail")
        except sa_exc.SQLAlchemyError as exc:
            raise OutputError(
                f"cannot write table {table!r} to {redact_url(text)}: "
                f"{_scrub(str(getattr(exc, 'orig', None) or exc), text, url)}"
            ) from None
    finally:
        engine.dispose()
