"""The work queue: turns submitted for workers, claimed one conversation at a time under a lease.

    submit(conn, text, context=..., ...)  # a new turn waits in the queue; its conversation id comes back
    claim(conn, holder)                   # the oldest queued turn nobody runs, leased to `holder`; or None
    finish(conn, cid, outcome)            # the turn ended: how, and the model's last text
    fail(conn, cid, holder, statement)    # the turn cannot go on without a person

What needs the model is a queued row: a submitted text not yet in the list, or a list that ends
with a user turn or an unanswered call (a worker died, or SIGTERM stopped it after a round). Who
runs it now is the conversation's lease (storage/lease.py): a worker that dies stops renewing, and
when its lease lapses the next claim takes the conversation up and resumes it.

On SQLite the claim is one `BEGIN IMMEDIATE` transaction (the write lock serialises claims); on
PostgreSQL it is `SELECT ... FOR UPDATE SKIP LOCKED` on the queue row, then the lease, in one
transaction, so concurrent workers never wait on each other's candidates.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from scheduler_agent.agent.errors import AgentError, InputError
from scheduler_agent.agent.events import TurnOutcome
from scheduler_agent.grammar.check import conversation_state
from scheduler_agent.storage import conversations, lease
from scheduler_agent.storage.conversations import Context
from scheduler_agent.storage.db import transaction
from scheduler_agent.storage.dialect import Connection, dialect
from scheduler_agent.workers.wake import notify

STATES = ("queued", "needs-approval", "done", "failed")
# PostgreSQL: concurrent claims lock the candidates they look at and skip those another claim holds, so
# no two workers wait on (or take) the same row. SQLite: BEGIN IMMEDIATE already lets one claim in at a time.
_SKIP_LOCKED = {"postgresql": " FOR UPDATE OF q SKIP LOCKED", "sqlite": ""}
CANDIDATES = 16  # queued rows looked at per claim: the first whose lease lapsed (or has none) is taken


@dataclass(frozen=True)
class Claim:
    """A turn a worker took up: `text` is still to be added when the list has only `base` entries."""

    cid: int
    text: str | None
    base: int
    approved: frozenset[str]
    claims: int  # this one included: 1 the first time, more after a crash or a stop


@dataclass(frozen=True)
class Status:
    """Where a submitted turn stands, as `wait` reads it."""

    cid: int
    state: str
    exit_code: int | None
    answer: str
    statement: str
    base: int = 0  # where the submitted turn begins in the list

    @property
    def ended(self) -> bool:
        """The turn is over, or waits for a person: nothing more happens until someone acts."""
        return self.state != "queued"


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def submit(
    conn: Connection,
    text: str,
    *,
    context: Context,
    started_on: str,
    clock_pin: str | None,
    cid: int | None = None,
    approved: frozenset[str] = frozenset(),
) -> int:
    """Queue `text` as the next user turn of conversation `cid` (a new one when None); its id comes back.

    A new conversation's row is written with its context at once, so the id exists before any worker
    runs; the text waits in the queue until a worker adds it to the list and asks the model."""
    if not text.strip():
        raise InputError('The text to send is empty: say what to schedule, e.g. "a meeting with Priya next week"')
    with transaction(conn):
        if cid is None:
            cid = conversations.create(conn, context, started_on=started_on, clock_pin=clock_pin)
            base = 0
        else:
            base = _check_can_take_a_turn(conn, cid)
        conn.execute(
            "INSERT INTO work_queue (conversation_id, state, text, base, approved, submitted_at) VALUES (?,?,?,?,?,?)"
            " ON CONFLICT (conversation_id) DO UPDATE SET state = excluded.state, text = excluded.text,"
            " base = excluded.base, approved = excluded.approved, submitted_at = excluded.submitted_at,"
            " claims = 0, claimed_at = NULL, finished_at = NULL, exit_code = NULL, answer = '', statement = ''",
            (cid, "queued", text, base, json.dumps(sorted(approved)), now_iso()),
        )
        notify(conn)
    return cid


def _check_can_take_a_turn(conn: Connection, cid: int) -> int:
    """The list's length, when conversation `cid` can take a new turn; otherwise a clear refusal."""
    record, messages = conversations.load(conn, cid)
    row = conn.execute("SELECT state FROM work_queue WHERE conversation_id = ?", (cid,)).fetchone()
    if row is not None and row[0] in ("queued", "needs-approval"):
        raise AgentError(
            f"conversation {cid} already has a submitted turn ({row[0]}): "
            f"`scheduler-agent wait {cid}` waits for it to end"
        )
    state = conversation_state(messages)
    if state in ("waiting", "interrupted") and record.last_stop is None:
        raise AgentError(
            f"conversation {cid} has an unfinished turn ({state}): finish it with `scheduler-agent resume {cid}` "
            "before submitting another"
        )
    return len(messages)


