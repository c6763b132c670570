"""The one SQLite file: opening it, migrating it, and explicit transactions."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from pathlib import Path

from scheduler_agent.storage.files import create_private, make_data_folder, require_folder
from scheduler_agent.storage.migrations import MIGRATIONS

BUSY_TIMEOUT_SECONDS = 5.0

_savepoints = count(1)


def data_dir() -> Path:
    """The project's folder under the user's data directory ($XDG_DATA_HOME, or ~/.local/share)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "scheduler-agent"


def default_db_path() -> Path:
    """The calendar (and conversation) database under the user's data directory."""
    return data_dir() / "scheduler.db"


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating it if needed, 0600) the database at `path`, migrated to the latest schema.

    Only the default data folder is created (0700); for any other path the folder must exist
    (InputError names it). The connection is in autocommit mode (`isolation_level=None`): every
    write that must be atomic goes through `transaction`.
    """
    if path == default_db_path():
        make_data_folder(path.parent)
    else:
        require_folder(path, "the database")
    create_private(path)  # SQLite gives the -wal and -shm files the database's mode
    conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_SECONDS)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")  # no fsync per commit; survives crash and SIGKILL (README: Speed)
    migrate(conn)
    return conn


def open_db(db: Path | None) -> sqlite3.Connection:
    """`connect` to `db`, or to the default file under the user's data directory when None."""
    return connect(db if db is not None else default_db_path())


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """`BEGIN IMMEDIATE` … `COMMIT`, or `ROLLBACK` if the block raises.

    IMMEDIATE takes the write lock at once, so a check made inside the block still holds
    when the block writes. Inside an open transaction it nests as a SAVEPOINT.
    """
    if conn.in_transaction:
        name = f"sp{next(_savepoints)}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield conn
        except BaseException:
            conn.execute(f"ROLLBACK TO {name}")
            conn.execute(f"RELEASE {name}")
            raise
        conn.execute(f"RELEASE {name}")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations not yet recorded in `_migrations`, each in its own transaction.

    Returns the names applied. Safe to run from two processes at once: each migration is
    re-checked after the write lock is taken.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations ("
        " name TEXT PRIMARY KEY,"
        " applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')))"
    )
    done = set(applied_migrations(conn))
    applied: list[str] = []
    for name, apply in MIGRATIONS:
        if name in done:
            continue  # the common case takes no write lock
        with transaction(conn):
            if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                continue
            apply(conn)
            conn.execute("INSERT INTO _migrations (name) VALUES (?)", (name,))
            applied.append(name)
    return applied


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    """The names recorded in `_migrations`, in the order they were applied."""
    return [row[0] for row in conn.execute("SELECT name FROM _migrations ORDER BY rowid")]
