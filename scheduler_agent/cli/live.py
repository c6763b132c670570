"""`ask`, `chat` and `resume`: sessions against the API. The SDK is imported inside, only when one starts."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from sqlalchemy import Connection

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.agent.events import Event, Report, StreamedText
from scheduler_agent.calendar.people import get_owner
from scheduler_agent.cli.core import argument, command
from scheduler_agent.cli.database import connect
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import ID, json_flag
from scheduler_agent.cli.render import Answers, ArrayDump, ArrayDumpFile, Trace, examples
from scheduler_agent.cli.run_options import RunOptions, TurnOptions, option_option, run_options, turn_options
from scheduler_agent.session.clock import clock_for
from scheduler_agent.storage.db import Location

if TYPE_CHECKING:
    from anthropic import Anthropic

    from scheduler_agent.calendar.clock import Clock
    from scheduler_agent.mcp_client.toolbox import McpServers
    from scheduler_agent.playback.record import Recorder
    from scheduler_agent.session.session import Session, Settings


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


ASK_EXAMPLES = examples(
    'scheduler-agent ask "Find 30 minutes with Priya next week. Nothing before 10am."',
    'scheduler-agent ask -c "Make it 45 minutes instead"',
    'echo "When is Priya free on Monday?" | scheduler-agent ask -',
    'scheduler-agent ask --json --yes "Book Priya Monday 2pm" | jq .booked_event_ids',
)
CHAT_EXAMPLES = examples(
    "scheduler-agent chat", "scheduler-agent chat -c -u", "scheduler-agent chat --record session.yaml"
)
RESUME_EXAMPLES = examples("scheduler-agent resume 3", "scheduler-agent resume 3 --max-iterations 5 --yes")


def reporters(
    dump_array: bool,
    dump_array_file: Path | None,
    estimated: bool = False,
    replaying: bool = False,
    usage: bool = False,
    answers: bool = True,
) -> Listeners:
    """The trace on stderr, each answer on stdout (unless `answers` is false: `--json` prints one object
    instead), plus the dumps asked for: all fed by the loop's events."""
    listeners = Listeners([Trace(sys.stderr, estimated, echo_input=replaying, usage=usage)])
    if answers:
        listeners.append(Answers(sys.stdout))
    if dump_array:
        listeners.append(ArrayDump(sys.stderr))
    if dump_array_file:
        listeners.append(ArrayDumpFile(dump_array_file))
    return listeners


def read_answer(prompt: str) -> str | None:
    """An answer to an approval question: the question is always shown (on stderr), terminal or not.

    An answer read from a pipe is echoed after the question, so the question and what follows it do
    not share a line. When input ends or Ctrl-C is pressed at the question, its line is ended first."""
    answer = _read(prompt)
    if answer is not None and not sys.stdin.isatty():
        sys.stderr.write(answer + "\n")
    return answer


def terminal_answers() -> ReadAnswer:
    """Approvals when the request came on standard input: asked on the terminal (/dev/tty) if there is
    one; otherwise every booking is refused, and the model is told `--yes` allows them."""
    try:  # a terminal is not seekable, so no "r+": one handle to read, one to write
        tty_in = open("/dev/tty", encoding="utf-8")  # noqa: SIM115 (open for the whole process)
        tty_out = open("/dev/tty", "w", encoding="utf-8")  # noqa: SIM115
    except OSError:
        return lambda prompt: None

    def end_line() -> None:
        tty_out.write("\n")
        tty_out.flush()

    def read(prompt: str) -> str | None:
        tty_out.write(prompt)
        tty_out.flush()
        return _line_of(tty_in.readline, end_line)

    return read


ReadAnswer = Callable[[str], "str | None"]


def _read(prompt: str) -> str | None:
    if prompt:
        sys.stderr.write(prompt)
        sys.stderr.flush()
    return _line_of(sys.stdin.readline, (lambda: sys.stderr.write("\n")) if prompt else lambda: None)


