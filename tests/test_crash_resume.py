"""Crash anywhere, resume in another process: the list stays valid and the booking happens exactly once.

Each test runs the real CLI in a subprocess against a loopback server that serves scripted
replies by request length (so the resumed process gets the same answers), kills it with
SIGKILL at a named point (SCHEDULER_AGENT_FAULT, a test-only hook), then resumes it in a new
process and checks the store, the calendar, and every request the server received.
"""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import run_cli

from scheduler_agent.agent.events import Event, RoundAnswered
from scheduler_agent.api.client import ModelAPI, make_client
from scheduler_agent.calendar.clock import Clock, parse_pin
from scheduler_agent.calendar.fixtures import seed_demo
from scheduler_agent.grammar.check import check, conversation_state
from scheduler_agent.session.session import Session, Settings
from scheduler_agent.storage import conversations, db
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

ASK = "Find a 30-minute slot with Priya next week and book it. Nothing before 10am."
BOOK = {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30}
SCRIPT = [
    Reply([tool_use("toolu_cr_1", "find_free_slots", {"person": "priya", "week": "2026-08-31"})], "tool_use"),
    Reply(
        [
            text("Booking Monday 14:00, and checking the week after for a follow-up."),
            tool_use("toolu_cr_2", "create_event", BOOK),
            tool_use("toolu_cr_3", "find_free_slots", {"person": "priya", "week": "2026-09-07"}),
        ],
        "tool_use",
    ),
    Reply([text("Booked Monday 2026-08-31 14:00-14:30 with Priya.")], delay=1.0),
]


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(SCRIPT, by_length=True) as running:
        yield running


def cli(args: list[str], server: ScriptedServer, fault: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(args, server, fault)


def bookings_on_monday_at_two(path: Path) -> int:
    conn = sqlite3.connect(path)
    return int(conn.execute("SELECT count(*) FROM events WHERE start_utc = '2026-08-31T13:00:00Z'").fetchone()[0])


def assert_recovered(path: Path, server: ScriptedServer) -> None:
    conn = db.connect(path)
    _, messages = conversations.load(conn, 1)
    assert check(messages, mode="conversation") == []
    assert conversation_state(messages) == "complete"
    assert [check(body["messages"], mode="request") for body in server.received] == [[]] * len(server.received)
    assert bookings_on_monday_at_two(path) == 1
    assert server.unused == 0
    results = [b for m in messages if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]
    assert [r["tool_use_id"] for r in results] == ["toolu_cr_1", "toolu_cr_2", "toolu_cr_3"]
    assert not any(r.get("is_error") for r in results)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict]:  # type: ignore[type-arg]
    """What an uninterrupted run sends, request by request, keyed by entry count."""
    path = tmp_path_factory.mktemp("reference") / "scheduler.db"
    conn = db.connect(path)
    seed_demo(conn)
    conn.close()
    with ScriptedServer(SCRIPT, by_length=True) as server:
        done = cli(["ask", ASK, "--yes", "--db", str(path), "--today", "2026-08-27T09:00"], server)
        assert done.returncode == 0, done.stderr
        return {len(body["messages"]): body for body in server.received}


@pytest.mark.parametrize(
    "fault",
    [
        "after_assistant_stored@2",  # the booking call is stored, nothing has run
        "between_calls",  # the booking is made, the second call of the round has not run
        "after_calendar_write",  # the booking is committed, its result is not stored
        "after_results_stored@2",  # the round is stored, the next request is not sent
        "waiting_for_model@3",  # the last request is in flight
    ],
)
def test_a_crash_at_any_point_resumes_in_a_new_process_without_booking_twice(
    fault: str,
    demo_db: Path,
    server: ScriptedServer,
    uninterrupted: dict[int, dict],  # type: ignore[type-arg]
) -> None:
    first = cli(["ask", ASK, "--yes", "--db", str(demo_db), "--today", "2026-08-27T09:00"], server, fault)
    assert first.returncode == -9, first.stderr
    conn = db.connect(demo_db)
    _, stored = conversations.load(conn, 1)
    assert check(stored, mode="conversation") == []  # what the crash left is valid, or only interrupted
    assert conversation_state(stored) in ("interrupted", "waiting")

    second = cli(["resume", "1", "--yes", "--db", str(demo_db)], server)
    assert second.returncode == 0, second.stderr
    assert "Booked Monday" in second.stdout
    assert_recovered(demo_db, server)
    for body in server.received:  # the resumed process sent exactly what the first would have
        assert body == uninterrupted[len(body["messages"])]
    record, _ = conversations.load(conn, 1)
    assert record.counters["restarts"] == 1


def test_the_articles_test_raise_after_results_on_iteration_2_then_resume(
    demo_db: Path, server: ScriptedServer
) -> None:
    class Crash(Exception):
        pass

    def crash_after_second_round(event: Event) -> None:
        if isinstance(event, RoundAnswered) and event.iteration == 2:
            raise Crash

    conn = db.connect(demo_db)
    day, at = parse_pin("2026-08-27T09:00")
    clock = Clock.pinned_at(day, at, "Europe/London")
    send = ModelAPI(make_client(api_key="sk-ant-test-dummy", base_url=server.url, max_retries=0)).send
    settings = Settings("claude-sonnet-5-5", 10)
    session = Session(conn, clock, send, settings, crash_after_second_round)
    session.store()
    with pytest.raises(Crash):
        session.ask(ASK)
    assert session.cid is not None
    cid = session.cid

    resumed = Session.stored(db.connect(demo_db), cid, send, settings, lambda event: None, None)
    outcome = resumed.resume()  # no 400: the stored order was right
    assert outcome.text == "Booked Monday 2026-08-31 14:00-14:30 with Priya."
    assert_recovered(demo_db, server)
