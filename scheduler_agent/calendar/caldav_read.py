"""Reading a CalDAV server: the owner's events, people's busy time, one event with its ETag.

The owner's calendar is read with a time-range calendar-query, expanded (the conflict text names the
clashing event, so titles are needed). Someone else's shared calendar is read with a free-busy-query
REPORT ("busy", no title) where the server allows it, else with the same calendar-query. Transparent
and cancelled events are free. A person with no CalDAV calendar keeps the local calendar's busy time.
Each remote resource gets a local integer id (table `caldav_events`): the id the model sees.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit
from zoneinfo import ZoneInfo

from sqlalchemy import Connection as Db
from sqlalchemy import text

from scheduler_agent.calendar.caldav_connect import (
    REQUEST_DEADLINE_SECONDS,
    CalDAVError,
    Connection,
    check_status,
    contacts,
    open_client,
    server_errors,
)
from scheduler_agent.calendar.caldav_ics import Occurrence, parse_freebusy, read_occurrence, title_of
from scheduler_agent.calendar.caldav_types import BusyInterval, Fetched, RemoteEvent
from scheduler_agent.calendar.events import events_for
from scheduler_agent.calendar.people import get_owner, list_people
from scheduler_agent.calendar.recurrence import check_expandable
from scheduler_agent.calendar.types import OWNER_KEY, CalendarError, Event, Person
from scheduler_agent.storage.db import transaction

if TYPE_CHECKING:
    from caldav.collection import Calendar
    from caldav.davclient import DAVClient


class CalDAVReader:
    """The server side of one connection, for one process; the client is opened on first use."""

    def __init__(
        self,
        conn: Db,
        connection: Connection,
        password: str,
        deadline_seconds: float = REQUEST_DEADLINE_SECONDS,
    ) -> None:
        self.conn = conn
        self.connection = connection
        self.deadline_seconds = deadline_seconds
        self.password = password
        self._client: DAVClient | None = None

    @property
    def client(self) -> DAVClient:
        if self._client is None:
            self._client = open_client(
                self.connection.url, self.connection.username, self.password, self.deadline_seconds
            )
        return self._client

    def errors(self, url: str, doing: str) -> AbstractContextManager[None]:
        return server_errors(url, doing, self.deadline_seconds)

    def calendar(self, url: str) -> Calendar:
        from caldav.collection import Calendar

        return Calendar(client=self.client, url=url)

    def same_server(self, url: str) -> bool:
        """Whether `url` is on the connection's server: the owner's password is sent nowhere else."""
        mine, theirs = urlsplit(self.connection.url), urlsplit(url)
        return (mine.scheme, mine.hostname, mine.port) == (theirs.scheme, theirs.hostname, theirs.port)

    # --- reading ------------------------------------------------------------------------------

    def owner_events(self, start: datetime, end: datetime, *, include_cancelled: bool = False) -> list[RemoteEvent]:
        """The owner's events overlapping [start, end), repeating ones expanded, by start time."""
        owner = get_owner(self.conn)
        url = self.connection.calendar_url
        found = []
        for href, occurrence in self._query(url, start, end, ZoneInfo(owner.tz), "reading your calendar"):
            if occurrence.cancelled and not include_cancelled:
                continue
            found.append(self._remote(href, occurrence, None, owner))
        return sorted(found, key=lambda remote: (remote.event.start, remote.event.id))

    def busy(self, people_keys: Iterable[str], start: datetime, end: datetime) -> list[BusyInterval]:
        """The busy intervals of each person in [start, end), as the local calendar gives them."""
        owner = get_owner(self.conn)
        people = {person.key: person for person in [owner, *list_people(self.conn)]}
        urls = {key: contact.caldav_url for key, contact in contacts(self.conn).items()}
        result: list[BusyInterval] = []
        for key in dict.fromkeys(people_keys):
            if key not in people:
                raise CalendarError(f"unknown person key {key!r}: add them with `calendar add-person` first")
            if key == OWNER_KEY:
                result += [
                    BusyInterval(key, r.event.start, r.event.end, r.event.title, r.event.id, r.href)
                    for r in self.owner_events(start, end)
                    if r.busy
                ]
            elif urls.get(key):
                result += self._person_busy(people[key], str(urls[key]), start, end)
            else:  # no server calendar for them: their local (imported) busy time
                result += [
                    BusyInterval(key, e.start, e.end, e.title, e.id) for e in events_for(self.conn, key, start, end)
                ]
        return sorted(result, key=lambda b: (b.start, b.end, b.person))

    def _person_busy(self, person: Person, url: str, start: datetime, end: datetime) -> list[BusyInterval]:
        if not self.same_server(url):
            raise CalDAVError(
                f"{person.name}'s calendar {url} is not on your server {urlsplit(self.connection.url).netloc}: "
                "your password is sent to that server only; give a calendar shared with you there "
                "(`calendar add-person --caldav`)"
            )
        doing = f"reading {person.name}'s busy time"
        import niquests
        from caldav.lib import error as dav

        try:
            with self.errors(url, doing):
                answer: Any = self.calendar(url).freebusy_request(start, end)  # a sync client: not a coroutine
                periods = parse_freebusy(str(answer.data), start, end)
            return [BusyInterval(person.key, b, e) for b, e in periods]
        except CalDAVError:
            pass  # not allowed, not supported, or not readable: ask the calendar itself below
        except (dav.DAVError, niquests.exceptions.RequestException):
            pass
        return [
            BusyInterval(person.key, o.start, o.end, o.title)
            for _, o in self._query(url, start, end, ZoneInfo(person.tz), doing)
            if o.busy
        ]

    def _query(
        self, url: str, start: datetime, end: datetime, zone: ZoneInfo, doing: str
    ) -> list[tuple[str, Occurrence]]:
        """A time-range calendar-query for VEVENTs, expanded; (href, occurrence) pairs overlapping the range."""
        with self.errors(url, doing):
            objects: Any = _checked_searcher()(event=True, start=start, end=end, expand=True).search(self.calendar(url))
            found = []
            for item in objects:
                href = str(item.url)
                for component in item.icalendar_instance.walk("VEVENT"):
                    occurrence = read_occurrence(component, zone)
                    if occurrence.end > start and occurrence.start < end:
                        found.append((href, occurrence))
        return found

    def _remote(self, href: str, occurrence: Occurrence, etag: str | None, owner: Person) -> RemoteEvent:
        local = local_id(self.conn, href, occurrence.uid)
        keys = attendee_keys(self.conn, self.connection, occurrence)
        event = Event(local, occurrence.title, occurrence.start, occurrence.end, keys, occurrence.recurring)
        return RemoteEvent(
            event,
            href,
            occurrence.uid,
            etag,
            occurrence.organizer,
            occurrence.last_call,
            occurrence.cancelled,
            occurrence.busy,
        )

    def fetch(self, href: str, doing: str) -> Fetched | None:
        """The resource at `href` as it is now, or None when it is gone (404)."""
        with self.errors(href, doing):
            response = self.client.request(href, "GET")
            if response.status == 404:
                return None
            check_status(href, response.status, doing)
            import icalendar

            text = str(response.raw)
            components = list(icalendar.Calendar.from_ical(text).walk("VEVENT"))
            if not components:
                raise ValueError("no VEVENT in the resource")
            zone = ZoneInfo(get_owner(self.conn).tz)
            master = next((c for c in components if c.get("RECURRENCE-ID") is None), components[0])
            return Fetched(href, text, response.headers.get("ETag"), read_occurrence(master, zone))

    def remote_of(self, fetched: Fetched) -> RemoteEvent:
        owner = get_owner(self.conn)
        return self._remote(fetched.href, fetched.occurrence, fetched.etag, owner)

    def resource_url(self, name: str) -> str:
        return urljoin(self.connection.calendar_url, name)

    def list_calendars(self) -> list[tuple[str, str]]:
        """(display name, URL) of every calendar of the connection's user."""
        with self.errors(self.connection.url, "listing your calendars"):
            principal: Any = self.client.principal()  # type: ignore[no-untyped-call]
            return [(str(c.get_display_name() or c.url), str(c.url)) for c in principal.calendars()]


