"""The owner's CalDAV calendar synced into the store (issue 37), against two real servers on loopback,
Radicale and Xandikos: connect, sync (with a sync token, and the caldav library's fallback without one),
an event another client adds seen by `calendar show` and avoided by `find_free_slots`, a booking, a move
and a cancellation written to the server and seen in the store, a 412 race, the server down (one line,
the replica read), and a database connected before m041 upgraded without doubling its booking."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from caldav.collection import Calendar
from helpers import run_cli
from radicale_server import OWNER_USER, RadicaleServer, client_for, unique_passwords, vevent
from sqlalchemy import text as sql
from xandikos_server import XandikosServer

from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.caldav.connect import Connection, load_connection, open_client, save_connection
from scheduler_agent.calendar.caldav.ics import booking_uid
from scheduler_agent.calendar.caldav.replica import invitations_text
from scheduler_agent.calendar.caldav.sync import sync
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.opening import open_calendar
from scheduler_agent.calendar.people import add_person, set_owner
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.storage.db import connect

TZ = "Europe/London"
TODAY = "2027-03-01T09:00"
CLOCK = Clock.pinned_at(date(2027, 3, 1), time(9, 0), TZ)
TUESDAY_10 = datetime(2027, 3, 2, 10, 0, tzinfo=UTC)  # 10:00 in London (GMT until 28 March)
HALF_HOUR = timedelta(minutes=30)
PASSWORD_ENV = "JORDAN_CALDAV_PASSWORD"
OLD = Path(__file__).parent / "data" / "old"


@dataclass
class Dav:
    """One server with Jordan's 'Work' calendar on it."""

    server: RadicaleServer | XandikosServer
    work: str  # the calendar's URL

    @property
    def password(self) -> str:
        return self.server.users[OWNER_USER]

    def calendar(self) -> Calendar:
        """The calendar as another client (a calendar app) sees it: the caldav library directly."""
        return Calendar(client=client_for(self.server, OWNER_USER), url=self.work)  # type: ignore[arg-type]

    def events(self) -> list[Any]:
        return [item.icalendar_component for item in self.calendar().events()]

    def connection(self) -> Connection:
        return Connection(self.server.url, OWNER_USER, self.work, "Work", f"env:{PASSWORD_ENV}", "jordan@example.com")


