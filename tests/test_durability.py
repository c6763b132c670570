"""What `synchronous=NORMAL` in WAL mode keeps: a committed write survives its process being killed (SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from sqlalchemy import text as sql

from scheduler_agent.storage.db import connect

WRITER = """
import os, signal, sys
from pathlib import Path
from sqlalchemy import text
from scheduler_agent.storage.db import connect, transaction
conn = connect(Path(sys.argv[1]))
with transaction(conn):
    conn.execute(text("INSERT INTO people (key, name, tz, work_start, work_end) "
                      "VALUES ('kim', 'Kim', 'UTC', '09:00', '17:00')"))
print("committed", flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # no close, no checkpoint: the commit is only in the WAL
"""


def test_connections_use_wal_without_an_fsync_per_commit(tmp_path: Path) -> None:
    conn = connect(tmp_path / "cal.db")
    assert conn.execute(sql("PRAGMA journal_mode")).fetchone()[0] == "wal"
    assert conn.execute(sql("PRAGMA synchronous")).fetchone()[0] == 1  # NORMAL


def test_a_commit_survives_the_process_being_killed(tmp_path: Path) -> None:
    db = tmp_path / "cal.db"
    connect(db).close()
    done = subprocess.run([sys.executable, "-c", WRITER, str(db)], capture_output=True, text=True)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert done.stdout == "committed\n"
    assert os.path.exists(f"{db}-wal")  # the write was never checkpointed into the main file
    row = connect(db).execute(sql("SELECT name FROM people WHERE key = 'kim'")).fetchone()
    assert row is not None
    assert row[0] == "Kim"
