"""What each side-effecting call did, keyed by its tool_use id: how every change happens exactly once.

One record per call of `create_event`, `move_event` or `cancel_event`, written in the transaction that
made the change: its kind, a hash of its input, the event it touched, and the result text it answered
with. A resumed round finds the record and answers with it; the same id with another input is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError

from scheduler_agent.storage.db import in_transaction
from scheduler_agent.storage.dialect import BookedTimeTaken, booked_time_taken, lock_person, moment

KINDS = ("create_event", "move_event", "cancel_event")


@dataclass(frozen=True)
class Booking:
    tool_use_id: str
    event_id: int | None  # None once the event was cancelled (and always for a cancellation)
    result: str  # the tool_result text the call answered with
    kind: str = "create_event"
    input_hash: str = ""  # '' for a record written before hashes were kept: not checked


def input_hash(arguments: Mapping[str, Any]) -> str:
    """sha256 of the input as canonical JSON (sorted keys, no spaces): equal inputs, equal hashes."""
    import hashlib  # here: its OpenSSL binding costs ~3 ms of start-up, and `calendar show` never hashes

    text = json.dumps(dict(arguments), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def booking_for(conn: Connection, tool_use_id: str) -> Booking | None:
    """The record of call `tool_use_id`, if that call changed anything."""
    row = conn.execute(
        text("SELECT tool_use_id, event_id, result, kind, input_hash FROM bookings WHERE tool_use_id = :tool_use_id"),
        {"tool_use_id": tool_use_id},
    ).fetchone()
    if row is None:
        return None
    return Booking(row.tool_use_id, row.event_id, row.result, row.kind, row.input_hash)


def record_booking(
    conn: Connection,
    tool_use_id: str,
    event_id: int | None,
    result: str,
    kind: str = "create_event",
    hashed: str = "",
) -> Booking:
    """Record what call `tool_use_id` did; call it inside the transaction that made the change."""
    if kind not in KINDS:
        raise ValueError(f"unknown booking kind {kind!r}: one of {', '.join(KINDS)}")
    conn.execute(
        text(
            "INSERT INTO bookings (tool_use_id, event_id, result, kind, input_hash) VALUES (:tool_use_id, "
            ":event_id, :result, :kind, :hashed)"
        ),
        {"tool_use_id": tool_use_id, "event_id": event_id, "result": result, "kind": kind, "hashed": hashed},
    )
    return Booking(tool_use_id, event_id, result, kind, hashed)


def lock_people(conn: Connection, keys: Iterable[str]) -> None:
    """Inside a transaction on PostgreSQL: hold each person's booking lock until it ends.

    A check of someone's busy time made inside the transaction then still holds when it writes, for the
    time the exclusion constraint does not cover (imported calendars, repeating series). Every booking
    names the owner first, so the locks are always taken in one order. A no-op on SQLite, whose
    `BEGIN IMMEDIATE` already serialises every writer, and outside a transaction.
    """
    if not in_transaction(conn):
        return
    for key in dict.fromkeys(keys):
        lock_person(conn, key)


_CLEAR_BOOKED = text("DELETE FROM booked_time WHERE event_id = :event_id")


def book_time(conn: Connection, event_id: int) -> None:
    """Make event `event_id`'s rows of booked time its attendees' (a single event's; a series has none).

    Call it in the transaction of the create or move. On PostgreSQL a row overlapping another person's
    booked time raises `storage.dialect.BookedTimeTaken` (the exclusion constraint).
    """
    conn.execute(_CLEAR_BOOKED, {"event_id": event_id})
    try:
        conn.execute(
            text(
                "INSERT INTO booked_time (event_id, person_key, start_utc, end_utc) "
                f"SELECT e.id, a.person_key, {moment(conn, 'e.start_utc')}, {moment(conn, 'e.end_utc')} "
                "FROM events e JOIN event_attendees a ON a.event_id = e.id "
                "WHERE e.id = :event_id AND e.rrule IS NULL AND e.rdates = ''"
            ),
            {"event_id": event_id},
        )
    except DBAPIError as exc:
        # The exclusion constraint; or two overlapping rows written at the same moment wait for each other's
        # commit, and PostgreSQL ends one transaction as a deadlock. For that one it is the same answer.
        if not booked_time_taken(exc):
            raise
        raise BookedTimeTaken(f"booked time of event {event_id} overlaps another booking: {exc.orig}") from None
