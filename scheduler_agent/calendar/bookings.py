"""What each side-effecting call did, keyed by its tool_use id: how every change happens exactly once.

One record per call of `create_event`, `move_event` or `cancel_event`, written in the transaction that
made the change: its kind, a hash of its input, the event it touched, and the result text it answered
with. A resumed round finds the record and answers with it; the same id with another input is refused.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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
    text = json.dumps(dict(arguments), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def booking_for(conn: sqlite3.Connection, tool_use_id: str) -> Booking | None:
    """The record of call `tool_use_id`, if that call changed anything."""
    row = conn.execute(
        "SELECT tool_use_id, event_id, result, kind, input_hash FROM bookings WHERE tool_use_id = ?", (tool_use_id,)
    ).fetchone()
    if row is None:
        return None
    return Booking(row["tool_use_id"], row["event_id"], row["result"], row["kind"], row["input_hash"])


def record_booking(
    conn: sqlite3.Connection,
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
        "INSERT INTO bookings (tool_use_id, event_id, result, kind, input_hash) VALUES (?, ?, ?, ?, ?)",
        (tool_use_id, event_id, result, kind, hashed),
    )
    return Booking(tool_use_id, event_id, result, kind, hashed)
