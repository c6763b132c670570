"""The client side of Temporal, for `submit`, `wait`, `approve` and `decline`: connect, start a turn's
workflow (once: a second start of the same turn is refused by Temporal), wait for it, answer a waiting call.

The commands run these with `asyncio.run`; what a person did wrong comes back as an AgentError (one line).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

from sqlalchemy import Connection
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.workflows import records
from scheduler_agent.workflows.names import (
    ANSWER_UPDATE,
    WORKFLOW,
    Answer,
    Answered,
    TurnInput,
    TurnKey,
    TurnResult,
    Waiting,
    workflow_id,
)

POLL_SECONDS = 0.2  # how often `wait` looks whether the turn now waits for a person (the store says)
ANSWER_PATIENCE = 10.0  # how long `approve` lets a workflow catch up with a call its step just stored as waiting


connected = False  # whether this process has used a Temporal client (the CLI then leaves at once: cli/workers.py)


class TemporalUnreachable(AgentError):
    """No Temporal server answers at the address given."""

    exit_code = 1


class NoSuchTurn(AgentError):
    """No workflow runs (or ran) the turn asked about."""

    exit_code = 1


async def connect(address: str) -> Client:
    global connected
    connected = True
    try:
        return await Client.connect(address, connect_timeout=timedelta(seconds=10))
    except RuntimeError as exc:
        raise TemporalUnreachable(
            f"no Temporal server answers at {address} ({' '.join(str(exc).split())[:160]}): start one "
            "(`temporal server start-dev --db-filename temporal.db`) or give --temporal HOST:PORT "
            "(or SCHEDULER_AGENT_TEMPORAL)"
        ) from None


async def start(client: Client, turn: TurnInput, task_queue: str) -> None:
    """Start the workflow of `turn`; refused (AgentError) when that turn was started before."""
    try:
        await client.start_workflow(
            WORKFLOW,
            turn,
            id=workflow_id(turn.store, turn.cid, turn.turn),
            task_queue=task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
        )
    except WorkflowAlreadyStartedError:
        raise AgentError(
            f"conversation {turn.cid}'s turn at entry {turn.turn} was submitted already: "
            f"`scheduler-agent wait {turn.cid}` waits for it"
        ) from None


async def exists(client: Client, turn: TurnKey) -> bool:
    try:
        await client.get_workflow_handle(turn.workflow_id).describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return True


async def wait(client: Client, conn: Connection, turn: TurnKey, idle: Callable[[], None]) -> TurnResult | list[Waiting]:
    """Block until the turn's workflow ends (its result), or until it waits for a person (the calls waiting).

    `idle` is called once when the turn has not ended after a second."""
    cid = turn.cid
    handle = client.get_workflow_handle(turn.workflow_id, result_type=TurnResult)
    result: asyncio.Future[TurnResult] = asyncio.ensure_future(handle.result())
    waited = 0.0
    try:
        while True:
            waiting = records.pending(conn, cid)
            if waiting:
                return waiting
            done, _ = await asyncio.wait({result}, timeout=POLL_SECONDS)
            if done:
                return result.result()
            waited += POLL_SECONDS
            if waited <= 1.0 < waited + POLL_SECONDS:
                idle()
    except WorkflowFailureError as failed:
        status = (await handle.describe()).status
        name = status.name if isinstance(status, WorkflowExecutionStatus) else "failed"
        raise AgentError(
            f"the workflow of conversation {cid}'s turn ended {name.lower()} ({failed.cause}): "
            f"`scheduler-agent resume {cid}` finishes the turn here"
        ) from None
    finally:
        result.cancel()


def chosen(conn: Connection, cid: int, call: str | None) -> Waiting:
    """The waiting call of `cid` an answer is for (`call`, or the only one); refused at once (AgentError) when
    the conversation waits for no call, for several (and `call` is None), or not for `call`."""
    waiting = records.pending(conn, cid)
    if not waiting:
        raise AgentError(
            f"conversation {cid} waits for no approval: `scheduler-agent conversations list --state "
            "needs-approval` shows those that do"
        )
    if call is None:
        if len(waiting) > 1:
            names = "; ".join(f"{each.call} ({each.summary})" for each in waiting)
            raise AgentError(
                f"conversation {cid} has {len(waiting)} calls waiting: {names}. Say which with --call TOOL_USE_ID"
            )
        return waiting[0]
    for each in waiting:
        if each.call == call:
            return each
    ids = ", ".join(each.call for each in waiting)
    raise AgentError(f"conversation {cid} has no call {call!r} waiting; the calls waiting: {ids}")


async def answer(client: Client, conn: Connection, turn: TurnKey, given: Answer) -> Answered | None:
    """Store the person's answer to `given.call` by its tool_use id (where a terminal's answer goes), then tell
    the turn's workflow by an update, whose validator refuses an answer to a call it does not wait on.

    An update is run by a worker: with none running, None comes back after ANSWER_PATIENCE (the answer is
    stored; the update, or the workflow's own look at the store, goes on once a worker runs). The store may
    be a moment ahead of the workflow (the step stored the call before the workflow heard of it): the update
    is sent again meanwhile."""
    assert given.call is not None
    records.record_answer(conn, given.call, given.approved, given.reason)
    handle = client.get_workflow_handle(turn.workflow_id)
    deadline = asyncio.get_running_loop().time() + ANSWER_PATIENCE
    while True:
        left = deadline - asyncio.get_running_loop().time()
        try:
            sent = handle.execute_update(ANSWER_UPDATE, given, result_type=Answered)
            answered: Answered = await asyncio.wait_for(sent, timeout=max(left, 0.1))
            return answered
        except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
            return None
        except WorkflowUpdateFailedError as refused:
            cause = refused.cause
            message = cause.message if isinstance(cause, ApplicationError) else str(cause)
            if "waits for no approval" not in message:
                raise AgentError(message) from None
            if left <= 0:  # the answer is stored: the round, run again, finds it
                return None
        await asyncio.sleep(POLL_SECONDS)
