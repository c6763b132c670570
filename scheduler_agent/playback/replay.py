"""Replay a cassette offline: a fresh temporary calendar and a pinned clock, both taken from the cassette.

Nothing of the user's own environment is used: not their calendar, their clock, their
credentials or the network.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Connection

from scheduler_agent.agent.errors import ModelUnavailable
from scheduler_agent.agent.events import Report, StreamedText, TurnOutcome
from scheduler_agent.agent.request import DEFAULT_MAX_ITERATIONS, DEFAULT_MODEL
from scheduler_agent.agent.types import JSON
from scheduler_agent.api.client import ModelAPI, make_client
from scheduler_agent.calendar.clock import Clock, parse_pin
from scheduler_agent.calendar.fixtures import load_fixture
from scheduler_agent.calendar.people import get_owner
from scheduler_agent.playback import vcr_cassette as cassette
from scheduler_agent.playback.cassette_file import read_setup
from scheduler_agent.session.approval import Decide, from_answers
from scheduler_agent.session.session import Session, Settings
from scheduler_agent.storage import db

# The SDK refuses to send without a credential; replay and scripted recording need one that is not a secret.
PLACEHOLDER_KEY = "sk-ant-placeholder-not-a-real-key"


@dataclass
class Replayed:
    """What a run of a cassette's inputs left: the list, each turn's outcome, an API outage if one ended
    it, and where the calendar (with the stored conversation) was."""

    messages: list[JSON] = field(default_factory=list)
    outcomes: list[TurnOutcome] = field(default_factory=list)
    error: ModelUnavailable | None = None
    db_path: Path | None = None
    cid: int | None = None

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return self.error.exit_code
        return self.outcomes[-1].stop.exit_code if self.outcomes else 0


def settings_of(setup: JSON) -> Settings:
    options = setup.get("options", {})
    budget = options.get("context_budget")
    return Settings(
        model=options.get("model", DEFAULT_MODEL),
        max_iterations=int(options.get("max_iterations", DEFAULT_MAX_ITERATIONS)),
        context_budget=int(budget) if budget is not None else None,
        trim=options.get("trim", "first_turn"),
        stream=bool(options.get("stream", False)),  # replay streams when the recorded requests did
    )


def decide_of(setup: JSON) -> Decide | None:
    """The approvals the person gave when it was recorded, by tool_use id; None (approve all) when none were."""
    approvals = setup.get("approvals")
    return from_answers(approvals) if approvals else None


NewSession = Callable[[], Session]
Command = Callable[[Session, str], None]  # shows what a slash command shows (/tokens, /dump, ...)


def run_inputs(
    session: Session,
    inputs: list[str],
    result: Replayed,
    *,
    new_session: NewSession | None = None,
    command: Command | None = None,
) -> Replayed:
    """Each input as the person typed it, in order; an API outage ends the run.

    A chat's inputs are every line typed, slash commands included: `/new` starts a new conversation
    (with `new_session`), `/multi` ... `/end` is one message, `/quit` ends, and the others go to
    `command`, which shows what they showed."""
    lines = iter(inputs)
    for line in lines:
        text = line.strip()
        if text.startswith("/"):
            name = text.split()[0].lower()
            if name in ("/quit", "/exit"):
                break
            if name == "/multi":  # the lines up to /end are one message, as the chat joined them
                part: list[str] = []
                for inner in lines:
                    if inner.strip() == "/end":
                        break
                    part.append(inner)
                text = "\n".join(part).strip()
            else:
                if name == "/new" and new_session is not None:
                    session = new_session()
                    result.messages = session.messages
                if command is not None:
                    command(session, text)
                continue
        if not text:
            continue
        try:
            result.outcomes.append(session.ask(text))
        except ModelUnavailable as exc:
            result.error = exc
            break
        finally:
            result.cid = session.cid
    return result


@contextmanager
def calendar_from(setup: JSON, directory: Path) -> Iterator[tuple[Connection, Clock]]:
    """A fresh calendar in `directory` (made if missing: a folder the code chose), seeded from the setup."""
    directory.mkdir(parents=True, exist_ok=True)
    conn = db.connect(directory / "calendar.db")
    try:
        load_fixture(conn, setup["calendar"])
        day, at = parse_pin(setup["clock"])
        yield conn, Clock.pinned_at(day, at, get_owner(conn).tz)
    finally:
        conn.close()


def replay(path: Path, *, report: Report, keep_db: Path | None = None, command: Command | None = None) -> Replayed:
    """Replay every user input of the cassette at `path` through the real loop and SDK (`command` shows
    the slash commands of a recorded chat)."""
    setup = read_setup(path)
    result = Replayed()
    with tempfile.TemporaryDirectory(prefix="scheduler-agent-replay-") as tmp:
        directory = keep_db or Path(tmp)
        result.db_path = directory / "calendar.db"
        with calendar_from(setup, directory) as (conn, clock), cassette.replaying(path) as replay:
            client = make_client(api_key=PLACEHOLDER_KEY, middleware=[cassette.replay_middleware(replay)])
            streamed = StreamedText(report)
            send = ModelAPI(client, on_text=streamed.on_text).send  # streams when the request says "stream": true

            def new_session() -> Session:
                fresh = Session(conn, clock, send, settings_of(setup), streamed, decide=decide_of(setup))
                fresh.store()  # in the temporary calendar: counters and resume work as they did
                return fresh

            session = new_session()
            result.messages = session.messages
            run_inputs(session, setup["inputs"], result, new_session=new_session, command=command)
            replay.check_all_played()
    return result
