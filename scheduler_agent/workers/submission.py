"""`submit`: a user turn handed to the workers, with the context `ask` would have sent with it."""

from __future__ import annotations

from scheduler_agent.agent.events import Event
from scheduler_agent.agent.types import JSON
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.people import get_owner
from scheduler_agent.session.session import Session, Settings, refuse_empty
from scheduler_agent.storage.dialect import Connection
from scheduler_agent.workers import queue


def _no_model(request: JSON) -> JSON:
    raise AssertionError("submit never calls the model")  # pragma: no cover


def _quiet(event: Event) -> None:
    """Submitting reports nothing: no turn runs here."""


def submit_turn(
    conn: Connection,
    text: str,
    *,
    clock: Clock,
    settings: Settings,
    cid: int | None = None,
    approved: frozenset[str] = frozenset(),
) -> int:
    """Queue `text` for a worker (on conversation `cid`, or a new one pinned to `clock` if it is pinned)."""
    refuse_empty(text)
    context = Session(conn, clock, _no_model, settings, _quiet).fresh_context()
    started_on = clock.today(get_owner(conn).tz).isoformat()
    pin = clock.pinned.isoformat() if clock.pinned else None
    return queue.submit(conn, text, context=context, started_on=started_on, clock_pin=pin, cid=cid, approved=approved)
