"""The busy time of people whose own calendar on the server is shared with the owner, synced into the store.

A person added with `calendar add-person --caldav URL` has a calendar of their own on the owner's server,
often shared free-busy only: it cannot be WebDAV-synced as the owner's is (sync.py). For the whole days
around the window a reader asks about, a free-busy-query REPORT ("busy", no title) gives their busy
periods, or, where the server refuses it, a time-range calendar-query (with titles); the periods replace
that person's busy time from the server in those days, stored as theirs (origin `caldav-busy`, one event
a period), and the reader reads the store as for anyone else. The days are read again when a reader asks
and they were read more than `fresh.FRESH_SECONDS` ago; when the server cannot be used, the store is read
as it is and the line says so. The owner's password is sent to the owner's server only.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, time, timedelta
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from scheduler_agent.calendar.caldav import replica
from scheduler_agent.calendar.caldav.connect import CalDAVError, contacts
from scheduler_agent.calendar.caldav.fresh import FRESH_SECONDS, unreachable
from scheduler_agent.calendar.caldav.ics import parse_freebusy, read_occurrence, title_of
from scheduler_agent.calendar.caldav.server import Server
from scheduler_agent.calendar.imports import import_events
from scheduler_agent.calendar.people import get_owner, list_people
from scheduler_agent.calendar.recurrence import check_expandable
from scheduler_agent.calendar.types import OWNER_KEY, CalendarError, ImportedEvent, Person, to_utc_text

Read = dict[str, tuple[datetime, datetime, datetime]]  # person key -> (first, last, when) of the last read


def shared_of(server: Server, keys: Sequence[str]) -> dict[str, str]:
    """The people among `keys` whose own calendar on the server is shared with the owner: key -> its URL."""
    return {
        key: str(contact.caldav_url)
        for key, contact in contacts(server.conn).items()
        if contact.caldav_url and key in keys and key != OWNER_KEY
    }


def refresh_people(
    server: Server, keys: Sequence[str], start: datetime, end: datetime, read: Read, *, force: bool = False
) -> str:
    """Sync the busy time of those of `keys` with a shared calendar for the days around [start, end), unless
    read less than FRESH_SECONDS ago (or `force`); '' when all of it is fresh, else the line saying why not.
    `read` remembers what was read when, for this process."""
    shared = shared_of(server, keys)
    if not shared:
        return ""
    people = {person.key: person for person in list_people(server.conn)}
    zone = ZoneInfo(get_owner(server.conn).tz)
    first = datetime.combine(start.astimezone(zone).date(), time(0), zone).astimezone(UTC)
    last = datetime.combine(end.astimezone(zone).date() + timedelta(days=1), time(0), zone).astimezone(UTC)
    now = datetime.now(UTC)
    notes = []
    for key, url in sorted(shared.items()):
        before = read.get(key)
        covered = before is not None and before[0] <= first and before[1] >= last
        if not force and covered and before is not None and (now - before[2]).total_seconds() < FRESH_SECONDS:
            continue
        try:
            periods = person_busy(server, people[key], url, first, last)
        except CalendarError as failure:  # the server, or an event on it that cannot be read
            when = None if before is None else before[2]
            notes.append(f"{people[key].name}: {unreachable(when, server.connection.host, now, str(failure))}")
            continue
        store_busy(server, key, first, last, periods)
        read[key] = (first, last, now)
    return "; ".join(notes)


def person_busy(server: Server, person: Person, url: str, start: datetime, end: datetime) -> list[ImportedEvent]:
    """Their busy periods in [start, end): free-busy where the server allows it, else their events' times."""
    if not server.same_server(url):
        raise CalDAVError(
            f"{person.name}'s calendar {url} is not on your server {urlsplit(server.connection.url).netloc}: "
            "your password is sent to that server only; give a calendar shared with you there "
            "(`calendar add-person --caldav`)"
        )
    doing = f"reading {person.name}'s busy time"
    import niquests
    from caldav.lib import error as dav

    try:
        with server.errors(url, doing):
            answer: Any = server.calendar(url).freebusy_request(start, end)  # a sync client: not a coroutine
            periods = parse_freebusy(str(answer.data), start, end)
        return [_period(b, e, "busy") for b, e in periods]
    except CalDAVError:
        pass  # not allowed, not supported, or not readable: ask the calendar itself below
    except (dav.DAVError, niquests.exceptions.RequestException):
        pass
    found = []
    with server.errors(url, doing):
        items: Any = _checked_searcher()(event=True, start=start, end=end, expand=True).search(server.calendar(url))
        for item in items:
            for component in item.icalendar_instance.walk("VEVENT"):
                occurrence = read_occurrence(component, ZoneInfo(person.tz))
                if occurrence.busy and occurrence.end > start and occurrence.start < end:
                    found.append(_period(occurrence.start, occurrence.end, occurrence.title))
    return found


def store_busy(server: Server, key: str, first: datetime, last: datetime, periods: list[ImportedEvent]) -> None:
    """Their busy time from the server in [first, last) becomes `periods` (kept ids for periods already there)."""
    kept = {period.uid for period in periods}
    gone = [(uid, None) for uid in replica.busy_uids(server.conn, key, first, last) if uid not in kept]
    import_events(server.conn, key, periods, gone, origin=replica.BUSY_ORIGIN)


def _period(start: datetime, end: datetime, title: str) -> ImportedEvent:
    uid = f"busy-{to_utc_text(start)}-{to_utc_text(end)}-{title}"
    return ImportedEvent(uid, None, title, start.astimezone(UTC), end.astimezone(UTC), None)


@lru_cache(maxsize=1)
def _checked_searcher() -> type:
    """caldav's searcher, checking each repeating event's RRULE before the library expands it on our side.

    An event another client wrote with INTERVAL=0 (or a rule no date fits) would keep `recurring-ical-events`
    walking for ever, and the tool call with it: it is refused instead, with what to mend, and nothing is read."""
    from caldav.search import CalDAVSearcher

    class Checked(CalDAVSearcher):
        def check_component(self, component: Any, *args: Any, **kwargs: Any) -> Any:
            refuse_unexpandable(getattr(component, "icalendar_instance", component))
            return super().check_component(component, *args, **kwargs)

    return Checked


def refuse_unexpandable(calendar: Any) -> None:
    """CalendarError naming the event when one of `calendar`'s VEVENTs repeats by a rule that cannot be expanded."""
    for vevent in calendar.walk("VEVENT"):
        found = vevent.get("RRULE")
        start = vevent.get("DTSTART")
        for rule in found if isinstance(found, list) else [found]:
            if rule is None or start is None:
                continue
            try:
                check_expandable(rule.to_ical().decode(), start.dt)
            except CalendarError as exc:
                raise CalendarError(
                    f"the event {title_of(vevent)!r} (UID {vevent.get('UID', '?')}) repeats by a rule that cannot be "
                    f"expanded: {exc}. Mend its repeat rule in the calendar app that made it, or delete it; "
                    "nothing was read"
                ) from None
