"""SQLAlchemy engines for the store's two databases, each set up as the store needs it.

Connection-level differences between the dialects are all here (the query-level ones are in
`storage/dialect.py`):

SQLite (`pysqlite`): the pragmas (WAL, foreign keys, busy timeout, synchronous NORMAL) set on every new
connection, and transactions that begin with `BEGIN IMMEDIATE`, by SQLAlchemy's documented recipe: the
driver's own transaction handling off (`isolation_level = None`) and a `begin` event that emits the
statement. A default engine's deferred transactions take the write lock only at the first write, and fail
with SQLITE_BUSY when two writers meet; IMMEDIATE takes it at once, so the second one waits (the busy timeout)
instead.

PostgreSQL (`postgresql+psycopg`): psycopg 3 connecting to the URL as given (a `postgresql://` URL or a
libpq key=value string), in UTC, through SQLAlchemy's pool. Python bools go into the INTEGER (BIGINT)
columns as 0/1 and sums come back as int or float, as SQLite gives them. The driver autocommits and the
`begin` event emits `BEGIN`, as on SQLite. Nothing here imports psycopg until a PostgreSQL engine is made.

Both: a store connection (`storage.db.connect`) is marked `STORE`. Its transactions are begun and ended by
`storage.db.transaction` itself, on the driver (`BEGIN_STATEMENT`, then COMMIT or ROLLBACK, SAVEPOINTs inside):
SQLAlchemy's `Transaction` objects and events cost about 40 µs a transaction, and a loop iteration opens two.
Outside one, each statement autocommits on its own; the `begin` event emits nothing for a store connection
(SQLAlchemy still calls a statement it ran a transaction). Migrations' connections are not marked: each
`begin` is a real one, by the recipe above.
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.pool import NullPool

BUSY_TIMEOUT_SECONDS = 5.0
CONNECT_TIMEOUT_SECONDS = 10
# In `Connection.info`: True on a store connection, whose transactions `storage.db.transaction` begins itself.
STORE = "scheduler_agent.store"
# What begins a store transaction, by dialect: SQLite's takes the write lock at once (see above).
BEGIN_STATEMENT = {"sqlite": "BEGIN IMMEDIATE", "postgresql": "BEGIN"}


def sqlite_engine(path: Path) -> Engine:
    """An engine on the SQLite file at `path` (which must exist: `storage.files.create_private` makes it 0600).

    No pool: a connection is opened per `connect` (about as cheap as the pool's check-out on a file), and
    one open while another process migrates the file never answers from the old schema.
    """
    engine = create_engine(f"sqlite:///{path}", poolclass=NullPool, connect_args={"timeout": BUSY_TIMEOUT_SECONDS})

    @event.listens_for(engine, "connect")
    def _configure(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy says when a transaction begins, not the driver
        dbapi_connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
        dbapi_connection.execute("PRAGMA foreign_keys = ON")
        dbapi_connection.execute("PRAGMA journal_mode = WAL")
        # No fsync per commit; a commit survives a crash and SIGKILL (docs/design.md, "Storage").
        dbapi_connection.execute("PRAGMA synchronous = NORMAL")

    @event.listens_for(engine, "begin")
    def _begin_immediate(connection: Connection) -> None:
        if not connection.info.get(STORE):
            connection.connection.driver_connection.execute(BEGIN_STATEMENT["sqlite"])  # type: ignore[union-attr]

    return engine


def postgresql_engine(url: str, *, store: bool = False) -> Engine:
    """An engine on the PostgreSQL database `url` names (psycopg 3), its sessions in UTC.

    `store`: the store's own engine (`storage.db`): connections kept open between uses (SQLAlchemy's
    QueuePool), and bools and numerics adapted as SQLite gives them. Else (migrations, which reflect with
    SQLAlchemy's own queries) one connection per `connect`, adapted as SQLAlchemy expects.
    """
    import psycopg
    from psycopg.adapt import Dumper, Loader

    class IntFromBool(Dumper):
        """Python bools go into INTEGER columns as 0/1, as sqlite3 stores them."""

        oid = psycopg.adapters.types["int8"].oid

        def dump(self, obj: Any) -> bytes:
            return b"1" if obj else b"0"

    class NumberFromNumeric(Loader):
        """`sum`, `round` and `avg` give numeric: an int when whole, else a float, as SQLite gives."""

        def load(self, data: Any) -> int | float:
            value = Decimal(bytes(data).decode())
            return int(value) if value == value.to_integral_value() else float(value)

    def connect() -> psycopg.Connection[Any]:
        raw = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
        raw.execute("SET TIME ZONE 'UTC'")
        if store:
            raw.adapters.register_dumper(bool, IntFromBool)
            raw.adapters.register_loader("numeric", NumberFromNumeric)
        return raw

    options: dict[str, Any] = {"pool_pre_ping": True} if store else {"poolclass": NullPool}
    engine = create_engine("postgresql+psycopg://", creator=connect, **options)

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        if not connection.info.get(STORE):
            connection.connection.driver_connection.execute(BEGIN_STATEMENT["postgresql"])  # type: ignore[union-attr]

    return engine
