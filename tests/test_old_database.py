"""A database made by an earlier version keeps working: people's calendars and conversations survive upgrades.

`tests/data/v1.db` was made by scheduler-agent 0.1.0 before the layout changed (see
`tests/data/make_v1_database.py`): the demo calendar, conversation 1 finished, conversation 2 killed
by SIGKILL right after its booking was committed and before its result was stored. Every later
schema change is a migration, and this test opens a copy of that file with today's code.

`tests/data/old/` holds databases the store made before it moved to Alembic, on SQLite and on PostgreSQL,
at the first migration of that list (m001), a middle one (m019) and the last (m036), as SQL dumps (see
`tests/data/make_old_databases.py`): each is adopted on open, stamped at its revision and upgraded.
"""

from __future__ import annotations

import copy
import json
import shutil
import sqlite3
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import DEMO_DAY, demo_clock, run_cli
from sqlalchemy import Connection
from sqlalchemy import text as sql
from test_crash_resume import ASK, SCRIPT

from scheduler_agent.agent.events import ignore
from scheduler_agent.agent.types import JSON
from scheduler_agent.calendar.busy import events_for
from scheduler_agent.calendar.events import add_event
from scheduler_agent.calendar.fixtures import seed_demo
from scheduler_agent.grammar.check import check, conversation_state
from scheduler_agent.session.session import Session, Settings
from scheduler_agent.storage import conversations, db
from scheduler_agent.storage.dialect import Location
from scheduler_agent.storage.migrations import HEAD
from scheduler_agent.testing.postgres import PostgresServer
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, tool_use

V1 = Path(__file__).parent / "data" / "v1.db"
OLD = Path(__file__).parent / "data" / "old"
V1_MIGRATIONS = [
    "m001_calendar",
    "m002_bookings",
    "m003_conversations",
    "m004_approvals",
    "m005_recurrence",
    "m006_conversation_stream",
]


def renamed(script: list[Reply], suffix: str) -> list[Reply]:
    """The same replies with every tool_use id + suffix: conversation 2's script."""
    out = copy.deepcopy(script)
    for reply in out:
        for block in reply.content:
            if block.get("type") == "tool_use":
                block["id"] += suffix
    return out


@pytest.fixture
def old_db(tmp_path: Path) -> Path:
    path = tmp_path / "v1.db"
    shutil.copyfile(V1, path)
    return path


def test_the_file_is_as_version_one_left_it() -> None:
    raw = sqlite3.connect(f"file:{V1}?mode=ro&immutable=1", uri=True)  # leaves no -wal or -shm beside it
    assert [r[0] for r in raw.execute("SELECT name FROM _migrations ORDER BY rowid")] == V1_MIGRATIONS
    assert raw.execute("SELECT count(*) FROM conversations").fetchone()[0] == 2


def test_opening_it_applies_every_later_migration_and_keeps_the_data(old_db: Path) -> None:
    conn = db.connect(old_db)
    assert db.revision(conn) == HEAD
    recorded = [r[0] for r in conn.execute(sql("SELECT name FROM _migrations ORDER BY rowid"))]
    assert recorded == V1_MIGRATIONS  # the old list's record, left as it was
    _, first = conversations.load(conn, 1)
    assert conversation_state(first) == "complete"
    assert len(first) == 6
    _, second = conversations.load(conn, 2)
    assert conversation_state(second) == "interrupted"
    assert check(first, mode="conversation") == []
    assert check(second, mode="conversation") == []
    assert [r[0] for r in conn.execute(sql("SELECT options FROM conversations"))] == ["{}", "{}"]  # m038's default


def test_list_and_show_read_its_conversations(old_db: Path) -> None:
    listed = run_cli(["conversations", "list", "--db", str(old_db)])
    assert listed.returncode == 0, listed.stderr
    assert "Find a 30-minute slot with Priya" in listed.stdout
    shown = run_cli(["conversations", "show", "2", "--db", str(old_db)])
    assert shown.returncode == 0, shown.stderr
    assert "toolu_cr_2_b" in shown.stdout