def claim(conn: Connection, holder: lease.Holder) -> Claim | None:
    """Take the oldest queued turn that nobody runs (no lease, or one that lapsed) and lease it to `holder`."""
    with transaction(conn):
        rows = conn.execute(
            "SELECT q.conversation_id, q.text, q.base, q.approved, q.claims, l.holder_host, l.holder_pid, l.expires"
            " FROM work_queue q LEFT JOIN leases l ON l.conversation_id = q.conversation_id"
            " WHERE q.state = 'queued' AND (l.conversation_id IS NULL OR l.expires < ? OR l.holder_host LIKE ?)"
            " ORDER BY q.submitted_at, q.conversation_id LIMIT ?" + _SKIP_LOCKED[dialect(conn)],
            (now_iso(), _host_of(holder) + "%", CANDIDATES),
        ).fetchall()
        for cid, text, base, approved, claims, host, pid, expires in rows:
            if host is not None and not lapsed(lease.Holder(host, int(pid)), expires):
                continue
            try:
                lease.claim(conn, cid, holder)
            except lease.ConversationBusy:  # its holder renewed it since the look above: it holds after all
                continue
            conn.execute(
                "UPDATE work_queue SET claims = claims + 1, claimed_at = coalesce(claimed_at, ?)"
                " WHERE conversation_id = ?",
                (now_iso(), cid),
            )
            return Claim(int(cid), text, int(base), frozenset(json.loads(approved)), int(claims) + 1)
    return None


def worker_holder(slot: int, pid: int, seconds: float) -> lease.Holder:
    """The holder a worker's slot claims as: its process, told apart from the other slots by `#slot`."""
    return lease.Holder(f"{socket.gethostname()}#{slot}", pid, seconds)


def _host_of(holder: lease.Holder) -> str:
    return holder.host.partition("#")[0]


def lapsed(holder: lease.Holder, expires: str) -> bool:
    """Whether a lease no longer protects its conversation: expired, or its process on this host is gone."""
    return expires < now_iso() or holder.alive() is False


def finish(conn: Connection, cid: int, outcome: TurnOutcome) -> None:
    """The turn ended as `ask` would have: its exit code, the model's last text, the statement of any stop."""
    with transaction(conn):
        conn.execute(
            "UPDATE work_queue SET state = 'done', text = NULL, finished_at = ?, exit_code = ?, answer = ?,"
            " statement = ? WHERE conversation_id = ?",
            (now_iso(), outcome.stop.exit_code, outcome.text, outcome.statement, cid),
        )


def finish_from_list(conn: Connection, cid: int) -> None:
    """A worker died after the last answer was stored but before it said so: the list says it is done."""
    _, messages = conversations.load(conn, cid)
    last = messages[-1]["content"] if messages else ""
    answer = last if isinstance(last, str) else "".join(b.get("text", "") for b in last if b.get("type") == "text")
    with transaction(conn):
        conn.execute(
            "UPDATE work_queue SET state = 'done', text = NULL, finished_at = ?, exit_code = 0, answer = ?"
            " WHERE conversation_id = ? AND state = 'queued'",
            (now_iso(), answer, cid),
        )


def fail(conn: Connection, cid: int, holder: lease.Holder, statement: str, exit_code: int = 1) -> bool:
    """Mark the turn failed (it needs a person), unless another worker has taken it up meanwhile."""
    try:
        lease.claim(conn, cid, holder)
    except lease.ConversationBusy:
        return False
    try:
        with transaction(conn):
            cursor = conn.execute(
                "UPDATE work_queue SET state = 'failed', finished_at = ?, exit_code = ?, statement = ?"
                " WHERE conversation_id = ? AND state = 'queued'",
                (now_iso(), exit_code, statement, cid),
            )
        return cursor.rowcount == 1
    finally:
        lease.release(conn, cid, holder)


def status(conn: Connection, cid: int) -> Status:
    row = conn.execute(
        "SELECT state, exit_code, answer, statement, base FROM work_queue WHERE conversation_id = ?", (cid,)
    ).fetchone()
    if row is None:
        conversations.load(conn, cid)  # NoSuchConversation when there is no such conversation at all
        raise AgentError(
            f"conversation {cid} was never submitted to the workers: `scheduler-agent conversations show {cid}`"
            " shows it"
        )
    return Status(cid, row[0], row[1], row[2] or "", row[3] or "", int(row[4]))


def wait(conn: Connection, cid: int, poll: float = 0.2, idle: Callable[[], object] = lambda: None) -> Status:
    """Block until the submitted turn of `cid` ends (done, failed, or waiting for approval).

    `idle()` is called once if it has to wait at all (to say so)."""
    told = False
    while not (found := status(conn, cid)).ended:
        if not told:
            idle()
            told = True
        time.sleep(poll)
    return found


def queued(conn: Connection) -> int:
    """How many turns wait for a worker, run or not."""
    return int(conn.execute("SELECT count(*) FROM work_queue WHERE state = 'queued'").fetchone()[0])


def requeue(conn: Connection, cid: int) -> None:
    """Every pending approval of `cid` was answered: the next worker to claim it goes on."""
    conn.execute(
        "UPDATE work_queue SET state = 'queued' WHERE conversation_id = ? AND state = 'needs-approval'", (cid,)
    )
    notify(conn)