def _line_of(readline: Callable[[], str], end_line: Callable[[], object]) -> str | None:
    """One answer read after a question; at the end of input or a Ctrl-C the question's line is ended first,
    so that what is said next (`Not run: ...`, `Error: Interrupted.`) starts a line of its own."""
    try:
        line = readline()
    except KeyboardInterrupt:
        end_line()
        raise
    if not line:
        end_line()
        return None
    return line.rstrip("\n")


@dataclass(frozen=True)
class Opening:
    """How a live session starts: which conversation, stored or not, recorded or not, who approves."""

    db: Location | None
    today: str | None
    continue_last: bool = False
    cid: int | None = None
    store: bool = True
    record: Path | None = None
    yes: bool = False
    read_answer: ReadAnswer = read_answer
    clock: Clock | None = None  # a new conversation's clock (a recorded chat's /new keeps the pinned one)
    yes_cancel: bool = False
    resuming: bool = False  # `resume`: a conversation with no turn to finish is refused before it is announced
    mcp: tuple[str, ...] = ()  # `--mcp NAME=COMMAND|URL`, besides the config file's servers
    mcp_trust: tuple[str, ...] = ()
    servers: McpServers | None = None  # servers already started (a chat's /new keeps them)


def open_session(opening: Opening, settings: Settings, report: Listeners) -> Session:
    """A live session: the SDK as the person configured it, a new or a stored conversation."""
    from scheduler_agent.agent.errors import ModelRequestFailed
    from scheduler_agent.api.client import NO_CREDENTIALS, ModelAPI, make_client
    from scheduler_agent.session.approval import BOOKINGS, ask_on
    from scheduler_agent.session.session import Session
    from scheduler_agent.storage import conversations

    cid = opening.cid
    if not opening.store and (opening.continue_last or cid is not None):
        raise click.BadParameter("--no-store cannot continue a stored conversation; drop -c/--cid or --no-store")
    if opening.record is not None and (opening.continue_last or cid is not None):
        raise click.BadParameter("--record starts a new conversation; drop -c/--cid to record")
    conn = connect(opening.db)
    if opening.record is None:  # a recording never holds feed traffic: its calendar fixture has their events
        refresh_feeds(conn)
    if opening.continue_last and cid is None:
        cid = conversations.latest_id(conn)
        if cid is None:
            raise AgentError("No stored conversation to continue: start one with `scheduler-agent ask TEXT`")
    # A stored conversation keeps its pinned clock unless --today says otherwise.
    clock = clock_for(conn, opening.today) if opening.today or cid is None else None
    client = make_client()
    if not has_credentials(client):  # before any turn is stored: nothing is written for a request never sent
        raise ModelRequestFailed(NO_CREDENTIALS)
    streamed = StreamedText(report)  # text deltas go to the listeners as they arrive
    send = ModelAPI(
        client, on_text=streamed.on_text, timeout=settings.request_timeout, on_retry=report, on_wait=report
    ).send
    # --yes approves bookings and moves; a cancellation is asked unless --yes-cancel says so too.
    approved = BOOKINGS if opening.yes else frozenset()
    if opening.yes_cancel:
        approved |= {"cancel_event"}
    decide = None if approved >= BOOKINGS | {"cancel_event"} else ask_on(opening.read_answer, sys.stderr.write)
    from scheduler_agent.mcp_client.toolbox import started

    servers = opening.servers or started(opening.mcp, opening.mcp_trust, sys.stderr)  # stderr: the trace
    if cid is not None:
        session = Session.stored(conn, cid, send, settings, streamed, clock, decide, approved, servers)
        if opening.resuming:
            from scheduler_agent.mcp_client.turn import go_on_with
            from scheduler_agent.session.resuming import resumable

            resumable(session.messages, cid)
            go_on_with(session.context, servers, cid)  # the MCP servers it used, or a refusal naming them
    else:
        clock = opening.clock or clock or clock_for(conn, None)
        if opening.record is not None:  # a recorded session runs on a pinned clock, so its replay is exact
            clock = clock.frozen(get_owner(conn).tz)
        session = Session(conn, clock, send, settings, streamed, decide=decide, approved=approved, mcp=servers)
        if opening.store:
            session.store()  # written with its first turn, and announced then
    session.announce = announce
    if session.cid is not None:
        announce(session.cid)
    return session


