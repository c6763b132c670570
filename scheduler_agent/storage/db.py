"""The database: opening it (a SQLite file, or a PostgreSQL server by URL), migrating it, transactions.

What the code is given is a SQLAlchemy `Connection` (`storage/engine.py` makes the engines, one per
database per process). Outside `transaction` each statement autocommits on its own; a write that must be
atomic goes through `transaction`.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from scheduler_agent.storage.dialect import Location as Location
from scheduler_agent.storage.dialect import is_url, mask
from scheduler_agent.storage.files import create_private, make_data_folder, require_folder
from scheduler_agent.storage.migrations import HEAD

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

UNDEFINED_TABLE = "42P01"  # PostgreSQL's SQLSTATE for a table that is not there

_engines: dict[tuple[int, str], Engine] = {}  # (process, location): one engine each


def data_dir() -> Path:
    """The project's folder under the user's data directory ($XDG_DATA_HOME, or ~/.local/share)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "scheduler-agent"


def default_db_path() -> Path:
    """The calendar (and conversation) database under the user's data directory."""
    return data_dir() / "scheduler.db"


def connect(path: Path, *, to: str = HEAD) -> Connection:
    """Open (creating it if needed, 0600) the database at `path`, migrated to the revision `to` (the latest).

    Only the default data folder is created (0700); for any other path the folder must exist
    (InputError names it). Each statement autocommits on its own: every write that must be atomic goes
    through `transaction`.
    """
    if path == default_db_path():
        make_data_folder(path.parent)
    else:
        require_folder(path, "the database")
    create_private(path)  # SQLite gives the -wal and -shm files the database's mode
    conn = _open(str(path))
    if revision(conn) != to:
        conn.close()  # a connection open while another changes the schema may answer PRAGMAs from the old one
        migrate(path, to)
        conn = _open(str(path))
    return conn


def _engine(location: str, postgresql: bool) -> Engine:
    key = (os.getpid(), location)  # a forked process makes its own: a pool's connections are not shared
    engine = _engines.get(key)
    if engine is None:
        from scheduler_agent.storage import engine as engines

        made = engines.postgresql_engine(location, store=True) if postgresql else engines.sqlite_engine(Path(location))
        engine = _engines[key] = made
    return engine


def _open(location: str, postgresql: bool = False) -> Connection:
    from scheduler_agent.storage.engine import STORE

    conn = _engine(location, postgresql).connect()
    conn.info[STORE] = True
    return conn


def connect_url(url: str, *, to: str = HEAD) -> Connection:
    """Open the PostgreSQL database `url` names, migrated to the revision `to` (the latest; needs the
    `postgres` extra).

    InputError (one line, the password masked) when the driver is missing or the server cannot be
    reached.
    """
    from scheduler_agent.agent.errors import InputError

    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise InputError(
            f"{mask(url)} is a PostgreSQL database, and the PostgreSQL driver is not installed: "
            "pip install 'scheduler-agent[postgres]'"
        ) from None
    from sqlalchemy.exc import DBAPIError

    try:
        conn = _open(url, postgresql=True)
    except DBAPIError as exc:
        reason = mask(" ".join(str(exc.orig).split())) or type(exc.orig).__name__
        raise InputError(
            f"cannot connect to the database at {mask(url)}: {reason}; check the URL, that the server runs, "
            "and PGPASSWORD or ~/.pgpass"
        ) from None
    if revision(conn) != to:
        migrate(url, to)
    return conn


def in_use(db: Location | None) -> Location:
    """The database a command uses: `db` as given (--db, SCHEDULER_AGENT_DB), or the default file when None."""
    return default_db_path() if db is None else db


def open_db(db: Location | None) -> Connection:
    """`connect` to `db` (a file, or a `postgresql://` URL), or to the default file when None."""
    db = in_use(db)
    if isinstance(db, str) and is_url(db):
        return connect_url(db)
    return connect(Path(db))


def missing(db: Location | None) -> bool:
    """Whether `db` names a SQLite file that does not exist (a server's database is never "missing" here:
    connecting says whether it is there)."""
    return isinstance(db, Path) and not db.exists()


