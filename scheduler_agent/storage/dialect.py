"""What the store's code may call on a database connection, whichever database it is.

`sqlite3.Connection` has this surface already; `storage/pg.py` gives PostgreSQL the same one (`?`
placeholders, `sqlite3.Row`-like rows, `lastrowid`, exceptions that are `sqlite3` exceptions), so the
calendar and agent modules are written once. `dialect(conn)` tells the two apart where SQL must differ;
say why beside each such place.

Nothing here imports psycopg: SQLite users need no PostgreSQL driver.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

Dialect = Literal["sqlite", "postgresql"]

Parameters = Sequence[Any] | Mapping[str, Any]
# Where the database is: a SQLite file, or (a str) a PostgreSQL URL such as postgresql://host/db.
Location = Path | str

URL_SCHEMES = ("postgresql://", "postgres://")


class BookedTimeTaken(sqlite3.IntegrityError):
    """The database refused a booking: a person's booked time overlaps one committed meanwhile (PostgreSQL's
    exclusion constraint on `booked_time`; storage/pg.py raises it)."""


class Row(Protocol):
    """A row: by position and by column name (`sqlite3.Row` and `pg.Row` both)."""

    def __getitem__(self, key: int | str, /) -> Any: ...

    def keys(self) -> list[str]: ...


class Cursor(Protocol):
    """What a statement's result offers: rows, the id it inserted, how many rows it changed."""

    @property
    def lastrowid(self) -> int | None: ...

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """A connection in autocommit mode: explicit transactions go through `storage.db.transaction`."""

    def execute(self, sql: str, parameters: Parameters = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Any, /) -> Cursor: ...

    def commit(self) -> None: ...

    def rollback(self) -> None: ...

    def close(self) -> None: ...

    @property
    def in_transaction(self) -> bool: ...


def dialect(conn: Connection) -> Dialect:
    """'postgresql' for a `pg.PgConnection`, else 'sqlite'."""
    return "postgresql" if getattr(conn, "dialect", "sqlite") == "postgresql" else "sqlite"


def is_url(location: str) -> bool:
    """Whether a --db value names a PostgreSQL server (a URL) rather than a SQLite file."""
    return location.lower().startswith(URL_SCHEMES)


_PASSWORD = re.compile(r"^([A-Za-z][\w+.-]*:/{1,2}[^:/@]*:)[^@]*@")
_PASSWORD_PARAM = re.compile(r"(?i)(password\s*=\s*)('[^']*'|[^\s&]+)")


def mask(location: str) -> str:
    """A database location as it may be printed: a password in it shown as ***.

    Both forms hide it: `postgresql://user:secret@host/db` and `...?password=secret` (or `password=secret`
    in a key=value string).
    """
    return _PASSWORD_PARAM.sub(r"\1***", _PASSWORD.sub(r"\1***@", location))
