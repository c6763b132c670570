"""The CalDAV calendar against a real Radicale on loopback: reading busy time, booking exactly once,
moves and cancellations with If-Match, and what every fault turns into."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from caldav.collection import Calendar
from radicale_server import (
    OWNER_USER,
    PRIYA_USER,
    LosingProxy,
    RadicaleServer,
    ServerProcess,
    calendar_url,
    client_for,
    shared_url,
    vevent,
)
from sqlalchemy import text as sql

from scheduler_agent.agent.faults import PAUSE_AT_VARIABLE, PAUSE_VARIABLE
from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.caldav import replica
from scheduler_agent.calendar.caldav.connect import (
    CalDAVError,
    Connection,
    load_connection,
    save_connection,
    set_contact,
)
from scheduler_agent.calendar.caldav.ics import Attendee, booking_ics, booking_uid
from scheduler_agent.calendar.caldav.remote import RemoteCalendar
from scheduler_agent.calendar.caldav.sync import sync
from scheduler_agent.calendar.caldav.writes import Writer, Written, written_text
from scheduler_agent.calendar.events import add_event
from scheduler_agent.calendar.people import add_person, set_owner
from scheduler_agent.storage.db import connect

TZ = "Europe/London"
TUESDAY_10 = datetime(2027, 3, 2, 10, 0, tzinfo=UTC)  # 10:00 in London (GMT until 28 March)
HALF_HOUR = timedelta(minutes=30)


def calendar_db(tmp_path: Path, server: ServerProcess, *, invites: bool = True) -> sqlalchemy.Connection:
    """Jordan (owner, on Radicale), Priya (her shared calendar there, an e-mail), Sam (local only, no e-mail)."""
    conn = connect(tmp_path / "cal.db")
    set_owner(conn, "Jordan Lee", TZ, time(9), time(17))
    add_person(conn, "priya", "Priya Raman", TZ, time(9), time(17))
    add_person(conn, "sam", "Sam Okafor", TZ, time(9), time(17))
    set_contact(conn, "priya", "priya@example.com", shared_url(server))
    work = calendar_url(server, OWNER_USER, "work")
    save_connection(conn, Connection(server.url, OWNER_USER, work, "Work", "env:X", "jordan@example.com", invites))
    return conn


def backend(conn: sqlalchemy.Connection, server: ServerProcess, **options: Any) -> Writer:
    connection = load_connection(conn)
    assert connection is not None
    return Writer(conn, connection, server.users[OWNER_USER], **options)


def replica_of(conn: sqlalchemy.Connection, server: RadicaleServer, **options: Any) -> RemoteCalendar:
    """The tools' calendar: it reads the store, synced from the server first."""
    return RemoteCalendar(backend(conn, server, **options))


