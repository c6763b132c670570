"""`submit`, `worker`, `wait`, `approve` and `decline`: turns run by any worker sharing the database.

Only `worker` talks to the model (it imports the SDK, inside); the others only read and write the
store, so they start without the SDK.
"""

from __future__ import annotations

import signal
import sys
from typing import Any

import click

from scheduler_agent.cli.core import argument, command, examples
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import ID, Seconds, db_option, today_option
from scheduler_agent.cli.render import entry_lines, visible
from scheduler_agent.cli.run_options import (
    max_iterations_option,
    model_option,
    option_option,
    timeout_option,
    tool_deadline_option,
)
from scheduler_agent.storage.db import Location

NEEDS_APPROVAL_EXIT = 9  # `wait`: the turn waits for `approve`/`decline`


def _connect(db: Location | None, creates: bool = False) -> Any:
    """A SQLite file or a PostgreSQL URL (`--db`, SCHEDULER_AGENT_DB). A --db file that does not exist is refused
    (submit, wait, approve, decline act on a calendar and conversations already there), unless `creates`."""
    from scheduler_agent.cli.database import connect, existing

    return connect(db) if creates else existing(db)


@command(
    "submit",
    epilog=examples(
        'scheduler-agent submit "Find 30 minutes with Priya next week"',
        'scheduler-agent submit --yes --wait "Book Priya Monday 2pm"',
        'scheduler-agent submit --cid 3 "Make it 45 minutes"',
    ),
)
@argument("text", "What to schedule, in plain words.", "TEXT")
@click.option("--cid", "cid", type=ID, metavar="ID", help="Add the turn to this stored conversation.")
@click.option(
    "-y",
    "--yes",
    "yes",
    is_flag=True,
    help="Approve bookings and moves without asking, as `ask --yes` does; otherwise each waits for `approve`.",
)
@click.option(
    "--yes-cancel",
    "yes_cancel",
    is_flag=True,
    help="Also approve cancellations without asking; otherwise each waits for `approve`, even with --yes.",
)
@click.option("--wait", "wait", is_flag=True, help="Then block until the turn ends and print it, as `wait` does.")
@model_option
@option_option
@today_option
@db_option
def submit_command(
    text: str,
    cid: int | None,
    yes: bool,
    yes_cancel: bool,
    wait: bool,
    model: str,
    options: tuple[tuple[str, Any], ...],
    today: str | None,
    db: Location | None,
) -> None:
    """Store a user turn for the workers and print its conversation id at once (alone on the last line)."""
    approved = frozenset({"create_event", "move_event"} if yes else ()) | frozenset(
        {"cancel_event"} if yes_cancel else ()
    )
    raise click.exceptions.Exit(_submit(text, cid, approved, wait, model, today, db, options))


@person_facing()
def _submit(
    text: str,
    cid: int | None,
    approved: frozenset[str],
    wait: bool,
    model: str,
    today: str | None,
    db: Location | None,
    options: tuple[tuple[str, Any], ...] = (),
) -> int:
    from scheduler_agent.agent.request import DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_TOKENS
    from scheduler_agent.session.clock import clock_for
    from scheduler_agent.session.session import Settings
    from scheduler_agent.workers.submission import submit_turn

    conn = _connect(db)
    given = dict(options)
    max_tokens = given.pop("max_tokens", DEFAULT_MAX_TOKENS)
    settings = Settings(model, DEFAULT_MAX_ITERATIONS, max_tokens, stream=True, options=tuple(given.items()))
    clock = clock_for(conn, today)
    cid = submit_turn(conn, text, clock=clock, settings=settings, cid=cid, approved=approved)
    click.echo(f"submitted: `scheduler-agent wait {cid}` waits for the turn to end", err=True)
    click.echo(str(cid))
    return _wait(conn, cid) if wait else 0


@command("wait", epilog=examples("scheduler-agent wait 3", 'id=$(scheduler-agent submit "..." | tail -1)'))
@argument("cid", "The conversation id `submit` printed.", "ID", type=ID)
@db_option
def wait_command(cid: int, db: Location | None) -> None:
    """Block until a submitted turn ends and print it as `ask` does; exit as `ask` would (9: waits for approval)."""
    raise click.exceptions.Exit(_wait_on(cid, db))


@person_facing()
def _wait_on(cid: int, db: Location | None) -> int:
    return _wait(_connect(db), cid)


def _wait(conn: Any, cid: int) -> int:
    from scheduler_agent.agent.errors import AgentError
    from scheduler_agent.storage import conversations
    from scheduler_agent.workers import approvals, queue

    idle = lambda: click.echo(f"waiting for a worker to finish conversation {cid} (`scheduler-agent worker`)", err=True)  # noqa: E731
    status = queue.wait(conn, cid, idle=idle)
    _, messages = conversations.load(conn, cid)
    for entry in messages[status.base + 1 : -1] if status.state == "done" else messages[status.base + 1 :]:
        for line in entry_lines(entry):
            click.echo(f"  {line}", err=True)
    if status.state == "needs-approval":
        for waiting in approvals.pending(conn, cid):
            click.echo(f"? {visible(waiting.summary)}  [{waiting.tool_use_id}]", err=True)
        click.echo(
            f"conversation {cid} waits for approval: `scheduler-agent approve {cid}` or "
            f"`scheduler-agent decline {cid} --reason TEXT` (with --call ID when several wait)",
            err=True,
        )
        return NEEDS_APPROVAL_EXIT
    if status.state == "failed":
        raise AgentError(status.statement or f"conversation {cid} failed") from None
    if status.answer:
        click.echo(visible(status.answer))
    if status.statement:
        click.echo(visible(status.statement), err=True)
    return status.exit_code or 0


