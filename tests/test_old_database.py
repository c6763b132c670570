"""A database made by an earlier version keeps working: people's calendars and conversations survive upgrades.

`tests/data/v1.db` was made by scheduler-agent 0.1.0 before the layout changed (see
`tests/data/make_v1_database.py`): the demo calendar, conversation 1 finished, conversation 2 killed
by SIGKILL right after its booking was committed and before its result was stored. Every later
schema change is a migration, and this test opens a copy of that file with today's code.
"""

from __future__ import annotations

import copy
import shutil
import sqlite3
from pathlib import Path

import pytest
from helpers import run_cli
from test_crash_resume import ASK, SCRIPT

from scheduler_agent.grammar.check import check, conversation_state
from scheduler_agent.storage import conversations, db
from scheduler_agent.storage.migrations import MIGRATIONS
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer

V1 = Path(__file__).parent / "data" / "v1.db"
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
    applied = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY rowid")]
    assert applied == [name for name, _ in MIGRATIONS]
    _, first = conversations.load(conn, 1)
    assert conversation_state(first) == "complete"
    assert len(first) == 6
    _, second = conversations.load(conn, 2)
    assert conversation_state(second) == "interrupted"
    assert check(first, mode="conversation") == []
    assert check(second, mode="conversation") == []
    assert [r[0] for r in conn.execute("SELECT options FROM conversations")] == ["{}", "{}"]  # m038's default


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
    meetings = conn.execute("SELECT count(*) FROM events WHERE start_utc = '2026-08-31T13:00:00Z'").fetchone()[0]
    assert meetings == 1  # the booking v1 made before it died, and no second one
    assert conversations.load(conn, 2)[0].context.options == {}  # m038: no -o keys in a conversation made before
    assert ASK in messages[0]["content"][0]["text"]
