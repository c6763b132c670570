"""The turn's activities: each loads the list from the store, runs the session's own step on it, stores what
the step appended (the step does), and returns an outcome code. The list never leaves the store.

A step may run twice: Temporal runs it again when the worker that ran it died before saying it had. The
session's steps are made for that (agent/session_steps.py): given the list as it was before the step ran,
they take what the first run stored instead of asking the model or running a tool again. So each activity
gives its step the list cut to the length it had before that step: the user turn at `turn`, then a reply and
a round for each earlier iteration.

While a step waits (for the model, for a tool) its activity heartbeats every HEARTBEAT_SECONDS, from the
event loop, the step running in a thread: a worker that dies stops heartbeating, and Temporal gives the step
to another worker once the turn's heartbeat timeout has passed.
"""

from __future__ import annotations

import asyncio
import threading
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

from sqlalchemy import Connection
from sqlalchemy.exc import OperationalError
from temporalio import activity
from temporalio.exceptions import ApplicationError

from scheduler_agent.agent.errors import AgentError, ModelUnavailable
from scheduler_agent.agent.events import Stop, TurnOutcome, ignore
from scheduler_agent.agent.loop import Send, bound_reached, tool_uses
from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.agent.types import JSON
from scheduler_agent.mcp_client.turn import list_and_store, refuse_missing, stored_servers
from scheduler_agent.session.approval import Decision
from scheduler_agent.session.session import Session, Settings
from scheduler_agent.storage import lease
from scheduler_agent.storage.db import in_transaction
from scheduler_agent.workflows import records
from scheduler_agent.workflows.names import (
    ENDED,
    GO_ON,
    HEARTBEAT_SECONDS,
    MCP_TOOLS,
    MODEL_STEP,
    NEEDS_APPROVAL,
    TOOL_ROUND,
    Step,
    StepOutcome,
    Waiting,
)
from scheduler_agent.workflows.records import turn_holder

if TYPE_CHECKING:  # the MCP SDK is imported only by a worker given servers
    from scheduler_agent.mcp_client.toolbox import McpServers

BUG_EXIT = 70  # an internal error: the turn fails, with the traceback in the worker's output
T = TypeVar("T")


class NeedsPerson(BaseException):
    """A side effect waits for a person: the round stops here (not an Exception, so no tool answers it)."""

    def __init__(self, waiting: list[Waiting]) -> None:
        super().__init__(", ".join(each.call for each in waiting))
        self.waiting = waiting


def before(step: Step, round_: bool) -> int:
    """The list's length before this step ran: the user turn, a reply and a round per earlier iteration."""
    return step.turn + 1 + 2 * (step.iteration - 1) + (1 if round_ else 0)


