"""PostgreSQL behind the `sqlite3.Connection` surface the store's code uses (psycopg 3).

`PgConnection` takes the SQL the modules write for SQLite and sends PostgreSQL's: `?` and `:name`
placeholders become `%s` / `%(name)s`, `INSERT OR IGNORE` becomes `ON CONFLICT DO NOTHING`,
`group_concat` becomes `string_agg`, `LIKE` is case-insensitive as in SQLite (`ILIKE`), and an INSERT
into a table with a serial `id` gets `RETURNING id` so `cursor.lastrowid` works. In a migration's DDL,
`id INTEGER PRIMARY KEY` becomes a serial id that, like SQLite's, takes NULL for "the next one" and
moves past an id given explicitly; integers are 64-bit (`BIGINT`) and text sorts byte-wise (`COLLATE
"C"`), as in SQLite, so ISO timestamps in text compare as times. Rows answer by position and by name,
like `sqlite3.Row`; errors are raised as `sqlite3` exceptions (subclasses below), so an `except
sqlite3.IntegrityError` means the same on both. SQL that cannot be translated is written per dialect
where it is used (`storage.dialect.dialect`), with a note beside it.

Connections are in autocommit mode, like the SQLite ones: `storage.db.transaction` sends BEGIN,
SAVEPOINT, COMMIT itself.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from decimal import Decimal
from functools import lru_cache
from typing import Any

import psycopg
import psycopg.errors
from psycopg.adapt import Dumper, Loader
from psycopg.pq import TransactionStatus
from psycopg.rows import RowMaker
from psycopg_pool import ConnectionPool

from scheduler_agent.storage.dialect import BookedTimeTaken, Parameters, mask

CONNECT_TIMEOUT_SECONDS = 10


class PgError(sqlite3.DatabaseError):
    """A PostgreSQL error, as the `sqlite3` exception the store's code already catches."""

    sqlstate: str | None = None  # PostgreSQL's code, e.g. '23P01' (exclusion), '40P01' (deadlock)


class PgIntegrityError(PgError, sqlite3.IntegrityError):
    """A constraint said no (unique, foreign key, check, not null)."""


class SlotTaken(PgIntegrityError, BookedTimeTaken):
    """The exclusion constraint on booked time: another booking holds an overlapping slot for a person."""


class PgOperationalError(PgError, sqlite3.OperationalError):
    """The server could not be reached, or the statement could not run (lock timeout, shutdown, ...)."""


def _one_line(exc: psycopg.Error) -> str:
    """The server's message (and DETAIL) on one line, a password in it masked: errors are printed as one line."""
    return mask(" ".join(str(exc).split())) or type(exc).__name__


def _wrapped(exc: psycopg.Error) -> PgError:
    text = _one_line(exc)
    wrapped: PgError
    if isinstance(exc, psycopg.errors.ExclusionViolation):
        wrapped = SlotTaken(text)
    elif isinstance(exc, psycopg.IntegrityError):
        wrapped = PgIntegrityError(text)
    elif isinstance(exc, psycopg.OperationalError):
        wrapped = PgOperationalError(text)
    else:
        wrapped = PgError(text)
    wrapped.sqlstate = exc.sqlstate
    return wrapped


class Row(tuple[Any, ...]):
    """A result row: `row[0]`, `row["name"]` (any case), `row.keys()`, as `sqlite3.Row` offers."""

    _index: Mapping[str, int]

    def __new__(cls, values: Sequence[Any], index: Mapping[str, int]) -> Row:
        row = super().__new__(cls, values)
        row._index = index
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return super().__getitem__(self._index[key.lower()])
        return super().__getitem__(key)

    def keys(self) -> list[str]:
        return list(self._index)


def _row_factory(cursor: psycopg.Cursor[Any]) -> RowMaker[Row]:
    names = [column.name for column in cursor.description or ()]
    index = {name.lower(): i for i, name in enumerate(names)}

    def make(values: Sequence[Any]) -> Row:
        return Row(values, index)

    return make


class _IntFromBool(Dumper):
    """Python bools go into INTEGER columns as 0/1, as sqlite3 stores them."""

    oid = psycopg.adapters.types["int8"].oid

    def dump(self, obj: Any) -> bytes:
        return b"1" if obj else b"0"


class _NumberFromNumeric(Loader):
    """`sum`, `round` and `avg` give numeric: an int when whole, else a float, as SQLite gives."""

    def load(self, data: Any) -> int | float:
        value = Decimal(bytes(data).decode())
        return int(value) if value == value.to_integral_value() else float(value)


class Cursor:
    """The result of one statement: rows (all fetched), `lastrowid`, `rowcount`."""

    def __init__(self, rows: list[Row], rowcount: int, lastrowid: int | None) -> None:
        self._rows = rows
        self._next = 0
        self._rowcount = rowcount
        self._lastrowid = lastrowid

    @property
    def lastrowid(self) -> int | None:
        return self._lastrowid

    @property
    def rowcount(self) -> int:
        return self._rowcount

    def fetchone(self) -> Row | None:
        if self._next >= len(self._rows):
            return None
        self._next += 1
        return self._rows[self._next - 1]

    def fetchall(self) -> list[Row]:
        rest, self._next = self._rows[self._next :], len(self._rows)
        return rest

    def __iter__(self) -> Iterator[Row]:
        while (row := self.fetchone()) is not None:
            yield row


