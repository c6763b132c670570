"""Worker processes (issue 16): a SIGKILL mid-turn, a lease held against another worker, SIGTERM.

Real `scheduler-agent worker` processes share one database and talk to the loopback scripted API,
where each conversation books its own slot (scheduler_agent/testing/booking_script.py). After
every run: each conversation's list is complete and valid, each slot is booked exactly once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import worker_stores
from helpers import DUMMY_KEY, demo_clock

from scheduler_agent.agent.request import DEFAULT_MODEL
from scheduler_agent.grammar.check import check, conversation_state
from scheduler_agent.session.approval import BOOKINGS
from scheduler_agent.session.session import Settings
from scheduler_agent.storage import conversations, db
from scheduler_agent.storage.dialect import Connection
from scheduler_agent.testing.booking_script import booking_script, request_text
from scheduler_agent.testing.scripted_server import ScriptedServer
from scheduler_agent.workers import queue
from scheduler_agent.workers.submission import submit_turn

SETTINGS = Settings(DEFAULT_MODEL, max_iterations=8)
WORKER = ["from scheduler_agent.cli import main; main()", "worker"]  # the real CLI, as a user runs it
DEADLINE = 120.0  # seconds any wait here may take before the test fails


def worker(db_path: Location, server: ScriptedServer, *args: str, fault: str | None = None) -> subprocess.Popen[str]:
    """`scheduler-agent worker --db PATH ARGS` in a new process: a dummy key for `server`, strict."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))}
    env |= {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": DUMMY_KEY, "SCHEDULER_AGENT_STRICT": "1"}
    if fault:
        env["SCHEDULER_AGENT_FAULT"] = fault
    command = [sys.executable, "-c", *WORKER, "--db", str(db_path)]
    return subprocess.Popen(
        [*command, *args], env=env, cwd=tempfile.gettempdir(), stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {DEADLINE:g} s: {what}")
        time.sleep(0.05)


def submit_all(path: Location, count: int) -> list[int]:
    conn = db.open_db(path)
    try:
        return [
            submit_turn(conn, request_text(n), clock=demo_clock(), settings=SETTINGS, approved=BOOKINGS)
            for n in range(count)
        ]
    finally:
        conn.close()


def holders(path: Location) -> list[tuple[str, int]]:
    conn = db.open_db(path)
    try:
        return [(row[0], int(row[1])) for row in conn.execute("SELECT holder_host, holder_pid FROM leases")]
    finally:
        conn.close()


def assert_all_booked_once(path: Location, ids: list[int]) -> Connection:
    conn = db.open_db(path)
    for n, cid in enumerate(ids):
        _, messages = conversations.load(conn, cid)
        assert conversation_state(messages) == "complete", (cid, messages)
        assert check(messages, mode="conversation") == [], (cid, messages)
        title = f"Slot {n}"
        assert conn.execute("SELECT count(*) FROM events WHERE title = ?", (title,)).fetchone()[0] == 1, title
        assert queue.status(conn, cid).state == "done"
        assert queue.status(conn, cid).answer == f"Booked slot {n}."
    return conn


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        _, err = process.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        pytest.fail(f"the worker did not finish within {DEADLINE:g} s:\n{err}")
    return process.returncode, err


Location = worker_stores.Location
store = worker_stores.store  # the demo calendar on each database (a fixture)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer([], script=booking_script(delay=0.3)) as running:
        yield running


def test_two_workers_ten_conversations_one_killed_mid_turn_every_slot_booked_once(
    store: Path, server: ScriptedServer
) -> None:
    ids = submit_all(store, 10)
    # the first worker dies (SIGKILL) right after its second booking is committed, before its result is stored
    first = worker(store, server, "--concurrency", "2", "--lease", "5", "--drain", fault="after_calendar_write@2")
    until(lambda: len([h for h in holders(store) if h[1] == first.pid]) == 2, "the first worker runs two turns")
    second = worker(store, server, "--concurrency", "2", "--lease", "5", "--drain")
    code, err = finish(first)
    assert code == -signal.SIGKILL, err
    code, err = finish(second)
    assert code == 0, err
    assert "Traceback" not in err

    conn = assert_all_booked_once(store, ids)
    restarted = [cid for cid in ids if conversations.load(conn, cid)[0].counters["restarts"] > 0]
    assert restarted
    assert len(restarted) <= 2  # what the dead worker ran was resumed: the restart counter says so
    assert holders(store) == []  # every lease released
    # a resumed booking was answered from its record: one result for it, and no second event (above)
    for cid in restarted:
        results = [
            block["tool_use_id"]
            for entry in conversations.load(conn, cid)[1]
            if entry["role"] == "user" and isinstance(entry["content"], list)
            for block in entry["content"]
            if block.get("type") == "tool_result"
        ]
        assert len(results) == len(set(results)) == 2


def test_a_worker_holding_a_lease_is_not_disturbed_by_another(store: Location) -> None:
    """Each reply takes longer than the lease: only renewal keeps it, and the second worker never claims it."""
    [cid] = submit_all(store, 1)
    with ScriptedServer([], script=booking_script(delay=2.5)) as slow:
        first = worker(store, slow, "--lease", "1.5", "--drain")
        until(lambda: any(h[1] == first.pid for h in holders(store)), "the first worker claims the turn")
        second = worker(store, slow, "--lease", "1.5", "--drain")
        code, err = finish(first)
        assert code == 0, err
        code, err_second = finish(second)
        assert code == 0, err_second
        assert len(slow.received) == 3  # no request twice
    conn = assert_all_booked_once(store, [cid])
    assert conn.execute("SELECT claims FROM work_queue WHERE conversation_id = ?", (cid,)).fetchone()[0] == 1
    assert conversations.load(conn, cid)[0].counters["restarts"] == 0
    assert f"conversation {cid} taken up" not in err_second
    assert "0 turn(s) taken up here" in err_second


def test_sigterm_finishes_the_round_stores_it_and_releases_the_turn(store: Location) -> None:
    [cid] = submit_all(store, 1)
    with ScriptedServer([], script=booking_script(delay=1.5)) as slow:
        running = worker(store, slow, "--lease", "10")
        until(lambda: len(slow.received) == 1, "the first request is sent")
        running.send_signal(signal.SIGTERM)  # while the model thinks: the round it is in is finished first
        code, err = finish(running)
        assert code == 0, err
        assert "stopped after a stored round" in err
        conn = db.open_db(store)
        _, messages = conversations.load(conn, cid)
        assert len(messages) == 3
        assert conversation_state(messages) == "waiting"  # the read's result is stored
        assert messages[2]["content"][0]["tool_use_id"] == "toolu_s0_find"
        assert holders(store) == []
        assert queue.status(conn, cid).state == "queued"
        code, err = finish(worker(store, slow, "--drain"))
        assert code == 0, err
    conn = assert_all_booked_once(store, [cid])
    assert conversations.load(conn, cid)[0].counters["restarts"] == 1


def six_turns_running(pg_url: str, server: ScriptedServer) -> tuple[list[int], subprocess.Popen[str]]:
    """Six turns queued on the demo calendar, and a worker of two slots running the first two of them."""
    from scheduler_agent.calendar.fixtures import seed_demo

    conn = db.open_db(pg_url)
    seed_demo(conn)
    conn.close()
    ids = submit_all(pg_url, 6)
    running = worker(pg_url, server, "--concurrency", "2", "--lease", "30", "--drain")
    until(lambda: len(holders(pg_url)) == 2, "both slots run a turn")
    return ids, running


def drop_every_connection(admin: Any) -> int:
    """What a server restart does to the database's connections (all but `admin`'s): how many were dropped."""
    row = admin.execute(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid()"
    ).fetchone()
    return int(row[0]) if row else 0


def test_a_worker_whose_database_connections_are_dropped_connects_again_and_finishes_every_turn(
    pg_url: str, server: ScriptedServer
) -> None:
    """PostgreSQL drops every connection of the database while turns run (as a restart does): each slot and the
    renewer say so in a line, connect again, and the interrupted turns are resumed at once, each slot booked once."""
    import psycopg

    ids, running = six_turns_running(pg_url, server)
    with psycopg.connect(pg_url, autocommit=True) as admin:
        assert drop_every_connection(admin) >= 3  # two slots and the renewer, and the slots' LISTEN connections
    code, err = finish(running)
    assert code == 0, err
    assert "Traceback" not in err
    assert err.count("lost the database") >= 2 and "slot 0 connected again" in err and "slot 1 connected again" in err
    assert "6 turn(s) taken up here" in err
    conn = assert_all_booked_once(pg_url, ids)
    resumed = [cid for cid in ids if conversations.load(conn, cid)[0].counters["restarts"] > 0]
    assert resumed  # the interrupted turns went on from their stored lists, not from the start


def test_a_worker_whose_database_keeps_dropping_it_for_seconds_still_finishes_every_turn(
    pg_url: str, server: ScriptedServer
) -> None:
    """A database that drops every connection again and again for a few seconds (a failover, a restart loop):
    a slot may lose it again while it is getting back (giving up its lease, opening its LISTEN connection);
    it waits and tries again, and every turn still ends booked once."""
    import psycopg

    ids, running = six_turns_running(pg_url, server)
    dropped = 0
    with psycopg.connect(pg_url, autocommit=True) as admin:
        end = time.monotonic() + 4
        while time.monotonic() < end:
            dropped += drop_every_connection(admin)
            time.sleep(0.005)
    code, err = finish(running)
    assert code == 0, err
    assert dropped >= 6, dropped  # the slots were dropped more than once each
    assert "Traceback" not in err and "Exception in thread" not in err, err
    assert "6 turn(s) taken up here" in err
    assert_all_booked_once(pg_url, ids)
