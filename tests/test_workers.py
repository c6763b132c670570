"""Workers in one process (issue 16): the queue, claims under a lease, approvals without a terminal.

The worker runs in this process (threads) against the loopback scripted API; each conversation
books its own slot (scheduler_agent/testing/booking_script.py). The crash and signal tests, with
worker processes, are in test_workers_processes.py.
"""

from __future__ import annotations

import socket
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import worker_stores
from helpers import DUMMY_KEY, demo_clock

from scheduler_agent.agent.errors import AgentError, InputError
from scheduler_agent.agent.request import DEFAULT_MODEL
from scheduler_agent.api.client import ModelAPI, make_client
from scheduler_agent.grammar.check import check, conversation_state
from scheduler_agent.session.approval import BOOKINGS
from scheduler_agent.session.session import Settings
from scheduler_agent.storage import conversations, db, lease, listing
from scheduler_agent.storage.dialect import Connection
from scheduler_agent.storage.migrations import HEAD
from scheduler_agent.testing.booking_script import booking_script, request_text, slot_start
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use
from scheduler_agent.workers import approvals, queue
from scheduler_agent.workers.submission import submit_turn
from scheduler_agent.workers.wake import Listening, Polling
from scheduler_agent.workers.worker import Worker, WorkerConfig

SETTINGS = Settings(DEFAULT_MODEL, max_iterations=8, strict=True)


Location = worker_stores.Location
store = worker_stores.store  # the demo calendar on each database (a fixture)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer([], script=booking_script()) as running:
        yield running


def run_worker(path: Location, server: ScriptedServer, concurrency: int = 2, lease_seconds: float = 30.0) -> list[str]:
    """A worker in this process until nothing is queued; what it said."""
    said: list[str] = []
    config = WorkerConfig(SETTINGS, concurrency=concurrency, lease_seconds=lease_seconds, drain=True)
    worker = Worker(
        config,
        lambda: db.open_db(path),
        lambda: ModelAPI(make_client(api_key=DUMMY_KEY, base_url=server.url, max_retries=0)).send,
        said.append,
        (lambda: Listening(path)) if isinstance(path, str) else Polling,
    )
    worker.run()
    return said


def submit(path: Location, n: int, *, yes: bool = True) -> int:
    conn = db.open_db(path)
    try:
        return submit_turn(
            conn, request_text(n), clock=demo_clock(), settings=SETTINGS, approved=BOOKINGS if yes else frozenset()
        )
    finally:
        conn.close()


def booked(conn: Connection, n: int) -> int:
    """How many events slot n's conversation booked (its title is its own)."""
    return int(conn.execute("SELECT count(*) FROM events WHERE title = ?", (f"Slot {n}",)).fetchone()[0])


def test_a_submitted_turn_is_stored_at_once_and_run_by_a_worker_as_ask(store: Location, server: ScriptedServer) -> None:
    ids = [submit(store, n) for n in range(4)]
    conn = db.open_db(store)
    assert [queue.status(conn, cid).state for cid in ids] == ["queued"] * 4
    assert server.received == []  # submitting never calls the model

    said = run_worker(store, server)

    for n, cid in enumerate(ids):
        record, messages = conversations.load(conn, cid)
        assert messages[0] == {"role": "user", "content": [{"type": "text", "text": request_text(n)}]}
        assert conversation_state(messages) == "complete"
        assert check(messages, mode="conversation") == []
        assert len(messages) == 6
        assert booked(conn, n) == 1
        assert record.counters["restarts"] == 0  # a first run is not a restart
        status = queue.status(conn, cid)
        assert (status.state, status.exit_code, status.answer) == ("done", 0, f"Booked slot {n}.")
    assert len(server.received) == 12  # three requests a conversation, none twice
    assert sum("done" in line for line in said) == 4