@command(
    "worker",
    epilog=examples(
        "scheduler-agent worker", "scheduler-agent worker --concurrency 4 --lease 30", "scheduler-agent worker --drain"
    ),
)
@click.option(
    "--concurrency", "concurrency", type=click.IntRange(1, 64), default=1, show_default=True, help="Turns at once."
)
@click.option(
    "--lease",
    "lease_seconds",
    type=Seconds(1.0),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="How long a claim lasts unless renewed (it is renewed while the turn runs): after a crash, "
    "another worker takes the turn up this long after the last renewal.",
)
@click.option("--drain", "drain", is_flag=True, help="Stop once no turn is queued (a batch), instead of waiting.")
@max_iterations_option
@timeout_option
@tool_deadline_option
@db_option
@person_facing()
def worker_command(
    concurrency: int,
    lease_seconds: float,
    drain: bool,
    max_iterations: int,
    timeout: float,
    tool_deadline: float,
    db: Location | None,
) -> None:
    """Run submitted turns: claim one, run it with the same loop, release it; SIGTERM stops after the round."""
    from scheduler_agent.agent.errors import ModelRequestFailed
    from scheduler_agent.agent.request import DEFAULT_MODEL
    from scheduler_agent.api.client import NO_CREDENTIALS, ModelAPI, make_client
    from scheduler_agent.cli.live import has_credentials
    from scheduler_agent.session.session import Settings
    from scheduler_agent.workers.worker import Worker, WorkerConfig

    _connect(db, creates=True).close()  # the database opens (and is migrated) before any slot starts
    if not has_credentials(make_client()):
        raise ModelRequestFailed(NO_CREDENTIALS)
    request_timeout = timeout
    # the model and the stream flag are each conversation's own (as stored); these are the bounds
    settings = Settings(DEFAULT_MODEL, max_iterations, tool_deadline=tool_deadline, request_timeout=request_timeout)
    config = WorkerConfig(settings, concurrency=concurrency, lease_seconds=lease_seconds, drain=drain)

    def say(line: str) -> None:
        click.echo(visible(line), err=True)

    from scheduler_agent.workers.wake import Listening, Polling

    url = db if isinstance(db, str) else None  # PostgreSQL: idle slots LISTEN; SQLite: they poll
    wake: Any = (lambda: Listening(url)) if url is not None else Polling

    def send() -> Any:
        return ModelAPI(make_client(), timeout=request_timeout).send

    worker = Worker(config, lambda: _connect(db, creates=True), send, say, wake)
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: worker.stop())
    say(f"worker: process {worker.slots[0].holder.pid}, {concurrency} at once, lease {lease_seconds:g} s")
    sys.stderr.flush()
    finished = worker.run()
    say(f"worker: stopped; {finished} turn(s) taken up here")


@command("approve", epilog=examples("scheduler-agent approve 3", "scheduler-agent approve 3 --call toolu_01AbC"))
@argument("cid", "The conversation id `submit` printed.", "ID", type=ID)
@click.option("--call", "call", metavar="TOOL_USE_ID", help="Which waiting call (needed when several wait).")
@db_option
@person_facing()
def approve_command(cid: int, call: str | None, db: Location | None) -> None:
    """Approve a side effect a submitted turn waits on; the next worker to claim the turn goes on."""
    _answer(cid, call, True, "", db)


@command(
    "decline",
    epilog=examples('scheduler-agent decline 3 --reason "not on Mondays"', "scheduler-agent decline 3 --call toolu_01"),
)
@argument("cid", "The conversation id `submit` printed.", "ID", type=ID)
@click.option("--call", "call", metavar="TOOL_USE_ID", help="Which waiting call (needed when several wait).")
@click.option("--reason", "reason", default="", metavar="TEXT", help="Why: the model is told, to propose another.")
@db_option
@person_facing()
def decline_command(cid: int, call: str | None, reason: str, db: Location | None) -> None:
    """Decline a side effect a submitted turn waits on; the model hears the reason from the next worker."""
    _answer(cid, call, False, reason, db)


def _answer(cid: int, call: str | None, approved: bool, reason: str, db: Location | None) -> None:
    from scheduler_agent.workers import approvals

    conn = _connect(db)
    answered = approvals.answer(conn, cid, call, approved, reason)
    left = approvals.pending(conn, cid)
    verb = "approved" if approved else "declined"
    click.echo(f"{verb}: {visible(answered.summary)}  [{answered.tool_use_id}]")
    if left:
        click.echo(f"conversation {cid} still waits on {len(left)} call(s): {', '.join(p.tool_use_id for p in left)}")
    else:
        click.echo(f"conversation {cid} is queued again: the next worker goes on (`scheduler-agent wait {cid}`)")
