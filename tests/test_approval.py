"""Approval before a booking: yes, no, no with a reason, end of input, --yes; asked once per call."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.calendar.clock import Clock, parse_pin
from scheduler_agent.calendar.fixtures import seed_demo
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.cli import app
from scheduler_agent.playback.cassette_file import read_setup
from scheduler_agent.session.approval import ApprovingToolbox, Decision
from scheduler_agent.storage import db
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

runner = CliRunner()
QUESTION = (
    "? Book 'Meeting with Priya Raman' on Mon 2026-08-31 14:00-14:30 (Europe/London) for you and Priya Raman (priya)"
)
Serve = Callable[..., ScriptedServer]
TODAY = ["--today", "2026-08-27T09:00"]
BOOK = tool_use("toolu_ap_1", "create_event", {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30})
MONDAY_TWO = "2026-08-31T13:00:00Z"


def booked(path: Path) -> int:
    return int(
        sqlite3.connect(path).execute("SELECT count(*) FROM events WHERE start_utc = ?", (MONDAY_TWO,)).fetchone()[0]
    )


def answer_to_model(server: ScriptedServer) -> dict:  # type: ignore[type-arg]
    return server.received[1]["messages"][2]["content"][0]


def test_yes_books_after_showing_what_will_be_booked(demo_db: Path, api: Serve) -> None:
    server = api([Reply([BOOK], "tool_use"), Reply([text("Booked.")])])
    result = runner.invoke(app, ["ask", "book", "--db", str(demo_db), *TODAY], input="y\n")
    assert result.exit_code == 0, result.stderr
    assert QUESTION in result.stderr
    assert "is_error" not in answer_to_model(server)
    assert booked(demo_db) == 1


def test_no_with_a_reason_goes_back_to_the_model(demo_db: Path, api: Serve) -> None:
    server = api([Reply([BOOK], "tool_use"), Reply([text("How about Wednesday?")])])
    result = runner.invoke(app, ["ask", "book", "--db", str(demo_db), *TODAY], input="no, I'm out on Mondays\n")
    assert result.exit_code == 0
    assert result.stdout.strip() == "How about Wednesday?"
    answer = answer_to_model(server)
    assert answer["is_error"] is True
    assert 'Their reason: "I\'m out on Mondays"' in answer["content"]
    assert "Nothing was booked" in answer["content"]
    assert booked(demo_db) == 0


def test_end_of_input_refuses_and_says_how_to_allow(demo_db: Path, api: Serve) -> None:
    server = api([Reply([BOOK], "tool_use"), Reply([text("I could not book it.")])])
    result = runner.invoke(app, ["ask", "book", "--db", str(demo_db), *TODAY], input="")
    assert result.exit_code == 0
    answer = answer_to_model(server)
    assert answer["is_error"]
    assert "standard input ended" in answer["content"]
    assert "--yes" in answer["content"]
    assert booked(demo_db) == 0


def test_a_booking_that_fails_its_checks_is_not_asked_about(demo_db: Path, api: Serve) -> None:
    tuesday = tool_use("toolu_ap_9", "create_event", {"with": "priya", "start": "2026-09-01T14:00", "minutes": 30})
    server = api([Reply([tuesday], "tool_use"), Reply([text("Tuesday is taken.")])])
    result = runner.invoke(app, ["ask", "book", "--db", str(demo_db), *TODAY], input="y\n")
    assert result.exit_code == 0
    assert "Approve?" not in result.stderr
    answer = answer_to_model(server)
    assert answer["is_error"]
    assert "is not free: it overlaps 'Customer visit: Northwind'" in answer["content"]


def test_yes_flag_approves_without_asking(demo_db: Path, api: Serve) -> None:
    api([Reply([BOOK], "tool_use"), Reply([text("Booked.")])])
    result = runner.invoke(app, ["ask", "book", "--yes", "--db", str(demo_db), *TODAY], input="")
    assert result.exit_code == 0
    assert "Approve?" not in result.stderr
    assert booked(demo_db) == 1


def test_an_unclear_answer_is_asked_again(demo_db: Path, api: Serve) -> None:
    api([Reply([BOOK], "tool_use"), Reply([text("Booked.")])])
    result = runner.invoke(app, ["ask", "book", "--db", str(demo_db), *TODAY], input="maybe\nyes\n")
    assert "Please answer y, n, or no followed by a reason." in result.stderr
    assert booked(demo_db) == 1


def test_the_answer_is_kept_by_call_id_and_never_asked_twice(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "c.db")
    seed_demo(conn)
    day, at = parse_pin("2026-08-27T09:00")
    asked: list[str] = []

    def decide(call: dict, summary: str) -> Decision:  # type: ignore[type-arg]
        asked.append(call["id"])
        return Decision(True)

    tools = ApprovingToolbox(
        CalendarTools(conn, Clock.pinned_at(day, at, "Europe/London")), conn, decide, lambda e: None
    )
    first = tools.run("create_event", BOOK["input"], "toolu_ap_1", Deadline.after(30))
    again = tools.run("create_event", BOOK["input"], "toolu_ap_1", Deadline.after(30))  # a resumed round
    assert first == again
    assert asked == ["toolu_ap_1"]
    assert booked(tmp_path / "c.db") == 1
    assert tools.run("find_free_slots", {"person": "priya", "week": "2026-08-31"}, "toolu_ap_2", Deadline.after(30))
    assert asked == ["toolu_ap_1"]  # reading is never asked about


def test_a_crash_after_approval_resumes_without_asking_again(demo_db: Path) -> None:
    with ScriptedServer([Reply([BOOK], "tool_use"), Reply([text("Booked.")])], by_length=True) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))}
        env |= {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-test-dummy"}
        command = [sys.executable, "-c", "from scheduler_agent.cli import main; main()"]
        first = subprocess.run(
            [*command, "ask", "book", "--db", str(demo_db), *TODAY],
            input="y\n",
            capture_output=True,
            text=True,
            timeout=60,
            env=env | {"SCHEDULER_AGENT_FAULT": "after_calendar_write"},
        )
        assert first.returncode == -9
        assert "Approve?" in first.stderr
        second = subprocess.run(
            [*command, "resume", "1", "--db", str(demo_db)],
            input="",
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
    assert second.returncode == 0, second.stderr
    assert "Approve?" not in second.stderr
    assert booked(demo_db) == 1
    assert "is_error" not in server.received[-1]["messages"][2]["content"][0]


def test_a_recorded_refusal_replays_without_asking(demo_db: Path, api: Serve, tmp_path: Path) -> None:
    api([Reply([BOOK], "tool_use"), Reply([text("Wednesday then?")])])
    path = tmp_path / "refused.yaml"
    live = runner.invoke(
        app, ["chat", "--record", str(path), "--db", str(demo_db), *TODAY], input="book it\nn, not Monday\n"
    )
    assert live.exit_code == 0, live.stderr
    assert read_setup(path)["approvals"] == {
        "toolu_ap_1": {"approved": False, "reason": "not Monday", "end_of_input": False}
    }
    replayed = runner.invoke(app, ["replay", str(path)], input="")
    assert replayed.exit_code == 0
    assert replayed.stdout.strip() == "Wednesday then?"
    assert "declined: not Monday (the recorded answer)" in replayed.stderr


@pytest.mark.parametrize("answer", ["y", "yes", "Y"])
def test_yes_spellings(answer: str, demo_db: Path, api: Serve) -> None:
    api([Reply([BOOK], "tool_use"), Reply([text("ok")])])
    runner.invoke(app, ["ask", "book", "--db", str(demo_db), *TODAY], input=f"{answer}\n")
    assert booked(demo_db) == 1