def test_the_interrupted_conversation_resumes_without_booking_twice(old_db: Path) -> None:
    with ScriptedServer(renamed(SCRIPT, "_b"), by_length=True) as server:
        done = run_cli(["resume", "2", "--yes", "--db", str(old_db)], server)
    assert done.returncode == 0, done.stderr
    assert "Booked Monday" in done.stdout
    conn = db.connect(old_db)
    _, messages = conversations.load(conn, 2)
    assert conversation_state(messages) == "complete"
    assert check(messages, mode="conversation") == []
    meetings = conn.execute(sql("SELECT count(*) FROM events WHERE start_utc = '2026-08-31T13:00:00Z'")).fetchone()[0]
    assert meetings == 1  # the booking v1 made before it died, and no second one
    assert conversations.load(conn, 2)[0].context.options == {}  # m038: no -o keys in a conversation made before
    assert ASK in messages[0]["content"][0]["text"]


def restored_file(number: str, tmp_path: Path) -> Path:
    path = tmp_path / f"{number}.db"
    raw = sqlite3.connect(path)
    raw.executescript((OLD / f"sqlite_{number}.sql").read_text())
    raw.close()
    return path


def restored(kind: str, number: str, tmp_path: Path, request: pytest.FixtureRequest) -> Location:
    """A database as the store before Alembic left it at migration `number`, restored from its dump."""
    dump = OLD / f"{kind}_{number}.sql"
    if kind == "sqlite":
        return restored_file(number, tmp_path)
    server: PostgresServer = request.getfixturevalue("pg_server")
    url = server.new_database()
    psql = [str(server.bin / "psql"), "-q", "-v", "ON_ERROR_STOP=1", "-f", str(dump), url]
    subprocess.run(psql, check=True, capture_output=True)
    return url


