"""Exactly-once booking, deadlines, Ctrl-C, and a real SIGKILL right after the calendar write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time as time_module
from collections.abc import Mapping
from datetime import date, time
from pathlib import Path
from typing import Any

import pytest
from helpers import demo_clock, open_in_database
from sqlalchemy import Connection
from sqlalchemy import text as sql

from scheduler_agent.agent import faults
from scheduler_agent.agent.deadline import Deadline, DeadlineExceeded
from scheduler_agent.agent.toolbox import CallStatus, Interrupted, answer_call, run_call
from scheduler_agent.agent.types import JSON
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.events import cancel_event
from scheduler_agent.calendar.fixtures import seed_demo
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.storage.db import connect


@pytest.fixture
def demo_conn(any_conn: Connection) -> Connection:
    """These tests run on SQLite and on PostgreSQL (conftest.py `any_conn`)."""
    return any_conn


CLOCK = demo_clock()
BOOKING = {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30, "title": "Roadmap"}


def call(tool_use_id: str, name: str = "create_event", arguments: Mapping[str, Any] = BOOKING) -> JSON:
    return {"type": "tool_use", "id": tool_use_id, "name": name, "input": dict(arguments)}


def roadmaps(conn: Connection) -> list[int]:
    return [row[0] for row in conn.execute(sql("SELECT id FROM events WHERE title = 'Roadmap'"))]


def bookings(conn: Connection) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in conn.execute(sql("SELECT tool_use_id, event_id, result FROM bookings"))]


# --- the same call twice books once --------------------------------------------------------


def test_the_same_tool_use_id_books_once_and_answers_the_same(tools: CalendarTools, demo_conn: Connection) -> None:
    first = answer_call(tools, call("toolu_a"))
    again = answer_call(tools, call("toolu_a"))
    assert again == first
    assert "is_error" not in first
    [event_id] = roadmaps(demo_conn)
    assert first["content"].endswith(f"Event id: {event_id}.")
    assert bookings(demo_conn) == [("toolu_a", event_id, first["content"])]


def test_a_recorded_booking_is_returned_without_any_check(demo_conn: Connection) -> None:
    text = CalendarTools(demo_conn, CLOCK).create_event(
        "priya", "2026-08-31T14:00", 30, "Roadmap", tool_use_id="toolu_a"
    )
    # A resumed round, days later: the start is now in the past and the slot is taken (by this very
    # booking). The recorded answer comes back unchanged and nothing is booked.
    later = CalendarTools(demo_conn, Clock.pinned_at(date(2026, 9, 7), time(9, 0), "Europe/London"))
    assert later.create_event("priya", "2026-08-31T14:00", 30, "Roadmap", tool_use_id="toolu_a") == text
    assert len(roadmaps(demo_conn)) == 1


def test_another_call_for_the_same_slot_is_a_conflict(tools: CalendarTools, demo_conn: Connection) -> None:
    answer_call(tools, call("toolu_a"))
    other = answer_call(tools, call("toolu_b"))
    assert other["is_error"] is True
    assert "overlaps 'Roadmap'" in other["content"]
    assert "Nothing was booked" in other["content"]
    assert len(roadmaps(demo_conn)) == 1
    assert [row[0] for row in bookings(demo_conn)] == ["toolu_a"]  # a failed call records nothing


def test_without_a_tool_use_id_no_record_is_kept(tools: CalendarTools, demo_conn: Connection) -> None:
    tools.create_event("priya", "2026-08-31T14:00", 30, "Roadmap")
    assert len(roadmaps(demo_conn)) == 1
    assert bookings(demo_conn) == []


def test_a_cancelled_booking_is_still_not_made_again(tools: CalendarTools, demo_conn: Connection) -> None:
    first = answer_call(tools, call("toolu_a"))
    [event_id] = roadmaps(demo_conn)
    cancelled = cancel_event(demo_conn, event_id)
    assert cancelled.title == "Roadmap"
    assert (
        demo_conn.execute(
            sql("SELECT count(*) FROM event_attendees WHERE event_id = :event_id"), {"event_id": event_id}
        ).fetchone()[0]
        == 0
    )
    assert bookings(demo_conn) == [("toolu_a", None, first["content"])]  # ON DELETE SET NULL
    assert answer_call(tools, call("toolu_a")) == first
    assert roadmaps(demo_conn) == []
    effect = tools.side_effect_of("create_event", "toolu_a")
    assert effect is not None
    assert effect.startswith("The booking was made, and has since been cancelled: Booked")


# --- what a call changed ------------------------------------------------------------------


def test_side_effect_of_reads_the_record(tools: CalendarTools) -> None:
    assert tools.side_effect_of("create_event", "toolu_a") == "Nothing was booked."
    booked = answer_call(tools, call("toolu_a"))["content"]
    assert tools.side_effect_of("create_event", "toolu_a") == f"The booking was made: {booked} Do not book it again."
    assert tools.side_effect_of("find_free_slots", "toolu_a") is None


# --- deadlines ----------------------------------------------------------------------------


def test_deadline() -> None:
    assert Deadline.after(0).expired()
    assert Deadline.after(0).remaining() == 0.0
    later = Deadline.after(60)
    assert not later.expired()
    assert 0 < later.remaining() <= 60
    with pytest.raises(DeadlineExceeded, match="create_event passed its 5-second deadline"):
        Deadline(ends_at=0.0, seconds=5).check("create_event")


def test_a_passed_deadline_commits_nothing_and_says_so(tools: CalendarTools, demo_conn: Connection) -> None:
    before = demo_conn.execute(sql("SELECT count(*) FROM events")).fetchone()[0]
    outcome = run_call(tools, call("toolu_a"), Deadline.after(0))
    assert outcome.status is CallStatus.TIMED_OUT
    assert outcome.block == {
        "type": "tool_result",
        "tool_use_id": "toolu_a",
        "is_error": True,
        "content": (
            "create_event did not finish: it timed out after 0 seconds and was stopped. Nothing was booked. "
            "If that left the task undone, you may call it again once; if it times out again, tell the user "
            "the calendar is not responding."
        ),
    }
    assert demo_conn.execute(sql("SELECT count(*) FROM events")).fetchone()[0] == before
    assert bookings(demo_conn) == []
    assert not open_in_database(demo_conn)
    # The same call, run again in time, books.
    assert "is_error" not in answer_call(tools, call("toolu_a"))
    assert len(roadmaps(demo_conn)) == 1


class LateTools(CalendarTools):
    """Commits, then reports its deadline passed: the model must hear that the booking was made."""

    def run(self, name: str, arguments: Mapping[str, Any], tool_use_id: str, deadline: Deadline) -> str:
        super().run(name, arguments, tool_use_id, deadline)
        raise DeadlineExceeded(Deadline(0.0, 30), name)


def test_a_timeout_after_the_commit_says_the_booking_was_made(demo_conn: Connection) -> None:
    outcome = run_call(LateTools(demo_conn, CLOCK), call("toolu_a"))
    [event_id] = roadmaps(demo_conn)
    assert outcome.status is CallStatus.TIMED_OUT
    assert outcome.block["is_error"] is True
    text = outcome.block["content"]
    assert text.startswith("create_event did not finish: it timed out after 30 seconds and was stopped. ")
    assert "The booking was made: Booked 'Roadmap' on Mon 2026-08-31 14:00-14:30" in text
    assert f"Event id: {event_id}. Do not book it again." in text


def test_a_timed_out_read_only_tool_says_nothing_changed(demo_conn: Connection) -> None:
    class SlowTools(CalendarTools):
        def run(self, name: str, arguments: Mapping[str, Any], tool_use_id: str, deadline: Deadline) -> str:
            raise DeadlineExceeded(Deadline(0.0, 30), name)

    block = answer_call(
        SlowTools(demo_conn, CLOCK), call("toolu_f", "find_free_slots", {"person": "priya", "week": "x"})
    )
    assert "find_free_slots did not finish: it timed out after 30 seconds" in block["content"]
    assert "It only reads, so nothing changed." in block["content"]


# --- Ctrl-C inside a tool -----------------------------------------------------------------


class CtrlC(CalendarTools):
    """Ctrl-C while the tool runs: before anything is written, or right after the commit."""

    def __init__(self, conn: Connection, *, after_commit: bool) -> None:
        super().__init__(conn, CLOCK)
        self.after_commit = after_commit

    def run(self, name: str, arguments: Mapping[str, Any], tool_use_id: str, deadline: Deadline) -> str:
        if self.after_commit:
            super().run(name, arguments, tool_use_id, deadline)
        raise KeyboardInterrupt


def test_ctrl_c_before_the_write_answers_the_call_and_stops(demo_conn: Connection) -> None:
    with pytest.raises(Interrupted) as raised:
        answer_call(CtrlC(demo_conn, after_commit=False), call("toolu_a"))
    assert isinstance(raised.value, KeyboardInterrupt)  # whoever does not know it still stops
    assert raised.value.outcome.status is CallStatus.INTERRUPTED
    assert raised.value.block == {
        "type": "tool_result",
        "tool_use_id": "toolu_a",
        "is_error": True,
        "content": (
            "create_event did not finish: it was interrupted (the user pressed Ctrl-C). Nothing was booked. "
            "Ask the user before calling it again."
        ),
    }
    assert roadmaps(demo_conn) == []


def test_ctrl_c_after_the_write_says_the_booking_was_made(demo_conn: Connection) -> None:
    with pytest.raises(Interrupted) as raised:
        answer_call(CtrlC(demo_conn, after_commit=True), call("toolu_a"))
    [event_id] = roadmaps(demo_conn)
    text = raised.value.block["content"]
    assert text.startswith("create_event did not finish: it was interrupted (the user pressed Ctrl-C). ")
    assert "The booking was made: Booked 'Roadmap'" in text
    assert f"Event id: {event_id}. Do not book it again. Ask the user before calling it again." in text


# --- a real crash right after the calendar write -------------------------------------------

BOOK = """
import sys
from datetime import date, time
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.storage.db import connect
tools = CalendarTools(connect(__import__("pathlib").Path(sys.argv[1])),
                      Clock.pinned_at(date(2026, 8, 27), time(9, 0), "Europe/London"))
