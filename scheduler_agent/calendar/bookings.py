"""What each create_event call booked, keyed by its tool_use id: how a booking happens exactly once."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True)
class Booking:
    tool_use_id: str
    event_id: int | None  # None once the event was cancelled
    result: str  # the tool_result text the call answered with


def booking_for(conn: sqlite3.Connection, tool_use_id: str) -> Booking | None:
    """The booking recorded for call `tool_use_id`, if that call booked anything."""
    row = conn.execute(
        "SELECT tool_use_id, event_id, result FROM bookings WHERE tool_use_id = ?", (tool_use_id,)
    ).fetchone()
    return None if row is None else Booking(row["tool_use_id"], row["event_id"], row["result"])


def record_booking(conn: sqlite3.Connection, tool_use_id: str, event_id: int, result: str) -> Booking:
    """Record what call `tool_use_id` booked; call it inside the transaction that inserted the event."""
    conn.execute(
        "INSERT INTO bookings (tool_use_id, event_id, result) VALUES (?, ?, ?)", (tool_use_id, event_id, result)
    )
    return Booking(tool_use_id, event_id, result)
