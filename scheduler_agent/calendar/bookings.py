"""What each create_event call booked, keyed by its tool_use id: how a booking happens exactly once.

The record keeps a digest of the call's input (migration m011): a resumed round sends the same id with
the same input and gets the recorded result back; the same id with another input (a model or a proxy
that reuses ids) is refused, never answered with a booking it did not ask for.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler_agent.agent.toolbox import ToolError


@dataclass(frozen=True)
class Booking:
    tool_use_id: str
    event_id: int | None  # None once the event was cancelled
    result: str  # the tool_result text the call answered with
    input_digest: str | None = None  # None for a booking recorded before digests were kept


def input_digest(arguments: Mapping[str, Any]) -> str:
    """A digest of a call's input, the same for the same values whatever the key order."""
    text = json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def booking_for(conn: sqlite3.Connection, tool_use_id: str) -> Booking | None:
    """The booking recorded for call `tool_use_id`, if that call booked anything."""
    row = conn.execute(
        "SELECT tool_use_id, event_id, result, input_digest FROM bookings WHERE tool_use_id = ?", (tool_use_id,)
    ).fetchone()
    return None if row is None else Booking(row[0], row[1], row[2], row[3])


def recorded_result(conn: sqlite3.Connection, tool_use_id: str, digest: str) -> str | None:
    """The result recorded for this call, if it booked already; ToolError if the id booked other input."""
    recorded = booking_for(conn, tool_use_id)
    if recorded is None:
        return None
    if recorded.input_digest is not None and recorded.input_digest != digest:
        raise ToolError(
            f"create_event was not run: the call id {tool_use_id} was already used, by an earlier call with a "
            f"different input, which booked this: {recorded.result} Nothing was booked now. The id was reused by "
            "the model's side, not chosen by you: tell the user this booking was not made and ask them to try again."
        )
    return recorded.result


def record_booking(
    conn: sqlite3.Connection, tool_use_id: str, event_id: int, result: str, digest: str | None = None
) -> Booking:
    """Record what call `tool_use_id` booked; call it inside the transaction that inserted the event."""
    conn.execute(
        "INSERT INTO bookings (tool_use_id, event_id, result, input_digest) VALUES (?, ?, ?, ?)",
        (tool_use_id, event_id, result, digest),
    )
    return Booking(tool_use_id, event_id, result, digest)
