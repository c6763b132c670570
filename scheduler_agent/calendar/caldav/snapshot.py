"""What `--record` carries of a CalDAV calendar: its events around the recording, as a local fixture.

The caldav library's HTTP is not the SDK's, so a cassette cannot carry it; instead the calendar as the
tools see it goes into the cassette's calendar fixture, and the replay runs on a local calendar with
no server. What a local calendar cannot say the same way is not carried: an event someone else
organises becomes one of yours (movable).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from scheduler_agent.calendar.caldav.connect import contacts
from scheduler_agent.calendar.caldav.remote import RemoteCalendar
from scheduler_agent.calendar.fixtures import export_fixture


def snapshot_fixture(calendar: RemoteCalendar, start: datetime, end: datetime) -> dict[str, Any]:
    """The calendar as the tools see it in [start, end), as a fixture (calendar/fixtures.py): what
    `--record` carries, so that the cassette replays on a local calendar with no server.

    Everything the tools read is in the store: the server's calendar is synced into it, and the busy time
    of the people with a CalDAV calendar of their own ("busy" where free-busy gave no title) is synced for
    [start, end) first. So the fixture is the store's, with its ids: what the replay books gets the id the
    live session's booking got.
    """
    calendar.refresh()
    served = sorted(key for key, contact in contacts(calendar.conn).items() if contact.caldav_url)
    calendar.refresh_people(served, start, end)
    return export_fixture(calendar.conn)