def announce(cid: int) -> None:
    click.echo(f"conversation {cid}", err=True)


def has_credentials(client: Anthropic) -> bool:
    """Whether the SDK found credentials (a key, a token, or a profile's provider), as it resolved them."""
    return client.api_key is not None or client.auth_token is not None or client.credentials is not None


def refresh_feeds(conn: Connection) -> None:
    """Fetch the feeds older than their refresh age before the turn, a second at most in all, and say in one
    line which copy of each the turn uses (nothing when none was due)."""
    from scheduler_agent.calendar.feeds import refresh_for_turn

    if line := refresh_for_turn(conn):
        click.echo(line, err=True)


@contextmanager
def recording_if(path: Path | None, session: Session, listeners: Listeners) -> Iterator[Recorder | None]:
    """`--record PATH`: write the session as a cassette while the block runs (nothing when no path)."""
    if path is None:
        yield None
        return
    from scheduler_agent.playback.record import recorded

    with recorded(path, session) as recorder:
        listeners.append(recorder)
        yield recorder
    click.echo(f"recorded to {path} (replay it with `scheduler-agent replay {path}`)", err=True)


def standard_input() -> str:
    """The request piped in, refused when it is not UTF-8 (whichever way this Python decodes its stdin)."""
    from scheduler_agent.agent.errors import refuse_not_utf8
    from scheduler_agent.cli.line_reader import from_standard_input

    text = from_standard_input(sys.stdin.read).strip()
    refuse_not_utf8(text, "the text on standard input")
    return text


@command("ask", epilog=ASK_EXAMPLES)
@argument(
    "text",
    help="What to schedule, in plain words; `-` (or nothing, when piped) reads it from standard input.",
    metavar="TEXT",
    required=False,
)
@turn_options
@run_options
@json_flag(
    help="Print one JSON object on stdout (conversation, outcome, text, tool calls and results, booked "
    "event ids, tokens, cost) instead of the answer."
)
@person_facing()
def ask_command(run: RunOptions, turn: TurnOptions, text: str | None, as_json: bool) -> None:
    """One user turn against the API, stored (credentials as the SDK finds them: ANTHROPIC_API_KEY, ...)."""
    from_stdin = text == "-" or (text is None and not sys.stdin.isatty())
    if from_stdin:
        text = standard_input()
        if not text:
            raise click.BadParameter("standard input was empty: pipe the request in, or give it as TEXT")
    elif text is None:
        raise click.BadParameter("say what to schedule: `scheduler-agent ask TEXT`, or pipe it in with `ask -`")
    settings = settings_of(run, turn)
    report = reporters(run.dump_array, run.dump_array_file, usage=run.usage, answers=not as_json)
    opening = opening_of(run, turn)
    if from_stdin:  # standard input is spent: approvals come from the terminal, if there is one
        opening = dataclasses.replace(opening, read_answer=terminal_answers())
    summary = None
    if as_json:  # every failure after the options are parsed prints the object too (a usage error does not)
        from scheduler_agent.cli.json_report import JsonReport

        summary = JsonReport(sys.stdout)
        report.append(summary)
    session: Session | None = None
    try:
        from scheduler_agent.session.session import refuse_empty, refuse_small_budget

        refuse_empty(text)  # before a conversation is stored for it
        session = open_session(opening, settings, report)
        if summary is not None:
            summary.conn = session.conn
        refuse_small_budget(session, text)
        with recording_if(turn.record, session, report):
            outcome = session.ask(text)
    except BaseException as exc:
        if summary is not None and not isinstance(exc, (click.exceptions.Exit, click.ClickException)):
            summary.write(session.cid if session is not None else None, exc)
        raise
    finally:
        report.close()
    if summary is not None:
        summary.write(session.cid)
    raise click.exceptions.Exit(outcome.stop.exit_code)


