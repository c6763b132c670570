"""The worker: N slots, each claiming a queued turn, running it with the same Session, releasing it.

A turn is run exactly as `ask` runs it (the submitted text joins the list, then the loop) or, when
the list already holds it (a worker died, or was stopped after a round), exactly as `resume` does:
read-only calls repeat, a side effect recorded by its tool_use id is never done twice, and the
restart counter goes up. Every slot claims as its own lease holder; one renewer thread, on its own
connection, pushes every held lease on while the slots wait for the model or a tool, so a lease
lapses only when the process is gone (SIGKILL, a lost machine) or stuck.

`stop()` (SIGTERM, Ctrl-C) is graceful: a slot finishes the round it is in, that round is stored
(the Session stores as it goes), the lease is released, and the next worker resumes the turn.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.agent.events import Event, RoundAnswered, TurnEnded
from scheduler_agent.agent.loop import Send, tool_uses
from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.agent.types import JSON
from scheduler_agent.grammar.check import conversation_state
from scheduler_agent.session.session import Session, Settings
from scheduler_agent.storage import conversations, lease
from scheduler_agent.storage.conversations import Context
from scheduler_agent.storage.dialect import Connection
from scheduler_agent.workers import queue
from scheduler_agent.workers.approvals import NeedsApproval, waiting_decide
from scheduler_agent.workers.wake import Polling

DEFAULT_LEASE_SECONDS = 30.0
POLL_FIRST, POLL_MAX = 0.05, 1.0  # seconds: an idle slot looks again after this, doubling up to the max
RECONNECT_FIRST, RECONNECT_MAX = 0.5, 30.0  # seconds: a slot that lost the database tries again after this, doubling


class StopAfterRound(BaseException):
    """The worker is stopping: the round just stored is the last this slot runs."""


@dataclass(frozen=True)
class WorkerConfig:
    settings: Settings  # the bounds and timeouts; each turn keeps its conversation's own model and stream flag
    concurrency: int = 1
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    drain: bool = False  # stop once no turn is queued (a batch; the tests and the benchmark)


@dataclass
class Slot:
    number: int
    holder: lease.Holder
    cid: int | None = None  # the conversation it runs now
    last: int | None = None  # the conversation it took up last (its lease is given up if the database is lost)


class Worker:
    """Runs queued turns until `stop()`; `connect()` opens a connection (one per thread), `wake()` what an
    idle slot waits on (polling, or LISTEN on PostgreSQL)."""

    def __init__(
        self,
        config: WorkerConfig,
        connect: Callable[[], Connection],
        make_send: Callable[[], Send],
        say: Callable[[str], object],
        wake: Callable[[], Polling] = Polling,
    ) -> None:
        self.config, self.connect, self.make_send, self.say, self.wake = config, connect, make_send, say, wake
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        pid = os.getpid()
        self.slots = [Slot(n, queue.worker_holder(n, pid, config.lease_seconds)) for n in range(config.concurrency)]
        self.finished = 0  # turns taken up here that ended, stopped at an approval, or failed

    def stop(self) -> None:
        if not self.stopping.is_set():
            self.say("worker: stopping after the current round (SIGTERM); the turns it runs stay resumable")
        self.stopping.set()

    def run(self) -> int:
        """Run until stopped (or, with `drain`, until nothing is queued); the number of turns finished here."""
        renewing = threading.Event()
        renewer = threading.Thread(target=_Renewer(self), args=(renewing,), name="lease-renewer", daemon=True)
        renewer.start()
        threads = [threading.Thread(target=self._slot, args=(s,), name=f"slot-{s.number}") for s in self.slots]
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)  # the main thread stays free to take SIGTERM
        renewing.set()
        renewer.join()
        return self.finished

    # --- one slot ----------------------------------------------------------------------------

    def _slot(self, slot: Slot) -> None:
        conn = self.connect()
        wake = self.wake()
        send = self.make_send()
        delay = POLL_FIRST
        try:
            while not self.stopping.is_set():
                try:
                    waited = self._next(conn, wake, send, slot, delay)
                except Exception as exc:
                    if not (_lost(conn) or wake.lost()):
                        raise
                    wake.close()
                    conn.close()
                    again = self._reconnected(slot, exc)
                    if again is None:
                        return
                    conn, wake = again
                    waited = POLL_FIRST
                if waited is None:  # drained
                    return
                delay = waited
        finally:
            wake.close()
            conn.close()

    def _next(self, conn: Connection, wake: Polling, send: Send, slot: Slot, delay: float) -> float | None:
        """Take up the next queued turn and run it, or wait for one; the next wait (None: drained, stop)."""
        claimed = queue.claim(conn, slot.holder)
        if claimed is None:
            if self.config.drain and queue.queued(conn) == 0:
                return None
            return POLL_FIRST if wake.wait(self.stopping, delay) else min(delay * 2, POLL_MAX)
        slot.cid = slot.last = claimed.cid
        try:
            self._run(conn, send, slot, claimed)
        finally:
            slot.cid = None
        return POLL_FIRST

    def _reconnected(self, slot: Slot, exc: Exception) -> tuple[Connection, Polling] | None:
        """The database went away under the slot (a server restart, a dropped connection): connect again, and
        give up the lease on the turn it was running, so that the next claim (here or in another worker) takes it
        up at once and resumes it, as after a crash. Waits, doubling, while the database cannot be reached (or
        goes away again before the slot is back); None if the worker is told to stop meanwhile."""
        self.say(f"worker: slot {slot.number} lost the database ({_line(exc)}); connecting again")
        wait = RECONNECT_FIRST
        while not self.stopping.wait(wait):
            again = self._back(slot)
            if again is not None:
                return again
            wait = min(wait * 2, RECONNECT_MAX)
        return None

    def _back(self, slot: Slot) -> tuple[Connection, Polling] | None:
        """The slot's new connection and way of waking, the lease on its last turn given up; None, said in a
        line, when the database is still (or again) away."""
        conn = _connected_again(self, f"slot {slot.number}")
        if conn is None:
            return None
        try:
            if slot.last is not None:
                lease.release(conn, slot.last, slot.holder)
            return conn, self.wake()  # LISTEN opens a connection of its own: it can fail as connecting does
        except Exception as exc:
            gone = _lost(conn) or isinstance(exc, sqlite3.OperationalError)  # a PostgreSQL connect failure is one
            conn.close()
            if not gone:
                raise
            self.say(f"worker: slot {slot.number}: the database went away again ({_line(exc)})")
            return None

    def _run(self, conn: Connection, send: Send, slot: Slot, claimed: queue.Claim) -> None:
        cid = claimed.cid
        record, messages = conversations.load(conn, cid)
        settings = _as_submitted(self.config.settings, record.context)
        listener = _Listener(conn, cid, self.stopping)
        holder: list[Session] = []
        decide = waiting_decide(conn, cid, lambda call: _others(holder[0], call, claimed.approved))
        session = Session.stored(conn, cid, send, settings, listener, None, decide, claimed.approved)
        session.lease.use(slot.holder)
        holder.append(session)
        begin = claimed.text is not None and len(messages) <= claimed.base
        self.say(f"worker: conversation {cid} taken up ({'new turn' if begin else 'resumed'}, claim {claimed.claims})")
        try:
            if begin:
                assert claimed.text is not None
                session.ask(claimed.text)
            elif conversation_state(messages) == "complete":
                queue.finish_from_list(conn, cid)
                lease.release(conn, cid, slot.holder)
            else:
                session.resume()
        except NeedsApproval as waiting:
            self.say(f"worker: conversation {cid} waits for approval of {', '.join(waiting.calls)}")
        except StopAfterRound:
            self.say(f"worker: conversation {cid} stopped after a stored round; released for the next worker")
            return
        except (lease.ConversationBusy, conversations.ConversationChanged) as lost:
            self.say(f"worker: conversation {cid} left to the worker that took it over ({lost})")
            return
        except AgentError as exc:
            if _lost(conn):  # the database went away: not the turn's failure; `_slot` connects again
                raise
            if queue.fail(conn, cid, slot.holder, str(exc), exc.exit_code):
                self.say(f"worker: conversation {cid} failed: {exc}")
        except Exception as exc:  # a bug: say so, keep the traceback for the report, and go on with the next turn
            if _lost(conn):
                raise
            statement = f"internal error ({type(exc).__name__}: {exc}); this is a bug in scheduler-agent"
            self.say(f"worker: conversation {cid}: {statement}\n{traceback.format_exc()}")
            queue.fail(conn, cid, slot.holder, statement, 70)
        else:
            if listener.ended:
                self.say(f"worker: conversation {cid} done")
        with self._lock:
            self.finished += 1


class _Renewer:
    """The worker's lease renewer: pushes every held lease on, a third of its length at a time, on a connection of
    its own (a thread of the worker's)."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker

    def __call__(self, done: threading.Event) -> None:
        worker = self.worker
        conn: Connection | None = worker.connect()
        try:
            while not done.wait(worker.config.lease_seconds / 3):
                if conn is None:  # the database went away: try again at each renewal until it is back
                    conn = _connected_again(worker, "the lease renewer")
                    continue
                try:
                    self._renew(conn)
                except Exception as exc:
                    if not _lost(conn):
                        raise
                    worker.say(f"worker: the lease renewer lost the database ({_line(exc)}); connecting again")
                    conn.close()
                    conn = None
        finally:
            if conn is not None:
                conn.close()

    def _renew(self, conn: Connection) -> None:
        for slot in self.worker.slots:
            cid = slot.cid
            if cid is None or lease.renew(conn, cid, slot.holder) or slot.cid != cid:
                continue  # renewed, or the turn ended (and was released) meanwhile
            if queue.status(conn, cid).state == "queued":
                self.worker.say(f"worker: the lease on conversation {cid} was lost; its slot stops at its next step")


def _connected_again(worker: Worker, who: str) -> Connection | None:
    """A new connection for `who` (a slot, the renewer), or None, said in a line, while the database is away."""
    try:
        conn = worker.connect()
    except Exception as exc:
        worker.say(f"worker: {who}: the database is still unreachable ({_line(exc)})")
        return None
    worker.say(f"worker: {who} connected again")
    return conn


def _lost(conn: Connection) -> bool:
    """Whether `conn` is a connection to a server that is gone (PostgreSQL's; a SQLite file is never lost so)."""
    return bool(getattr(conn, "lost", False))


def _line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


class _Listener:
    """What the worker hears of a turn: its end goes to the queue while the lease is still held."""

    def __init__(self, conn: Connection, cid: int, stopping: threading.Event) -> None:
        self.conn, self.cid, self.stopping = conn, cid, stopping
        self.ended = False

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnEnded):
            queue.finish(self.conn, self.cid, event.outcome)
            self.ended = True
        elif isinstance(event, RoundAnswered) and self.stopping.is_set():
            raise StopAfterRound  # the round is stored (the Session stores before it reports)


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


def _as_submitted(settings: Settings, context: Context) -> Settings:
    """The worker's settings with the submitted turn's model, stream flag, max_tokens and `-o` keys."""
    options = tuple(context.options.items())
    return dataclasses.replace(
        settings, model=context.model, stream=context.stream, max_tokens=context.max_tokens, options=options
    )