@pytest.mark.parametrize("number", ["m001", "m019", "m036"])
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_database_from_before_alembic_is_adopted_and_upgraded_on_open(
    kind: str, number: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    location = restored(kind, number, tmp_path, request)
    conn = db.open_db(location)
    assert db.revision(conn) == HEAD
    recorded = [row[0] for row in conn.execute(sql("SELECT name FROM _migrations"))]
    assert recorded[-1].startswith(number)  # the old record is left as it was
    monday = datetime(2026, 8, 31, tzinfo=UTC)
    found = events_for(conn, "priya", monday, datetime(2026, 9, 1, tzinfo=UTC))
    assert [(e.title, e.start) for e in found] == [("Roadmap", datetime(2026, 8, 31, 13, tzinfo=UTC))]
    added = add_event(
        conn, "Sync", datetime(2026, 9, 1, 9, tzinfo=UTC), datetime(2026, 9, 1, 10, tzinfo=UTC), ["priya"]
    )
    assert added.id == 2  # the serial id goes on from the rows already there, on PostgreSQL too
    if number != "m001":
        _, messages = conversations.load(conn, 1)
        assert messages[0]["content"][0]["text"] == "Book 30 minutes with Priya."
    conn.close()
    again = db.open_db(location)
    assert db.revision(again) == HEAD
    again.close()


def test_a_database_a_newer_version_made_is_refused_in_one_line(tmp_path: Path) -> None:
    path = restored_file("m036", tmp_path)
    raw = sqlite3.connect(path)
    raw.execute("INSERT INTO _migrations (name) VALUES ('m099_from_the_future')")
    raw.commit()
    raw.close()
    from scheduler_agent.agent.errors import InputError

    with pytest.raises(InputError, match=r"newer version of scheduler-agent \(migration m099\)"):
        db.connect(path)


def test_a_revision_this_version_does_not_have_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "newer.db"
    db.connect(path).close()
    raw = sqlite3.connect(path)
    raw.execute("UPDATE alembic_version SET version_num = 'm099'")  # as a newer version leaves it
    raw.commit()
    raw.close()
    from scheduler_agent.agent.errors import InputError

    with pytest.raises(InputError, match=r"newer version of scheduler-agent.*m099"):
        db.connect(path)


# --- m044: the home-made queue retired (issue 36) ---------------------------------------------------------------

LATER = "And find Priya another half hour the week after."
UPGRADED = "Upgraded: the workers run on Temporal now."


def at_m043(location: Location) -> Connection:
    """`location` opened at m043, the last revision with the home-made work queue."""
    return db.connect(location, to="m043") if isinstance(location, Path) else db.connect_url(location, to="m043")


def queued_as_m043_left_them(location: Location) -> tuple[int, int, int]:
    """The demo calendar and three conversations as a worker set-up at m043 left them, their ids back:
    a new conversation whose submitted text no worker had taken up; one whose first turn stopped at the bound
    (tool results last) with a second text queued, to join that trailing user turn; and one whose turn a
    worker finished."""
    conn = at_m043(location)
    seed_demo(conn)
    session = Session(conn, demo_clock(), lambda request: {}, Settings("claude-sonnet-5-5", 10), ignore)
    context = session.fresh_context()
    pin = demo_clock().pinned
    assert pin is not None

    def new_conversation(messages: list[JSON]) -> int:
        cid = conversations.create(conn, context, started_on=DEMO_DAY.isoformat(), clock_pin=pin.isoformat())
        conversations.Journal(conn, cid, []).sync(messages)
        return cid

    fresh = new_conversation([])
    stopped = new_conversation(
        [
            {"role": "user", "content": [{"type": "text", "text": ASK}]},
            {"role": "assistant", "content": [tool_use("toolu_q_1", "find_free_slots", {"person": "priya"})]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_q_1", "content": "none"}]},
        ]
    )
    conversations.set_stop(conn, stopped, "bound")
    done = new_conversation(
        [
            {"role": "user", "content": [{"type": "text", "text": "Hello"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Hello. Whom shall I book?"}]},
        ]
    )
    rows = [(fresh, "queued", ASK, 0), (stopped, "queued", LATER, 3), (done, "done", None, 0)]
    for cid, state, submitted, base in rows:
        conn.execute(
            sql(
                "INSERT INTO work_queue (conversation_id, state, text, base, approved, submitted_at)"
                " VALUES (:cid, :state, :submitted, :base, '[\"create_event\"]', '2026-12-04T10:00:00Z')"
            ),
            {"cid": cid, "state": state, "submitted": submitted, "base": base},
        )
    conn.close()
    return fresh, stopped, done


def test_turns_queued_at_m043_are_in_their_lists_and_resume_finishes_them(any_db: Location) -> None:
    fresh, stopped, done = queued_as_m043_left_them(any_db)
    with ScriptedServer(SCRIPT, by_length=True) as server:
        resumed = run_cli(["resume", str(fresh), "--yes", "--db", str(any_db)], server)
    assert resumed.returncode == 0, resumed.stderr
    said = [line for line in resumed.stderr.splitlines() if line.startswith(UPGRADED)]
    assert said == [
        f"{UPGRADED} The turns still queued (conversations {fresh}, {stopped}) are in their lists: "
        "`scheduler-agent resume N` finishes each."
    ]
    assert "Booked Monday" in resumed.stdout
    assert server.received[0]["messages"] == [{"role": "user", "content": [{"type": "text", "text": ASK}]}]
    conn = db.open_db(any_db)
    assert db.revision(conn) == HEAD
    _, first = conversations.load(conn, fresh)
    assert conversation_state(first) == "complete" and check(first, mode="conversation") == []
    record, second = conversations.load(conn, stopped)
    assert second[-1]["content"][-1] == {"type": "text", "text": LATER}  # joined to the trailing tool results
    assert len(second) == 3 and conversation_state(second) == "waiting" and record.last_stop is None
    assert check(second, mode="conversation") == []
    assert record.sizes[-1] == len(json.dumps(second[-1], separators=(",", ":")).encode())  # as the store writes
    assert len(conversations.load(conn, done)[1]) == 2
    meetings = conn.execute(sql("SELECT count(*) FROM events WHERE start_utc = '2026-08-31T13:00:00Z'")).fetchone()[0]
    assert meetings == 1
    conn.close()
    again = run_cli(["conversations", "list", "--db", str(any_db)])
    assert again.returncode == 0, again.stderr
    assert UPGRADED not in again.stderr  # said once, by the upgrade


def test_an_upgrade_with_nothing_queued_and_an_up_to_date_database_say_nothing(tmp_path: Path) -> None:
    old = tmp_path / "m043.db"
    conn = at_m043(old)
    seed_demo(conn)
    conn.close()
    current = tmp_path / "current.db"
    db.connect(current).close()
    for path in (old, current):
        listed = run_cli(["conversations", "list", "--db", str(path)])
        assert listed.returncode == 0, listed.stderr
        assert UPGRADED not in listed.stderr
    conn = db.connect(old)
    tables = {row[0] for row in conn.execute(sql("SELECT name FROM sqlite_master WHERE type = 'table'"))}
    assert "work_queue" not in tables and {"leases", "pending_approvals", "approvals"} <= tables