class PgConnection:
    """A psycopg connection with the `storage.dialect.Connection` surface (see the module's docstring)."""

    dialect = "postgresql"

    def __init__(self, raw: psycopg.Connection[Row], location: str) -> None:
        self.raw = raw
        self.location = mask(location)  # never the password: this is what errors and `db path` may print
        self._serial: dict[str, bool] = {}
        raw.adapters.register_dumper(bool, _IntFromBool)
        raw.adapters.register_loader("numeric", _NumberFromNumeric)

    @property
    def lost(self) -> bool:
        """The connection to the server is gone (the server restarted, the network dropped it): open a new one."""
        return bool(self.raw.broken or self.raw.closed)

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != TransactionStatus.IDLE

    def execute(self, sql: str, parameters: Parameters = (), /) -> Cursor:
        if _PRAGMA.match(sql):
            return Cursor([], -1, None)  # SQLite's settings; PostgreSQL's are the server's
        statement = translate(sql)
        returning = None
        if statement.insert_into and self._has_serial_id(statement.insert_into):
            returning = statement.sql + " RETURNING id"
        rows, rowcount, lastrowid = self._run(returning or statement.sql, parameters, returning is not None)
        for after in statement.after:
            self._run(after, (), False)
        if returning is not None:
            return Cursor([], rowcount, lastrowid)
        return Cursor(rows, rowcount, None)

    def executemany(self, sql: str, parameters: Any, /) -> Cursor:
        statement = translate(sql)
        try:
            with self.raw.cursor() as cursor:
                cursor.executemany(statement.sql, list(parameters))
                return Cursor([], cursor.rowcount, None)
        except psycopg.Error as exc:
            raise _wrapped(exc) from None

    def run_native(self, sql: str, parameters: Parameters | None = None) -> list[Row]:
        """Send PostgreSQL's own SQL (`%s` placeholders, `::` casts, `$$` bodies) untranslated."""
        return self._run(sql, parameters, False)[0]

    def commit(self) -> None:
        self.raw.commit()

    def rollback(self) -> None:
        self.raw.rollback()

    def close(self) -> None:
        self.raw.close()

    def _run(self, sql: str, parameters: Parameters | None, returning: bool) -> tuple[list[Row], int, int | None]:
        try:
            with self.raw.cursor() as cursor:
                cursor.execute(sql, parameters)  # translated, so not a literal
                rows = cursor.fetchall() if cursor.description is not None else []
                lastrowid = int(rows[0][0]) if returning and rows else None
                return rows, cursor.rowcount, lastrowid
        except psycopg.Error as exc:
            raise _wrapped(exc) from None

    def _has_serial_id(self, table: str) -> bool:
        known = self._serial.get(table)
        if known is None:
            rows = self._run(
                "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
                "AND table_name = %s AND column_name = 'id' AND column_default LIKE 'nextval%%'",
                (table,),
                False,
            )[0]
            known = self._serial[table] = bool(rows)
        return known


def connect(url: str) -> PgConnection:
    """Open a connection to the server `url` names (a `postgresql://` URL or a libpq key=value string).

    A password belongs in PGPASSWORD, ~/.pgpass or a service file rather than the URL; when it is in
    the URL it is never printed (errors show the URL masked). Raises PgOperationalError when the server
    cannot be reached.
    """
    try:
        raw = psycopg.connect(url, autocommit=True, row_factory=_row_factory, connect_timeout=CONNECT_TIMEOUT_SECONDS)
    except psycopg.Error as exc:
        raise PgOperationalError(f"cannot connect to the database at {mask(url)}: {_one_line(exc)}") from None
    conn = PgConnection(raw, url)
    conn.run_native("SET TIME ZONE 'UTC'")
    return conn


class Pool:
    """Connections to one server kept open (psycopg_pool), each handed out as a `PgConnection`.

    For a process that runs several turns at once (workers): `with pool.connection() as conn:`.
    """

    def __init__(self, url: str, min_size: int = 1, max_size: int = 4) -> None:
        self.location = mask(url)
        self._url = url
        self._pool: ConnectionPool[psycopg.Connection[Row]] = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs={"autocommit": True, "row_factory": _row_factory, "connect_timeout": CONNECT_TIMEOUT_SECONDS},
            open=True,
        )

    @contextmanager
    def connection(self) -> Iterator[PgConnection]:
        with self._pool.connection() as raw:
            conn = PgConnection(raw, self._url)
            conn.run_native("SET TIME ZONE 'UTC'")
            yield conn

    def close(self) -> None:
        self._pool.close()