class TurnSteps:
    """The activities, bound to how a worker reaches the store and the model, and its bounds (`settings`:
    `--max-iterations`, `--timeout`, `--tool-deadline`). Each step runs in a thread of `threads`."""

    def __init__(
        self,
        connect: Callable[[], Connection],
        send: Callable[[], Send],
        settings: Settings,
        say: Callable[[str], None],
        threads: int,
        mcp: McpServers | None = None,
    ) -> None:
        """`mcp`: the MCP servers this worker was given (`worker --mcp`, mcp.toml), shared by its steps."""
        self.connect, self.send, self.settings, self.say = connect, send, settings, say
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="step")
        self.held = threading.local()  # each step thread's connection, kept between its steps
        self.mcp = mcp

    @activity.defn(name=MODEL_STEP)
    async def model_step(self, step: Step) -> StepOutcome:
        """Ask the model once and store its reply. A reply that came but could not be stored (the database went
        away) is handed to the step's next attempt in the attempt's last heartbeat, so the model is not asked
        again: the next attempt's list is the same, and so would be its request."""
        reply = Reply(_kept(activity.info().heartbeat_details, step))
        try:
            return await self._heartbeating(lambda: self._guarded(step, lambda c, s: self._model_step(c, s, reply)))
        except ApplicationError:
            raise  # the turn ends: there is no next attempt
        except Exception:
            if reply.came is not None:
                activity.heartbeat({"iteration": step.iteration, "turn": step.turn, "reply": reply.came})
            raise

    @activity.defn(name=TOOL_ROUND)
    async def tool_round(self, step: Step) -> StepOutcome:
        return await self._heartbeating(lambda: self._guarded(step, self._tool_round))

    @activity.defn(name=MCP_TOOLS)
    async def mcp_tools(self, step: Step) -> StepOutcome:
        return await self._heartbeating(lambda: self._guarded(step, self._mcp_tools))

    async def _heartbeating(self, run: Callable[[], T]) -> T:
        """`run` in a thread; a heartbeat every HEARTBEAT_SECONDS until it returns."""
        future = asyncio.get_running_loop().run_in_executor(self.pool, run)
        while True:
            done, _ = await asyncio.wait({future}, timeout=HEARTBEAT_SECONDS)
            if done:
                return future.result()
            activity.heartbeat()

    def _guarded(self, step: Step, run: Callable[[Connection, Step], StepOutcome]) -> StepOutcome:
        """`run` on this thread's connection. A person's error ends the turn with its exit code (not retried); a
        lost database is retried by Temporal; anything else is a bug, said with its traceback, and ends the turn."""
        conn, kept = self._connection(), False
        try:
            outcome = run(conn, step)
            kept = not conn.invalidated and not in_transaction(conn)
            return outcome
        except AgentError as exc:
            self._give_up(conn, step, f"failed: {exc}")
            raise ApplicationError(str(exc), exc.exit_code, type=type(exc).__name__, non_retryable=True) from None
        except Exception as exc:
            if conn.invalidated or isinstance(exc, OperationalError):
                raise  # the database went away, or stayed locked: Temporal runs the step again
            statement = f"internal error ({type(exc).__name__}: {exc}); this is a bug in scheduler-agent"
            self._give_up(conn, step, f"{statement}\n{traceback.format_exc()}")
            raise ApplicationError(statement, BUG_EXIT, type="Bug", non_retryable=True) from None
        finally:
            if not kept:
                self.held.conn = None
                conn.close()

    def _connection(self) -> Connection:
        """The connection this thread's last step ended well on, or a new one. Kept between steps: a new one for
        each step cost a PostgreSQL backend's start and the schema's check, more CPU than the step's own writes
        (benchmarks/workers.py's CPU rows)."""
        conn: Connection | None = getattr(self.held, "conn", None)
        if conn is None or conn.invalidated or conn.closed:
            conn = self.held.conn = self.connect()
        return conn

    def _give_up(self, conn: Connection, step: Step, why: str) -> None:
        self.say(f"worker: conversation {step.cid} {why}")
        lease.release(conn, step.cid, turn_holder(step.store, step.cid, step.turn))

    def _session(self, conn: Connection, step: Step, send: Send | None = None) -> Session:
        """The conversation as stored, its lease held by the turn (ConversationBusy, exit 8, if anyone else's);
        `send`: how it asks the model (else this worker's API client)."""
        lease.claim(conn, step.cid, turn_holder(step.store, step.cid, step.turn))
        holder: list[Session] = []
        approved = frozenset(step.approved)

        def decide(call: JSON, summary: str) -> Decision:
            waiting = [(call, summary), *_others(holder[0], call, approved)]
            records.wait_for_person(conn, step.cid, [(each["id"], each["name"], what) for each, what in waiting])
            raise NeedsPerson([Waiting(each["id"], what) for each, what in waiting])

        servers = self._servers(conn, step)
        send = send or self.send()
        session = Session.stored(conn, step.cid, send, self.settings, ignore, None, decide, approved, servers)
        if servers is not None:
            servers.adopt(session.context.mcp if session.context is not None else {})  # the tools the turn stored
        holder.append(session)
        return session

    def _servers(self, conn: Connection, step: Step) -> McpServers | None:
        """This worker's MCP servers that conversation `step.cid` uses, for one step (None: it uses none); refused
        (exit 2, naming it) when it uses a server this worker was not given."""
        used = stored_servers(conn, step.cid)
        refuse_missing(used, self.mcp.specs if self.mcp is not None else (), step.cid, on_a_worker=True)
        if not used or self.mcp is None:
            return None
        return self.mcp.sharing(used, step.trusted)

    def _mcp_tools(self, conn: Connection, step: Step) -> StepOutcome:
        """The turn's start: its MCP servers' tools listed now and stored with it (the request's tools too)."""
        lease.claim(conn, step.cid, turn_holder(step.store, step.cid, step.turn))
        servers = self._servers(conn, step)
        if servers is not None:
            for connection in servers.connections.values():
                connection.revive()  # a server that died in an earlier turn is started again for this one
            list_and_store(conn, step.cid, servers)
        return StepOutcome(GO_ON)

    def _model_step(self, conn: Connection, step: Step, reply: Reply) -> StepOutcome:
        session = self._session(conn, step, reply.sending(self.send()))
        messages = _as_before(session, before(step, round_=False))
        if step.iteration > self.settings.max_iterations:
            outcome: TurnOutcome | None = bound_reached(messages, self.settings.max_iterations)
        else:
            try:
                outcome = session.model_step(messages, step.iteration)
            except ModelUnavailable:
                session.records.bump("retries_exhausted")
                raise
            _keep_grown(session, messages)
        if outcome is None:
            return StepOutcome(GO_ON)
        stop = {Stop.ITERATION_BOUND: "bound", Stop.MODEL_STOPPED: "model"}.get(outcome.stop)
        session.records.set_stop(stop)  # type: ignore[arg-type]
        lease.release(conn, step.cid, turn_holder(step.store, step.cid, step.turn))
        self.say(f"worker: conversation {step.cid} done (exit {outcome.stop.exit_code})")
        return StepOutcome(ENDED, outcome.stop.exit_code, outcome.statement)

    def _tool_round(self, conn: Connection, step: Step) -> StepOutcome:
        session = self._session(conn, step)
        messages = _as_before(session, before(step, round_=True))
        try:
            session.tool_round(messages, step.iteration)
        except NeedsPerson as waiting:
            self.say(f"worker: conversation {step.cid} waits for approval of {waiting}")
            return StepOutcome(NEEDS_APPROVAL, waiting=waiting.waiting)
        _keep_grown(session, messages)
        return StepOutcome(GO_ON)


