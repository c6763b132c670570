"""The server of one connection, for the writes: its client, one resource read with its ETag, its calendars.

Nothing here reads busy time: the owner's calendar is synced into the store (sync.py), a person's shared
calendar too (people.py), and every reader reads the store. What the writes need of the server is here:
the client (opened on first use), the resource a change is about with its ETag (`fetch`, one GET), and the
local id each resource gets (table `caldav_events`).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit
from zoneinfo import ZoneInfo

from sqlalchemy import Connection as Db
from sqlalchemy import text

from scheduler_agent.calendar.caldav.connect import (
    REQUEST_DEADLINE_SECONDS,
    Connection,
    check_status,
    contacts,
    open_client,
    server_errors,
)
from scheduler_agent.calendar.caldav.ics import Occurrence, read_occurrence
from scheduler_agent.calendar.caldav.types import Fetched, RemoteEvent
from scheduler_agent.calendar.people import get_owner
from scheduler_agent.calendar.types import OWNER_KEY, Event, Person
from scheduler_agent.storage.db import transaction

if TYPE_CHECKING:
    from caldav.collection import Calendar
    from caldav.davclient import DAVClient


class Server:
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