class Statement:
    """One statement in PostgreSQL's words, what it inserts into, and DDL to run right after it."""

    def __init__(self, sql: str, insert_into: str | None, after: tuple[str, ...]) -> None:
        self.sql = sql
        self.insert_into = insert_into
        self.after = after


_PRAGMA = re.compile(r"\s*PRAGMA\b", re.IGNORECASE)
_DDL = re.compile(r"\s*(CREATE\s+TABLE|ALTER\s+TABLE)\b", re.IGNORECASE)
_CREATE_TABLE = re.compile(r"\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.IGNORECASE)
_SERIAL_ID = re.compile(r"\bid\s+INTEGER\s+PRIMARY\s+KEY\b", re.IGNORECASE)
# a column's type TEXT (not a column named text): after "(" or "," and the name, or after ADD COLUMN name
_TEXT_COLUMN = re.compile(r"((?:[(,]|\bADD\s+COLUMN)\s*\w+\s+)TEXT\b", re.IGNORECASE)
_INSERT = re.compile(r"\s*INSERT\s+(OR\s+(IGNORE|REPLACE)\s+)?INTO\s+(\w+)", re.IGNORECASE)
_NOW_TEXT = re.compile(r"strftime\('%Y-%m-%dT%H:%M:%SZ',\s*'now'\)", re.IGNORECASE)
# SQLite's created_at default, in PostgreSQL: the same text, 'YYYY-MM-DDTHH:MM:SSZ'
_PG_NOW_TEXT = "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"


@lru_cache(maxsize=1024)
def translate(sql: str) -> Statement:
    """`sql` as written for SQLite, as PostgreSQL takes it (see the module's docstring)."""
    after: tuple[str, ...] = ()
    if _DDL.match(sql):
        sql = _QUOTED.sub(lambda m: "" if m.group(0).startswith("--") else m.group(0), sql)  # comments out
        created = _CREATE_TABLE.match(sql)
        if created and _SERIAL_ID.search(sql):
            table = created.group(1)
            after = (
                f"CREATE TRIGGER {table}_fill_id BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION sa_fill_id()",
            )
        sql = _SERIAL_ID.sub("id BIGSERIAL PRIMARY KEY", sql)
        sql = _outside_quotes(sql, lambda part: re.sub(r"\bINTEGER\b", "BIGINT", part, flags=re.IGNORECASE))
        sql = _outside_quotes(sql, lambda part: _TEXT_COLUMN.sub(r'\1TEXT COLLATE "C"', part))
    sql = _NOW_TEXT.sub(_PG_NOW_TEXT.replace("\\", "\\\\"), sql)
    insert_into = None
    inserted = _INSERT.match(sql)
    if inserted:
        insert_into = inserted.group(3).lower()
        if inserted.group(2):
            if inserted.group(2).upper() == "REPLACE":
                raise ValueError(
                    "INSERT OR REPLACE has no PostgreSQL translation: write INSERT ... ON CONFLICT (key) DO UPDATE"
                )
            sql = sql[: inserted.start(1)] + sql[inserted.end(1) :] + " ON CONFLICT DO NOTHING"
        if re.search(r"\bRETURNING\b", sql, re.IGNORECASE):
            insert_into = None  # it says what it returns
    sql = _outside_quotes(sql, _words)
    return Statement(_placeholders(sql), insert_into, after)


def _words(part: str) -> str:
    part = re.sub(r"\bBEGIN\s+IMMEDIATE\b", "BEGIN", part, flags=re.IGNORECASE)
    part = re.sub(r"\bgroup_concat\s*\(", "string_agg(", part, flags=re.IGNORECASE)
    part = re.sub(r"\bifnull\s*\(", "coalesce(", part, flags=re.IGNORECASE)
    return re.sub(r"(?<!I)\bLIKE\b", "ILIKE", part, flags=re.IGNORECASE)  # SQLite's LIKE ignores ASCII case


_QUOTED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\$\$.*?\$\$|--[^\n]*", re.DOTALL)


def _outside_quotes(sql: str, change: Any) -> str:
    """Apply `change` to the parts of `sql` outside string literals, quoted names, $$ bodies and comments."""
    out, last = [], 0
    for quoted in _QUOTED.finditer(sql):
        out += [change(sql[last : quoted.start()]), quoted.group(0)]
        last = quoted.end()
    out.append(change(sql[last:]))
    return "".join(out)


_PLACEHOLDER = re.compile(r"::|\?|(?<![:\w]):([A-Za-z_]\w*)|%")


def _placeholders(sql: str) -> str:
    """`?` -> `%s`, `:name` -> `%(name)s`, `%` -> `%%` (psycopg reads % everywhere, even inside quotes)."""

    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "::":
            return token
        if token == "?":
            return "%s"
        if token == "%":
            return "%%"
        return f"%({match.group(1)})s"

    out, last = [], 0
    for quoted in _QUOTED.finditer(sql):
        out += [_PLACEHOLDER.sub(one, sql[last : quoted.start()]), quoted.group(0).replace("%", "%%")]
        last = quoted.end()
    out.append(_PLACEHOLDER.sub(one, sql[last:]))
    return "".join(out)
