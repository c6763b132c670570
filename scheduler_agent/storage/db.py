"""The database: opening it (a SQLite file, or a PostgreSQL server by URL), migrating it, transactions.

`Connection` (storage/dialect.py) is what the code may call on either: `sqlite3.Connection`, or
`pg.PgConnection` for a `postgresql://` location.
"""

from __future__ import annotations

import os
import sqlite3
from itertools import count
from pathlib import Path
from types import TracebackType

from scheduler_agent.storage.dialect import Connection as Connection
from scheduler_agent.storage.dialect import Location as Location
from scheduler_agent.storage.dialect import Row as Row
from scheduler_agent.storage.dialect import is_url, mask
from scheduler_agent.storage.files import create_private, make_data_folder, require_folder
from scheduler_agent.storage.migrations import HEAD

BUSY_TIMEOUT_SECONDS = 5.0
UNDEFINED_TABLE = "42P01"  # PostgreSQL's SQLSTATE for a table that is not there

_savepoints = count(1)


def data_dir() -> Path:
    """The project's folder under the user's data directory ($XDG_DATA_HOME, or ~/.local/share)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "scheduler-agent"


def default_db_path() -> Path:
    """The calendar (and conversation) database under the user's data directory."""
    return data_dir() / "scheduler.db"


def connect(path: Path, *, to: str = HEAD) -> sqlite3.Connection:
    """Open (creating it if needed, 0600) the database at `path`, migrated to the revision `to` (the latest).

    Only the default data folder is created (0700); for any other path the folder must exist
    (InputError names it). The connection is in autocommit mode (`isolation_level=None`): every
    write that must be atomic goes through `transaction`.
    """
    if path == default_db_path():
        make_data_folder(path.parent)
    else:
        require_folder(path, "the database")
    create_private(path)  # SQLite gives the -wal and -shm files the database's mode
    conn = _open(path)
    if revision(conn) != to:
        conn.close()  # a connection open while another changes the schema may answer PRAGMAs from the old one
        migrate(path, to)
        conn = _open(path)
    return conn


def _open(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_SECONDS)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA journal_mode = WAL")
    # No fsync per commit; a commit survives a crash and SIGKILL (docs/design.md, "Storage").
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def connect_url(url: str, *, to: str = HEAD) -> Connection:
    """Open the PostgreSQL database `url` names, migrated to the revision `to` (the latest; needs the
    `postgres` extra).

    InputError (one line, the password masked) when the driver is missing or the server cannot be
    reached.
    """
    from scheduler_agent.agent.errors import InputError

    try:
        from scheduler_agent.storage import pg
    except ImportError:
        raise InputError(
            f"{mask(url)} is a PostgreSQL database, and the PostgreSQL driver is not installed: "
            "pip install 'scheduler-agent[postgres]'"
        ) from None
    try:
        conn = pg.connect(url)
    except pg.PgOperationalError as exc:
        raise InputError(f"{exc}; check the URL, that the server runs, and PGPASSWORD or ~/.pgpass") from None
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
    when the block writes. Inside an open transaction it nests as a SAVEPOINT. On PostgreSQL
    it is a plain BEGIN (READ COMMITTED): writers do not wait for each other, so what must not
    race is kept by the database (constraints, the exclusion constraint on booked time) or by a
    lock taken where the check is made (`lock_people`).
    """
    return Transaction(conn)


class Transaction:
    """`transaction`'s context manager: a class, as a session opens two a loop iteration and a generator's
    `@contextmanager` costs a few microseconds more each time (issue 14)."""

    __slots__ = ("conn", "savepoint")

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.savepoint: str | None = None  # the SAVEPOINT's name when nested in an open transaction

    def __enter__(self) -> Connection:
        if self.conn.in_transaction:
            self.savepoint = f"sp{next(_savepoints)}"
            self.conn.execute(f"SAVEPOINT {self.savepoint}")
        else:
            self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        name = self.savepoint
        if name is not None:
            if kind is not None:
                self.conn.execute(f"ROLLBACK TO {name}")
            self.conn.execute(f"RELEASE {name}")
        elif kind is not None:
            self.conn.execute("ROLLBACK")
        else:
            self.conn.execute("COMMIT")


def migrate(location: Location, to: str = HEAD) -> None:
    """Apply the revisions after the one the database at `location` stores, up to `to` (storage/migrations/).

    Only called when `revision` differs from `to`, so opening an up-to-date database never imports Alembic.
    """
    from scheduler_agent.storage import migrations

    migrations.upgrade(location, to)


def revision(conn: Connection) -> str | None:
    """The revision the database stores (`alembic_version`): None for a new database, or one made before
    the store moved to Alembic."""
    try:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    except sqlite3.DatabaseError as exc:  # on PostgreSQL too: storage/pg.py raises sqlite3's errors
        if "no such table" in str(exc) or getattr(exc, "sqlstate", None) == UNDEFINED_TABLE:
            return None
        raise  # a damaged file, say: the edge names it
    return None if row is None else str(row[0])
