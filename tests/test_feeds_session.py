"""A session with a subscribed feed: refreshed before a live turn; under --record not fetched at all, its
events carried in the cassette's calendar fixture, so the replay gives the model the same busy time."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import text as sql
from test_feeds import Feed, feed_server
from test_ics import ics

from scheduler_agent.calendar.busy import events_for
from scheduler_agent.calendar.fixtures import load_fixture
from scheduler_agent.cli import app
from scheduler_agent.playback.cassette_file import read_setup
from scheduler_agent.storage import db
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

runner = CliRunner()
FOCUS = (  # Priya's Monday 14:00-15:00 focus time, one Monday moved to 16:00 by an override
    "UID:focus@t\nSUMMARY:Focus\nDTSTART;TZID=Europe/London:20260803T140000\n"
    "DTEND;TZID=Europe/London:20260803T150000\nRRULE:FREQ=WEEKLY;BYDAY=MO",
    "UID:focus@t\nSUMMARY:Focus (moved)\nRECURRENCE-ID;TZID=Europe/London:20260907T140000\n"
    "DTSTART;TZID=Europe/London:20260907T160000\nDTEND;TZID=Europe/London:20260907T170000",
)
FIND = tool_use("toolu_feed_1", "find_free_slots", {"person": "priya", "week": "2026-08-31", "minutes": 30})


@pytest.fixture
def server() -> Iterator[tuple[str, Feed]]:
    with feed_server() as served:
        yield served


def subscribed(demo_db: Path, url: str, state: Feed) -> None:
    state.body = ics(*FOCUS)
    result = runner.invoke(
        app,
        ["calendar", "subscribe", url, "--allow-http", "--allow-private", "--person", "priya", "--db", str(demo_db)],
    )
    assert result.exit_code == 0, result.output
    conn = db.connect(demo_db)
    with db.transaction(conn):
        conn.execute(sql("UPDATE feeds SET fetched_at = '2026-01-01T00:00:00Z'"))  # long due for a refresh
    conn.close()


def tool_result(server_: ScriptedServer) -> str:
    content = server_.received[1]["messages"][-1]["content"][0]["content"]
    return content if isinstance(content, str) else content[0]["text"]


@pytest.mark.parametrize(
    ("etag", "said"),
    [
        ('"v2"', "This turn uses feed 1 (priya) fetched now."),
        ('"v1"', "This turn uses feed 1 (priya) its copy, unchanged on the server (checked now)."),  # a 304
    ],
)
def test_a_live_turn_refreshes_a_due_feed_first(
    demo_db: Path, server: tuple[str, Feed], api: Callable[..., ScriptedServer], etag: str, said: str
) -> None:
    url, state = server
    subscribed(demo_db, url, state)
    state.etag = etag
    before = len(state.requests)
    scripted = api([Reply([FIND], "tool_use"), Reply([text("Monday 9:00.")])])
    result = runner.invoke(app, ["ask", "When is Priya free?", "--yes", "--db", str(demo_db), "--today", "2026-08-27"])
    assert result.exit_code == 0, result.stderr
    assert len(state.requests) == before + 1  # fetched before the turn
    assert said in result.stderr.splitlines()
    assert "Mon 2026-08-31 14:00" not in tool_result(scripted)  # the feed's focus time is busy


@pytest.mark.timeout(30)
def test_a_live_turn_waits_a_second_on_a_slow_feed_and_goes_on_with_the_kept_copy(
    demo_db: Path, server: tuple[str, Feed], api: Callable[..., ScriptedServer]
) -> None:
    url, state = server
    subscribed(demo_db, url, state)
    state.delay, state.etag = 8.0, '"slow"'  # the server takes 8 s: the turn must not
    scripted = api([Reply([FIND], "tool_use"), Reply([text("Monday 9:00.")])])
    started = time.monotonic()
    result = runner.invoke(app, ["ask", "When is Priya free?", "--yes", "--db", str(demo_db), "--today", "2026-08-27"])
    took = time.monotonic() - started
    assert result.exit_code == 0, result.stderr
    said = [line for line in result.stderr.splitlines() if line.startswith("This turn uses")]
    assert len(said) == 1
    assert said[0].startswith("This turn uses feed 1 (priya) its copy of ")
    assert "as this refresh failed: no complete answer after 1.0 s" in said[0]
    assert took < 6  # not the server's 8 s
    assert "Mon 2026-08-31 14:00" not in tool_result(scripted)  # the kept copy's focus time is still busy


def test_a_recorded_session_holds_the_feeds_events_and_none_of_its_traffic(
    demo_db: Path,
    server: tuple[str, Feed],
    api: Callable[..., ScriptedServer],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, state = server
    subscribed(demo_db, url, state)
    before = len(state.requests)
    scripted = api([Reply([FIND], "tool_use"), Reply([text("Monday 9:00 or Wednesday 9:15.")])])
    path = tmp_path / "feed.yaml"
    live = runner.invoke(
        app,
        ["ask", "When is Priya free?", "--yes", "--record", str(path), "--db", str(demo_db), "--today", "2026-08-27"],
    )
    assert live.exit_code == 0, live.stderr
    assert len(state.requests) == before  # not fetched under --record
    written = path.read_text()
    assert "private-9f8e7d6c5b4a" not in written
    assert "/calendar/ical/" not in written
    events = read_setup(path)["calendar"]["events"]
    series = [event for event in events if "ics" in event]
    assert len(series) == 1
    assert "Focus (moved)" in series[0]["ics"]  # the override travels with its series
    live_result = tool_result(scripted)
    assert "- Mon 2026-08-31 14:00" not in live_result

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    replayed = runner.invoke(app, ["replay", str(path)])  # offline: a fresh calendar from the fixture
    assert replayed.exit_code == 0, replayed.stderr
    assert replayed.stdout.strip() == live.stdout.strip()
    assert len(state.requests) == before
    # The replay matches each request body: the tool result it sent held the same busy time as the live one.
    copy = db.connect(tmp_path / "copy.db")
    load_fixture(copy, read_setup(path)["calendar"])
    moved = events_for(copy, "priya", datetime(2026, 9, 7, tzinfo=UTC), datetime(2026, 9, 8, tzinfo=UTC))
    copy.close()
    assert [(e.title, e.start) for e in moved] == [("Focus (moved)", datetime(2026, 9, 7, 15, 0, tzinfo=UTC))]
