"""`ask`, `chat` and `resume`: sessions against the API. The SDK is imported inside, only when one starts."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.agent.events import Event, Report, StreamedText
from scheduler_agent.calendar.people import get_owner
from scheduler_agent.cli.calendar import clock_for, connect
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import RunOptions, TurnOptions, run_options, turn_options
from scheduler_agent.cli.render import Answers, ArrayDump, ArrayDumpFile, Trace

if TYPE_CHECKING:
    from scheduler_agent.agent.session import Session, Settings


class Listeners(list[Report]):
    """Every listener hears every event the loop reports, in order."""

    def __call__(self, event: Event) -> None:
        for listener in self:
            listener(event)

    def close(self) -> None:
        """A turn ended by an exception: stop the spinner, end a half-written line."""
        for listener in self:
            close = getattr(listener, "close", None)
            if close is not None:
                close()


def reporters(
    dump_array: bool,
    dump_array_file: Path | None,
    estimated: bool = False,
    replaying: bool = False,
    usage: bool = False,
) -> Listeners:
    """The trace on stderr, each answer on stdout, plus the dumps asked for: all fed by the loop's events."""
    listeners = Listeners([Trace(sys.stderr, estimated, echo_input=replaying, usage=usage), Answers(sys.stdout)])
    if dump_array:
        listeners.append(ArrayDump(sys.stderr))
    if dump_array_file:
        listeners.append(ArrayDumpFile(dump_array_file))
    return listeners


def read_line(prompt: str) -> str | None:
    """A chat line from standard input (None at its end); the prompt goes to stderr, only on a terminal."""
    return _read(prompt if sys.stdin.isatty() else "")


def read_answer(prompt: str) -> str | None:
    """An answer to an approval question: the question is always shown (on stderr), terminal or not."""
    return _read(prompt)


def _read(prompt: str) -> str | None:
    if prompt:
        sys.stderr.write(prompt)
        sys.stderr.flush()
    line = sys.stdin.readline()
    return line.rstrip("\n") if line else None


@dataclass(frozen=True)
class Opening:
    """How a live session starts: which conversation, stored or not, recorded or not, who approves."""

    db: Path | None
    today: str | None
    continue_last: bool = False
    cid: int | None = None
    store: bool = True
    record: Path | None = None
    yes: bool = False


def open_session(opening: Opening, settings: Settings, report: Listeners) -> Session:
    """A live session: the SDK as the person configured it, a new or a stored conversation."""
    from scheduler_agent.agent.approval import ask_on
    from scheduler_agent.agent.session import Session
    from scheduler_agent.api.client import ModelAPI, make_client
    from scheduler_agent.storage import conversations

    cid = opening.cid
    if not opening.store and (opening.continue_last or cid is not None):
        raise typer.BadParameter("--no-store cannot continue a stored conversation; drop -c/--cid or --no-store")
    if opening.record is not None and (opening.continue_last or cid is not None):
        raise typer.BadParameter("--record starts a new conversation; drop -c/--cid to record")
    conn = connect(opening.db)
    if opening.continue_last and cid is None:
        cid = conversations.latest_id(conn)
        if cid is None:
            raise AgentError("No stored conversation to continue: start one with `scheduler-agent ask TEXT`")
    # A stored conversation keeps its pinned clock unless --today says otherwise.
    clock = clock_for(conn, opening.today) if opening.today or cid is None else None
    streamed = StreamedText(report)  # text deltas go to the listeners as they arrive
    send = ModelAPI(make_client(), on_text=streamed.on_text).send
    decide = None if opening.yes else ask_on(read_answer, sys.stderr.write)
    if cid is not None:
        session = Session.stored(conn, cid, send, settings, streamed, clock, decide)
    else:
        clock = clock or clock_for(conn, None)
        if opening.record is not None:  # a recorded session runs on a pinned clock, so its replay is exact
            clock = clock.frozen(get_owner(conn).tz)
        session = Session(conn, clock, send, settings, streamed, decide=decide)
        if opening.store:
            session.store()
    if session.cid is not None:
        typer.echo(f"conversation {session.cid}", err=True)
    return session


@contextmanager
def recording_if(path: Path | None, session: Session, listeners: Listeners) -> Iterator[None]:
    """`--record PATH`: write the session as a cassette while the block runs (nothing when no path)."""
    if path is None:
        yield
        return
    from scheduler_agent.playback.record import recorded

    with recorded(path, session) as recorder:
        listeners.append(recorder)
        yield
    typer.echo(f"recorded to {path} (replay it with `scheduler-agent replay {path}`)", err=True)


@person_facing()
@turn_options
@run_options
def ask_command(
    text: Annotated[str, typer.Argument(help="What to schedule, in plain words.", metavar="TEXT")],
    run: RunOptions,
    turn: TurnOptions,
) -> None:
    """One user turn against the API (credentials as the SDK finds them: ANTHROPIC_API_KEY, ...); stored."""
    settings = settings_of(run, turn)
    report = reporters(run.dump_array, run.dump_array_file, usage=run.usage)
    session = open_session(opening_of(run, turn), settings, report)
    try:
        with recording_if(turn.record, session, report):
            outcome = session.ask(text)
    finally:
        report.close()
    raise typer.Exit(outcome.stop.exit_code)


@person_facing()
@turn_options
@run_options
def chat_command(run: RunOptions, turn: TurnOptions) -> None:
    """An interactive session: the list carries over from turn to turn. /help lists the slash commands."""
    from scheduler_agent.cli.chat import Chat, UsageLog

    settings = settings_of(run, turn)
    report = reporters(run.dump_array, run.dump_array_file, usage=run.usage)
    log = UsageLog()
    report.append(log)
    session = open_session(opening_of(run, turn), settings, report)
    if sys.stdin.isatty():
        typer.echo("Chatting with the scheduler. /help for commands; /quit or Ctrl-D to leave.", err=True)
    fresh = Opening(run.db, run.today, store=not turn.no_store, yes=run.yes)
    chat = Chat(session, lambda: open_session(fresh, settings, report), read_line, sys.stdout, sys.stderr, log)
    chat.on_interrupt = report.close
    with recording_if(turn.record, session, report):
        code = chat.run()
    raise typer.Exit(code)


@person_facing()
@run_options
def resume_command(
    cid: Annotated[int, typer.Argument(help="The stored conversation to finish.", metavar="ID")],
    run: RunOptions,
) -> None:
    """Finish an interrupted turn with no new input: run an unanswered round, or ask the model again.

    Sends exactly what the first process would have sent; a booking already made is not made again,
    and an approval already given is not asked again."""
    settings = settings_of(run, TurnOptions())  # the model, stream flag and the rest are as stored
    report = reporters(run.dump_array, run.dump_array_file, usage=run.usage)
    session = open_session(Opening(run.db, run.today, cid=cid, yes=run.yes), settings, report)
    try:
        outcome = session.resume()
    finally:
        report.close()
    raise typer.Exit(outcome.stop.exit_code)


def settings_of(run: RunOptions, turn: TurnOptions) -> Settings:
    from scheduler_agent.agent.session import Settings

    return Settings(
        turn.model,
        run.max_iterations,
        context_budget=turn.context_budget,
        tool_deadline=run.tool_deadline,
        stream=not turn.no_stream,
    )


def opening_of(run: RunOptions, turn: TurnOptions) -> Opening:
    return Opening(run.db, run.today, turn.continue_last, turn.cid, not turn.no_store, turn.record, run.yes)