def transaction(conn: Connection) -> Transaction:
    """`BEGIN IMMEDIATE` … `COMMIT`, or `ROLLBACK` if the block raises.

    IMMEDIATE takes the write lock at once, so a check made inside the block still holds
    when the block writes. Inside an open transaction it nests as a SAVEPOINT. On
    PostgreSQL it is a plain BEGIN (READ COMMITTED): writers do not wait for each other, so what must not
    race is kept by the database (constraints, the exclusion constraint on booked time) or by a
    lock taken where the check is made (`lock_people`).
    """
    return Transaction(conn)


def in_transaction(conn: Connection) -> bool:
    """Whether a `transaction` block is open on `conn` (SQLAlchemy's `in_transaction()` also answers True
    between statements that autocommitted)."""
    return int(conn.info.get(DEPTH, 0)) > 0


DEPTH = "scheduler_agent.depth"  # in `Connection.info`: how many `transaction` blocks are open on it


class Transaction:
    """`transaction`'s context manager, on a store connection (`storage/engine.py`, `STORE`): it sends BEGIN,
    SAVEPOINT, COMMIT and ROLLBACK to the driver itself, through `storage.statement.control` (errors as
    SQLAlchemy raises them). A class, as a session opens two a loop iteration."""

    __slots__ = ("conn", "depth", "info")

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.info = conn.info
        self.depth = 0  # how many blocks were open around this one: 0 began the transaction, else a SAVEPOINT

    def __enter__(self) -> Connection:
        from scheduler_agent.storage.engine import BEGIN_STATEMENT
        from scheduler_agent.storage.statement import control

        conn, info = self.conn, self.info
        self.depth = depth = info.get(DEPTH, 0)
        if depth:
            control(conn, f"SAVEPOINT sa_{depth}")
        else:
            if conn.in_transaction():
                conn.commit()  # SQLAlchemy's bookkeeping of the statements it ran: nothing is open in the database
            control(conn, BEGIN_STATEMENT[conn.dialect.name])
        info[DEPTH] = depth + 1
        return conn

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        from scheduler_agent.storage.statement import control

        conn, depth = self.conn, self.depth
        try:
            if kind is None:
                try:
                    control(conn, f"RELEASE SAVEPOINT sa_{depth}" if depth else "COMMIT")
                except BaseException:
                    self._roll_back()
                    raise
            else:
                self._roll_back()
        finally:
            self.info[DEPTH] = depth

    def _roll_back(self) -> None:
        """Take the block's writes back; a connection that is gone (invalidated, closed) has nothing to take
        back, and the error that ended the block is the one raised."""
        from sqlalchemy.exc import DBAPIError

        from scheduler_agent.storage.statement import control

        conn, depth = self.conn, self.depth
        if conn.invalidated or conn.closed:
            return
        try:
            if depth:
                control(conn, f"ROLLBACK TO SAVEPOINT sa_{depth}")
                control(conn, f"RELEASE SAVEPOINT sa_{depth}")
            else:
                control(conn, "ROLLBACK")
        except DBAPIError:
            if not (conn.invalidated or conn.closed):
                raise


def migrate(location: Location, to: str = HEAD) -> None:
    """Apply the revisions after the one the database at `location` stores, up to `to` (storage/migrations/).

    Only called when `revision` differs from `to`, so opening an up-to-date database never imports Alembic.
    """
    from scheduler_agent.storage import migrations

    migrations.upgrade(location, to)


def revision(conn: Connection) -> str | None:
    """The revision the database stores (`alembic_version`): None for a new database, or one made before
    the store moved to Alembic."""
    from sqlalchemy.exc import DBAPIError

    try:
        row = conn.exec_driver_sql("SELECT version_num FROM alembic_version").fetchone()
    except DBAPIError as exc:
        if "no such table" in str(exc.orig) or getattr(exc.orig, "sqlstate", None) == UNDEFINED_TABLE:
            if conn.in_transaction():
                conn.rollback()
            return None
        raise  # a damaged file, say: the edge names it
    return None if row is None else str(row[0])
