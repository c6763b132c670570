"""The model's tools on a CalDAV calendar (a real Radicale on loopback): `open_calendar` chooses it when a
connection is stored; busy time, bookings, moves and cancellations go through the tools' `Calendar`
protocol, with local ids and the local calendar's texts; the booking's record links to the resource."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from caldav.collection import Calendar
from radicale_server import OWNER_USER, PRIYA_USER, RadicaleServer, calendar_url, client_for, vevent
from sqlalchemy import text as sql
from sqlalchemy.exc import IntegrityError

from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.faults import PAUSE_AT_VARIABLE, PAUSE_VARIABLE
from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.backend import SqliteCalendar
from scheduler_agent.calendar.caldav.connect import Connection, save_connection, set_contact
from scheduler_agent.calendar.caldav.ics import booking_uid
from scheduler_agent.calendar.caldav.remote import RemoteCalendar
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.events import add_event
from scheduler_agent.calendar.opening import open_calendar
from scheduler_agent.calendar.people import add_person, set_owner
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.storage.db import connect, revision
from scheduler_agent.storage.migrations import HEAD

TZ = "Europe/London"
MONDAY = date(2027, 3, 1)
TUESDAY_10 = datetime(2027, 3, 2, 10, 0, tzinfo=UTC)  # 10:00 in London (GMT until 28 March)
HALF_HOUR = timedelta(minutes=30)
CLOCK = Clock.pinned_at(MONDAY, time(9, 0), TZ)
PASSWORD_ENV = "JORDAN_CALDAV_PASSWORD"


def remote(server: RadicaleServer, user: str = OWNER_USER, cal_id: str = "work") -> Calendar:
    """A calendar as another client (a calendar app) sees it: the caldav library directly."""
    return Calendar(client=client_for(server, user), url=calendar_url(server, user, cal_id))


def server_events(server: RadicaleServer) -> list[Any]:
    return [item.icalendar_component for item in remote(server).events()]


def set_up(path: Path, server: RadicaleServer, *, invites: bool = True) -> sqlalchemy.Connection:
    """Jordan (owner, his 'Work' calendar on Radicale), Priya (her shared calendar there), Sam (local only)."""
    conn = connect(path)
    set_owner(conn, "Jordan Lee", TZ, time(9), time(17))
    add_person(conn, "priya", "Priya Raman", TZ, time(9), time(17))
    add_person(conn, "sam", "Sam Okafor", TZ, time(9), time(17))
    set_contact(conn, "priya", "priya@example.com", calendar_url(server, PRIYA_USER, "shared"))
    work = calendar_url(server, OWNER_USER, "work")
    connection = Connection(server.url, OWNER_USER, work, "Work", f"env:{PASSWORD_ENV}", "jordan@example.com", invites)
    save_connection(conn, connection)
    return conn


@pytest.fixture
def connected_conn(
    tmp_path: Path, radicale: RadicaleServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[sqlalchemy.Connection]:
    """A calendar whose owner is connected to his Radicale calendar (`set_up`); closed after the test."""
    monkeypatch.setenv(PASSWORD_ENV, radicale.users[OWNER_USER])
    conn = set_up(tmp_path / "cal.db", radicale)
    yield conn
    conn.close()


def tools_on(conn: sqlalchemy.Connection, **options: Any) -> CalendarTools:
    return CalendarTools(conn, CLOCK, calendar=open_calendar(conn, **options))


def run(tools: CalendarTools, name: str, arguments: dict[str, Any], call: str) -> str:
    return tools.run(name, arguments, call, Deadline.after(30))


def test_the_calendar_is_chosen_by_the_stored_connection(tmp_path: Path, connected_conn: sqlalchemy.Connection) -> None:
    assert isinstance(open_calendar(connected_conn), RemoteCalendar)
    plain = connect(tmp_path / "plain.db")
    set_owner(plain, "Jordan Lee", TZ, time(9), time(17))
    assert isinstance(open_calendar(plain), SqliteCalendar)


def test_the_migration_links_a_call_to_its_remote_resource(tmp_path: Path) -> None:
    conn = connect(tmp_path / "fresh.db")
    assert revision(conn) == HEAD  # m023 among them
    columns = {row[1] for row in conn.execute(sql("PRAGMA table_info(caldav_bookings)"))}
    assert columns == {"tool_use_id", "kind", "href", "uid", "etag", "event_id", "written", "created_at"}
    with pytest.raises(IntegrityError):  # a kind of change the tools make, nothing else
        conn.execute(sql("INSERT INTO caldav_bookings (tool_use_id, kind, href, uid) VALUES ('t', 'delete', 'h', 'u')"))


def test_busy_time_comes_from_the_server_and_the_local_calendar_for_people_without_one(
    connected_conn: sqlalchemy.Connection, radicale: RadicaleServer
) -> None:
    remote(radicale).save_event(vevent("a", "Design review", TUESDAY_10, TUESDAY_10 + HALF_HOUR))
    remote(radicale, PRIYA_USER, "shared").save_event(
        vevent("d", "Dentist", TUESDAY_10 + 2 * HALF_HOUR, TUESDAY_10 + 4 * HALF_HOUR)
    )
    add_event(connected_conn, "Sam's import", TUESDAY_10 + 6 * HALF_HOUR, TUESDAY_10 + 7 * HALF_HOUR, ["sam"])
    add_event(connected_conn, "Your old local event", TUESDAY_10 + 8 * HALF_HOUR, TUESDAY_10 + 9 * HALF_HOUR, ["you"])
    tools = tools_on(connected_conn)

    with_priya = run(tools, "find_free_slots", {"person": "priya", "week": "2027-03-01"}, "toolu_f1")
    tuesday = [line for line in with_priya.splitlines() if "Tue" in line]
    assert tuesday == [  # your local event keeps counting beside the server's (docs/caldav.md)
        "- Tue 2027-03-02 09:00-10:00", "- Tue 2027-03-02 10:30-11:00", "- Tue 2027-03-02 12:00-14:00",
        "- Tue 2027-03-02 14:30-17:00",
    ]  # fmt: skip
    with_sam = run(tools, "find_free_slots", {"person": "sam", "week": "2027-03-01"}, "toolu_f2")
    tuesday = [line for line in with_sam.splitlines() if "Tue" in line]
    assert tuesday == [  # Sam's busy time from the local calendar, yours from the server's and the local one
        "- Tue 2027-03-02 09:00-10:00", "- Tue 2027-03-02 10:30-13:00", "- Tue 2027-03-02 13:30-14:00",
        "- Tue 2027-03-02 14:30-17:00",
    ]  # fmt: skip

    listed = run(tools, "list_events", {"start": "2027-03-01", "end": "2027-03-07"}, "toolu_l")
    [line, local] = [line for line in listed.splitlines() if line.startswith("- #")]
    event_id = int(line.split()[1][1:])
    assert event_id == connected_conn.execute(sql("SELECT event_id FROM caldav_events WHERE uid = 'a'")).fetchone()[0]
    assert "'Design review' with you" in line
    assert "'Your old local event' with you" in local
    assert "not yours" not in line

    with pytest.raises(ToolError) as clash:
        run(tools, "create_event", {"with": "priya", "start": "2027-03-02T11:00", "minutes": 30}, "toolu_c")
    assert "overlaps 'busy' (Tue 2027-03-02 11:00-12:00; priya)" in str(clash.value)  # free-busy: no title
    assert "windows that day: Tue 2027-03-02 09:00-10:00, Tue 2027-03-02 10:30-11:00" in str(clash.value)
    assert len(server_events(radicale)) == 1


def test_a_booking_through_the_tools_is_one_event_and_a_record_linked_to_it(
    connected_conn: sqlalchemy.Connection, radicale: RadicaleServer
) -> None:
    tools = tools_on(connected_conn)
    arguments = {"with": "priya", "start": "2027-03-02T14:00", "minutes": 30, "title": "Roadmap"}
    preview = tools.preview("create_event", arguments, "toolu_b")
    assert preview is not None
    assert preview.startswith("Book 'Roadmap' on Tue 2027-03-02 14:00-14:30 (Europe/London)")
    assert preview.endswith(
        "Your calendar server does not send invitations (no CalDAV scheduling): tell the attendees."
    )

    said = run(tools, "create_event", arguments, "toolu_b")
    [event] = server_events(radicale)
    assert str(event["UID"]) == booking_uid("toolu_b")
    assert str(event["SUMMARY"]) == "Roadmap"
    event_id = connected_conn.execute(
        sql("SELECT event_id FROM caldav_events WHERE tool_use_id = 'toolu_b'")
    ).fetchone()[0]
    assert said == (
        f"Booked 'Roadmap' on Tue 2027-03-02 14:00-14:30 (Europe/London) for you (Jordan Lee) and Priya Raman (priya). "
        f"Event id: {event_id}."
    )  # the local calendar's text, a local id
    link = connected_conn.execute(sql("SELECT * FROM caldav_bookings WHERE tool_use_id = 'toolu_b'")).fetchone()
    assert link.href == f"{calendar_url(radicale, OWNER_USER, 'work')}{booking_uid('toolu_b')}.ics"
    resource = connected_conn.execute(sql("SELECT id FROM caldav_events WHERE tool_use_id = 'toolu_b'")).fetchone()[0]
    assert (link.uid, link.event_id, link.written, link.kind) == (
        booking_uid("toolu_b"), resource, 1, "create_event"
    )  # fmt: skip
    assert link.etag
    assert link.etag == client_for(radicale, OWNER_USER).request(link.href).headers["ETag"]
    recorded = connected_conn.execute(
        sql("SELECT event_id, result FROM bookings WHERE tool_use_id = 'toolu_b'")
    ).fetchone()
    assert tuple(recorded) == (None, said)  # no local event: the id is in the link
    assert tools.side_effect_of("create_event", "toolu_b") == f"The booking was made: {said} Do not book it again."

    again = run(tools, "create_event", arguments, "toolu_b")  # a resumed round
    assert again == said
    assert len(server_events(radicale)) == 1
    assert tools.preview("create_event", arguments, "toolu_b") is None  # made: nothing to ask


def test_no_invites_says_so_in_the_preview_and_writes_schedule_agent_client(
    connected_conn: sqlalchemy.Connection, radicale: RadicaleServer
) -> None:
    tools = tools_on(connected_conn, invites=False)
    arguments = {"with": "priya", "start": "2027-03-02T14:00", "minutes": 30}
    preview = tools.preview("create_event", arguments, "toolu_n")
    assert preview is not None
    assert preview.endswith("No invitations will be sent (--no-invites, or the connection's setting).")
    run(tools, "create_event", arguments, "toolu_n")
    [event] = server_events(radicale)
    attendee = event["ATTENDEE"] if not isinstance(event["ATTENDEE"], list) else event["ATTENDEE"][0]
    assert attendee.params["SCHEDULE-AGENT"] == "CLIENT"


def test_move_and_cancel_through_the_tools(connected_conn: sqlalchemy.Connection, radicale: RadicaleServer) -> None:
    tools = tools_on(connected_conn)
    run(
        tools, "create_event", {"with": "priya", "start": "2027-03-02T14:00", "minutes": 30, "title": "Plan"}, "toolu_b"
    )
    event_id = connected_conn.execute(sql("SELECT event_id FROM caldav_events")).fetchone()[0]
    moved = run(tools, "move_event", {"event_id": event_id, "start": "2027-03-02T15:00"}, "toolu_m")
    assert moved.startswith(
        "Moved 'Plan' from Tue 2027-03-02 14:00-14:30 to Tue 2027-03-02 15:00-15:30 (Europe/London)"
    )
    [event] = server_events(radicale)
    assert event.decoded("DTSTART").astimezone(UTC) == TUESDAY_10 + timedelta(hours=5)
    assert run(tools, "move_event", {"event_id": event_id, "start": "2027-03-02T15:00"}, "toolu_m") == moved

    cancelled = run(tools, "cancel_event", {"event_id": event_id}, "toolu_x")
    assert cancelled.startswith("Cancelled 'Plan' on Tue 2027-03-02 15:00-15:30")
    [event] = server_events(radicale)
    assert str(event["STATUS"]) == "CANCELLED"  # kept on the calendar, never deleted
    assert "none." in run(tools, "list_events", {"start": "2027-03-01", "end": "2027-03-07"}, "toolu_l2")


def test_a_stale_etag_move_via_the_tools_says_what_the_event_is_now(
    tmp_path: Path, connected_conn: sqlalchemy.Connection, radicale: RadicaleServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The event changes on the server after the tool read it and before it writes: nothing is moved."""
    booking = {"with": "priya", "start": "2027-03-02T14:00", "minutes": 30, "title": "Plan"}
    run(tools_on(connected_conn), "create_event", booking, "toolu_b")
    event_id = connected_conn.execute(sql("SELECT event_id FROM caldav_events")).fetchone()[0]
    monkeypatch.setenv(PAUSE_AT_VARIABLE, "between_check_and_insert")
    monkeypatch.setenv(PAUSE_VARIABLE, "1.5")
    outcome: list[object] = []

    def move() -> None:
        tools = tools_on(connect(tmp_path / "cal.db"))  # SQLite connections stay in their thread
        try:
            outcome.append(run(tools, "move_event", {"event_id": event_id, "start": "2027-03-02T15:00"}, "toolu_m"))
        except ToolError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=move)
    worker.start()
    threading.Event().wait(0.7)
    app_copy = remote(radicale).events()[0]
    app_copy.icalendar_component["SUMMARY"] = "Plan (renamed in the app)"
    app_copy.save()
    worker.join(timeout=30)

    [failure] = outcome
    assert isinstance(failure, ToolError), failure
    assert str(failure).startswith("The event changed on the server since it was read; nothing was changed. Here is")
    assert "'Plan (renamed in the app)' on Tue 2027-03-02 14:00-14:30 (Europe/London)" in str(failure)
    [event] = server_events(radicale)
    assert event.decoded("DTSTART").astimezone(UTC) == TUESDAY_10 + timedelta(hours=4)
    assert connected_conn.execute(sql("SELECT count(*) FROM bookings WHERE tool_use_id = 'toolu_m'")).fetchone()[0] == 0


