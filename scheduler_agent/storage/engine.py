"""SQLAlchemy engines for the store's two databases, each set up as the store needs it.

SQLite (`pysqlite`): the pragmas `storage.db.connect` sets (foreign keys, busy timeout), and transactions
that begin with `BEGIN IMMEDIATE`, by SQLAlchemy's documented recipe: the driver's own transaction handling
off (`isolation_level = None`) and a `begin` event that emits the statement. A default engine's deferred
transactions take the write lock only at the first write, and fail with SQLITE_BUSY when two writers meet;
IMMEDIATE takes it at once, so the second one waits (the busy timeout) instead.

PostgreSQL (`postgresql+psycopg`): psycopg 3 connecting to the URL as given (a `postgresql://` URL or a
libpq key=value string), in UTC. Nothing here imports psycopg until a PostgreSQL engine is made.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.pool import NullPool

BUSY_TIMEOUT_SECONDS = 5.0
CONNECT_TIMEOUT_SECONDS = 10


def sqlite_engine(path: Path) -> Engine:
    """An engine on the SQLite file at `path` (which must exist: `storage.files.create_private` makes it 0600)."""
    engine = create_engine(f"sqlite:///{path}", poolclass=NullPool, connect_args={"timeout": BUSY_TIMEOUT_SECONDS})

    @event.listens_for(engine, "connect")
    def _configure(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy says when a transaction begins, not the driver
        dbapi_connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
        dbapi_connection.execute("PRAGMA foreign_keys = ON")

    @event.listens_for(engine, "begin")
    def _begin_immediate(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def postgresql_engine(url: str) -> Engine:
    """An engine on the PostgreSQL database `url` names (psycopg 3), its sessions in UTC."""
    import psycopg

    def connect() -> psycopg.Connection[Any]:
        raw = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
        raw.execute("SET TIME ZONE 'UTC'")
        raw.autocommit = False
        return raw

    return create_engine("postgresql+psycopg://", creator=connect, poolclass=NullPool)
