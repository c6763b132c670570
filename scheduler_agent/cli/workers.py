"""`submit`, `worker`, `wait`, `approve` and `decline`: turns run by workers on Temporal, the list in the store.

Only `worker` talks to the model (it imports the SDK, inside); the others read and write the store and talk to
the Temporal server (scheduler_agent/workflows/), so they start without the SDK.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
from collections.abc import Callable
from typing import Any, ParamSpec

import click

from scheduler_agent.cli.core import argument, command, examples
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import ID, db_option, today_option
from scheduler_agent.cli.render import entry_lines, visible
from scheduler_agent.cli.run_options import (
    max_iterations_option,
    mcp_option,
    mcp_trust_option,
    model_option,
    option_option,
    timeout_option,
    tool_deadline_option,
)
from scheduler_agent.storage.db import Location

NEEDS_APPROVAL_EXIT = 9  # `wait`: the turn waits for `approve`/`decline`
DEFAULT_TEMPORAL = "localhost:7233"  # (workflows/names.py says the same; this module stays light)
DEFAULT_TASK_QUEUE = "scheduler-agent"

temporal_option = click.option(
    "--temporal",
    "temporal",
    metavar="HOST:PORT",
    envvar="SCHEDULER_AGENT_TEMPORAL",
    show_envvar=True,
    default=DEFAULT_TEMPORAL,
    show_default=True,
    help="The Temporal server that runs the turns (`temporal server start-dev` on one machine).",
)
task_queue_option = click.option(
    "--task-queue",
    "task_queue",
    metavar="NAME",
    envvar="SCHEDULER_AGENT_TASK_QUEUE",
    show_envvar=True,
    default=DEFAULT_TASK_QUEUE,
    show_default=True,
    help="The Temporal task queue that `submit` puts turns on and `worker` takes them from.",
)


P = ParamSpec("P")


def leaves_at_once(command: Callable[P, None]) -> Callable[P, None]:
    """A command that used the Temporal client leaves with its exit code at once, its output flushed: the
    client's threads can crash the interpreter as it finalizes (SIGABRT, "PyGILState_Release",
    temporalio/sdk-python#300), which would turn a finished command into a crash. Before any connection
    (a usage error, no server) it exits as every command does."""

    @functools.wraps(command)
    def leave(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            command(*args, **kwargs)
            code = 0
        except click.exceptions.Exit as done:
            code = done.exit_code
        engine = sys.modules.get("scheduler_agent.workflows.engine")  # not loaded (temporalio missing, say): no client
        real = sys.stdout is sys.__stdout__ and sys.stdout is not None  # the real process, not Click's test runner
        if engine is not None and engine.connected and real:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        raise click.exceptions.Exit(code)

    return leave


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
@mcp_option
@mcp_trust_option
@today_option
@temporal_option
@task_queue_option
@db_option
@leaves_at_once
def submit_command(
    text: str,
    cid: int | None,
    yes: bool,
    yes_cancel: bool,
    wait: bool,
    model: str,
    options: tuple[tuple[str, Any], ...],
    mcp: tuple[str, ...],
    mcp_trust: tuple[str, ...],
    today: str | None,
    temporal: str,
    task_queue: str,
    db: Location | None,
) -> None:
    """Store a user turn, start its workflow on Temporal, and print its conversation id (alone on the last line).

    With --mcp, the turn uses those servers' tools: only their names go with it, and each worker must be
    given the same servers (`worker --mcp NAME=...`, or mcp.toml), which it starts itself."""
    approved = sorted({"create_event", "move_event"} if yes else set()) + (["cancel_event"] if yes_cancel else [])
    servers = (mcp, mcp_trust)
    raise click.exceptions.Exit(
        _submit(text, cid, approved, wait, model, today, temporal, task_queue, db, options, servers)
    )


@person_facing()
def _submit(
    text: str,
    cid: int | None,
    approved: list[str],
    wait: bool,
    model: str,
    today: str | None,
    temporal: str,
    task_queue: str,
    db: Location | None,
    options: tuple[tuple[str, Any], ...] = (),
    servers: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
) -> int:
    from scheduler_agent.agent import faults
    from scheduler_agent.agent.request import DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_TOKENS
    from scheduler_agent.mcp_client.servers import servers_for
    from scheduler_agent.session.clock import clock_for
    from scheduler_agent.session.session import Settings
    from scheduler_agent.workflows import engine
    from scheduler_agent.workflows.names import TurnInput
    from scheduler_agent.workflows.submission import store_turn

    conn = _connect(db)
    given = dict(options)
    max_tokens = given.pop("max_tokens", DEFAULT_MAX_TOKENS)
    settings = Settings(model, DEFAULT_MAX_ITERATIONS, max_tokens, stream=True, options=tuple(given.items()))
    clock = clock_for(conn, today)
    specs = servers_for(*servers)  # `--mcp`, `--mcp-trust` and mcp.toml: their names go with the turn, not commands
    mcp, trusted = [spec.name for spec in specs], [spec.name for spec in specs if spec.trusted]

    async def submitted() -> int:
        client = await engine.connect(temporal)  # before anything is stored: no server, nothing changes
        turn = store_turn(conn, text, clock=clock, settings=settings, cid=cid, mcp=mcp)
        faults.reach("submit_stored")  # (tests: a crash here leaves a stored turn with no workflow)
        started = TurnInput(turn.store, turn.cid, turn.turn, approved, mcp=mcp, trusted=trusted)
        await engine.start(client, started, task_queue)
        click.echo(f"submitted: `scheduler-agent wait {turn.cid}` waits for the turn to end", err=True)
        click.echo(str(turn.cid))
        sys.stdout.flush()
        return await _wait(client, conn, turn, task_queue) if wait else 0

    return asyncio.run(submitted())


@command("wait", epilog=examples("scheduler-agent wait 3", 'id=$(scheduler-agent submit "..." | tail -1)'))
@argument("cid", "The conversation id `submit` printed.", "ID", type=ID)
@temporal_option
@task_queue_option
@db_option
@leaves_at_once
def wait_command(cid: int, temporal: str, task_queue: str, db: Location | None) -> None:
    """Block until a submitted turn ends and print it as `ask` does; exit as `ask` would (9: waits for approval)."""
    raise click.exceptions.Exit(_wait_on(cid, temporal, task_queue, db))


@person_facing()
def _wait_on(cid: int, temporal: str, task_queue: str, db: Location | None) -> int:
    from scheduler_agent.agent.errors import AgentError
    from scheduler_agent.workflows import engine
    from scheduler_agent.workflows.submission import last_turn

    conn = _connect(db)
    turn = last_turn(conn, cid)  # what the store says comes first: no such conversation, no server asked
    if turn is None:
        raise AgentError(f"conversation {cid} has no turn to wait for: `scheduler-agent conversations show {cid}`")

    async def waited() -> int:
        return await _wait(await engine.connect(temporal), conn, turn, task_queue)

    return asyncio.run(waited())


async def _wait(client: Any, conn: Any, turn: Any, task_queue: str) -> int:
    from scheduler_agent.agent.errors import AgentError
    from scheduler_agent.storage import conversations
    from scheduler_agent.workflows import engine
    from scheduler_agent.workflows.names import TurnInput, TurnResult
    from scheduler_agent.workflows.submission import unanswered

    cid = turn.cid
    if not await engine.exists(client, turn):
        if not unanswered(conn, cid):
            raise engine.NoSuchTurn(
                f"conversation {cid}'s last turn was not submitted to the workers: "
                f"`scheduler-agent conversations show {cid}` shows it"
            )
        # `submit` stored the turn but did not start its workflow (it was stopped in between): start it now
        mcp = list(conversations.load(conn, cid)[0].context.mcp)  # the MCP servers it uses, by name
        await engine.start(client, TurnInput(turn.store, cid, turn.turn, mcp=mcp), task_queue)
        click.echo(f"conversation {cid}'s stored turn had no workflow: started it now", err=True)

    def idle() -> None:
        click.echo(f"waiting for a worker to finish conversation {cid} (`scheduler-agent worker`)", err=True)

    ended = await engine.wait(client, conn, turn, idle)
    _, messages = conversations.load(conn, cid)
    done = isinstance(ended, TurnResult) and ended.state == "done"
    answer = _answer_text(messages[-1]) if done and messages and messages[-1]["role"] == "assistant" else ""
    for entry in messages[turn.turn + 1 : -1] if answer else messages[turn.turn + 1 :]:
        for line in entry_lines(entry):
            click.echo(f"  {line}", err=True)
    if not isinstance(ended, TurnResult):
        for waiting in ended:
            click.echo(f"? {visible(waiting.summary)}  [{waiting.call}]", err=True)
        click.echo(
            f"conversation {cid} waits for approval: `scheduler-agent approve {cid}` or "
            f"`scheduler-agent decline {cid} --reason TEXT` (with --call ID when several wait)",
            err=True,
        )
        return NEEDS_APPROVAL_EXIT
    if ended.state == "failed":
        failure = AgentError(ended.statement or f"conversation {cid} failed")
        failure.exit_code = ended.exit_code
        raise failure
    if answer:
        click.echo(visible(answer))
    if ended.statement:
        click.echo(visible(ended.statement), err=True)
    return ended.exit_code


def _answer_text(entry: Any) -> str:
    content = entry["content"]
    return (
        content if isinstance(content, str) else "".join(b.get("text", "") for b in content if b.get("type") == "text")
    )


@command(
    "worker",
    epilog=examples(
        "scheduler-agent worker",
        "scheduler-agent worker --concurrency 4 --temporal temporal.internal:7233",
        "scheduler-agent worker --drain",
    ),
)
@click.option(
    "--concurrency", "concurrency", type=click.IntRange(1, 64), default=1, show_default=True, help="Steps at once."
)
@click.option(
    "--drain", "drain", is_flag=True, help="Stop once no turn runs on the task queue (a batch), instead of waiting."
)
@max_iterations_option
@timeout_option
@tool_deadline_option
@mcp_option
@mcp_trust_option
@temporal_option
@task_queue_option
@db_option
@leaves_at_once
@person_facing()
def worker_command(
    concurrency: int,
    drain: bool,
    max_iterations: int,
    timeout: float,
    tool_deadline: float,
    mcp: tuple[str, ...],
    mcp_trust: tuple[str, ...],
    temporal: str,
    task_queue: str,
    db: Location | None,
) -> None:
    """Run submitted turns from Temporal with the same loop; SIGTERM lets the steps running finish, then stops.

    --mcp starts the MCP servers (and mcp.toml's) that submitted turns may use, each when a turn first needs it;
    a turn that uses a server this worker was not given fails, naming it."""
    from scheduler_agent.agent.errors import InputError, ModelRequestFailed
    from scheduler_agent.agent.request import DEFAULT_MODEL
    from scheduler_agent.api.client import NO_CREDENTIALS, ModelAPI, make_client
    from scheduler_agent.cli.live import has_credentials
    from scheduler_agent.mcp_client.turn import given_servers
    from scheduler_agent.session.session import Settings
    from scheduler_agent.workflows import engine, worker
    from scheduler_agent.workflows.names import STEP_SECONDS
    from scheduler_agent.workflows.steps import TurnSteps

    if timeout + tool_deadline > STEP_SECONDS:  # Temporal would take a step still waiting for the model away
        raise InputError(
            f"--timeout {timeout:g} with --tool-deadline {tool_deadline:g} is more than a step may take on Temporal "
            f"({STEP_SECONDS:g} s, its start-to-close timeout): give --timeout at most {STEP_SECONDS - tool_deadline:g}"
        )
    _connect(db, creates=True).close()  # the database opens (and is migrated) before any step runs
    if not has_credentials(make_client()):
        raise ModelRequestFailed(NO_CREDENTIALS)
    # the model and the stream flag are each conversation's own (as stored); these are the bounds
    settings = Settings(DEFAULT_MODEL, max_iterations, tool_deadline=tool_deadline, request_timeout=timeout)

    def say(line: str) -> None:
        click.echo(visible(line), err=True)

    # one client for every step (it is thread-safe): a new one made an SSL context each time, which took about
    # 170 ms of CPU (loading the CA file), more than the rest of a step (benchmarks/workers.py's parts row)
    model = ModelAPI(make_client(), timeout=timeout)
    servers = given_servers(mcp, mcp_trust, sys.stderr)  # a server's stderr joins the worker's
    steps = TurnSteps(lambda: _connect(db, creates=True), lambda: model.send, settings, say, concurrency + 1, servers)

    async def work() -> None:
        client = await engine.connect(temporal)
        named = f"; MCP servers {', '.join(servers.specs)}" if servers is not None else ""
        say(f"worker: process {os.getpid()}, {concurrency} at once, task queue {task_queue} on {temporal}{named}")
        sys.stderr.flush()
        await worker.run(client, task_queue, steps, concurrency, timeout + tool_deadline, drain)

    asyncio.run(work())
    steps.pool.shutdown()
    say("worker: stopped")


@command("approve", epilog=examples("scheduler-agent approve 3", "scheduler-agent approve 3 --call toolu_01AbC"))
@argument("cid", "The conversation id `submit` printed.", "ID", type=ID)
@click.option("--call", "call", metavar="TOOL_USE_ID", help="Which waiting call (needed when several wait).")
@temporal_option
@db_option
@leaves_at_once
@person_facing()
def approve_command(cid: int, call: str | None, temporal: str, db: Location | None) -> None:
    """Approve a side effect a submitted turn waits on; its workflow goes on at once."""
    _answer(cid, call, True, "", temporal, db)


@command(
    "decline",
    epilog=examples('scheduler-agent decline 3 --reason "not on Mondays"', "scheduler-agent decline 3 --call toolu_01"),
)
@argument("cid", "The conversation id `submit` printed.", "ID", type=ID)
@click.option("--call", "call", metavar="TOOL_USE_ID", help="Which waiting call (needed when several wait).")
@click.option("--reason", "reason", default="", metavar="TEXT", help="Why: the model is told, to propose another.")
@temporal_option
@db_option
@leaves_at_once
@person_facing()
def decline_command(cid: int, call: str | None, reason: str, temporal: str, db: Location | None) -> None:
    """Decline a side effect a submitted turn waits on; the model hears the reason as its workflow goes on."""
    _answer(cid, call, False, reason, temporal, db)


def _answer(cid: int, call: str | None, approved: bool, reason: str, temporal: str, db: Location | None) -> None:
    from scheduler_agent.agent.errors import AgentError
    from scheduler_agent.workflows import engine
    from scheduler_agent.workflows.names import Answer
    from scheduler_agent.workflows.submission import last_turn

    conn = _connect(db)
    turn = last_turn(conn, cid)
    if turn is None:
        raise AgentError(f"conversation {cid} waits for no approval: it has no turn")

    waiting = engine.chosen(conn, cid, call)  # an unknown call is refused here, at once

    async def answered() -> Any:
        client = await engine.connect(temporal)
        return await engine.answer(client, conn, turn, Answer(waiting.call, approved, reason))

    result = asyncio.run(answered())
    verb = "approved" if approved else "declined"
    click.echo(f"{verb}: {visible(waiting.summary)}  [{waiting.call}]")
    if result is None:
        click.echo(
            f"conversation {cid}: the answer is stored; the turn goes on once a worker runs (`scheduler-agent worker`)"
        )
    elif result.still_waiting:
        left = result.still_waiting
        click.echo(f"conversation {cid} still waits on {len(left)} call(s): {', '.join(left)}")
    else:
        click.echo(f"conversation {cid} goes on: `scheduler-agent wait {cid}`")
