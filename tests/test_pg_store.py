"""The store on PostgreSQL beside SQLite: no double booking under load, the exclusion constraint, a turn stored
and resumed, migrations, one statement on both databases, and a password in a URL never printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import demo_clock, scripted_send
from sqlalchemy import Connection
from sqlalchemy import text as sql

from scheduler_agent.agent import faults
from scheduler_agent.agent.errors import InputError
from scheduler_agent.agent.events import Event, RoundAnswered
from scheduler_agent.agent.toolbox import answer_call
from scheduler_agent.calendar import backend
from scheduler_agent.calendar.bookings import book_time
from scheduler_agent.calendar.events import add_event
from scheduler_agent.calendar.fixtures import seed_demo
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.session.session import Session, Settings
from scheduler_agent.storage import conversations, db, listing
from scheduler_agent.storage.dialect import BookedTimeTaken, mask, per_dialect
from scheduler_agent.storage.migrations import HEAD
from scheduler_agent.testing.scripted_server import Reply, text, tool_use

PROCESSES, THREADS = 5, 10


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


SLOT = {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30, "title": "Roadmap"}
CONFLICT = "is not free: it overlaps 'Roadmap'"

# One process of the concurrency test: THREADS threads, each on its own connection, book SLOT at once.
BOOK_IN_THREADS = """
import json, sys, threading, time
from datetime import date, time as clock_time
from pathlib import Path
from scheduler_agent.agent.toolbox import answer_call
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.storage.db import open_db

location, proc, threads, barrier, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]), sys.argv[5]
where = location if "://" in location else Path(location)
slot = json.loads(sys.argv[6])
clock = Clock.pinned_at(date(2026, 8, 27), clock_time(9, 0), "Europe/London")
opened, go = threading.Barrier(threads + 1), threading.Event()
results = [None] * threads

def book(i):
    conn = open_db(where)  # a connection per thread, opened in it (sqlite3 wants that)
    opened.wait()
    go.wait()
    call = {"type": "tool_use", "id": f"toolu_{proc}_{i}", "name": "create_event", "input": slot}
    try:
        results[i] = answer_call(CalendarTools(conn, clock), call)
    except Exception as exc:  # a database error would be a failure of the test, reported as such
        results[i] = {"crashed": f"{type(exc).__name__}: {exc}"}

workers = [threading.Thread(target=book, args=(i,)) for i in range(threads)]
for w in workers: w.start()
opened.wait()
(barrier / str(proc)).touch()
give_up = time.time() + 60
while len(list(barrier.iterdir())) < int(sys.argv[7]) and time.time() < give_up:
    time.sleep(0.005)