def in_thread(
    tmp_path: Path, server: RadicaleServer, action: Callable[[Writer], object], **options: Any
) -> tuple[threading.Thread, list[object]]:
    """Run `action` on a backend of its own (SQLite connections stay in their thread); results or errors."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(action(backend(connect(tmp_path / "cal.db"), server, **options)))
        except (ToolError, CalDAVError) as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def remote(server: RadicaleServer, user: str, cal_id: str) -> Calendar:
    """A calendar as another client (a calendar app) sees it."""
    return Calendar(client=client_for(server, user), url=calendar_url(server, user, cal_id))


def server_events(server: RadicaleServer, user: str = OWNER_USER, cal_id: str = "work") -> list[Any]:
    return [item.icalendar_component for item in remote(server, user, cal_id).events()]


@contextmanager
def answering(conn: sqlalchemy.Connection, status: int, body: bytes) -> Iterator[Writer]:
    """A backend on a loopback server that answers every REPORT, PROPFIND and GET with `status` and `body`."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Fixed(BaseHTTPRequestHandler):
        def do_REPORT(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(status)
            self.send_header("Content-Type", "application/xml; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_PROPFIND = do_GET = do_REPORT

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Fixed)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        yield Writer(conn, Connection(url, OWNER_USER, url + "work/", "Work", "env:X"), "pw")
    finally:
        server.shutdown()


# --- reading ------------------------------------------------------------------------------------


def test_busy_time_another_client_wrote_is_synced_into_the_store_with_titles_for_you_and_busy_for_priya(
    tmp_path: Path, radicale: RadicaleServer
) -> None:
    conn = calendar_db(tmp_path, radicale)
    mine = remote(radicale, OWNER_USER, "work")
    mine.save_event(vevent("a", "Design review", TUESDAY_10, TUESDAY_10 + HALF_HOUR))
    mine.save_event(
        vevent("b", "Focus time", TUESDAY_10 + 2 * HALF_HOUR, TUESDAY_10 + 4 * HALF_HOUR, "TRANSP:TRANSPARENT")
    )
    mine.save_event(vevent("c", "Old plan", TUESDAY_10 + 6 * HALF_HOUR, TUESDAY_10 + 8 * HALF_HOUR, "STATUS:CANCELLED"))
    theirs = remote(radicale, PRIYA_USER, "shared")
    theirs.save_event(vevent("d", "Dentist", TUESDAY_10 + HALF_HOUR, TUESDAY_10 + 3 * HALF_HOUR))
    add_event(conn, "Sam's local import", TUESDAY_10, TUESDAY_10 + HALF_HOUR, ["sam"])

    day = (TUESDAY_10 - timedelta(hours=10), TUESDAY_10 + timedelta(hours=14))
    calendar = replica_of(conn, radicale)
    seen = [(e.attendees, e.title, e.start, e.end) for e in calendar.events(["you", "priya", "sam"], *day)]
    assert (("you",), "Design review", TUESDAY_10, TUESDAY_10 + HALF_HOUR) in seen
    assert (("priya",), "busy", TUESDAY_10 + HALF_HOUR, TUESDAY_10 + 3 * HALF_HOUR) in seen  # free-busy: no title
    assert (("sam",), "Sam's local import", TUESDAY_10, TUESDAY_10 + HALF_HOUR) in seen  # no server: local
    assert len(seen) == 3  # the transparent and the cancelled events are free
    assert calendar.staleness(["you", "priya"], TUESDAY_10) == ""
    # both came into the store: with the server gone, the same busy time is read from it, with the line
    radicale.stop()
    conn.execute(sql("UPDATE caldav_connections SET synced_at = '2026-01-01T00:00:00Z'"))
    conn.commit()
    later = RemoteCalendar(backend(conn, radicale))
    assert later.busy(["you", "priya"], *day) == calendar.busy(["you", "priya"], *day)
    assert re.search(
        r"Your calendar server: last synced .* ago; 127\.0\.0\.1 unreachable", later.staleness(["you"], day[0])
    )
    assert re.search(r"Shared calendars: Priya Raman: never synced; .*unreachable", later.staleness(["you"], day[0]))


def test_a_recurring_event_created_elsewhere_blocks_its_occurrences(tmp_path: Path, radicale: RadicaleServer) -> None:
    conn = calendar_db(tmp_path, radicale)
    first = TUESDAY_10 - timedelta(weeks=5)
    remote(radicale, OWNER_USER, "work").save_event(
        vevent("weekly", "Team sync", first, first + HALF_HOUR, "RRULE:FREQ=WEEKLY;BYDAY=TU")
    )
    calendar = replica_of(conn, radicale)
    week = (TUESDAY_10 - timedelta(days=1), TUESDAY_10 + timedelta(days=6))
    assert calendar.busy(["you"], *week) == {"you": [(TUESDAY_10, TUESDAY_10 + HALF_HOUR)]}
    events = calendar.events(["you"], *week)
    assert [(e.title, e.start, e.recurring) for e in events] == [("Team sync", TUESDAY_10, True)]


# --- booking --------------------------------------------------------------------------------------


def test_a_booking_is_one_event_with_organizer_attendees_and_its_vtimezone(
    tmp_path: Path, radicale: RadicaleServer
) -> None:
    conn = calendar_db(tmp_path, radicale)
    written = backend(conn, radicale).create(
        "toolu_01", "Plan Q2", TUESDAY_10, TUESDAY_10 + HALF_HOUR, ["priya", "sam"]
    )

    [event] = server_events(radicale)
    assert str(event["UID"]) == booking_uid("toolu_01")
    assert written.event.href == f"{calendar_url(radicale, OWNER_USER, 'work')}{booking_uid('toolu_01')}.ics"
    assert str(event["ORGANIZER"]) == "mailto:jordan@example.com"
    assert [str(a) for a in event["ATTENDEE"]] == ["mailto:jordan@example.com", "mailto:priya@example.com"]
    assert "SCHEDULE-AGENT" not in event["ATTENDEE"][1].params
    assert event.decoded("DTSTART") == TUESDAY_10
    assert event["DTSTART"].params["TZID"] == TZ
    text = remote(radicale, OWNER_USER, "work").events()[0].data
    assert "BEGIN:VTIMEZONE" in text
    assert f"TZID:{TZ}" in text
    assert written.not_invited == ("sam",)
    assert not written.already_made
    assert written.clashes == ()
    said = written_text(written, TZ)
    assert f"Event id: {written.event.event.id}." in said
    assert "invitations" in said
    assert "sam: not invited" in said
    note = backend(conn, radicale).invitation_note(["priya", "sam"])
    assert note == "The calendar server will e-mail invitations to Priya Raman <priya@example.com>."
    assert (
        conn.execute(
            sql("SELECT tool_use_id FROM caldav_events WHERE href = :href"), {"href": written.event.href}
        ).fetchone()[0]
        == "toolu_01"
    )


def test_no_invites_writes_schedule_agent_client(tmp_path: Path, radicale: RadicaleServer) -> None:
    conn = calendar_db(tmp_path, radicale, invites=False)
    written = backend(conn, radicale).create("toolu_q", "Quiet", TUESDAY_10, TUESDAY_10 + HALF_HOUR, ["priya"])
    [event] = server_events(radicale)
    assert {a.params["SCHEDULE-AGENT"] for a in event["ATTENDEE"]} == {"CLIENT"}
    assert event["ORGANIZER"].params["SCHEDULE-AGENT"] == "CLIENT"
    assert "invitations" not in written_text(written, TZ)
    assert backend(conn, radicale).invitation_note(["priya"]) == "No invitations will be sent (--no-invites)."


def test_a_resumed_round_after_the_first_put_succeeded_books_nothing_more(
    tmp_path: Path, radicale: RadicaleServer
) -> None:
    """The first process wrote the event and died before answering: the same tool_use id finds it."""
    conn = calendar_db(tmp_path, radicale)
    uid = booking_uid("toolu_lost")
    body = booking_ics(
        uid=uid, tool_use_id="toolu_lost", title="Plan Q2", start=TUESDAY_10, end=TUESDAY_10 + HALF_HOUR, tz=TZ,
        organizer=Attendee("Jordan Lee", "jordan@example.com"),
        attendees=[Attendee("Priya Raman", "priya@example.com")],
        invites=True, stamp=datetime.now(UTC),
    )  # fmt: skip
    client_for(radicale, OWNER_USER).put(f"{calendar_url(radicale, OWNER_USER, 'work')}{uid}.ics", body)

    calendar = backend(conn, radicale)
    again = calendar.create("toolu_lost", "Plan Q2", TUESDAY_10, TUESDAY_10 + HALF_HOUR, ["priya"])
    twice = calendar.create("toolu_lost", "Plan Q2", TUESDAY_10, TUESDAY_10 + HALF_HOUR, ["priya"])

    assert again.already_made
    assert twice.already_made
    assert written_text(again, TZ).startswith("The booking was made: Booked 'Plan Q2'")
    assert len(server_events(radicale)) == 1
    assert again.event.event.id == twice.event.event.id


def test_a_booking_whose_answer_is_lost_is_found_on_the_server_not_made_again(
    tmp_path: Path, radicale: RadicaleServer
) -> None:
    """The PUT reached the server and its answer was lost on the way back: reading the resource settles it."""
    conn = calendar_db(tmp_path, radicale)
    proxy = LosingProxy(radicale.port)
    try:
        via = proxy.url
        work = calendar_url(radicale, OWNER_USER, "work").replace(radicale.url, via)
        save_connection(conn, Connection(via, OWNER_USER, work, "Work", "env:X", "jordan@example.com"))
        set_contact(conn, "priya", None, calendar_url(radicale, PRIYA_USER, "shared").replace(radicale.url, via))
        written = backend(conn, radicale).create("toolu_l", "Plan", TUESDAY_10, TUESDAY_10 + HALF_HOUR, ["priya"])
    finally:
        proxy.close()
    assert proxy.dropped == 1
    assert written.already_made  # found there, written by this very call
    assert len(server_events(radicale)) == 1


def test_two_processes_of_one_call_racing_write_once_by_if_none_match(
    tmp_path: Path, dav_server: ServerProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both pass the look-up and the conflict check (held at caldav_before_put); If-None-Match lets one in.
    On Radicale, then on Xandikos."""
    radicale: Any = dav_server
    calendar_db(tmp_path, radicale)  # the file the threads open
    monkeypatch.setenv(PAUSE_AT_VARIABLE, "caldav_before_put")
    monkeypatch.setenv(PAUSE_VARIABLE, "1")
    results: list[Written] = []

    def book() -> None:
        own = connect(tmp_path / "cal.db")
        results.append(
            backend(own, radicale).create("toolu_race", "Plan", TUESDAY_10, TUESDAY_10 + HALF_HOUR, ["priya"])
        )

    threads = [threading.Thread(target=book) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(results) == 2
    assert sorted(r.already_made for r in results) == [False, True]
    assert len(server_events(radicale)) == 1


def test_an_overlap_that_appears_during_the_write_keeps_the_booking_and_names_the_clash(
    tmp_path: Path, radicale: RadicaleServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    calendar_db(tmp_path, radicale)  # the file the thread opens
    monkeypatch.setenv(PAUSE_AT_VARIABLE, "caldav_before_put")
    monkeypatch.setenv(PAUSE_VARIABLE, "1.5")
    worker, outcome = in_thread(
        tmp_path,
        radicale,
        lambda c: RemoteCalendar(c).create(
            "Plan", TUESDAY_10, TUESDAY_10 + HALF_HOUR, ["you", "priya"], None, lambda e: f"Booked {e.id}."
        ),
    )
    threading.Event().wait(0.5)  # the check has passed; the write waits
    sneaky = vevent("sneaky", "Dentist", TUESDAY_10 + HALF_HOUR / 2, TUESDAY_10 + HALF_HOUR * 2)
    remote(radicale, PRIYA_USER, "shared").save_event(sneaky)
    worker.join(timeout=30)

    [text] = outcome
    assert isinstance(text, str)
    assert re.fullmatch(
        r"Booked \d+\. While it was being written, busy time \(Tue 2027-03-02 10:15-11:00; priya\) appeared in the same"
        r" time on the calendar server; the booking is kept\. Tell the user about the clash\.",
        text,
    )
    assert len(server_events(radicale)) == 1  # ours, kept


# --- move and cancel ------------------------------------------------------------------------------


def test_a_move_with_a_stale_etag_changes_nothing_and_says_what_the_event_is_now(
    tmp_path: Path, radicale: RadicaleServer
) -> None:
    conn = calendar_db(tmp_path, radicale)
    calendar = backend(conn, radicale)
    booked = calendar.create("toolu_b", "Plan", TUESDAY_10, TUESDAY_10 + HALF_HOUR, ["priya"])
    fetched = calendar.server.fetch(booked.event.href, "test")
    assert fetched is not None
    assert fetched.etag
    app_copy = remote(radicale, OWNER_USER, "work").events()[0]
    app_copy.icalendar_component["SUMMARY"] = "Plan (renamed in the app)"
    app_copy.save()

    with pytest.raises(ToolError, match=r"changed on the server.*'Plan \(renamed in the app\)'"):
        calendar.move("toolu_m", booked.event.event.id, TUESDAY_10 + timedelta(hours=2), 45, etag=fetched.etag)
    [event] = server_events(radicale)
    assert event.decoded("DTSTART") == TUESDAY_10


def test_a_change_made_between_read_and_write_is_refused_by_if_match(
    tmp_path: Path, dav_server: ServerProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 412 race: If-Match refuses a change made between the read and the write. On Radicale, then on
    Xandikos."""
    radicale: Any = dav_server
    conn = calendar_db(tmp_path, radicale)
    calendar = backend(conn, radicale)
    booked = calendar.create("toolu_b", "Plan", TUESDAY_10, TUESDAY_10 + HALF_HOUR, ["priya"])
    monkeypatch.setenv(PAUSE_AT_VARIABLE, "caldav_before_change")
    monkeypatch.setenv(PAUSE_VARIABLE, "1.5")
    event_id = booked.event.event.id
    worker, failures = in_thread(
        tmp_path, radicale, lambda c: c.move("toolu_m", event_id, TUESDAY_10 + timedelta(hours=2), 45)
    )
    threading.Event().wait(0.5)
    app_copy = remote(radicale, OWNER_USER, "work").events()[0]
    app_copy.icalendar_component["SUMMARY"] = "Renamed meanwhile"
    app_copy.save()
    worker.join(timeout=30)

    assert len(failures) == 1
    assert isinstance(failures[0], ToolError)
    assert "changed on the server" in str(failures[0])
    assert "'Renamed meanwhile'" in str(failures[0])
    [event] = server_events(radicale)
    assert (str(event["SUMMARY"]), event.decoded("DTSTART")) == ("Renamed meanwhile", TUESDAY_10)


def test_move_then_its_resumed_round_then_cancel(tmp_path: Path, radicale: RadicaleServer) -> None:
    conn = calendar_db(tmp_path, radicale)
    calendar = backend(conn, radicale)
    booked = calendar.create("toolu_b", "Plan", TUESDAY_10, TUESDAY_10 + HALF_HOUR, ["priya"])
    later = TUESDAY_10 + timedelta(hours=3)
    moved = calendar.move("toolu_m", booked.event.event.id, later, 45)
    resumed = calendar.move("toolu_m", booked.event.event.id, later, 45)

    assert not moved.already_made
    assert resumed.already_made
    [event] = server_events(radicale)
    assert (event.decoded("DTSTART"), event.decoded("DTEND")) == (later, later + timedelta(minutes=45))
    assert int(event["SEQUENCE"]) == 1  # changed once
    assert moved.event.event.id == booked.event.event.id

    cancelled = calendar.cancel("toolu_c", booked.event.event.id)
    assert cancelled.event.cancelled
    [event] = server_events(radicale)
    assert str(event["STATUS"]) == "CANCELLED"  # kept on the server, cancelled: attendees are told
    assert replica_of(conn, radicale).busy(["you"], later - timedelta(hours=1), later + timedelta(hours=1)) == {
        "you": []
    }


def test_an_event_someone_else_organises_is_not_moved(tmp_path: Path, radicale: RadicaleServer) -> None:
    conn = calendar_db(tmp_path, radicale)
    remote(radicale, OWNER_USER, "work").save_event(
        vevent("theirs", "Board meeting", TUESDAY_10, TUESDAY_10 + HALF_HOUR, "ORGANIZER:mailto:ceo@example.com")
    )
    [found] = replica_of(conn, radicale).events(["you"], TUESDAY_10 - timedelta(hours=1), TUESDAY_10 + HALF_HOUR)
    resource = replica.resource_of(conn, found.id)
    assert resource is not None
    with pytest.raises(ToolError, match=r"organised by ceo@example\.com"):
        backend(conn, radicale).cancel("toolu_c", resource.cid)
    assert "STATUS" not in server_events(radicale)[0]


# --- faults -----------------------------------------------------------------------------------------


def test_wrong_password_is_one_actionable_error(tmp_path: Path, radicale: RadicaleServer) -> None:
    conn = calendar_db(tmp_path, radicale)
    connection = load_connection(conn)
    assert connection is not None
    with pytest.raises(CalDAVError, match=r"refused the user name or password.*\(401\).*calendar connect"):
        sync(conn, connection, "wrong")


def test_a_calendar_not_shared_with_you_and_one_that_does_not_exist(tmp_path: Path, radicale: RadicaleServer) -> None:
    conn = calendar_db(tmp_path, radicale)
    set_contact(conn, "priya", None, calendar_url(radicale, PRIYA_USER, "private"))
    calendar = replica_of(conn, radicale)
    assert calendar.busy(["priya"], TUESDAY_10, TUESDAY_10 + HALF_HOUR) == {"priya": []}  # the store, as it is
    assert re.search(r"Priya Raman: never synced; .*refused access.*403", calendar.staleness(["priya"], TUESDAY_10))
    set_contact(conn, "priya", None, calendar_url(radicale, OWNER_USER, "no-such-calendar"))
    calendar.busy(["priya"], TUESDAY_10, TUESDAY_10 + HALF_HOUR)
    assert re.search(r"has nothing at .*no-such-calendar/ \(404\)", calendar.staleness(["priya"], TUESDAY_10))


def test_a_person_calendar_on_another_server_never_gets_your_password(tmp_path: Path, radicale: RadicaleServer) -> None:
    conn = calendar_db(tmp_path, radicale)
    set_contact(conn, "priya", None, "http://127.0.0.2:9/priya/")
    calendar = replica_of(conn, radicale)
    assert calendar.busy(["priya"], TUESDAY_10, TUESDAY_10 + HALF_HOUR) == {"priya": []}
    assert "is not on your server" in calendar.staleness(["priya"], TUESDAY_10)


def test_the_server_killed_mid_booking_writes_nothing_and_says_so(
    tmp_path: Path, radicale: RadicaleServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = calendar_db(tmp_path, radicale)
    monkeypatch.setenv(PAUSE_AT_VARIABLE, "caldav_before_put")
    monkeypatch.setenv(PAUSE_VARIABLE, "1.5")
    worker, failures = in_thread(
        tmp_path,
        radicale,
        lambda c: c.create("toolu_k", "Plan", TUESDAY_10, TUESDAY_10 + HALF_HOUR, ["priya"]),
        deadline_seconds=3,
    )
    threading.Event().wait(0.5)
    radicale.kill()
    worker.join(timeout=30)

    assert len(failures) == 1
    assert isinstance(failures[0], CalDAVError)
    assert "cannot reach the CalDAV server" in str(failures[0])
    assert str(failures[0]).endswith("nothing was written (the connection was refused)")
    stored = list((radicale.folder / "collections").rglob("*.ics"))
    assert stored == []  # nothing half-written
    calendar = replica_of(conn, radicale)  # a reader: the store, and the line saying the server is gone
    assert calendar.busy(["you"], TUESDAY_10, TUESDAY_10 + HALF_HOUR) == {"you": []}
    assert re.search(r"never synced; 127\.0\.0\.1 unreachable", calendar.staleness(["you"], TUESDAY_10))


def test_a_server_that_never_answers_meets_the_request_deadline(tmp_path: Path, radicale: RadicaleServer) -> None:
    import socket

    conn = calendar_db(tmp_path, radicale)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        url = f"http://127.0.0.1:{port}/"
        connection = Connection(url, OWNER_USER, url + "work/", "Work", "env:X")
        with pytest.raises(CalDAVError, match=r"did not answer within 0.5 s"):
            sync(conn, connection, "pw", deadline_seconds=0.5)


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (500, "<html>oops</html>", r"failed while syncing your calendar \(HTTP 500"),
        (503, "", r"failed while syncing your calendar \(HTTP 503"),
        (207, "<not xml", r"sent data that cannot be read while syncing your calendar"),
    ],
)
def test_server_errors_and_malformed_answers(
    tmp_path: Path, radicale: RadicaleServer, status: int, body: str, expected: str
) -> None:
    conn = calendar_db(tmp_path, radicale)
    with answering(conn, status, body.encode()) as writer, pytest.raises(CalDAVError, match=expected):
        sync(conn, writer.connection, "pw")


# A server without expand support answers the time-range query of a person's shared calendar (people.py,
# where free-busy is refused) with each series as it is stored, and the caldav library expands it on our
# side with recurring-ical-events, which walks for ever on INTERVAL=0 (Radicale itself loops on such an
# event: that case is its 10-second request deadline, above).
@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("RRULE:FREQ=WEEKLY;INTERVAL=0", r"INTERVAL=0: RFC 5545 says it is a positive whole number"),
        ("RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", r"gives no date at all"),
        ("RRULE:FREQ=WEEKLY;BYDAY=TU;UNTIL=20271231T235959Z", None),  # a good one is still expanded here
    ],
)
def test_a_series_the_library_would_expand_for_ever_is_refused_by_name_not_a_hang(
    tmp_path: Path, radicale: RadicaleServer, rule: str, expected: str | None
) -> None:
    first = TUESDAY_10 - timedelta(weeks=5)
    data = vevent("stored-as-is", "Team sync", first, first + HALF_HOUR, rule).replace("\r\n", "&#13;\n")
    body = (
        '<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">'
        '<D:response><D:href>/work/stored-as-is.ics</D:href><D:propstat><D:prop><D:getetag>"1"</D:getetag>'
        f"<C:calendar-data>{data}</C:calendar-data></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>"
        "</D:response></D:multistatus>"
    ).encode()

    conn = calendar_db(tmp_path, radicale)
    with answering(conn, 207, body) as writer:
        set_contact(conn, "priya", None, writer.connection.url + "priya/")
        calendar = RemoteCalendar(writer)
        week = (TUESDAY_10 - timedelta(days=1), TUESDAY_10 + timedelta(days=6))
        calendar.refresh_people(["priya"], *week)
        found = [(e.title, e.start) for e in calendar.events(["priya"], *week)]
        if expected is None:
            assert found == [("Team sync", TUESDAY_10)]
            return
        refused = calendar.staleness(["priya"], TUESDAY_10)
        assert found == []
        assert re.search(
            r"the event 'Team sync' \(UID stored-as-is\) repeats by a rule that cannot be expanded", refused
        )
        assert re.search(expected, refused)
        assert "Mend its repeat rule in the calendar app that made it, or delete it" in refused
