"""How tests/data/old/*.sql were made: by the store before it moved to Alembic (commit a4d79a0), whose
migrations were a list of functions recorded by name in `_migrations`.

Kept as a record; the tests do not run it (the code it drives is gone). For each of three points in that list
(m001, the first; m019, a middle one; m036, the last) it made a database on SQLite and on PostgreSQL with
that version's code, wrote a little of what a person keeps there, and dumped it as SQL:

    PYTHONPATH=<a checkout of a4d79a0> python tests/data/make_old_databases.py OUT_FOLDER POSTGRES_URL

SQLite's dump is `iterdump()`; PostgreSQL's is `pg_dump --no-owner --no-privileges --inserts`, made on an
empty database each time (PostgreSQL 15).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from scheduler_agent.storage import db, migrations  # type: ignore[attr-defined]

POINTS = ("m001_calendar", "m019_entry_sizes_and_checked", "m036_fewer_indexes_to_write")
PG_DUMP = "/usr/lib/postgresql/15/bin/pg_dump"
PSQL = "/usr/lib/postgresql/15/bin/psql"


def fill(conn: object, point: str) -> None:
    """A person, an event they attend, and (from m003) a conversation with one entry."""
    with db.transaction(conn):  # type: ignore[arg-type]
        conn.execute(
            "INSERT INTO people (key, name, tz, work_start, work_end) VALUES "  # type: ignore[attr-defined]
            "('you', 'Jordan Lee', 'Europe/London', '09:00', '17:00')"
        )
        conn.execute(
            "INSERT INTO people (key, name, tz, work_start, work_end) VALUES "  # type: ignore[attr-defined]
            "('priya', 'Priya Raman', 'Europe/London', '09:00', '17:00')"
        )
        conn.execute(
            "INSERT INTO events (title, start_utc, end_utc) VALUES "  # type: ignore[attr-defined]
            "('Roadmap', '2026-08-31T13:00:00Z', '2026-08-31T14:00:00Z')"
        )
        conn.execute("INSERT INTO event_attendees (event_id, person_key) VALUES (1, 'priya')")  # type: ignore[attr-defined]
        if point != "m001_calendar":
            conn.execute(  # type: ignore[attr-defined]
                "INSERT INTO conversations (model, max_tokens, system, tools, started_on) VALUES "
                "('claude-sonnet-5-5', 1024, 'You schedule meetings.', '[]', '2026-08-27')"
            )
            conn.execute(  # type: ignore[attr-defined]
                "INSERT INTO entries (conversation_id, position, role, content) VALUES "
                '(1, 0, \'user\', \'[{"type":"text","text":"Book 30 minutes with Priya."}]\')'
            )


def main(out: Path, pg_url: str) -> None:
    names = [name for name, _ in migrations.MIGRATIONS]
    everything = list(migrations.MIGRATIONS)
    for point in POINTS:
        number = point.split("_")[0]
        db.MIGRATIONS[:] = everything[: names.index(point) + 1]
        path = out / f"{number}.db"
        path.unlink(missing_ok=True)
        conn = db.connect(path)
        fill(conn, point)
        conn.close()
        raw = sqlite3.connect(path)
        (out / f"sqlite_{number}.sql").write_text("\n".join(raw.iterdump()) + "\n")
        raw.close()
        path.unlink()
        base, _, name = pg_url.rpartition("/")
        subprocess.run(
            [
                PSQL,
                f"{base}/postgres",
                "-c",
                f"DROP DATABASE IF EXISTS {name}_{number}",
                "-c",
                f"CREATE DATABASE {name}_{number}",
            ],
            check=True,
        )
        conn = db.connect_url(f"{base}/{name}_{number}")
        fill(conn, point)
        conn.close()
        dump = subprocess.run(
            [PG_DUMP, "--no-owner", "--no-privileges", "--inserts", f"{base}/{name}_{number}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (out / f"postgresql_{number}.sql").write_text(dump)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