@pytest.fixture(params=["radicale", "xandikos"])
def dav(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Dav]:
    """Radicale (its fixture in conftest.py), then Xandikos, each with Jordan's 'Work' calendar."""
    if request.param == "radicale":
        radicale: RadicaleServer = request.getfixturevalue("radicale")
        found = Dav(radicale, f"{radicale.user_url(OWNER_USER)}work/")
        monkeypatch.setenv(PASSWORD_ENV, found.password)
        yield found
        return
    with XandikosServer(tmp_path / "xandikos", unique_passwords()) as server:
        principal = client_for(server, OWNER_USER).principal()  # type: ignore[arg-type, no-untyped-call]
        principal.make_calendar(name="Work", cal_id="work")
        found = Dav(server, f"{server.user_url(OWNER_USER)}work/")
        monkeypatch.setenv(PASSWORD_ENV, found.password)
        yield found


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Jordan (the owner) with one local event on Tuesday 14:00, and Priya; no server connected yet."""
    path = tmp_path / "cal.db"
    conn = connect(path)
    set_owner(conn, "Jordan Lee", TZ, time(9), time(17))
    add_person(conn, "priya", "Priya Raman", TZ, time(9), time(17))
    conn.execute(sql("UPDATE people SET key = key"))  # nothing: the file exists, with its owner
    from scheduler_agent.calendar.events import add_event

    add_event(conn, "Local dentist", TUESDAY_10 + 8 * HALF_HOUR, TUESDAY_10 + 9 * HALF_HOUR, ["you"])
    conn.close()
    return path


def cli(args: list[str], dav: Dav) -> Any:
    return run_cli(args, env={PASSWORD_ENV: dav.password})


def connected(db: Path, dav: Dav) -> sqlalchemy.Connection:
    conn = connect(db)
    save_connection(conn, dav.connection())
    return conn


def age_the_sync(conn: sqlalchemy.Connection, seconds: int) -> None:
    """As if the last sync was `seconds` ago (a reader syncs first when it is older than 5 s)."""
    then = datetime.now(UTC) - timedelta(seconds=seconds)
    conn.execute(sql("UPDATE caldav_connections SET synced_at = :p1"), {"p1": then.strftime("%Y-%m-%dT%H:%M:%SZ")})
    conn.commit()


def tools_on(conn: sqlalchemy.Connection) -> CalendarTools:
    return CalendarTools(conn, CLOCK, calendar=open_calendar(conn))


def run(tools: CalendarTools, name: str, arguments: dict[str, Any], call: str) -> str:
    return tools.run(name, arguments, call, Deadline.after(30))


def tuesday(found: str) -> list[str]:
    return [line for line in found.splitlines() if "Tue" in line]


def test_connect_syncs_the_calendar_and_says_what_happens_to_local_events(db: Path, dav: Dav) -> None:
    dav.calendar().save_event(vevent("a", "Design review", TUESDAY_10, TUESDAY_10 + HALF_HOUR))
    args = ["calendar", "connect", "caldav", dav.server.url, "--user", OWNER_USER, "--password-env", PASSWORD_ENV]
    done = cli([*args, "--calendar", "Work", "--db", str(db)], dav)
    assert done.returncode == 0, done.stderr
    assert "Synced: 1 event(s) of the server copied into the local store." in done.stdout
    assert (
        "Local events: your 1 local event(s) stay in the local calendar and keep counting as your busy time; "
        "they are not copied to the server." in done.stdout
    )
    assert "Bookings: create_event, move_event and cancel_event write to the server" in done.stdout
    conn = connect(db)
    answer = conn.execute(sql("SELECT scheduling FROM caldav_connections")).fetchone()[0]
    assert answer in (0, 1)  # asked once, stored
    row = conn.execute(sql("SELECT uid, etag, event_id FROM caldav_events")).fetchone()
    assert row.uid == "a"
    assert row.etag
    assert (
        conn.execute(sql("SELECT title FROM events WHERE id = :event_id"), {"event_id": row.event_id}).fetchone()[0]
        == "Design review"
    )

    shown = cli(["calendar", "show", "--week", "2027-03-01", "--db", str(db), "--today", TODAY], dav)
    assert shown.returncode == 0, shown.stderr
    assert "Design review" in shown.stdout
    assert "Local dentist" in shown.stdout  # local events keep counting

    backends = cli(["calendar", "backends", "--db", str(db)], dav)
    assert backends.returncode == 0, backends.stdout
    assert "last synced" in backends.stdout
    assert "write to the server, then to the local copy" in backends.stdout

    # invitations: asked once at connect, and said the same way by connect, backends and the approval
    [said] = [line for line in done.stdout.splitlines() if line.startswith("Invitations: ")]
    assert said == f"Invitations: {invitations_text(True, bool(answer))}"
    assert f"        {said}" in backends.stdout.splitlines()
    preview = tools_on(conn).preview(
        "create_event", {"with": "priya", "start": "2027-03-02T11:00", "minutes": 30}, "toolu_ask"
    )
    assert preview is not None
    if not answer:  # Radicale and Xandikos do no CalDAV scheduling
        assert preview.endswith(f". {invitations_text(True, False)}")
    else:
        assert preview.endswith("No invitations will be sent.")  # priya has no e-mail address here
    assert conn.execute(sql("SELECT scheduling FROM caldav_connections")).fetchone()[0] == answer  # not asked again
    conn.close()


def test_an_event_another_client_adds_is_seen_by_show_and_avoided_by_the_free_slot_search(db: Path, dav: Dav) -> None:
    conn = connected(db, dav)
    tools = tools_on(conn)
    before = tuesday(run(tools, "find_free_slots", {"person": "priya", "week": "2027-03-01"}, "toolu_f0"))
    assert before == ["- Tue 2027-03-02 09:00-14:00", "- Tue 2027-03-02 14:30-17:00"]  # the local event counts

    dav.calendar().save_event(vevent("late", "Added in the app", TUESDAY_10, TUESDAY_10 + 2 * HALF_HOUR))
    age_the_sync(conn, 6)
    after = tuesday(run(tools, "find_free_slots", {"person": "priya", "week": "2027-03-01"}, "toolu_f1"))
    assert after == ["- Tue 2027-03-02 09:00-10:00", "- Tue 2027-03-02 11:00-14:00", "- Tue 2027-03-02 14:30-17:00"]
    shown = cli(["calendar", "show", "--week", "2027-03-01", "--db", str(db), "--today", TODAY, "--json"], dav)
    assert shown.returncode == 0, shown.stderr
    assert "Added in the app" in shown.stdout

    dav.calendar().event_by_uid("late").delete()
    age_the_sync(conn, 6)
    synced = cli(["calendar", "sync", "--db", str(db)], dav)
    assert synced.returncode == 0, synced.stderr
    assert "- 'Added in the app' Tue 2027-03-02 10:00-11:00 (removed)" in synced.stdout
    assert conn.execute(sql("SELECT count(*) FROM events WHERE title = 'Added in the app'")).fetchone()[0] == 0
    conn.close()


def test_a_booking_a_move_and_a_cancellation_go_to_the_server_and_the_store(db: Path, dav: Dav) -> None:
    conn = connected(db, dav)
    tools = tools_on(conn)
    booking = {"with": "priya", "start": "2027-03-02T11:00", "minutes": 30, "title": "Plan"}
    said = run(tools, "create_event", booking, "toolu_b")
    [event] = dav.events()
    assert str(event["UID"]) == booking_uid("toolu_b")
    event_id = conn.execute(sql("SELECT event_id FROM caldav_events WHERE tool_use_id = 'toolu_b'")).fetchone()[0]
    assert said.endswith(f"Event id: {event_id}.")
    shown = cli(["calendar", "show", "--week", "2027-03-01", "--db", str(db), "--today", TODAY], dav)
    assert "Plan" in shown.stdout

    moved = run(tools, "move_event", {"event_id": event_id, "start": "2027-03-02T15:00"}, "toolu_m")
    assert moved.startswith("Moved 'Plan' from Tue 2027-03-02 11:00-11:30 to Tue 2027-03-02 15:00-15:30")
    [event] = dav.events()
    assert event.decoded("DTSTART").astimezone(UTC) == TUESDAY_10 + timedelta(hours=5)
    stored = conn.execute(sql("SELECT start_utc FROM events WHERE id = :event_id"), {"event_id": event_id}).fetchone()[
        0
    ]
    assert stored == "2027-03-02T15:00:00Z"  # the replica, from the server's answer

    cancelled = run(tools, "cancel_event", {"event_id": event_id}, "toolu_x")
    assert cancelled.startswith("Cancelled 'Plan' on Tue 2027-03-02 15:00-15:30")
    [event] = dav.events()
    assert str(event["STATUS"]) == "CANCELLED"
    assert conn.execute(sql("SELECT count(*) FROM events WHERE title = 'Plan'")).fetchone()[0] == 0
    conn.close()


def test_a_move_of_an_event_changed_on_the_server_meanwhile_says_what_it_is_now(db: Path, dav: Dav) -> None:
    conn = connected(db, dav)
    tools = tools_on(conn)
    run(
        tools, "create_event", {"with": "priya", "start": "2027-03-02T11:00", "minutes": 30, "title": "Plan"}, "toolu_b"
    )
    event_id = conn.execute(sql("SELECT event_id FROM caldav_events WHERE tool_use_id = 'toolu_b'")).fetchone()[0]
    app_copy = dav.calendar().event_by_uid(booking_uid("toolu_b"))
    app_copy.icalendar_component["SUMMARY"] = "Plan (renamed in the app)"
    app_copy.save()  # within 5 s of the last sync: the replica still has the old ETag

    with pytest.raises(ToolError) as refused:
        run(tools, "move_event", {"event_id": event_id, "start": "2027-03-02T15:00"}, "toolu_m")
    assert str(refused.value).startswith("The event changed on the server since it was read; nothing was changed.")
    assert "'Plan (renamed in the app)' on Tue 2027-03-02 11:00-11:30 (Europe/London)" in str(refused.value)
    [event] = dav.events()
    assert event.decoded("DTSTART").astimezone(UTC) == TUESDAY_10 + 2 * HALF_HOUR
    title = conn.execute(sql("SELECT title FROM events WHERE id = :event_id"), {"event_id": event_id}).fetchone()[0]
    assert title == "Plan (renamed in the app)"  # synced when the server said it changed
    conn.close()


def test_the_server_down_reads_the_replica_and_says_so_in_one_line(db: Path, dav: Dav) -> None:
    dav.calendar().save_event(vevent("a", "Design review", TUESDAY_10, TUESDAY_10 + HALF_HOUR))
    conn = connected(db, dav)
    tools = tools_on(conn)
    run(tools, "list_events", {"start": "2027-03-01", "end": "2027-03-07"}, "toolu_l0")  # the first sync
    dav.server.kill()
    age_the_sync(conn, 180)

    line = "Your calendar server: last synced 3 min ago; 127.0.0.1 unreachable; busy time is as of then."
    found = run(tools, "find_free_slots", {"person": "priya", "week": "2027-03-01"}, "toolu_f")
    assert tuesday(found)[:2] == ["- Tue 2027-03-02 09:00-10:00", "- Tue 2027-03-02 10:30-14:00"]  # the replica
    assert found.splitlines()[-1] == line
    assert found.count(line) == 1
    listed = run(tools, "list_events", {"start": "2027-03-01", "end": "2027-03-07"}, "toolu_l1")
    assert "'Design review'" in listed  # the replica, and the line saying so, once, at the end
    assert listed.splitlines()[-1] == line
    assert listed.count(line) == 1
    event_id = conn.execute(sql("SELECT id FROM events WHERE title = 'Design review'")).fetchone()[0]
    for name, arguments in [
        ("create_event", {"with": "priya", "start": "2027-03-02T11:00", "minutes": 30, "title": "Plan"}),
        ("move_event", {"event_id": event_id, "start": "2027-03-02T15:00"}),
        ("cancel_event", {"event_id": event_id}),
    ]:
        with pytest.raises(ToolError) as refused:
            run(tools, name, arguments, f"toolu_{name}")
        said = str(refused.value).splitlines()
        assert said[0].startswith("The calendar cannot be used: cannot reach the CalDAV server"), said
        assert said[1:] == [line], said  # the checks read the replica: the model is told, as for a read
    assert conn.execute(sql("SELECT count(*) FROM bookings")).fetchone()[0] == 0  # nothing recorded
    shown = cli(["calendar", "show", "--week", "2027-03-01", "--db", str(db), "--today", TODAY], dav)
    assert shown.returncode == 0, shown.stderr
    assert "Design review" in shown.stdout
    assert shown.stderr.splitlines() == ["Note: last synced 3 min ago; 127.0.0.1 unreachable; showing the local copy."]
    synced = cli(["calendar", "sync", "--db", str(db)], dav)
    assert synced.returncode != 0
    assert len(synced.stderr.strip().splitlines()) == 1
    assert "cannot reach the CalDAV server" in synced.stderr
    conn.close()


@pytest.mark.parametrize("tokens", [True, False], ids=["sync-token", "fallback"])
def test_sync_with_a_token_and_with_the_librarys_fallback_finds_new_changed_and_removed(
    db: Path, dav: Dav, tokens: bool
) -> None:
    conn = connected(db, dav)
    connection = load_connection(conn)
    assert connection is not None
    client = open_client(connection.url, OWNER_USER, dav.password, 10)
    if not tokens:  # as a server without RFC 6578: the library lists every resource and compares ETags
        client.features.set_feature("sync-token", "unsupported")
    dav.calendar().save_event(vevent("a", "Design review", TUESDAY_10, TUESDAY_10 + HALF_HOUR))
    first = sync(conn, connection, dav.password, client=client)
    assert [(c.kind, c.title) for c in first.changes] == [("new", "Design review")]
    assert first.with_token is tokens
    assert sync(conn, connection, dav.password, client=client).changes == []  # nothing new: nothing stored

    app_copy = dav.calendar().event_by_uid("a")
    app_copy.icalendar_component["SUMMARY"] = "Design review (moved)"
    app_copy.save()
    dav.calendar().save_event(vevent("b", "Second", TUESDAY_10 + HALF_HOUR, TUESDAY_10 + 2 * HALF_HOUR))
    second = sync(conn, connection, dav.password, client=client)
    assert sorted((c.kind, c.title) for c in second.changes) == [
        ("changed", "Design review (moved)"),
        ("new", "Second"),
    ]
    dav.calendar().event_by_uid("b").delete()
    third = sync(conn, connection, dav.password, client=client)
    assert [(c.kind, c.title) for c in third.changes] == [("removed", "Second")]
    titles = [row[0] for row in conn.execute(sql("SELECT title FROM events ORDER BY title"))]
    assert titles == ["Design review (moved)", "Local dentist"]
    conn.close()


def test_a_database_connected_before_m041_syncs_on_first_use_without_doubling_its_booking(
    tmp_path: Path, dav: Dav
) -> None:
    """A store left at m036 by a version that booked on the server (caldav_events, caldav_bookings, the
    booking's record): opened now, it is upgraded, and the first read syncs; the booking is matched by its
    resource name, and the id the model was given then still names it."""
    booked = "toolu_old"
    href = f"{dav.work}{booking_uid(booked)}.ics"
    body = vevent(
        booking_uid(booked), "Old booking", TUESDAY_10, TUESDAY_10 + HALF_HOUR, f"X-SCHEDULER-AGENT-CALL:{booked}"
    )
    client_for(dav.server, OWNER_USER).request(href, "PUT", body, {"Content-Type": "text/calendar"})  # type: ignore[arg-type]
    path = tmp_path / "old.db"
    raw = sqlite3.connect(path)
    raw.executescript((OLD / "sqlite_m036.sql").read_text())
    connection = dav.connection()
    raw.execute(
        "INSERT INTO caldav_connections (person_key, url, username, calendar_url, calendar_name, password_source, "
        "email, invites) VALUES ('you', ?, ?, ?, 'Work', ?, ?, 1)",
        (connection.url, OWNER_USER, connection.calendar_url, connection.password_source, connection.email),
    )
    raw.execute(
        "INSERT INTO caldav_events (id, href, uid, tool_use_id) VALUES (1000001, ?, ?, ?)",
        (href, booking_uid(booked), booked),
    )
    raw.execute(
        "INSERT INTO caldav_bookings (tool_use_id, kind, href, uid, etag, event_id, written) "
        "VALUES (?, 'create_event', ?, ?, '\"1\"', 1000001, 1)",
        (booked, href, booking_uid(booked)),
    )
    raw.commit()
    raw.close()

    conn = connect(path)  # upgraded to m041
    tools = tools_on(conn)
    listed = run(tools, "list_events", {"start": "2027-03-01", "end": "2027-03-07"}, "toolu_l")
    assert listed.count("'Old booking'") == 1
    assert conn.execute(sql("SELECT count(*) FROM events WHERE title = 'Old booking'")).fetchone()[0] == 1
    assert conn.execute(sql("SELECT count(*) FROM caldav_events")).fetchone()[0] == 1  # the same row, linked
    assert len(dav.events()) == 1
    moved = run(tools, "move_event", {"event_id": 1000001, "start": "2027-03-02T15:00"}, "toolu_m")  # the old id
    assert moved.startswith("Moved 'Old booking' from Tue 2027-03-02 10:00-10:30 to Tue 2027-03-02 15:00-15:30")
    conn.close()
