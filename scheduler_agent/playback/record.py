"""`--record PATH`: a live session written as a cassette that anyone can replay offline.

The cassette carries the whole calendar as it was at the start (on a CalDAV server: the weeks around
the start, read from it; see `calendar_fixture`) (event ids kept; people's per-day
hours, days off, buffers and lunch breaks; the owner's standing preferences), the clock
pinned at the start (the session runs on that pinned clock, so the replay's tool results are
the same to the letter), every input the person typed, the options, and the exit code. Only
an allow-list of headers is written: no key, no organisation id, no cookie.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.agent.events import ApprovalAnswered, Event, TurnEnded, TurnStarted
from scheduler_agent.agent.types import JSON
from scheduler_agent.calendar.fixtures import export_fixture
from scheduler_agent.calendar.people import get_owner
from scheduler_agent.playback import vcr_cassette as cassette

if TYPE_CHECKING:
    from scheduler_agent.session.session import Session


SNAPSHOT_WEEKS_BEFORE, SNAPSHOT_WEEKS_AFTER = 1, 12


def calendar_fixture(session: Session) -> JSON:
    """The calendar the session's tools see, as a fixture. On a CalDAV server, the events of the weeks
    around the pinned clock (one before, twelve after) are read from it into the fixture: the caldav
    library's HTTP is not the SDK's, so the cassette cannot carry it, and the replay runs on a local
    calendar with no server at all."""
    from scheduler_agent.calendar.caldav.connect import load_connection

    if load_connection(session.conn) is None:
        return export_fixture(session.conn)
    from scheduler_agent.calendar.caldav.remote import RemoteCalendar
    from scheduler_agent.calendar.caldav.snapshot import snapshot_fixture

    assert isinstance(session.calendar, RemoteCalendar) and session.clock.pinned is not None
    monday = session.clock.pinned - timedelta(days=session.clock.local_now(get_owner(session.conn).tz).weekday())
    start = monday.replace(hour=0, minute=0) - timedelta(weeks=SNAPSHOT_WEEKS_BEFORE)
    return snapshot_fixture(
        session.calendar, start, start + timedelta(weeks=SNAPSHOT_WEEKS_BEFORE + SNAPSHOT_WEEKS_AFTER)
    )


class Recorder:
    """Listens to a session's events and keeps the setup up to date: each input, each approval answer (by
    tool_use id), the last exit code."""

    def __init__(self, setup: JSON) -> None:
        self.setup = setup
        self.lines = False  # a chat gives every line typed (slash commands too); `ask` its one turn

    def typed(self, line: str) -> None:
        """A line the person typed in a chat, kept as typed: the replay re-enacts /new, /tokens, /multi..."""
        self.lines = True
        self.setup["inputs"].append(line)

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnStarted):
            if not self.lines:
                self.setup["inputs"].append(event.text)
        elif isinstance(event, ApprovalAnswered):
            answer = {"approved": event.approved, "reason": event.reason, "end_of_input": event.end_of_input}
            self.setup["approvals"][event.call["id"]] = answer
        elif isinstance(event, TurnEnded):
            self.setup["exit_code"] = event.outcome.stop.exit_code


@contextmanager
def recorded(path: Path, session: Session) -> Iterator[Recorder]:
    """Record every request of `session` inside the block into a new cassette at `path`."""
    if session.messages:
        raise AgentError("--record starts a new conversation: it cannot record one continued with -c/--cid")
    if session.clock.pinned is None:
        raise AgentError("--record needs a pinned clock (the CLI pins it at the start)")
    owner = get_owner(session.conn)
    local = session.clock.pinned.astimezone(session.clock.local_now(owner.tz).tzinfo)
    settings = session.settings
    setup: JSON = {
        "title": f"A session recorded with --record on {local:%Y-%m-%d %H:%M} ({owner.tz})",
        "lesson": "",
        "kind": "recordable",
        "replies": "recorded",
        "how": "recorded from a live session with --record; secrets and per-machine headers were not written",
        "clock": f"{local:%Y-%m-%dT%H:%M}",
        "calendar": calendar_fixture(session),
        "inputs": [],
        "approvals": {},
        "options": {
            "model": settings.model,
            "max_iterations": settings.max_iterations,
            "context_budget": settings.context_budget,
            "trim": settings.trim,
            "stream": settings.stream,
        },
        "exit_code": 0,
    }
    recorder = Recorder(setup)
    with cassette.recording(path, setup):
        try:
            yield recorder
        except AgentError as exc:
            setup["exit_code"] = exc.exit_code
            raise
