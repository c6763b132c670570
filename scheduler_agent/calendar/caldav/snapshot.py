"""What `--record` carries of a CalDAV calendar: its events around the recording, as a local fixture.

The caldav library's HTTP is not the SDK's, so a cassette cannot carry it; instead the calendar as the
tools see it goes into the cassette's calendar fixture, and the replay runs on a local calendar with
no server. What a local calendar cannot say the same way is not carried: an event someone else
organises becomes one of yours (movable), and a person's free-busy interval gets an id of its own (the
server's has none).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import count
from typing import Any
from zoneinfo import ZoneInfo

from scheduler_agent.calendar.caldav.connect import contacts
from scheduler_agent.calendar.caldav.remote import RemoteCalendar
from scheduler_agent.calendar.fixtures import export_fixture


def snapshot_fixture(calendar: RemoteCalendar, start: datetime, end: datetime) -> dict[str, Any]:
    """The calendar as the tools see it in [start, end), as a fixture (calendar/fixtures.py): what
    `--record` carries, so that the cassette replays on a local calendar with no server.

    The owner's events are in the store (the server's calendar is synced into it, with their ids), so the
    fixture is the store's, synced first; the busy time of the people with a CalDAV calendar of their own
    ("busy" where free-busy gave no title) is read from the server, each interval with an id of its own, a
    negative one, so that what the replay books gets the id the live session's booking got.
    """
    calendar.refresh()
    data = export_fixture(calendar.conn)
    owner = calendar.owner()
    known = {owner.key, *(person.key for person in calendar.people())}
    served = {key for key, contact in contacts(calendar.conn).items() if contact.caldav_url}
    local = [e for e in data["events"] if not (served & set(e["attendees"]))]
    free_id = count(-1, -1)  # below every id of the store: the replay's next id is the live one
    events = list(local)

    def entry(event_id: int, title: str, begins: datetime, ends: datetime, who: Sequence[str]) -> None:
        moment = begins.astimezone(ZoneInfo(owner.tz)).isoformat(timespec="minutes")
        minutes = int((ends - begins).total_seconds() // 60)
        attendees = [key for key in who if key in known]
        events.append({"id": event_id, "title": title, "start": moment, "minutes": minutes, "attendees": attendees})

    for interval in calendar.remote.busy(sorted(served), start, end):
        entry(next(free_id), interval.title, interval.start, interval.end, [interval.person])
    return {**data, "events": events}
