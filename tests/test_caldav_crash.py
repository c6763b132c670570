"""Crash a CalDAV-backed `ask` at every fault point of a booking, resume it in a new process, and find
exactly one event on the real server, Radicale and Xandikos (read with the caldav library, as a calendar
app would), and one local record; and the server killed mid-turn, through the CLI.

Each test runs the real CLI in a subprocess against the loopback scripted model and a real Radicale,
SIGKILLs it at a named point (SCHEDULER_AGENT_FAULT, a test-only hook: agent/faults.py), then runs
`resume` and checks the server, the database and the conversation.
"""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import threading
import time as clock
from collections.abc import Iterator
from datetime import time
from pathlib import Path
from typing import Any

import pytest
from caldav.collection import Calendar
from helpers import run_cli
from radicale_server import (
    OWNER_USER,
    PRIYA_USER,
    RadicaleServer,
    ServerProcess,
    calendar_url,
    client_for,
    shared_url,
)

from scheduler_agent.calendar.caldav.connect import Connection, save_connection, set_contact
from scheduler_agent.calendar.caldav.ics import booking_uid
from scheduler_agent.calendar.people import add_person, set_owner
from scheduler_agent.grammar.check import check, conversation_state
from scheduler_agent.storage import conversations
from scheduler_agent.storage.db import connect
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

TZ = "Europe/London"
TODAY = "2027-03-01T09:00"  # a Monday
PASSWORD_ENV = "JORDAN_CALDAV_PASSWORD"
ASK = "Book 30 minutes with Priya on Tuesday at 2pm."
BOOK = {"with": "priya", "start": "2027-03-02T14:00", "minutes": 30, "title": "Roadmap"}
SCRIPT = [
    Reply([tool_use("toolu_cd_1", "find_free_slots", {"person": "priya", "week": "2027-03-01"})], "tool_use"),
    Reply([tool_use("toolu_cd_2", "create_event", BOOK)], "tool_use"),
    Reply([text("Booked Tuesday 14:00 with Priya.")]),
]


def set_up(path: Path, server: ServerProcess) -> Path:
    """Jordan on his 'Work' calendar on the server, Priya with her shared calendar there."""
    conn = connect(path)
    set_owner(conn, "Jordan Lee", TZ, time(9), time(17))
    add_person(conn, "priya", "Priya Raman", TZ, time(9), time(17))
    set_contact(conn, "priya", "priya@example.com", shared_url(server))
    work = calendar_url(server, OWNER_USER, "work")  # type: ignore[arg-type]
    save_connection(conn, Connection(server.url, OWNER_USER, work, "Work", f"env:{PASSWORD_ENV}", "jordan@example.com"))
    conn.close()
    return path


@pytest.fixture
def db(tmp_path: Path, radicale: RadicaleServer) -> Path:
    (tmp_path / "data").mkdir()
    return set_up(tmp_path / "data" / "cal.db", radicale)


@pytest.fixture
def model() -> Iterator[ScriptedServer]:
    with ScriptedServer(SCRIPT, by_length=True) as running:
        yield running