def test_a_turn_whose_worker_vanished_is_taken_up_once_its_lease_lapses(
    store: Location, server: ScriptedServer
) -> None:
    """A worker on another machine claimed the turn and was lost: nobody takes it until its lease lapses."""
    cid = submit(store, 0)
    conn = db.open_db(store)
    gone = lease.Holder("another-machine#0", 4242, lease_seconds=1.0)
    assert queue.claim(conn, gone) is not None
    assert queue.claim(conn, queue.worker_holder(0, 1, 30.0)) is None  # its lease holds: nobody disturbs it
    held = lease.current(conn, cid)
    assert held is not None
    assert not queue.lapsed(held.holder, held.expires)
    threading.Event().wait(1.2)
    assert queue.lapsed(held.holder, held.expires)

    run_worker(store, server, concurrency=1)

    record, messages = conversations.load(conn, cid)
    assert conversation_state(messages) == "complete"
    assert check(messages, mode="conversation") == []
    assert booked(conn, 0) == 1
    assert record.counters["restarts"] == 0  # it had not begun: a first run
    assert conn.execute("SELECT claims FROM work_queue WHERE conversation_id = ?", (cid,)).fetchone()[0] == 2
    assert lease.current(conn, cid) is None  # released at the end


def test_a_live_lease_is_not_taken_and_a_dead_local_process_s_lease_is(store: Location) -> None:
    cid = submit(store, 0)
    conn = db.open_db(store)
    here = socket.gethostname()
    alive = lease.Holder(f"{here}#0", 1, lease_seconds=60)  # pid 1 is always there
    assert queue.claim(conn, alive) is not None
    assert queue.claim(conn, queue.worker_holder(0, 2, 30)) is None
    lease.release(conn, cid, alive)
    dead = lease.Holder(f"{here}#3", 2**22 + 12345, lease_seconds=60)  # no such process
    assert queue.claim(conn, dead) is not None
    taken = queue.claim(conn, queue.worker_holder(1, 1, 30))
    assert taken is not None
    assert taken.cid == cid
    assert taken.claims == 3


