"""The command line. The one place that prints, and the one place that turns exceptions into exit codes.

Only `ask`, `chat` and `demo` import the SDK and vcrpy, inside the command: `--help` and
`calendar` start without them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scheduler_agent import calendar_store
from scheduler_agent.cli_calendar import calendar_app, clock_for, connect
from scheduler_agent.cli_conversations import conversations_app
from scheduler_agent.cli_edge import person_facing
from scheduler_agent.errors import AgentError
from scheduler_agent.events import Event, Report
from scheduler_agent.options import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_MODEL,
    CidOption,
    ContextBudgetOption,
    ContinueOption,
    DbOption,
    DumpArrayFileOption,
    DumpArrayOption,
    MaxIterationsOption,
    ModelOption,
    NoStoreOption,
    RecordOption,
    TodayOption,
    ToolDeadlineOption,
)
from scheduler_agent.render import Answers, ArrayDump, ArrayDumpFile, Trace
from scheduler_agent.tools import TOOL_DEADLINE_SECONDS

if TYPE_CHECKING:
    from scheduler_agent.session import Session, Settings

EXIT_CODES = """Exit codes: 0 done · 1 error · 2 usage · 3 iteration bound reached (the list is valid; send a new
message to go on) · 4 the model stopped (max_tokens, refusal, context window, pause) · 5 the API unavailable
(retries exhausted, connection) · 6 lint: a conversation that is only interrupted · 130 interrupted."""

app = typer.Typer(
    help="A scheduling agent: a while-loop around a stateless model, with the message list as its whole state.",
    epilog=EXIT_CODES,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(calendar_app, name="calendar")
app.add_typer(conversations_app, name="conversations")


class Listeners(list[Report]):
    """Every listener hears every event the loop reports, in order."""

    def __call__(self, event: Event) -> None:
        for listener in self:
            listener(event)


def reporters(
    dump_array: bool, dump_array_file: Path | None, estimated: bool = False, replaying: bool = False
) -> Listeners:
    """The trace on stderr, each answer on stdout, plus the dumps asked for: all fed by the loop's events."""
    listeners = Listeners([Trace(sys.stderr, estimated, echo_input=replaying), Answers(sys.stdout)])
    if dump_array:
        listeners.append(ArrayDump(sys.stderr))
    if dump_array_file:
        listeners.append(ArrayDumpFile(dump_array_file))
    return listeners


@contextmanager
def recording_if(path: Path | None, session: Session, listeners: Listeners) -> Iterator[None]:
    """`--record PATH`: write the session as a cassette while the block runs (nothing when no path)."""
    if path is None:
        yield
        return
    from scheduler_agent.record import recorded

    with recorded(path, session) as recorder:
        listeners.append(recorder)
        yield
    typer.echo(f"recorded to {path} (replay it with `scheduler-agent replay {path}`)", err=True)


@app.command()
@person_facing()
def demo(
    name: Annotated[str, typer.Argument(help="A lesson to replay (see --list).", metavar="[NAME]")] = "no_mornings",
    list_lessons: Annotated[bool, typer.Option("--list", help="List the lessons and what each shows.")] = False,
    dump_array: DumpArrayOption = False,
    dump_array_file: DumpArrayFileOption = None,
) -> None:
    """Replay a lesson offline (the canonical trace by default): no key, no network, a fresh calendar."""
    from scheduler_agent.lessons import lesson_path, lessons

    if list_lessons:
        for lesson in lessons():
            typer.echo(f"{lesson.name:22} {lesson.kind:10} {lesson.title}")
        return
    path = lesson_path(name)
    _replay(path, dump_array, dump_array_file, teach=True)


@app.command()
@person_facing()
def replay(
    path: Annotated[Path, typer.Argument(help="A cassette (.yaml) recorded by scheduler-agent.", metavar="PATH")],
    dump_array: DumpArrayOption = False,
    dump_array_file: DumpArrayFileOption = None,
) -> None:
    """Replay any cassette offline, with the calendar, clock and inputs it carries; exits as the original did."""
    _replay(path, dump_array, dump_array_file)


def _replay(path: Path, dump_array: bool, dump_array_file: Path | None, teach: bool = False) -> None:
    from scheduler_agent.cassette_file import read_setup
    from scheduler_agent.replay import replay

    setup = read_setup(path)
    estimated = setup.get("replies") == "scripted"
    result = replay(path, report=reporters(dump_array, dump_array_file, estimated, replaying=True))
    if teach and setup.get("lesson"):
        typer.echo(f"\nWhat this shows: {setup['lesson']}")
    if result.error is not None:
        raise result.error
    raise typer.Exit(result.exit_code)


def _session(
    db: Path | None,
    today: str | None,
    settings: Settings,
    report: Report,
    *,
    resume_id: int | None = None,
    continue_last: bool = False,
    cid: int | None = None,
    store: bool = True,
    record: Path | None = None,
) -> Session:
    """A live session: the SDK as the person configured it, a new or a stored conversation."""
    from scheduler_agent import conversations
    from scheduler_agent.model_api import ModelAPI, make_client
    from scheduler_agent.session import Session

    if not store and (continue_last or cid is not None):
        raise typer.BadParameter("--no-store cannot continue a stored conversation; drop -c/--cid or --no-store")
    if record is not None and (continue_last or cid is not None):
        raise typer.BadParameter("--record starts a new conversation; drop -c/--cid to record")
    conn = connect(db)
    if continue_last and cid is None:
        cid = conversations.latest_id(conn)
        if cid is None:
            raise AgentError("No stored conversation to continue: start one with `scheduler-agent ask TEXT`")
    cid = resume_id if resume_id is not None else cid
    # A stored conversation keeps its pinned clock unless --today says otherwise.
    clock = clock_for(conn, today) if today or cid is None else None
    send = ModelAPI(make_client()).send
    if cid is not None:
        session = Session.stored(conn, cid, send, settings, report, clock)
    else:
        clock = clock or clock_for(conn, None)
        if record is not None:  # a recorded session runs on a pinned clock, so its replay is exact
            clock = clock.frozen(calendar_store.get_owner(conn).tz)
        session = Session(conn, clock, send, settings, report)
        if store:
            session.store()
    if session.cid is not None:
        typer.echo(f"conversation {session.cid}", err=True)
    return session