def test_calendar_show_of_a_person_syncs_their_shared_calendar_into_the_store_first(
    tmp_path: Path, connected_conn: sqlalchemy.Connection, radicale: RadicaleServer
) -> None:
    from helpers import run_cli

    remote(radicale, PRIYA_USER, "shared").save_event(
        vevent("d", "Dentist", TUESDAY_10 + HALF_HOUR, TUESDAY_10 + 3 * HALF_HOUR)
    )
    args = ["calendar", "show", "--person", "priya", "--week", "2027-03-01", "--json", "--db", str(tmp_path / "cal.db")]
    env = {PASSWORD_ENV: radicale.users[OWNER_USER]}
    shown = run_cli([*args, "--today", "2027-03-01T09:00"], env=env)
    assert shown.returncode == 0, shown.stderr
    assert shown.stderr == ""
    busy = [(i["title"], i["start"], i["end"]) for i in json.loads(shown.stdout)["busy"]]
    assert busy == [("busy", "2027-03-02T10:30:00+00:00", "2027-03-02T11:30:00+00:00")]  # free-busy: no title
    stored = connected_conn.execute(
        sql("SELECT count(*) FROM event_sources WHERE person_key = 'priya' AND origin = 'caldav-busy'")
    ).fetchone()[0]
    assert stored == 1  # in the store, where every reader finds it

    radicale.kill()  # the server gone: the store is read, and one line says so
    again = run_cli([*args, "--today", "2027-03-01T09:00"], env=env)
    assert again.returncode == 0, again.stderr
    assert [(i["title"], i["start"], i["end"]) for i in json.loads(again.stdout)["busy"]] == busy
    lines = again.stderr.splitlines()
    assert lines[-1].startswith("Note: Priya Raman: never synced; 127.0.0.1 unreachable; showing the local copy.")


def test_the_server_gone_mid_turn_is_an_actionable_error_for_the_model(
    connected_conn: sqlalchemy.Connection, radicale: RadicaleServer
) -> None:
    tools = tools_on(connected_conn)
    radicale.kill()
    with pytest.raises(ToolError) as failure:
        run(tools, "create_event", {"with": "priya", "start": "2027-03-02T14:00", "minutes": 30}, "toolu_b")
    first, line = str(failure.value).splitlines()
    assert first.startswith("The calendar cannot be used: cannot reach the CalDAV server at 127.0.0.1")
    assert first.endswith("is it running, and is the URL right?. Tell the user.")
    assert line == (  # the checks read the local copy: the model is told so, in one line
        "Your calendar server: never synced; 127.0.0.1 unreachable; busy time is as of then. "
        "Shared calendars: Priya Raman: never synced; 127.0.0.1 unreachable; their busy time is as of then."
    )
    assert connected_conn.execute(sql("SELECT count(*) FROM bookings")).fetchone()[0] == 0
