"""Crash anywhere during a move or a cancellation, resume in another process: the change happens exactly once.

Like test_crash_resume.py for bookings: the real CLI in a subprocess against a loopback server serving
scripted replies by request length, SIGKILL at each named fault point, `resume` in a new process, then
the store, the calendar and every request are checked. The round holds the change and a second call,
so the crash can fall between them.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from test_crash_resume import cli

from scheduler_agent.grammar.check import check, conversation_state
from scheduler_agent.storage import conversations, db
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

FIND = {"person": "priya", "week": "2026-09-07"}
CHANGES = {
    # Budget review (#12, Mon 10:30-12:00) moved to Monday 14:00 for an hour.
    "move": (
        tool_use("toolu_cx_2", "move_event", {"event_id": 12, "start": "2026-08-31T14:00", "minutes": 60}),
        ["--yes"],
        "Moved 'Budget review'",
    ),
    # Lunch with investors (#22, Wed 12:00-13:00) cancelled.
    "cancel": (tool_use("toolu_cx_2", "cancel_event", {"event_id": 22}), ["--yes", "--yes-cancel"], "Cancelled"),
}
FAULTS = [
    "after_assistant_stored@2",  # the round is stored, nothing has run
    "between_calls",  # the change is made, the second call of the round has not run
    "after_calendar_write",  # the change is committed, its result is not stored
    "after_results_stored@2",  # the round's results are stored, the next request is not sent
    "waiting_for_model@3",  # the last request is in flight
]


def script(change: dict) -> list[Reply]:  # type: ignore[type-arg]
    return [
        Reply([tool_use("toolu_cx_1", "list_events", {"start": "2026-08-31", "end": "2026-09-04"})], "tool_use"),
        Reply(
            [text("Doing it, and looking at the week after."), change, tool_use("toolu_cx_3", "find_free_slots", FIND)],
            "tool_use",
        ),
        Reply([text("Done.")], delay=1.0),
    ]


def the_change(path: Path, kind: str) -> tuple[object, ...]:
    """What the calendar holds where the change lands, and the change's records."""
    conn = sqlite3.connect(path)
    if kind == "move":
        where = conn.execute("SELECT start_utc, end_utc FROM events WHERE id = 12").fetchall()
    else:
        where = conn.execute("SELECT id FROM events WHERE id = 22").fetchall()
    kinds = conn.execute("SELECT tool_use_id, kind FROM bookings ORDER BY rowid").fetchall()
    return (where, kinds, conn.execute("SELECT count(*) FROM events").fetchone()[0])


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict, tuple[object, ...]]]:  # type: ignore[type-arg]
    """For each change: what an uninterrupted run sends (by entry count) and leaves in the calendar."""
    from scheduler_agent.calendar.fixtures import seed_demo

    found = {}
    for kind, (change, flags, _) in CHANGES.items():
        path = tmp_path_factory.mktemp(kind) / "scheduler.db"
        seed_demo(db.connect(path))
        with ScriptedServer(script(change), by_length=True) as server:
            done = cli(["ask", "do it", *flags, "--db", str(path), "--today", "2026-08-27T09:00"], server)
            assert done.returncode == 0, done.stderr
            found[kind] = ({len(body["messages"]): body for body in server.received}, the_change(path, kind))
    return found


def test_the_uninterrupted_runs_change_the_calendar_once(uninterrupted: dict) -> None:  # type: ignore[type-arg]
    _, moved = uninterrupted["move"]
    assert moved == ([("2026-08-31T13:00:00Z", "2026-08-31T14:00:00Z")], [("toolu_cx_2", "move_event")], 28)
    _, cancelled = uninterrupted["cancel"]
    assert cancelled == ([], [("toolu_cx_2", "cancel_event")], 27)


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("kind", list(CHANGES))
def test_a_crash_at_any_point_of_a_change_resumes_and_changes_once(
    kind: str,
    fault: str,
    demo_db: Path,
    uninterrupted: dict,  # type: ignore[type-arg]
) -> None:
    change, flags, said = CHANGES[kind]
    requests, expected = uninterrupted[kind]
    with ScriptedServer(script(change), by_length=True) as server:
        first = cli(["ask", "do it", *flags, "--db", str(demo_db), "--today", "2026-08-27T09:00"], server, fault)
        assert first.returncode == -9, first.stderr
        conn = db.connect(demo_db)
        _, stored = conversations.load(conn, 1)
        assert check(stored, mode="conversation") == []
        assert conversation_state(stored) in ("interrupted", "waiting")

        second = cli(["resume", "1", *flags, "--db", str(demo_db)], server)
        assert second.returncode == 0, second.stderr
        assert server.unused == 0
        for body in server.received:  # the resumed process sent exactly what the first would have
            assert body == requests[len(body["messages"])]
    assert the_change(demo_db, kind) == expected
    _, messages = conversations.load(conn, 1)
    assert conversation_state(messages) == "complete"
    answers = [b for m in messages if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]
    assert [a["tool_use_id"] for a in answers] == ["toolu_cx_1", "toolu_cx_2", "toolu_cx_3"]
    assert not any(a.get("is_error") for a in answers)
    assert answers[1]["content"].startswith(said)