def cli(
    args: list[str], model: ScriptedServer, radicale: ServerProcess, fault: str | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli(args, model, fault, env={PASSWORD_ENV: radicale.users[OWNER_USER]})


def on_the_server(server: ServerProcess) -> list[Any]:
    """The owner's events as another client reads them: the caldav library directly."""
    client = client_for(server, OWNER_USER)  # type: ignore[arg-type]
    work = Calendar(client=client, url=calendar_url(server, OWNER_USER, "work"))  # type: ignore[arg-type]
    return [item.icalendar_component for item in work.events()]


def results_of(path: Path) -> list[dict[str, Any]]:
    _, messages = conversations.load(connect(path), 1)
    return [b for m in messages if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]


def text_of(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(block["text"] for block in content)


@pytest.mark.parametrize(
    "fault",
    [
        "after_assistant_stored@2",  # the booking call is stored, nothing has run
        "caldav_before_put",  # checked, its link row committed, the PUT not sent
        "after_caldav_put",  # the event is on the server, not read back, no local id
        "after_caldav_write",  # on the server and read back, no local record
        "after_calendar_write",  # the local record is committed, the result not stored
        "after_results_stored@2",  # the round is stored, the next request not sent
    ],
)
def test_a_crash_at_every_fault_point_of_a_booking_resumes_to_exactly_one_event_on_the_server(
    fault: str, tmp_path: Path, model: ScriptedServer, dav_server: ServerProcess
) -> None:
    radicale = dav_server  # Radicale, then Xandikos
    (tmp_path / "data").mkdir()
    db = set_up(tmp_path / "data" / "cal.db", dav_server)
    first = cli(["ask", ASK, "--yes", "--db", str(db), "--today", TODAY], model, radicale, fault)
    assert first.returncode == -9, first.stdout + first.stderr

    second = cli(["resume", "1", "--yes", "--db", str(db)], model, radicale)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Booked Tuesday 14:00 with Priya." in second.stdout

    [event] = on_the_server(radicale)  # exactly one event
    assert str(event["UID"]) == booking_uid("toolu_cd_2")
    assert str(event["SUMMARY"]) == "Roadmap"
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM bookings").fetchone()[0] == 1  # exactly one local record
    href, written = conn.execute(
        "SELECT href, written FROM caldav_bookings WHERE tool_use_id = 'toolu_cd_2'"
    ).fetchone()
    assert href.endswith(f"/{booking_uid('toolu_cd_2')}.ics")
    assert written == 1
    results = results_of(db)
    assert [r["tool_use_id"] for r in results] == ["toolu_cd_1", "toolu_cd_2"]
    assert not any(r.get("is_error") for r in results), results
    booked = text_of(results[1])
    assert "'Roadmap' on Tue 2027-03-02 14:00-14:30 (Europe/London)" in booked
    stored = conn.execute("SELECT event_id FROM caldav_events WHERE href = ?", (href,)).fetchone()[0]
    assert f"Event id: {stored}." in booked  # the store's id of the server's event
    _, messages = conversations.load(connect(db), 1)
    assert check(messages, mode="conversation") == []
    assert conversation_state(messages) == "complete"


def test_the_server_killed_mid_turn_gives_the_model_an_error_and_the_person_a_clear_line(
    db: Path, radicale: RadicaleServer
) -> None:
    script = [
        SCRIPT[0],
        Reply([tool_use("toolu_cd_2", "create_event", BOOK)], "tool_use", delay=4.0),  # the server dies meanwhile
        Reply([text("Your calendar server cannot be reached, so nothing was booked.")]),
    ]
    with ScriptedServer(script, by_length=True) as model:

        def kill_when_the_second_request_arrives() -> None:
            deadline = clock.monotonic() + 60
            while len(model.received) < 2 and clock.monotonic() < deadline:
                clock.sleep(0.05)
            radicale.kill()

        killer = threading.Thread(target=kill_when_the_second_request_arrives)
        killer.start()
        result = cli(["ask", ASK, "--yes", "--db", str(db), "--today", TODAY], model, radicale)
        killer.join()
        assert result.returncode == 0, result.stdout + result.stderr
        shown = result.stdout + result.stderr
        assert "Traceback" not in shown
        assert "bug in scheduler-agent" not in shown
        assert "Your calendar server cannot be reached, so nothing was booked." in result.stdout
        failed = [line for line in result.stderr.splitlines() if "cannot reach the CalDAV server" in line]
        assert len(failed) == 1 and "is it running, and is the URL right?" in failed[0], result.stderr
        [sent] = [r for r in model.received[2]["messages"][-1]["content"] if r["type"] == "tool_result"]
    assert sent["is_error"] is True
    assert sent["tool_use_id"] == "toolu_cd_2"
    assert text_of(sent).startswith("The calendar cannot be used: cannot reach the CalDAV server")
    assert sqlite3.connect(db).execute("SELECT count(*) FROM bookings").fetchone()[0] == 0


def test_a_recorded_caldav_session_replays_on_the_local_calendar_with_the_server_stopped(
    db: Path, radicale: RadicaleServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--record` snapshots the remote events into the cassette's calendar; the replay, with Radicale
    stopped and every socket watched, gives the same tool results to the letter."""
    from datetime import UTC, datetime, timedelta

    from scheduler_agent.playback.replay import replay

    mine = Calendar(client=client_for(radicale, OWNER_USER), url=calendar_url(radicale, OWNER_USER, "work"))
    tuesday_10 = datetime(2027, 3, 2, 10, 0, tzinfo=UTC)
    mine.save_event(vevent("a", "Design review", tuesday_10, tuesday_10 + timedelta(minutes=30)))
    theirs = Calendar(client=client_for(radicale, PRIYA_USER), url=calendar_url(radicale, PRIYA_USER, "shared"))
    theirs.save_event(vevent("d", "Dentist", tuesday_10 + timedelta(hours=1), tuesday_10 + timedelta(hours=2)))
    script = [
        SCRIPT[0],
        Reply([tool_use("toolu_cd_c", "create_event", {**BOOK, "start": "2027-03-02T11:00"})], "tool_use"),
        SCRIPT[1],
        Reply([tool_use("toolu_cd_l", "list_events", {"start": "2027-03-01", "end": "2027-03-07"})], "tool_use"),
        Reply([text("Booked Tuesday 14:00 with Priya.")]),
    ]
    cassette = tmp_path / "caldav-session.yaml"
    with ScriptedServer(script) as model:
        live = cli(["ask", ASK, "--yes", "--record", str(cassette), "--db", str(db), "--today", TODAY], model, radicale)
    assert live.returncode == 0, live.stdout + live.stderr
    recorded = results_of(db)
    assert [r.get("is_error", False) for r in recorded] == [False, True, False, False]  # 11:00 clashes: Dentist
    assert "overlaps 'busy' (Tue 2027-03-02 11:00-12:00; priya)" in text_of(recorded[1])
    conn = sqlite3.connect(db)
    stored = conn.execute("SELECT event_id FROM caldav_events WHERE tool_use_id = 'toolu_cd_2'").fetchone()[0]
    conn.close()
    assert f"Event id: {stored}." in text_of(recorded[2])  # the store's id of the booking
    assert "'Design review'" in text_of(recorded[3])
    assert "'Roadmap'" in text_of(recorded[3])
    written = cassette.read_text(encoding="utf-8")
    assert radicale.users[OWNER_USER] not in written
    assert "127.0.0.1" not in written  # no password, no server

    radicale.stop()
    connected: list[Any] = []
    real_connect = socket.socket.connect

    def watched(self: socket.socket, address: Any) -> Any:
        connected.append(address)
        if not (isinstance(address, tuple) and address[0] in ("127.0.0.1", "::1", "localhost")):
            raise AssertionError(f"the replay opened a socket to {address!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", watched)
    replayed = replay(cassette, report=lambda event: None)
    assert replayed.exit_code == 0
    again = [
        b for m in replayed.messages if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"
    ]
    assert [(r["tool_use_id"], text_of(r), r.get("is_error", False)) for r in again] == [
        (r["tool_use_id"], text_of(r), r.get("is_error", False)) for r in recorded
    ]
    assert not any(isinstance(a, tuple) and a[1] == radicale.port for a in connected), connected  # no CalDAV traffic


def vevent(uid: str, title: str, start: Any, end: Any) -> str:
    lines = [
        "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//a calendar app//EN", "BEGIN:VEVENT", f"UID:{uid}",
        "DTSTAMP:20270101T000000Z", f"DTSTART:{start:%Y%m%dT%H%M%SZ}", f"DTEND:{end:%Y%m%dT%H%M%SZ}",
        f"SUMMARY:{title}", "END:VEVENT", "END:VCALENDAR",
    ]  # fmt: skip
    return "\r\n".join(lines) + "\r\n"


def test_the_approval_says_whether_invitations_go_out_and_no_invites_writes_schedule_agent_client(
    db: Path, radicale: RadicaleServer
) -> None:
    """Asked before booking (stdin ends: refused, nothing booked); Radicale does no CalDAV scheduling, so
    the preview says nobody is e-mailed; `--no-invites` says none will be sent and marks the attendees."""
    with ScriptedServer([SCRIPT[1], Reply([text("Not booked.")])]) as model:
        asked = cli(["ask", ASK, "--db", str(db), "--today", TODAY], model, radicale)
    assert asked.returncode == 0, asked.stdout + asked.stderr
    shown = asked.stdout + asked.stderr
    assert "? Book 'Roadmap' on Tue 2027-03-02 14:00-14:30 (Europe/London) for you and Priya Raman (priya). " in shown
    assert "Your calendar server does not send invitations (no CalDAV scheduling): tell the attendees." in shown
    assert on_the_server(radicale) == []

    with ScriptedServer([SCRIPT[1], Reply([text("Booked.")])]) as model:
        booked = cli(["ask", ASK, "--yes", "--no-invites", "--db", str(db), "--today", TODAY], model, radicale)
    assert booked.returncode == 0, booked.stdout + booked.stderr
    [event] = on_the_server(radicale)
    attendees = event["ATTENDEE"] if isinstance(event["ATTENDEE"], list) else [event["ATTENDEE"]]
    assert [str(a) for a in attendees] == ["mailto:jordan@example.com", "mailto:priya@example.com"]
    assert all(a.params["SCHEDULE-AGENT"] == "CLIENT" for a in attendees)


def test_calendar_add_event_books_on_the_server_and_a_missing_password_is_one_line(
    db: Path, radicale: RadicaleServer
) -> None:
    args = ["calendar", "add-event", "--with", "priya", "--start", "2027-03-02T16:00", "--minutes", "30"]
    added = run_cli([*args, "--db", str(db), "--today", TODAY], env={PASSWORD_ENV: radicale.users[OWNER_USER]})
    assert added.returncode == 0, added.stdout + added.stderr
    assert added.stdout.startswith("Booked 'Meeting with Priya Raman' on Tue 2027-03-02 16:00-16:30 (Europe/London)")
    [event] = on_the_server(radicale)
    assert str(event["SUMMARY"]) == "Meeting with Priya Raman"

    unset = run_cli([*args, "--db", str(db), "--today", TODAY])
    assert unset.returncode == 1
    assert "Traceback" not in unset.stdout + unset.stderr
    assert unset.stderr == (
        f"Error: the environment variable {PASSWORD_ENV} is not set: export {PASSWORD_ENV} with the password of "
        "jordan on 127.0.0.1\n"
    )
