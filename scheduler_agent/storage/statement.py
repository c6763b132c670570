"""The store's hot statements: compiled by SQLAlchemy once per dialect, run on the driver's connection.

    _TAIL = Statement("SELECT position + 1, content FROM entries WHERE conversation_id = :cid ...")
    row = _TAIL.first(conn, {"cid": cid})

SQLAlchemy's `Connection.execute` of a `text()` costs about 95 µs a statement here (an execution context, the
result's column metadata, events); the driver's own `execute` about 20 µs. An iteration of the loop writes
three to five statements and a calendar tool reads five to seven, so those are `Statement`s: written once with
named parameters like any `text()`, compiled for the connection's dialect the first time they meet it (the
driver's SQL and, for SQLite, the parameters' order), then run on the connection's DBAPI connection. Nothing
else changes: the transaction a `storage.db.transaction` block opened (on the same driver connection) holds
them, and a driver error is raised as `Connection.execute` raises it (`DBAPIError.instance`: `IntegrityError`,
`OperationalError`, ...), the connection invalidated when it was lost. Rows are the driver's tuples, or
named tuples (`named=True`: `row.column` and `row._fields`, as SQLAlchemy's `Row` has).

SQLAlchemy has no lighter public way to run a compiled statement (`exec_driver_sql` still builds an execution
context, about 50 µs), so this module is ours.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Connection, text

Params = Mapping[str, Any]


class Statement:
    """One statement with `:name` parameters, compiled once per dialect; see the module's docstring."""

    __slots__ = ("_compiled", "_rows", "clause", "named")

    def __init__(self, sql: str, *, named: bool = False) -> None:
        self.clause = text(sql)  # also what `conn.execute` takes, where a caller needs SQLAlchemy's result
        self.named = named
        self._compiled: dict[str, tuple[str, tuple[str, ...] | None]] = {}  # dialect -> (SQL, positional order)
        self._rows: dict[tuple[str, ...], Any] = {}  # column names -> their named tuple

    def cursor(self, conn: Connection, params: Params | None = None) -> Any:
        """Run it; the driver's cursor (rows not yet fetched, `rowcount`)."""
        compiled = self._compiled.get(conn.dialect.name) or self._compile(conn)
        sql, order = compiled
        args: Any = params or {}
        if order is not None:
            args = tuple([args[name] for name in order])
        driver = conn.connection.driver_connection
        try:
            return driver.execute(sql, args)  # type: ignore[union-attr]
        except conn.dialect.loaded_dbapi.Error as error:
            raise _raised_as_sqlalchemy_would(conn, sql, args, error) from error

    def many(self, conn: Connection, params_seq: Iterable[Params]) -> int:
        """Run a write once for each set of parameters, through the driver's `executemany` (one call, not a
        statement each: SQLAlchemy's own executemany binds every row through its compiler, about 20 µs a row);
        how many rows it changed. Errors as `cursor`'s."""
        compiled = self._compiled.get(conn.dialect.name) or self._compile(conn)
        sql, order = compiled
        args: Any = params_seq
        if order is not None:
            args = [tuple([params[name] for name in order]) for params in params_seq]
        elif not isinstance(params_seq, list):
            args = list(params_seq)
        if not args:
            return 0
        cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        try:
            cursor.executemany(sql, args)
        except conn.dialect.loaded_dbapi.Error as error:
            raise _raised_as_sqlalchemy_would(conn, sql, args, error) from error
        finally:
            rowcount = cursor.rowcount
            cursor.close()
        return int(rowcount)

    def run(self, conn: Connection, params: Params | None = None) -> int:
        """Run a write; how many rows it changed."""
        return int(self.cursor(conn, params).rowcount)

    def rows(self, conn: Connection, params: Params | None = None) -> list[Any]:
        cursor = self.cursor(conn, params)
        found = cursor.fetchall()
        return [*map(self._row_type(cursor)._make, found)] if self.named else found

    def first(self, conn: Connection, params: Params | None = None) -> Any:
        """The first row, or None."""
        cursor = self.cursor(conn, params)
        row = cursor.fetchone()
        return self._row_type(cursor)._make(row) if self.named and row is not None else row

    def scalar(self, conn: Connection, params: Params | None = None) -> Any:
        """The first row's first value, or None."""
        row = self.cursor(conn, params).fetchone()
        return None if row is None else row[0]

    def _compile(self, conn: Connection) -> tuple[str, tuple[str, ...] | None]:
        compiled = self.clause.compile(dialect=conn.dialect)
        order = tuple(compiled.positiontup or ()) if compiled.positional else None
        self._compiled[conn.dialect.name] = found = (compiled.string, order)
        return found

    def _row_type(self, cursor: Any) -> Any:
        columns = tuple(column[0] for column in cursor.description)
        made = self._rows.get(columns)
        if made is None:
            made = self._rows[columns] = namedtuple("Row", columns, rename=True)
        return made


def control(conn: Connection, sql: str) -> None:
    """A statement with no parameters and no rows (BEGIN, COMMIT, SAVEPOINT ...) sent to the driver as it is
    (`storage.db.transaction`'s); an error raised as SQLAlchemy's, as a `Statement`'s."""
    driver = conn.connection.driver_connection
    try:
        driver.execute(sql)  # type: ignore[union-attr]
    except conn.dialect.loaded_dbapi.Error as error:
        raise _raised_as_sqlalchemy_would(conn, sql, (), error) from error


def _raised_as_sqlalchemy_would(conn: Connection, sql: str, args: Any, error: Exception) -> Exception:
    """`error` (the driver's) as SQLAlchemy's exception; a lost connection is invalidated first, as
    `Connection.execute` invalidates it, so that whoever holds `conn` sees `conn.invalidated`."""
    from sqlalchemy.exc import DBAPIError

    dialect = conn.dialect
    lost = bool(dialect.is_disconnect(error, conn.connection.dbapi_connection, None))  # type: ignore[arg-type]
    if lost and not conn.invalidated:
        conn.invalidate(error)
    return DBAPIError.instance(
        sql, args, error, dialect.loaded_dbapi.Error, connection_invalidated=lost, dialect=dialect
    )