class Reply:
    """The reply of one model step's attempt: `kept`, one an earlier attempt received and could not store (sent
    instead of asking the model), and `came`, the one this attempt received (kept for the next, if it fails)."""

    def __init__(self, kept: JSON | None) -> None:
        self.kept = kept
        self.came: JSON | None = None

    def sending(self, send: Send) -> Send:
        def sent(request: JSON) -> JSON:
            kept, self.kept = self.kept, None
            came = self.came = kept if kept is not None else send(request)
            return came

        return sent


def _kept(details: Sequence[object], step: Step) -> JSON | None:
    """The reply the last attempt of this step heartbeated (`model_step`), if any."""
    last = details[-1] if details else None
    if isinstance(last, dict) and last.get("iteration") == step.iteration and last.get("turn") == step.turn:
        reply = last.get("reply")
        return reply if isinstance(reply, dict) else None
    return None


def _as_before(session: Session, length: int) -> list[JSON]:
    """The list as it was before the step: the session's own list when that is all the store holds, else a copy
    cut to `length` (the step ran before and stored more: the step takes it from the store)."""
    stored = session.messages
    if len(stored) < length:
        raise AgentError(
            f"conversation {session.cid} holds {len(stored)} entries, fewer than this turn's step needs ({length}): "
            f"it was changed outside its turn; `scheduler-agent conversations show {session.cid}` shows it"
        )
    return stored if len(stored) == length else stored[:length]


def _keep_grown(session: Session, messages: list[JSON]) -> None:
    """A step given a copy may append past what the store held (a round the first run stored no more of)."""
    if messages is not session.messages and len(messages) > len(session.messages):
        session.messages.extend(messages[len(session.messages) :])
        session.sync()


def _others(session: Session, call: JSON, approved: frozenset[str]) -> list[tuple[JSON, str]]:
    """The calls after `call` in its round that will need an answer too, with what each will do."""
    last = session.messages[-1] if session.messages else {"role": "user"}
    if last["role"] != "assistant":
        return []
    calls = tool_uses(last)
    ids = [c["id"] for c in calls]
    after = calls[ids.index(call["id"]) + 1 :] if call["id"] in ids else []
    inner = getattr(session.toolbox, "inner", None)
    recorded = getattr(session.toolbox, "recorded", None)
    found: list[tuple[JSON, str]] = []
    for other in after:
        if inner is None or recorded is None or other["name"] in approved or recorded(other["id"]) is not None:
            continue
        try:
            summary = inner.preview(other["name"], other.get("input", {}), other["id"])
        except ToolError:
            continue  # it will be answered with its error, asking no one
        if summary is not None:
            found.append((other, summary))
    return found