@command("chat", epilog=CHAT_EXAMPLES)
@turn_options
@run_options
@person_facing()
def chat_command(run: RunOptions, turn: TurnOptions) -> None:
    """An interactive session: the list carries over from turn to turn. /help lists the slash commands."""
    from scheduler_agent.cli.chat import Chat, UsageLog
    from scheduler_agent.cli.line_reader import LineReader

    settings = settings_of(run, turn)
    report = reporters(run.dump_array, run.dump_array_file, usage=run.usage)
    log = UsageLog()
    report.append(log)
    session = open_session(opening_of(run, turn), settings, report)
    from scheduler_agent.session.session import refuse_small_budget

    refuse_small_budget(session)
    if sys.stdin.isatty():
        click.echo("Chatting with the scheduler. /help for commands; /quit or Ctrl-D to leave.", err=True)
    fresh = Opening(
        run.db, run.today, store=not turn.no_store, yes=run.yes, yes_cancel=run.yes_cancel, servers=session.mcp
    )
    reader = LineReader()  # readline on a terminal: editing, history (0600, in the data folder)
    chat = Chat(session, lambda: open_session(fresh, settings, report), reader.read, sys.stdout, sys.stderr, log)
    chat.on_interrupt = report.close
    chat.pending = reader.pending
    with recording_if(turn.record, session, report) as recorder:
        if recorder is not None:
            chat.on_line = recorder.typed
            fresh = dataclasses.replace(fresh, clock=session.clock)  # /new runs on the same pinned clock
        code = chat.run()
    raise click.exceptions.Exit(code)


@command("resume", epilog=RESUME_EXAMPLES)
@argument("cid", help="The stored conversation to finish.", metavar="ID", type=ID)
@run_options
@option_option
@person_facing()
def resume_command(cid: int, run: RunOptions, options: tuple[tuple[str, Any], ...]) -> None:
    """Finish an interrupted turn with no new input: run an unanswered round, or ask the model again.

    Sends exactly what the first process would have sent; a booking already made is not made again,
    and an approval already given is not asked again."""
    settings = settings_of(run, TurnOptions())  # the model, stream flag and the rest are as stored
    report = reporters(run.dump_array, run.dump_array_file, usage=run.usage)
    opening = Opening(
        run.db,
        run.today,
        cid=cid,
        yes=run.yes,
        yes_cancel=run.yes_cancel,
        resuming=True,
        mcp=run.mcp,
        mcp_trust=run.mcp_trust,
    )
    session = open_session(opening, settings, report)
    if options and session.context is not None:  # this resume's own keys, instead of the stored turn's
        given = dict(options)
        max_tokens = given.pop("max_tokens", session.context.max_tokens)
        session.context = dataclasses.replace(session.context, max_tokens=max_tokens, options=given)
    try:
        outcome = session.resume()
    finally:
        report.close()
    raise click.exceptions.Exit(outcome.stop.exit_code)


def settings_of(run: RunOptions, turn: TurnOptions) -> Settings:
    from scheduler_agent.agent.request import DEFAULT_MAX_TOKENS
    from scheduler_agent.session.session import Settings

    options = dict(turn.options)
    return Settings(
        turn.model,
        run.max_iterations,
        max_tokens=options.pop("max_tokens", DEFAULT_MAX_TOKENS),  # a key of its own in the context
        options=tuple(options.items()),
        context_budget=turn.context_budget,
        tool_deadline=run.tool_deadline,
        stream=not turn.no_stream,
        request_timeout=run.timeout,
        invites=False if run.no_invites else None,
    )


def opening_of(run: RunOptions, turn: TurnOptions) -> Opening:
    return Opening(
        run.db,
        run.today,
        turn.continue_last,
        turn.cid,
        not turn.no_store,
        turn.record,
        run.yes,
        yes_cancel=run.yes_cancel,
        mcp=run.mcp,
        mcp_trust=run.mcp_trust,
    )
