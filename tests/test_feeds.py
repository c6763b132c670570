"""Subscribed feeds against a real HTTP server on loopback: changing files, 304s, errors, slow answers."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Connection
from sqlalchemy import text as sql
from test_ics import busy, ics

from scheduler_agent.calendar import feeds
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.cli.calendar import calendar_app
from scheduler_agent.storage import db

runner = CliRunner()
LOOPBACK = ("--allow-http", "--allow-private")  # the test server: plain http on 127.0.0.1
SECRET = "/calendar/ical/priya%40example.com/private-9f8e7d6c5b4a/basic.ics"
STANDUP = (
    "UID:s@t\nSUMMARY:Standup\nDTSTART;TZID=Europe/London:20261005T090000\nDURATION:PT30M\nRRULE:FREQ=DAILY;COUNT=3"
)
LUNCH = "UID:l@t\nSUMMARY:Lunch\nDTSTART:20261006T120000Z\nDURATION:PT1H"


class Feed:
    """What the server serves now: a body, its ETag, a status, a delay; and every request it saw."""

    def __init__(self) -> None:
        self.body = ics(STANDUP)
        self.etag = '"v1"'
        self.status = 200
        self.delay = 0.0
        self.requests: list[dict[str, str]] = []


@pytest.fixture
def server() -> Iterator[tuple[str, Feed]]:
    with feed_server() as served:
        yield served


@contextmanager
def feed_server() -> Iterator[tuple[str, Feed]]:
    """A loopback HTTP server serving what its Feed says, on a secret-looking path."""
    state = Feed()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests.append({"path": self.path, **dict(self.headers.items())})
            time.sleep(state.delay)
            if state.status != 200:
                self.send_response(state.status)
                self.end_headers()
                return
            if self.headers.get("If-None-Match") == state.etag:
                self.send_response(304)
                self.end_headers()
                return
            data = state.body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/calendar")
            self.send_header("ETag", state.etag)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while not thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    yield f"http://127.0.0.1:{httpd.server_address[1]}{SECRET}", state
    httpd.shutdown()
    httpd.server_close()


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(calendar_app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_subscribe_fetches_and_lists_with_the_address_masked(demo_db: Path, server: tuple[str, Feed]) -> None:
    url, _state = server
    code, out, err = invoke("subscribe", url, *LOOPBACK, "--person", "priya", "--refresh", "1h", "--db", str(demo_db))
    assert code == 0, err
    assert "Subscribed Priya Raman (priya) to http://127.0.0.1:" in out
    assert "refreshed when older than 1h" in out
    assert "private-9f8e7d6c5b4a" not in out + err
    assert [title for title, *_ in busy(demo_db, "priya", "2026-10-05", "2026-10-08")] == ["Standup"] * 3
    code, out, _ = invoke("feeds", "--db", str(demo_db))
    assert code == 0
    assert "  priya  " in out
    assert "  1 event  " in out
    assert "ok: 1 event (1 new, 0 updated, 0 removed)" in out
    assert "private-9f8e7d6c5b4a" not in out
    assert "/…" in out


def test_a_changed_file_replaces_the_feeds_events_and_a_304_keeps_them(demo_db: Path, server: tuple[str, Feed]) -> None:
    url, state = server
    assert invoke("subscribe", url, *LOOPBACK, "--person", "priya", "--db", str(demo_db))[0] == 0
    _, out, _ = invoke("feeds", "--refresh", "--db", str(demo_db))
    assert "not modified" in out
    assert state.requests[-1]["If-None-Match"] == '"v1"'  # the ETag went back
    state.body, state.etag = ics(LUNCH), '"v2"'
    _code, out, _ = invoke("feeds", "--refresh", "--db", str(demo_db))
    assert "ok: 1 event (1 new, 0 updated, 1 removed)" in out
    assert busy(demo_db, "priya", "2026-10-05", "2026-10-08") == [("Lunch", "Tue 2026-10-06 13:00", "14:00")]


@pytest.mark.parametrize(
    ("status", "delay", "why"), [(500, 0.0, "answered 500"), (200, 1.5, "no complete answer after 0.5 s")]
)
def test_a_feed_that_cannot_be_fetched_keeps_its_last_copy_and_the_tools_say_how_old(
    demo_db: Path, server: tuple[str, Feed], monkeypatch: pytest.MonkeyPatch, status: int, delay: float, why: str
) -> None:
    url, state = server
    assert invoke("subscribe", url, *LOOPBACK, "--person", "priya", "--db", str(demo_db))[0] == 0
    state.status, state.delay, state.etag = status, delay, '"v3"'
    if delay:
        monkeypatch.setattr(feeds, "TIMEOUT_SECONDS", 0.5)
    _code, out, _ = invoke("feeds", "--refresh", "--db", str(demo_db))
    assert why in out
    assert "keeping the copy of" in out
    assert "private-9f8e7d6c5b4a" not in out
    assert len(busy(demo_db, "priya", "2026-10-05", "2026-10-08")) == 3  # the last good copy
    conn = db.connect(demo_db)
    later = datetime.now(UTC) + timedelta(hours=3)
    clock = Clock.pinned_at(later.date(), later.time().replace(microsecond=0), "UTC")
    next_week = (later + timedelta(days=7)).date().isoformat()
    text = CalendarTools(conn, clock).find_free_slots("priya", next_week, 30)  # what the model reads
    conn.close()
    assert text.splitlines()[-1] == (
        "Note: priya's subscribed calendar could not be refreshed (last fetched 3 h ago): "
        "that busy time may be out of date."
    )


def test_webcal_is_https_and_other_schemes_are_refused(demo_db: Path) -> None:
    assert feeds.normalised_url("webcal://example.com/x.ics") == "https://example.com/x.ics"
    code, _, err = invoke("subscribe", "ftp://example.com/secret-token", "--person", "priya", "--db", str(demo_db))
    assert code == 1
    assert "not a feed address" in err
    assert "secret-token" not in err
    assert feeds.parse_duration("2h30m") == timedelta(hours=2, minutes=30)
    with pytest.raises(feeds.FeedError, match="not a duration"):
        feeds.parse_duration("soon")


def test_a_failing_first_fetch_subscribes_nothing(demo_db: Path, server: tuple[str, Feed]) -> None:
    url, state = server
    state.status = 404
    code, _, err = invoke("subscribe", url, *LOOPBACK, "--person", "priya", "--db", str(demo_db))
    assert code == 1
    assert "answered 404" in err
    assert "nothing was subscribed" in err
    assert "private-9f8e7d6c5b4a" not in err
    assert invoke("feeds", "--db", str(demo_db))[1].startswith("No feeds")


def test_a_login_page_instead_of_a_calendar_keeps_the_last_copy(demo_db: Path, server: tuple[str, Feed]) -> None:
    url, state = server
    assert invoke("subscribe", url, *LOOPBACK, "--person", "priya", "--db", str(demo_db))[0] == 0
    state.body, state.etag = "<html><body>Sign in</body></html>", '"login"'
    _, out, _ = invoke("feeds", "--refresh", "--db", str(demo_db))
    assert "failed: not a readable iCalendar file" in out
    assert "not an iCalendar file" in out
    assert "private-9f8e7d6c5b4a" not in out
    assert len(busy(demo_db, "priya", "2026-10-05", "2026-10-08")) == 3
    _, listed, _ = invoke("feeds", "--db", str(demo_db))
    assert "  1 event  " in listed  # the series, still there
    assert "failed: not a readable" in listed


@pytest.mark.timeout(10)
def test_a_feed_event_whose_rule_never_ends_its_walk_is_skipped(demo_db: Path, server: tuple[str, Feed]) -> None:
    """INTERVAL=0 made dateutil loop for ever while the refresh held the write lock; now it is one skipped event."""
    url, state = server
    endless = "UID:e@t\nSUMMARY:Endless\nDTSTART:20261006T090000Z\nDURATION:PT1H\nRRULE:FREQ=DAILY;INTERVAL=0"
    state.body = ics(LUNCH, endless)
    code, _, err = invoke("subscribe", url, *LOOPBACK, "--person", "priya", "--db", str(demo_db))
    assert code == 0, err
    _, listed, _ = invoke("feeds", "--db", str(demo_db))
    assert "ok: 1 event (1 new, 0 updated, 0 removed, 1 skipped)" in listed
    assert busy(demo_db, "priya", "2026-10-05", "2026-10-08") == [("Lunch", "Tue 2026-10-06 13:00", "14:00")]


def test_the_staleness_line_names_the_failed_and_never_fetched_feeds_of_the_people_asked_for(
    any_conn: Connection,
) -> None:
    """On both databases: only what the line needs is read (failed or never fetched), for the people asked for."""
    now = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
    rows = [
        ("priya", "https://a.example/1", "2026-09-01T09:00:00Z", "failed: answered 500"),
        ("priya", "https://a.example/2", "2026-09-01T11:55:00Z", "ok: 3 events (unchanged)"),
        ("you", "https://a.example/3", None, "never fetched"),
        ("you", "https://a.example/4", "2026-08-30T12:00:00Z", "Failed in another spelling"),
    ]
    people = [row[0] for row in rows]
    others = any_conn.execute(sql("SELECT key FROM people WHERE key NOT IN ('you', 'priya')")).scalars().first()
    rows.append((others, "https://a.example/5", None, "failed: unreachable"))
    with db.transaction(any_conn):
        for person, url, ok_at, result in rows:
            any_conn.execute(
                sql("INSERT INTO feeds (person_key, url, ok_at, result) VALUES (:person, :url, :ok_at, :result)"),
                {"person": person, "url": url, "ok_at": ok_at, "result": result},
            )
    assert feeds.staleness_note(any_conn, people, now) == (
        "Note: priya's subscribed calendar could not be refreshed (last fetched 3 h ago); "
        "you's subscribed calendar could not be refreshed (never fetched): that busy time may be out of date."
    )
    assert feeds.staleness_note(any_conn, ["priya"], now).count("could not be refreshed") == 1
    assert feeds.staleness_note(any_conn, [others], now).endswith("(never fetched): that busy time may be out of date.")
    assert feeds.staleness_note(any_conn, ["nobody"], now) == ""