def test_a_lease_renewed_between_the_look_and_the_claim_is_left_to_its_holder(
    store: Location, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claim saw the lease lapsed, and its holder renewed it just then (a late renewal): the claim leaves it,
    instead of raising ConversationBusy out of the worker's slot (which then died with a traceback)."""
    cid = submit(store, 0)
    conn = db.open_db(store)
    late = lease.Holder("another-machine#0", 4242, lease_seconds=0.05)
    assert queue.claim(conn, late) is not None
    threading.Event().wait(0.1)  # lapsed: the claim's look finds it
    seen = queue.lapsed

    def renewed_meanwhile(holder: lease.Holder, expires: str) -> bool:
        # the holder's renewal, committed on PostgreSQL between the claim's statements (READ COMMITTED sees it
        # there; SQLite's claim holds the write lock, so there it is made on the claim's own connection)
        assert lease.renew(conn, cid, late, seconds=60)
        return True  # what the claim saw a moment before

    monkeypatch.setattr(queue, "lapsed", renewed_meanwhile)
    assert queue.claim(conn, queue.worker_holder(0, 1, 30.0)) is None
    held = lease.current(conn, cid)
    assert held is not None and held.holder == late
    monkeypatch.setattr(queue, "lapsed", seen)
    assert conn.execute("SELECT claims FROM work_queue WHERE conversation_id = ?", (cid,)).fetchone()[0] == 1


def test_a_booking_waits_for_approve_and_the_next_worker_goes_on(store: Location, server: ScriptedServer) -> None:
    cid = submit(store, 1, yes=False)
    said = run_worker(store, server, concurrency=1)
    conn = db.open_db(store)
    assert queue.status(conn, cid).state == "needs-approval"
    assert any("waits for approval of toolu_s1_book" in line for line in said)
    _, messages = conversations.load(conn, cid)
    assert conversation_state(messages) == "interrupted"
    assert booked(conn, 1) == 0  # ends with the unanswered call
    waiting = approvals.pending(conn, cid)
    assert [p.tool_use_id for p in waiting] == ["toolu_s1_book"]
    assert (
        waiting[0].summary
        == "Book 'Slot 1' on Mon 2026-09-14 11:30-12:00 (Europe/London) for you and Priya Raman (priya)"
    )
    assert [s.id for s in listing.summaries(conn, state="needs-approval")] == [cid]

    approvals.answer(conn, cid, None, True)
    assert queue.status(conn, cid).state == "queued"
    assert approvals.pending(conn, cid) == []
    run_worker(store, server, concurrency=1)

    record, messages = conversations.load(conn, cid)
    assert queue.status(conn, cid).state == "done"
    assert booked(conn, 1) == 1
    assert check(messages, mode="conversation") == []
    assert record.counters["restarts"] == 1


def test_decline_sends_the_reason_to_the_model_and_nothing_is_booked(store: Location) -> None:
    script = booking_script()

    def reply(request: dict[str, object]) -> Reply | None:
        messages = request["messages"]
        assert isinstance(messages, list)
        if len(messages) == 5:
            return Reply([text("Understood, nothing booked.")])
        return script(request)

    cid = submit(store, 2, yes=False)
    with ScriptedServer([], script=reply) as server:
        run_worker(store, server, concurrency=1)
        conn = db.open_db(store)
        approvals.answer(conn, cid, "toolu_s2_book", False, "not on Mondays")
        run_worker(store, server, concurrency=1)
        sent = server.received[-1]["messages"][-1]["content"][0]
    assert sent["tool_use_id"] == "toolu_s2_book"
    assert sent["is_error"] is True
    assert "not on Mondays" in sent["content"]
    assert "Nothing was booked" in sent["content"]
    assert booked(conn, 2) == 0
    assert queue.status(conn, cid).answer == "Understood, nothing booked."


def test_several_waiting_calls_need_call_and_each_is_answered_by_its_id(store: Location) -> None:
    two = {"with": "priya", "minutes": 30}
    replies = [
        Reply(
            [
                tool_use("toolu_two_a", "create_event", {**two, "start": slot_start(3), "title": "A"}),
                tool_use("toolu_two_b", "create_event", {**two, "start": slot_start(4), "title": "B"}),
            ],
            "tool_use",
        ),
        Reply([text("Booked both.")]),
    ]
    conn = db.open_db(store)
    cid = submit_turn(conn, "Book A and B", clock=demo_clock(), settings=SETTINGS)
    with ScriptedServer(replies, by_length=True) as server:
        run_worker(store, server, concurrency=1)
        assert [p.tool_use_id for p in approvals.pending(conn, cid)] == ["toolu_two_a", "toolu_two_b"]
        with pytest.raises(InputError, match=r"2 calls waiting: toolu_two_a .*toolu_two_b .*--call"):
            approvals.answer(conn, cid, None, True)
        with pytest.raises(InputError, match="no call 'toolu_nope' waiting"):
            approvals.answer(conn, cid, "toolu_nope", True)
        approvals.answer(conn, cid, "toolu_two_b", False, "only A")
        assert queue.status(conn, cid).state == "needs-approval"  # one still waits: no worker takes it
        approvals.answer(conn, cid, None, True)
        run_worker(store, server, concurrency=1)
    titles = {row[0] for row in conn.execute("SELECT title FROM events WHERE title IN ('A', 'B')")}
    assert titles == {"A"}
    assert queue.status(conn, cid).state == "done"
    with pytest.raises(AgentError, match="waits for no approval"):
        approvals.answer(conn, cid, None, True)


def test_a_conversation_with_an_unfinished_turn_is_not_submitted_to(store: Location) -> None:
    conn = db.open_db(store)
    cid = submit(store, 0)
    with pytest.raises(AgentError, match="already has a submitted turn"):
        submit_turn(conn, "more", clock=demo_clock(), settings=SETTINGS, cid=cid)
    with pytest.raises(InputError, match="empty"):
        submit_turn(conn, "  ", clock=demo_clock(), settings=SETTINGS)


def test_the_worker_migrations_make_the_queue_and_the_pending_approvals(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "new.db")
    assert db.revision(conn) == HEAD  # m030 and m031 among them
    columns = {row[1] for row in conn.execute("PRAGMA table_info(work_queue)")}
    assert {"conversation_id", "state", "text", "base", "approved", "claims", "exit_code", "answer"} <= columns
    conn.execute(
        "INSERT INTO conversations (model, max_tokens, system, tools, started_on) VALUES ('m', 1, 's', '[]', '')"
    )
    with pytest.raises(sqlite3.IntegrityError):  # only the four states
        conn.execute("INSERT INTO work_queue (conversation_id, state, submitted_at) VALUES (1, 'running', 'now')")
    with pytest.raises(sqlite3.IntegrityError):  # a pending call has an id
        conn.execute(
            "INSERT INTO pending_approvals (tool_use_id, conversation_id, name, summary, asked_at)"
            " VALUES ('', 1, 'create_event', 'x', 'now')"
        )