go.set()
for w in workers: w.join()
Path(out).write_text(json.dumps(results))
"""


def test_fifty_bookings_of_one_slot_at_once_exactly_one_is_made(any_db: Path | str, tmp_path: Path) -> None:
    seed = db.open_db(any_db)
    seed_demo(seed)
    seed.close()
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                BOOK_IN_THREADS,
                str(any_db),
                str(n),
                str(THREADS),
                str(barrier),
                str(tmp_path / f"out{n}.json"),
                json.dumps(SLOT),
                str(PROCESSES),
            ],
            env={**os.environ, "PYTHONPATH": ""},
        )
        for n in range(PROCESSES)
    ]
    for process in processes:
        assert process.wait(timeout=110) == 0
    results = [r for n in range(PROCESSES) for r in json.loads((tmp_path / f"out{n}.json").read_text())]
    assert len(results) == PROCESSES * THREADS
    assert not [r for r in results if "crashed" in r]
    booked = [r for r in results if not r.get("is_error")]
    refused = [r for r in results if r.get("is_error")]
    assert len(booked) == 1
    assert booked[0]["content"].startswith("Booked 'Roadmap' on Mon 2026-08-31 14:00-14:30")
    assert len(refused) == PROCESSES * THREADS - 1
    assert all(CONFLICT in r["content"] and "Nothing was booked" in r["content"] for r in refused)
    conn = db.open_db(any_db)
    assert conn.execute(sql("SELECT count(*) FROM events WHERE title = 'Roadmap'")).fetchone()[0] == 1
    assert conn.execute(sql("SELECT count(*) FROM bookings")).fetchone()[0] == 1
    assert sorted(r[0] for r in conn.execute(sql("SELECT person_key FROM booked_time"))) == ["priya", "you"]
    conn.close()


@pytest.fixture
def pg_conn(pg_url: str) -> Iterator[Connection]:
    conn = db.open_db(pg_url)
    seed_demo(conn)
    yield conn
    conn.close()


def test_the_exclusion_constraint_refuses_an_overlap_no_check_saw(pg_conn: Connection, pg_url: str) -> None:
    first = add_event(pg_conn, "One", utc("2026-09-01T08:00"), utc("2026-09-01T09:00"), ["you", "priya"])
    second = add_event(pg_conn, "Two", utc("2026-09-01T08:30"), utc("2026-09-01T09:30"), ["you"])
    with db.transaction(pg_conn):
        book_time(pg_conn, first.id)
    other = db.open_db(pg_url)
    with pytest.raises(BookedTimeTaken) as raised, db.transaction(other):
        book_time(other, second.id)
    assert "booked_time_no_overlap" in str(raised.value)
    assert sorted(tuple(r) for r in pg_conn.execute(sql("SELECT event_id, person_key FROM booked_time"))) == [
        (first.id, "priya"),
        (first.id, "you"),
    ]
    with db.transaction(pg_conn):  # adjacent time is not an overlap: ranges are [start, end)
        adjacent = add_event(pg_conn, "Three", utc("2026-09-01T07:00"), utc("2026-09-01T08:00"), ["you"])
        book_time(pg_conn, adjacent.id)
    pg_conn.execute(sql("DELETE FROM events WHERE id = :id"), {"id": first.id})  # a cancelled booking frees its time
    with db.transaction(other):
        book_time(other, second.id)
    other.close()


def test_a_race_the_checks_lose_still_gets_the_conflict_text(
    pg_conn: Connection, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the advisory locks both calls pass their checks; the constraint refuses the second, whose checks
    then run again and answer as they do today."""
    monkeypatch.setattr(backend, "lock_people", lambda conn, keys: None)
    both_checked = threading.Barrier(2, timeout=20)
    order: list[str] = []

    def pause(point: str) -> None:
        if point == "between_check_and_insert" and len(order) < 2:
            name = threading.current_thread().name
            order.append(name)
            both_checked.wait()
            if name == "late":
                time.sleep(0.5)  # the other one writes first; this one's write then waits for its commit

    monkeypatch.setattr(faults, "pause", pause)
    results: dict[str, Any] = {}
    conns = {name: db.open_db(pg_url) for name in ("early", "late")}

    def book(name: str) -> None:
        call = {"type": "tool_use", "id": f"toolu_{name}", "name": "create_event", "input": SLOT}
        results[name] = answer_call(CalendarTools(conns[name], demo_clock()), call)

    threads = [threading.Thread(target=book, args=(name,), name=name) for name in conns]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(order) == ["early", "late"]  # both passed the free check before either wrote
    assert results["early"].get("is_error") is None
    assert results["late"].get("is_error") is True
    assert CONFLICT in results["late"]["content"]
    assert "Nothing was booked" in results["late"]["content"]
    assert pg_conn.execute(sql("SELECT count(*) FROM events WHERE title = 'Roadmap'")).fetchone()[0] == 1
    assert [r[0] for r in pg_conn.execute(sql("SELECT tool_use_id FROM bookings"))] == ["toolu_early"]
    for conn in conns.values():
        conn.close()


def test_a_turn_is_stored_as_it_goes_and_a_resume_books_once(any_db: Path | str) -> None:
    conn = db.open_db(any_db)
    seed_demo(conn)
    book = tool_use("toolu_b1", "create_event", SLOT)
    replies = [Reply([book], "tool_use"), Reply([text("Booked Monday 14:00 with Priya.")])]

    class Crash(Exception):
        pass

    def crash_after_the_round(event: Event) -> None:
        if isinstance(event, RoundAnswered):
            raise Crash

    settings = Settings("claude-sonnet-5-5", 10)
    with scripted_send(replies) as (send, server):
        session = Session(conn, demo_clock(), send, settings, crash_after_the_round)
        session.store()
        with pytest.raises(Crash):
            session.ask("Book 30 minutes with Priya on Monday at 2pm")
        cid = session.cid
        assert cid is not None
        stored = conversations.load(db.open_db(any_db), cid)[1]
        assert [m["role"] for m in stored] == ["user", "assistant", "user"]  # the round's results are in
        assert stored[1]["content"][0]["id"] == "toolu_b1"
        resumed = Session.stored(db.open_db(any_db), cid, send, settings, lambda event: None, None)
        assert resumed.resume().text == "Booked Monday 14:00 with Priya."
        assert len(server.received) == 2
    check = db.open_db(any_db)
    assert check.execute(sql("SELECT count(*) FROM events WHERE title = 'Roadmap'")).fetchone()[0] == 1
    assert [tuple(r) for r in check.execute(sql("SELECT tool_use_id, kind FROM bookings"))] == [
        ("toolu_b1", "create_event")
    ]
    final = conversations.load(check, cid)[1]
    assert [m["role"] for m in final] == ["user", "assistant", "user", "assistant"]
    listed = listing.summaries(check, query="PRIYA")  # LIKE ignores case on both
    assert [c.id for c in listed] == [cid]


