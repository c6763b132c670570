"""What the replica of the owner's CalDAV calendar keeps in the store: the SQL of the sync, in one place.

Per connection (`caldav_connections`, m041): the sync token, when it last synced, the line of the last
failed sync, the server's answer on scheduling. Per resource (`caldav_events`): its href, UID, ETag,
ORGANIZER, and the event it is in the store (`event_id`). The events themselves are stored as imported
busy time of the owner (`imports.import_events`, origin `caldav`), so every reader finds them.

Statements use `:name` placeholders and dict parameters.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, text

from scheduler_agent.calendar.types import OWNER_KEY, from_utc_text, to_utc_text
from scheduler_agent.storage.statement import Statement

ORIGIN = "caldav"  # event_sources.origin of the server's events
BUSY_ORIGIN = "caldav-busy"  # event_sources.origin of a person's busy time read from their shared calendar (people.py)
ID_BASE = 1_000_000  # caldav_events ids (the ids the model saw before m041) come after it


@dataclass(frozen=True)
class SyncState:
    token: str | None  # None: never synced
    synced_at: datetime | None
    failed: str  # the last failed sync's line, '' when the last sync worked
    scheduling: bool | None  # None: not asked yet


@dataclass(frozen=True)
class Resource:
    href: str
    uid: str
    etag: str | None
    event_id: int | None
    organizer: str | None
    tool_use_id: str | None
    cid: int = 0  # its row's id: the id the model was given before m041


# Read before every read of a connected calendar (is the replica fresh?): on the driver (storage/statement.py).
_SYNC_STATE = Statement(
    "SELECT sync_token, synced_at, sync_failed, scheduling FROM caldav_connections WHERE person_key = :you"
)


def sync_state(conn: Connection) -> SyncState | None:
    row = _SYNC_STATE.first(conn, {"you": OWNER_KEY})
    if row is None:
        return None
    token, synced, failed, scheduling = tuple(row)
    return SyncState(
        token,
        None if synced is None else from_utc_text(str(synced)),
        failed,
        None if scheduling is None else bool(scheduling),
    )


def record_sync(conn: Connection, token: str | None, now: datetime) -> None:
    conn.execute(
        text(
            "UPDATE caldav_connections SET sync_token = :token, synced_at = :now, sync_failed = '' WHERE "
            "person_key = :you"
        ),
        {"token": token, "now": to_utc_text(now), "you": OWNER_KEY},
    )


def record_failure(conn: Connection, line: str) -> None:
    conn.execute(
        text("UPDATE caldav_connections SET sync_failed = :line WHERE person_key = :you"),
        {"line": line, "you": OWNER_KEY},
    )


def set_scheduling(conn: Connection, answer: bool) -> None:
    conn.execute(
        text("UPDATE caldav_connections SET scheduling = :answer WHERE person_key = :you"),
        {"answer": int(answer), "you": OWNER_KEY},
    )


def forget_sync(conn: Connection) -> None:
    """A new connection: the next use syncs everything, and asks about scheduling again."""
    conn.execute(
        text(
            "UPDATE caldav_connections SET sync_token = NULL, synced_at = NULL, sync_failed = '', scheduling = NULL "
            "WHERE person_key = :you"
        ),
        {"you": OWNER_KEY},
    )


def resources(conn: Connection) -> dict[str, Resource]:
    """Every resource the replica knows, by href."""
    rows = conn.execute(text("SELECT href, uid, etag, event_id, organizer, tool_use_id, id FROM caldav_events"))
    return {row[0]: Resource(*tuple(row)) for row in rows}


def resource_of(conn: Connection, event_id: int) -> Resource | None:
    """The resource event `event_id` of the store came from; an id above ID_BASE is an id the model was
    given before m041 (the resource's own), and names the same resource."""
    row = conn.execute(
        text(
            "SELECT href, uid, etag, event_id, organizer, tool_use_id, id FROM caldav_events "
            "WHERE event_id = :id OR (id = :id AND id > :base) ORDER BY event_id IS NULL LIMIT 1"
        ),
        {"id": event_id, "base": ID_BASE},
    ).fetchone()
    return None if row is None else Resource(*tuple(row))


def link(conn: Connection, resource: Resource) -> None:
    """Insert or update the row of `resource` (matched by href); the call that booked it is kept."""
    conn.execute(
        text(
            "INSERT INTO caldav_events (id, href, uid, etag, event_id, organizer, tool_use_id) VALUES ("
            "(SELECT CASE WHEN max(id) > :base THEN max(id) ELSE :base END + 1 FROM caldav_events), "
            ":href, :uid, :etag, :event_id, :organizer, :call) "
            "ON CONFLICT (href) DO UPDATE SET uid = excluded.uid, etag = excluded.etag, event_id = excluded.event_id, "
            "organizer = excluded.organizer, tool_use_id = coalesce(caldav_events.tool_use_id, excluded.tool_use_id)"
        ),
        {
            "base": ID_BASE,
            "href": resource.href,
            "uid": resource.uid,
            "etag": resource.etag,
            "event_id": resource.event_id,
            "organizer": resource.organizer,
            "call": resource.tool_use_id,
        },
    )


def events_of(conn: Connection, uid: str) -> dict[str, int]:
    """The store's events of the resource with `uid`: recurrence id ('' for the event itself) -> event id."""
    rows = conn.execute(
        text(
            "SELECT recurrence_id, event_id FROM event_sources "
            "WHERE person_key = :you AND origin = :origin AND uid = :uid"
        ),
        {"you": OWNER_KEY, "origin": ORIGIN, "uid": uid},
    )
    return {str(recurrence_id): int(event_id) for recurrence_id, event_id in rows}


def busy_uids(conn: Connection, key: str, first: datetime, last: datetime) -> set[str]:
    """The UIDs of `key`'s busy time from their shared calendar overlapping [first, last)."""
    rows = conn.execute(
        text(
            "SELECT s.uid FROM event_sources s JOIN events e ON e.id = s.event_id WHERE s.person_key = :key "
            "AND s.origin = :origin AND e.start_utc < :last AND e.end_utc > :first"
        ),
        {"key": key, "origin": BUSY_ORIGIN, "first": to_utc_text(first), "last": to_utc_text(last)},
    )
    return {str(row[0]) for row in rows}


def title_of(conn: Connection, event_id: int) -> tuple[str, datetime, datetime] | None:
    row = conn.execute(text("SELECT title, start_utc, end_utc FROM events WHERE id = :id"), {"id": event_id}).fetchone()
    return None if row is None else (str(row[0]), from_utc_text(str(row[1])), from_utc_text(str(row[2])))


def delete_events(conn: Connection, event_ids: Iterable[int]) -> None:
    for event_id in event_ids:
        conn.execute(text("DELETE FROM events WHERE id = :id"), {"id": event_id})


def add_attendees(conn: Connection, event_id: int, keys: Iterable[str]) -> None:
    """The people (by key) an event of the server has as ATTENDEEs, besides the owner."""
    for key in keys:
        conn.execute(
            text("INSERT INTO event_attendees (event_id, person_key) VALUES (:id, :key) ON CONFLICT DO NOTHING"),
            {"id": event_id, "key": key},
        )


def local_event_count(conn: Connection) -> int:
    """The owner's events that are not the server's: the local calendar's."""
    row = conn.execute(
        text(
            "SELECT count(*) FROM event_attendees a WHERE a.person_key = :you AND NOT EXISTS ("
            "SELECT 1 FROM event_sources s WHERE s.event_id = a.event_id AND s.origin = :origin)"
        ),
        {"you": OWNER_KEY, "origin": ORIGIN},
    ).one()
    return int(row[0])


def invitations_text(invites: bool, scheduling: bool | None) -> str:
    """Whether invitations are sent, said the same way by `connect`, `calendar backends` and the approval."""
    if not invites:
        return "No invitations will be sent (--no-invites, or the connection's setting)."
    if scheduling is None:
        return "Whether the server sends invitations is asked of it at the first booking."
    if not scheduling:
        return "Your calendar server does not send invitations (no CalDAV scheduling): tell the attendees."
    return "The calendar server e-mails invitations to the attendees with an e-mail address (CalDAV scheduling)."