CALDAV_ID_BASE = 1_000_000
"""Events of a CalDAV server get local ids above this one, so that they never share an id with an event of
the local calendar (a person's imported busy time), which the tools may show beside them."""


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


def local_id(conn: Db, href: str, uid: str, tool_use_id: str | None = None) -> int:
    """The local id of the resource at `href` (given the first time it is seen); records the call that wrote it."""
    with transaction(conn):  # a new resource's id comes after CALDAV_ID_BASE: never a local event's id
        conn.execute(
            text(
                "INSERT INTO caldav_events (id, href, uid, tool_use_id) "
                "VALUES ((SELECT CASE WHEN max(id) > :base THEN max(id) ELSE :base END + 1 "
                "FROM caldav_events), :href, :uid, :tool_use_id) "
                "ON CONFLICT (href) DO UPDATE SET "
                "tool_use_id = coalesce(caldav_events.tool_use_id, excluded.tool_use_id)"
            ),
            {"base": CALDAV_ID_BASE, "href": href, "uid": uid, "tool_use_id": tool_use_id},
        )
        row = conn.execute(text("SELECT id FROM caldav_events WHERE href = :href"), {"href": href}).one()
    found: int = row[0]
    return found


def href_of(conn: Db, event_id: int) -> str | None:
    row = conn.execute(text("SELECT href FROM caldav_events WHERE id = :event_id"), {"event_id": event_id}).fetchone()
    return None if row is None else str(row[0])


def attendee_keys(conn: Db, connection: Connection, occurrence: Occurrence) -> tuple[str, ...]:
    """The attendees as person keys where their address is known (else the address), the owner first."""
    by_email = {c.email.lower(): key for key, c in contacts(conn).items() if c.email}
    if connection.email:
        by_email[connection.email.lower()] = OWNER_KEY
    others = sorted({by_email.get(address, address) for address in occurrence.attendees} - {OWNER_KEY})
    return (OWNER_KEY, *others)