def test_migrations_run_once_even_when_two_connect_at_once(pg_url: str) -> None:
    conns: list[Connection] = []
    threads = [threading.Thread(target=lambda: conns.append(db.open_db(pg_url))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(conns) == 3
    assert [db.revision(conn) for conn in conns] == [HEAD] * 3
    db.migrate(pg_url)  # nothing left to apply
    assert [tuple(row) for row in conns[1].execute(sql("SELECT version_num FROM alembic_version"))] == [(HEAD,)]
    for conn in conns:
        conn.close()


def test_a_password_in_the_url_is_never_printed() -> None:
    assert mask("postgresql://sam:s3cret@db.example:5432/cal") == "postgresql://sam:***@db.example:5432/cal"
    assert mask("postgresql://db.example/cal?password=s3cret&sslmode=require") == (
        "postgresql://db.example/cal?password=***&sslmode=require"
    )
    assert mask("host=db.example password='s 3cret' dbname=cal") == "host=db.example password=*** dbname=cal"
    with pytest.raises(InputError) as raised:
        db.open_db("postgresql://sam:s3cret@127.0.0.1:1/cal")  # nothing listens on port 1
    assert "s3cret" not in str(raised.value)
    assert "postgresql://sam:***@127.0.0.1:1/cal" in str(raised.value)
    assert "PGPASSWORD" in str(raised.value)


def test_one_statement_gives_the_same_on_both_databases(any_db: Path | str) -> None:
    """No SQL is rewritten: the store's statements (RETURNING, ON CONFLICT, ids, an aggregate of strings,
    a case-insensitive search) are written once and give the same answers on SQLite and PostgreSQL."""
    conn = db.open_db(any_db)
    insert = sql("INSERT INTO preferences (id, text) VALUES (:id, :text) RETURNING id")
    ids = [conn.execute(insert, {"id": None, "text": text}).scalar_one() for text in ("x", "y")]
    explicit = conn.execute(insert, {"id": 10, "text": "z"}).scalar_one()
    after = conn.execute(insert, {"id": None, "text": "w"}).scalar_one()
    assert (ids, explicit, after) == ([1, 2], 10, 11)  # NULL is the next id, past an explicit one, on both
    ignored = sql("INSERT INTO preferences (id, text) VALUES (10, 'again') ON CONFLICT DO NOTHING")
    assert conn.execute(ignored).rowcount == 0
    joined = per_dialect("SELECT {aggregate_strings}(text, ' ') FROM (SELECT text FROM preferences ORDER BY id) p")
    assert sorted(conn.execute(joined[conn.dialect.name]).scalar_one().split()) == ["w", "x", "y", "z"]
    seed_demo(conn)
    context = conversations.Context("claude-sonnet-5-5", 1024, "s", [])
    cid = conversations.create(conn, context, started_on="2026-08-27", clock_pin=None)
    conversations.Journal(conn, cid, []).sync([{"role": "user", "content": "Book the ROADMAP review"}])
    assert [s.id for s in listing.summaries(conn, query="roadmap")] == [cid]  # case ignored on both
    conn.close()


def test_ci_installs_postgresql_when_it_is_missing() -> None:
    """.ci/run (the README's command, tests/test_view.py checks) installs the server the fixture runs."""
    command = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text().strip().splitlines()[-1]
    check, install = command.split(" || ", 1)
    assert "ls /usr/lib/postgresql/*/bin/initdb" in check
    assert install.startswith("(apt-get update -qq && apt-get install -y -qq ")
    assert " postgresql)" in install


def test_what_the_workers_need_claims_with_skip_locked_and_a_pool(pg_conn: Connection, pg_url: str) -> None:
    """A row claimed FOR UPDATE SKIP LOCKED in one transaction is passed over by another; the store's
    connections to one server come from one pool, and go back to it."""
    context = conversations.Context("claude-sonnet-5-5", 1024, "s", [])
    ids = [conversations.create(pg_conn, context, started_on="2026-08-27", clock_pin=None) for _ in range(2)]
    claim = sql("SELECT id FROM conversations ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED")
    one, two = db.open_db(pg_url), db.open_db(pg_url)
    assert one.engine is two.engine is pg_conn.engine  # one engine, one pool, per server and process
    with db.transaction(one):
        assert one.execute(claim).scalar_one() == ids[0]
        with db.transaction(two):
            assert two.execute(claim).scalar_one() == ids[1]  # the first is locked: skipped
    one.close()
    two.close()
