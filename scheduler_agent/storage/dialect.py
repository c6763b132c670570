"""Where the SQL of SQLite and PostgreSQL differs, named, in one place; and where a database is (`Location`).

Every statement is written once, with SQLAlchemy, and compiled for the database in use. What still differs
in the store's queries is here (the connection-level differences, BEGIN IMMEDIATE and the pragmas, are in
`storage/engine.py`; the schema's in `storage/schema.py`):

- `lock_person`: an advisory lock per person on PostgreSQL; nothing on SQLite, whose BEGIN IMMEDIATE
  already serialises every writer.
- `lock_events`: the events table locked against inserts on PostgreSQL, for ids given in a batch;
  nothing on SQLite (BEGIN IMMEDIATE).
- `moment`: a booked instant: TIMESTAMPTZ on PostgreSQL, the events' own text on SQLite.
- `BookedTimeTaken` / `booked_time_taken`: PostgreSQL's exclusion constraint on booked time (SQLSTATE
  23P01), or the deadlock two overlapping bookings written at once end in (40P01).
- `per_dialect`: a statement that aggregates strings (`{aggregate_strings}`): SQLite's `group_concat`,
  PostgreSQL's `string_agg`; compiled once for each, at import.
- `sqlstate`: PostgreSQL's code of an error SQLAlchemy raised (`DBAPIError.orig`); None on SQLite.

Nothing here imports SQLAlchemy or psycopg at import: `--help` and `lint` open no database.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy import Connection, TextClause

# Where the database is: a SQLite file, or (a str) a PostgreSQL URL such as postgresql://host/db.
Location = Path | str

URL_SCHEMES = ("postgresql://", "postgres://")

EXCLUSION_VIOLATION = "23P01"
DEADLOCK = "40P01"
# The advisory-lock namespace of per-person booking checks (the second key is the person's hashtext).
PERSON_LOCK_SPACE = 0x5A6E


class BookedTimeTaken(Exception):
    """The database refused a booking: a person's booked time overlaps one committed meanwhile (PostgreSQL's
    exclusion constraint on `booked_time`, or the deadlock of two written at the same moment)."""


def on_postgresql(conn: Connection) -> bool:
    return conn.dialect.name == "postgresql"


def sqlstate(error: BaseException) -> str | None:
    """PostgreSQL's SQLSTATE of an error SQLAlchemy raised (`DBAPIError.orig`): None on SQLite."""
    return getattr(getattr(error, "orig", None), "sqlstate", None)


def booked_time_taken(error: BaseException) -> bool:
    """Whether `error` is PostgreSQL refusing overlapping booked time (see `BookedTimeTaken`)."""
    return sqlstate(error) in (EXCLUSION_VIOLATION, DEADLOCK)


def lock_person(conn: Connection, key: str) -> None:
    """Inside a transaction on PostgreSQL: hold person `key`'s booking lock until it ends. SQLite: nothing."""
    if on_postgresql(conn):
        from sqlalchemy import text

        conn.execute(
            text("SELECT pg_advisory_xact_lock(CAST(:space AS integer), hashtext(:key))"),
            {"space": PERSON_LOCK_SPACE, "key": key},
        )


def lock_events(conn: Connection) -> None:
    """Inside a transaction on PostgreSQL: no insert into events until it ends (ids given in a batch stay
    free). SQLite: nothing, BEGIN IMMEDIATE already holds the write lock."""
    if on_postgresql(conn):
        conn.exec_driver_sql("LOCK TABLE events IN EXCLUSIVE MODE")


def moment(conn: Connection, column: str) -> str:
    """A booked instant in SQL: PostgreSQL's booked_time columns are timestamptz, SQLite's the events' text."""
    return f"CAST({column} AS TIMESTAMPTZ)" if on_postgresql(conn) else column


AGGREGATE_STRINGS = {"sqlite": "group_concat", "postgresql": "string_agg"}


def per_dialect(template: str) -> dict[str, TextClause]:
    """`template` as each database's statement, by dialect name: `{aggregate_strings}` in it is written as that
    database's aggregate of strings (`group_concat(x, ' ')` / `string_agg(x, ' ')`). Run it as
    `conn.execute(statements[conn.dialect.name], ...)`."""
    from sqlalchemy import text

    return {name: text(template.replace("{aggregate_strings}", word)) for name, word in AGGREGATE_STRINGS.items()}


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
