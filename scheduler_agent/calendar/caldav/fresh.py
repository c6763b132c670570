"""What every reader of busy time calls first when a CalDAV server is connected: a sync when the last one
is older than `FRESH_SECONDS` (one small REPORT when nothing changed), else nothing.

When the server cannot be used, the readers read the replica as it is, and say so in one line: `last
synced 3 min ago; dav.example.com unreachable` (`calendar show`, `export`, and the tools' results for the
model). The reason is kept with the connection, and `calendar backends` shows it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection as Db

from scheduler_agent.calendar.caldav import replica
from scheduler_agent.calendar.caldav.connect import CalDAVError, Connection, load_connection, password_for
from scheduler_agent.storage.db import transaction

FRESH_SECONDS = 5.0
"""How old the last sync may be before a reader syncs first."""

READ_DEADLINE_SECONDS = 5.0
"""What a sync made for a reader waits on each request before the replica is read as it is."""


def refresh(conn: Db, connection: Connection | None = None, *, password: str | None = None, force: bool = False) -> str:
    """Sync when due (or `force`); '' when the replica is fresh, else the line saying it could not be."""
    from scheduler_agent.calendar.caldav.sync import sync

    connection = connection or load_connection(conn)
    if connection is None:
        return ""
    now = datetime.now(UTC)
    state = replica.sync_state(conn)
    synced = None if state is None else state.synced_at
    if not force and synced is not None and (now - synced).total_seconds() < FRESH_SECONDS:
        return ""
    try:
        sync(conn, connection, password or password_for(connection), now=now, deadline_seconds=READ_DEADLINE_SECONDS)
    except CalDAVError as failure:
        with transaction(conn):
            replica.record_failure(conn, str(failure))
        return unreachable(synced, connection.host, now, str(failure))
    return ""


def unreachable(synced: datetime | None, host: str, now: datetime, why: str = "") -> str:
    """`last synced 3 min ago; HOST unreachable` (or, when the server answered but refused, why)."""
    when = "never synced" if synced is None else f"last synced {age(now - synced)} ago"
    if why and not any(word in why for word in ("cannot reach", "did not answer")):
        return f"{when}; {why}"
    return f"{when}; {host} unreachable"


def age(length: timedelta) -> str:
    seconds = max(0, int(length.total_seconds()))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} days"


def last_sync_line(conn: Db) -> str:
    """For `calendar backends`: when it last synced, and why the last try failed, if it did."""
    state = replica.sync_state(conn)
    if state is None or state.synced_at is None:
        line = "never synced"
    else:
        line = f"last synced {age(datetime.now(UTC) - state.synced_at)} ago ({state.synced_at:%Y-%m-%d %H:%M:%S} UTC)"
    if state is not None and state.failed:
        line += f"; the last try failed: {state.failed}"
    return line
