"""One process runs a conversation at a time (the lease: on SQLite and PostgreSQL), and what is written is private
and where it was asked."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text as sql

from scheduler_agent.grammar.check import check
from scheduler_agent.storage import conversations, lease
from scheduler_agent.storage.conversations import Context, Journal
from scheduler_agent.storage.db import connect, open_db
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text


def waiting_conversation(path: Path) -> int:
    """A stored conversation that ends with a user turn the model never answered (resumable)."""
    from scheduler_agent.calendar.fixtures import seed_demo

    conn = connect(path)
    seed_demo(conn)
    cid = conversations.create(
        conn,
        Context("claude-sonnet-5-5", 1024, "system", []),
        started_on="2026-08-27",
        clock_pin="2026-08-27T08:00:00+00:00",
    )
    messages = [{"role": "user", "content": [{"type": "text", "text": "Book Priya"}]}]
    Journal(conn, cid, []).sync(messages)
    conn.close()
    return cid


def cli(args: list[str], server: ScriptedServer) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))}
    env |= {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-test-dummy", "SCHEDULER_AGENT_STRICT": "1"}
    command = [sys.executable, "-c", "from scheduler_agent.cli import main; main()", *args]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tempfile.gettempdir()
    )


@pytest.fixture
def slow_server() -> Iterator[ScriptedServer]:
    with ScriptedServer([Reply([text("Booked Monday.")], delay=3.0)] * 2) as server:
        yield server


def test_two_resumes_at_once_one_runs_the_other_says_who_holds_it_exit_8(
    tmp_path: Path, slow_server: ScriptedServer
) -> None:
    path = tmp_path / "cal.db"
    cid = waiting_conversation(path)
    runs = [cli(["resume", str(cid), "--db", str(path), "--yes"], slow_server) for _ in range(2)]
    results = [(run.wait(timeout=60), *run.communicate()) for run in runs]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 8], results
    loser = next(err for code, _, err in results if code == 8)
    assert "is being run elsewhere: process" in loser
    assert "has held it since" in loser
    assert "Traceback" not in loser
    assert "UNIQUE constraint" not in loser
    assert len(slow_server.received) == 1  # the model was asked once
    conn = connect(path)
    messages = conversations.load(conn, cid)[1]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert check(messages, mode="conversation") == []
    assert lease.current(conn, cid) is None  # released when the turn ended


def test_the_lease_is_claimed_renewed_and_released_by_its_holder(
    any_db: Path | str,
) -> None:  # on SQLite and PostgreSQL
    conn = open_db(any_db)
    cid = conversations.create(conn, Context("m", 1, "s", []), started_on="2026-08-27", clock_pin=None)
    me, other = lease.Holder.me(), lease.Holder("elsewhere.example", 4242)
    held = lease.claim(conn, cid, other)
    with pytest.raises(lease.ConversationBusy, match=r"process 4242 on elsewhere.example has held it since") as busy:
        lease.claim(conn, cid, me)
    assert busy.value.exit_code == 8
    assert held.since in str(busy.value)
    assert lease.renew(conn, cid, other)
    assert not lease.renew(conn, cid, me)
    lease.release(conn, cid, me)  # not mine: nothing happens
    assert lease.current(conn, cid) is not None
    lease.release(conn, cid, other)
    assert lease.current(conn, cid) is None
    assert lease.claim(conn, cid, me).holder == me


def test_an_expired_lease_or_a_dead_holder_on_this_host_is_taken_over(
    any_db: Path | str,
) -> None:  # on SQLite and PostgreSQL
    conn = open_db(any_db)
    cid = conversations.create(conn, Context("m", 1, "s", []), started_on="2026-08-27", clock_pin=None)
    lease.claim(conn, cid, lease.Holder("elsewhere.example", 1), seconds=-1)  # already expired
    assert lease.claim(conn, cid, lease.Holder.me()).holder == lease.Holder.me()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lease.release(conn, cid, lease.Holder.me())
    lease.claim(conn, cid, lease.Holder(lease.Holder.me().host, int(dead.stdout)))  # a SIGKILLed process's lease
    assert lease.claim(conn, cid, lease.Holder.me()).holder == lease.Holder.me()


def test_deleting_a_conversation_deletes_its_lease(any_db: Path | str) -> None:
    conn = open_db(any_db)
    cid = conversations.create(conn, Context("m", 1, "s", []), started_on="2026-08-27", clock_pin=None)
    lease.claim(conn, cid, lease.Holder.me())
    conversations.delete(conn, cid)
    assert conn.execute(sql("SELECT count(*) FROM leases")).fetchone()[0] == 0


def test_a_booking_recorded_before_input_hashes_were_kept_still_answers_its_resumed_call(demo_db: Path) -> None:
    from helpers import demo_clock

    from scheduler_agent.agent.deadline import Deadline
    from scheduler_agent.calendar.tools import CalendarTools

    conn = connect(demo_db)
    conn.execute(sql("INSERT INTO bookings (tool_use_id, event_id, result) VALUES ('toolu_old', NULL, 'Booked.')"))
    arguments = {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30}
    answer = CalendarTools(conn, demo_clock()).run("create_event", arguments, "toolu_old", Deadline.after(5))
    assert answer == "Booked."
    assert conn.execute(sql("SELECT count(*) FROM events WHERE start_utc = '2026-08-31T13:00:00Z'")).fetchone()[0] == 0


# --- what is written: private, and only where it was asked ---------------------------------------------


def mode_of(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_a_new_database_and_its_wal_and_shm_files_are_0600(tmp_path: Path) -> None:
    path = tmp_path / "cal.db"
    conn = connect(path)
    conn.execute(sql("CREATE TABLE t (x)"))  # WAL mode: the -wal and -shm files exist while it is open
    assert {p.name: mode_of(p) for p in tmp_path.glob("cal.db*")} == {
        "cal.db": 0o600,
        "cal.db-wal": 0o600,
        "cal.db-shm": 0o600,
    }


def test_an_existing_database_keeps_the_mode_its_owner_gave_it(tmp_path: Path) -> None:
    path = tmp_path / "cal.db"
    path.touch(mode=0o640)
    path.chmod(0o640)
    connect(path).close()
    assert mode_of(path) == 0o640


def test_the_default_data_folder_is_made_0700_and_a_folder_the_person_has_is_never_chmod_ed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scheduler_agent.storage.db import data_dir, open_db

    open_db(None).close()
    assert mode_of(data_dir()) == 0o700
    assert mode_of(data_dir() / "scheduler.db") == 0o600
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    theirs.chmod(0o755)
    monkeypatch.setenv("XDG_DATA_HOME", str(theirs))
    (theirs / "scheduler-agent").mkdir(mode=0o755)
    (theirs / "scheduler-agent").chmod(0o755)
    open_db(None).close()
    assert mode_of(theirs / "scheduler-agent") == 0o755


def test_dumps_and_cassettes_are_0600(demo_db: Path, api) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from scheduler_agent.cli import app

    api([Reply([text("ok")])])
    dump, cassette = demo_db.parent / "dump.jsonl", demo_db.parent / "session.yaml"
    args = ["ask", "hi", "--db", str(demo_db), "--dump-array-file", str(dump), "--record", str(cassette)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.stderr
    assert mode_of(dump) == 0o600
    assert mode_of(cassette) == 0o600
    assert "interactions" in cassette.read_text()


@pytest.mark.parametrize("option", ["--db", "--dump-array-file", "--record"])
def test_a_path_in_a_missing_folder_is_refused_in_one_line_and_no_folder_is_made(
    demo_db: Path,
    api,
    option: str,  # type: ignore[no-untyped-def]
) -> None:
    from click.testing import CliRunner

    from scheduler_agent.cli import app

    api([Reply([text("ok")])])
    missing = demo_db.parent / "no" / "such"
    args = ["ask", "hi", "--db", str(demo_db), option, str(missing / "file")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, (result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1
    assert f"the folder {missing} does not exist" in errors[0]
    assert not (demo_db.parent / "no").exists()


def test_streamed_text_is_joined_per_block_in_order_with_interleaved_blocks() -> None:
    """The text is joined once per block (linear; benchmarks/sse_assembly.py has the figures)."""
    from scheduler_agent.api.sse import assemble

    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "usage": {}}
    events: list[tuple[str, dict]] = [("message_start", {"message": message})]  # type: ignore[type-arg]
    events.append(("content_block_start", {"index": 0, "content_block": {"type": "text", "text": "A:"}}))
    events.append(("content_block_start", {"index": 1, "content_block": {"type": "text", "text": ""}}))
    for i in range(2000):
        events.append(("content_block_delta", {"index": i % 2, "delta": {"type": "text_delta", "text": f"{i},"}}))
    events += [("content_block_stop", {"index": 0}), ("content_block_stop", {"index": 1}), ("message_stop", {})]
    seen: list[str] = []
    reply = assemble(events, seen.append)
    assert reply["content"][0]["text"] == "A:" + "".join(f"{i}," for i in range(0, 2000, 2))
    assert reply["content"][1]["text"] == "".join(f"{i}," for i in range(1, 2000, 2))
    assert len(seen) == 2000
