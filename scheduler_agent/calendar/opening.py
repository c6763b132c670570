"""Which calendar the tools use: the one place that chooses between the local calendar and the server's.

Apart from backend.py, which the CalDAV calendar (caldav/remote.py) builds on: so neither imports the other.
"""

from __future__ import annotations

from sqlalchemy import Connection

from scheduler_agent.calendar.backend import Calendar, SqliteCalendar


def open_calendar(conn: Connection, *, invites: bool | None = None) -> Calendar:
    """The calendar the tools use: the owner's CalDAV calendar (calendar/caldav/remote.py) when a
    connection is stored (`calendar connect caldav`), else the local SQLite calendar. `invites` False is
    `--no-invites`. The caldav library is imported only in the first case."""
    from scheduler_agent.calendar.caldav.connect import load_connection

    connection = load_connection(conn)
    if connection is None:
        return SqliteCalendar(conn)
    from scheduler_agent.calendar.caldav.remote import RemoteCalendar

    return RemoteCalendar.open(conn, connection, invites)