print(tools.create_event("priya", "2026-08-31T14:00", 30, "Roadmap", tool_use_id="toolu_crash"))
"""


def book_in_a_process(db: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BOOK, str(db)], capture_output=True, text=True, env={**os.environ, **env}, timeout=60
    )


def test_killed_after_the_calendar_write_then_resumed_books_once(tmp_path: Path) -> None:
    db = tmp_path / "calendar.db"
    seed_demo(connect(db))

    crashed = book_in_a_process(db, SCHEDULER_AGENT_FAULT="after_calendar_write")
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    assert crashed.stdout == ""  # it died before answering

    conn = connect(db)
    [event_id] = roadmaps(conn)  # the write had committed
    [(_, recorded_id, result)] = bookings(conn)
    assert recorded_id == event_id
    assert CalendarTools(conn, CLOCK).side_effect_of("create_event", "toolu_crash") == (
        f"The booking was made: {result} Do not book it again."
    )

    resumed = book_in_a_process(db)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == result + "\n"
    assert result.startswith("Booked 'Roadmap' on Mon 2026-08-31 14:00-14:30 (Europe/London)")
    assert roadmaps(conn) == [event_id]
    assert len(bookings(conn)) == 1


# --- the fault hooks themselves -----------------------------------------------------------

TWICE = (
    "from scheduler_agent.agent import faults\nfor n in (1, 2, 3):\n    faults.reach('p')\n    print(n, flush=True)\n"
)


@pytest.mark.parametrize(("spec", "printed"), [("p", ""), ("p@2", "1\n"), ("other,p@3", "1\n2\n")])
def test_a_fault_fires_on_the_nth_pass(spec: str, printed: str) -> None:
    env = {**os.environ, "SCHEDULER_AGENT_FAULT": spec}
    done = subprocess.run([sys.executable, "-c", TWICE], capture_output=True, text=True, env=env, timeout=60)
    assert (done.returncode, done.stdout) == (-signal.SIGKILL, printed)


def test_no_fault_without_the_variable() -> None:
    done = subprocess.run([sys.executable, "-c", TWICE], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "1\n2\n3\n")


def test_reach_later_kills_while_the_caller_is_blocked() -> None:
    code = "import time\nfrom scheduler_agent.agent import faults\nfaults.reach_later('w')\ntime.sleep(30)\nprint(0)"
    env = {**os.environ, "SCHEDULER_AGENT_FAULT": "w", "SCHEDULER_AGENT_FAULT_DELAY": "0.1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert (done.returncode, done.stdout) == (-signal.SIGKILL, "")


def test_a_malformed_fault_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEDULER_AGENT_FAULT", "p@x")
    faults.rearm()  # the variable is read once per process: this one changed it
    try:
        with pytest.raises(ValueError, match="'p@x' is malformed: give POINT or POINT@N"):
            faults.reach("p")
    finally:
        monkeypatch.delenv("SCHEDULER_AGENT_FAULT")
        faults.rearm()
    faults.reach("p")  # unset and read again: nothing


def test_the_fault_variable_is_read_once_per_process() -> None:
    code = (
        "import os\nfrom scheduler_agent.agent import faults\nfaults.reach('p')\n"
        "os.environ['SCHEDULER_AGENT_FAULT'] = 'p@2,p@3'\nfaults.reach('p')\nprint('kept', flush=True)\n"
        "faults.rearm()\nfaults.reach('p')\nprint('not reached')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "SCHEDULER_AGENT_FAULT"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert (done.returncode, done.stdout) == (-signal.SIGKILL, "kept\n")


def test_pause_sleeps_only_at_its_point(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time_module, "sleep", slept.append)
    faults.pause("between_check_and_insert")  # no variables: nothing
    monkeypatch.setenv("SCHEDULER_AGENT_TEST_PAUSE_AT", "between_check_and_insert")
    monkeypatch.setenv("SCHEDULER_AGENT_TEST_PAUSE", "0.25")
    faults.pause("elsewhere")
    faults.pause("between_check_and_insert")
    assert slept == [0.25]
    monkeypatch.setenv("SCHEDULER_AGENT_TEST_PAUSE", "soon")
    with pytest.raises(ValueError, match="'soon' is not a number of seconds"):
        faults.pause("between_check_and_insert")