@app.command("ask")
@person_facing()
def ask_command(
    text: Annotated[str, typer.Argument(help="What to schedule, in plain words.", metavar="TEXT")],
    db: DbOption = None,
    today: TodayOption = None,
    model: ModelOption = DEFAULT_MODEL,
    max_iterations: MaxIterationsOption = DEFAULT_MAX_ITERATIONS,
    continue_last: ContinueOption = False,
    cid: CidOption = None,
    no_store: NoStoreOption = False,
    context_budget: ContextBudgetOption = None,
    tool_deadline: ToolDeadlineOption = TOOL_DEADLINE_SECONDS,
    record: RecordOption = None,
    dump_array: DumpArrayOption = False,
    dump_array_file: DumpArrayFileOption = None,
) -> None:
    """One user turn against the API (credentials as the SDK finds them: ANTHROPIC_API_KEY, ...); stored."""
    from scheduler_agent.session import Settings

    settings = Settings(model, max_iterations, context_budget=context_budget, tool_deadline=tool_deadline)
    report = reporters(dump_array, dump_array_file)
    session = _session(
        db, today, settings, report, continue_last=continue_last, cid=cid, store=not no_store, record=record
    )
    with recording_if(record, session, report):
        outcome = session.ask(text)
    raise typer.Exit(outcome.stop.exit_code)


@app.command()
@person_facing()
def chat(
    db: DbOption = None,
    today: TodayOption = None,
    model: ModelOption = DEFAULT_MODEL,
    max_iterations: MaxIterationsOption = DEFAULT_MAX_ITERATIONS,
    continue_last: ContinueOption = False,
    cid: CidOption = None,
    no_store: NoStoreOption = False,
    context_budget: ContextBudgetOption = None,
    tool_deadline: ToolDeadlineOption = TOOL_DEADLINE_SECONDS,
    record: RecordOption = None,
    dump_array: DumpArrayOption = False,
    dump_array_file: DumpArrayFileOption = None,
) -> None:
    """An interactive session; the list carries over from turn to turn. End with /quit or Ctrl-D."""
    from scheduler_agent.session import Settings

    settings = Settings(model, max_iterations, context_budget=context_budget, tool_deadline=tool_deadline)
    report = reporters(dump_array, dump_array_file)
    session = _session(
        db, today, settings, report, continue_last=continue_last, cid=cid, store=not no_store, record=record
    )
    interactive = sys.stdin.isatty()
    if interactive:
        typer.echo("Chatting with the scheduler. /quit or Ctrl-D to leave.", err=True)
    with recording_if(record, session, report):
        while True:
            line = read_line("you> " if interactive else "")
            if line is None or line.strip() in ("/quit", "/exit"):
                return
            if line.strip():
                session.ask(line.strip())  # the answer and any stop's statement are reported; the chat goes on


@app.command()
@person_facing()
def resume(
    cid: Annotated[int, typer.Argument(help="The stored conversation to finish.", metavar="ID")],
    db: DbOption = None,
    today: TodayOption = None,
    max_iterations: MaxIterationsOption = DEFAULT_MAX_ITERATIONS,
    tool_deadline: ToolDeadlineOption = TOOL_DEADLINE_SECONDS,
    dump_array: DumpArrayOption = False,
    dump_array_file: DumpArrayFileOption = None,
) -> None:
    """Finish an interrupted turn with no new input: run an unanswered round, or ask the model again.

    Sends exactly what the first process would have sent; a booking already made is not made again."""
    from scheduler_agent.session import Settings

    settings = Settings(DEFAULT_MODEL, max_iterations, tool_deadline=tool_deadline)
    session = _session(db, today, settings, reporters(dump_array, dump_array_file), resume_id=cid)
    outcome = session.resume()
    raise typer.Exit(outcome.stop.exit_code)


@app.command()
@person_facing()
def stats(db: DbOption = None) -> None:
    """Interruptions across all stored conversations, each counted where it was known."""
    from scheduler_agent import conversations

    totals = conversations.totals(connect(db))
    typer.echo(f"conversations stored:        {totals['conversations']}")
    typer.echo(f"model retries exhausted:     {totals['retries_exhausted']}")
    typer.echo(f"tools past their deadline:   {totals['tool_deadlines']}")
    typer.echo(f"process restarts (resumes):  {totals['restarts']}")


@app.command()
@person_facing()
def lint(
    path: Annotated[
        Path,
        typer.Argument(help="A JSON array of messages, {messages: [...]}, a dump file or a cassette.", metavar="PATH"),
    ],
) -> None:
    """Check a message list's grammar: exit 0 clean, 1 violations, 6 a conversation that is only interrupted."""
    from scheduler_agent.lint import lint_file

    result = lint_file(path)
    for line in result.lines:
        typer.echo(line)
    raise typer.Exit(result.exit_code)


def read_line(prompt: str) -> str | None:
    try:
        return input(prompt) if prompt else (sys.stdin.readline() or None)
    except EOFError:
        return None


def main() -> None:
    app()
