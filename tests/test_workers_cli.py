"""The worker commands as a person runs them (issue 16): submit, worker, wait, approve, decline.

Each is the real CLI in a new process (tests/helpers.py `run_cli`) against the loopback scripted API,
on a SQLite file and on PostgreSQL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator

import pytest
import worker_stores
from helpers import DEMO_TODAY, DUMMY_KEY, run_cli

from scheduler_agent.storage import db
from scheduler_agent.testing.booking_script import booking_script, request_text
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text

Location = worker_stores.Location
store = worker_stores.store  # the demo calendar on each database (a fixture)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    def script(request: dict[str, object]) -> Reply | None:
        messages = request["messages"]
        assert isinstance(messages, list)
        last = messages[-1]["content"]
        declined = isinstance(last, list) and any(b.get("is_error") for b in last if isinstance(b, dict))
        return Reply([text("Understood: nothing booked.")]) if declined else booking_script()(request)

    with ScriptedServer([], script=script) as running:
        yield running


def cli(store: Location, server: ScriptedServer | None, *args: str) -> subprocess.CompletedProcess[str]:
    result = run_cli([*args, "--db", str(store)], server, timeout=120)
    assert "Traceback" not in result.stderr and "bug in scheduler-agent" not in result.stderr, result.stderr
    return result


def needs_approval(store: Location) -> list[int]:
    """`conversations list --state needs-approval --json`: the ids it lists."""
    listed = cli(store, None, "conversations", "list", "--state", "needs-approval", "--json")
    assert listed.returncode == 0, listed.stderr
    found = json.loads(listed.stdout)
    assert all(row["state"] == "needs-approval" for row in found)
    return [int(row["id"]) for row in found]


def submitted_id(result: subprocess.CompletedProcess[str]) -> int:
    assert result.returncode == 0, result.stderr
    return int(result.stdout.strip().splitlines()[-1])  # the id alone on the last line


def test_submit_prints_the_id_then_a_worker_runs_it_and_wait_prints_it_as_ask(
    store: Location, server: ScriptedServer
) -> None:
    cid = submitted_id(cli(store, None, "submit", request_text(0), "--yes", "--today", DEMO_TODAY))
    assert server.received == []  # submitting never calls the model
    assert cli(store, server, "worker", "--drain").returncode == 0
    waited = cli(store, None, "wait", str(cid))
    assert waited.returncode == 0, waited.stderr
    assert waited.stdout == "Booked slot 0.\n"
    assert "→ create_event" in waited.stderr
    assert "toolu_s0_book" in waited.stderr  # the turn's calls, as the trace
    conn = db.open_db(store)
    assert conn.execute("SELECT count(*) FROM events WHERE title = 'Slot 0'").fetchone()[0] == 1


def test_a_booking_waits_for_approve_through_the_commands(store: Location, server: ScriptedServer) -> None:
    cid = submitted_id(cli(store, None, "submit", request_text(1), "--today", DEMO_TODAY))
    assert cli(store, server, "worker", "--drain").returncode == 0
    assert needs_approval(store) == [cid]
    waiting = cli(store, None, "wait", str(cid))
    assert waiting.returncode == 9, waiting.stderr
    assert "Book 'Slot 1' on Mon 2026-09-14 11:30-12:00" in waiting.stderr
    assert "[toolu_s1_book]" in waiting.stderr
    assert f"scheduler-agent approve {cid}" in waiting.stderr

    approved = cli(store, None, "approve", str(cid))
    assert approved.returncode == 0, approved.stderr
    assert "approved: Book 'Slot 1'" in approved.stdout
    assert "queued again" in approved.stdout
    assert needs_approval(store) == []
    assert cli(store, server, "worker", "--drain").returncode == 0
    done = cli(store, None, "wait", str(cid))
    assert (done.returncode, done.stdout) == (0, "Booked slot 1.\n")


def test_decline_with_a_reason_and_the_mistakes_a_person_can_make(store: Location, server: ScriptedServer) -> None:
    cid = submitted_id(cli(store, None, "submit", request_text(2), "--today", DEMO_TODAY))
    assert cli(store, server, "worker", "--drain").returncode == 0
    wrong = cli(store, None, "decline", str(cid), "--call", "toolu_nope")
    assert wrong.returncode == 1
    assert "no call 'toolu_nope' waiting; the calls waiting: toolu_s2_book" in wrong.stderr
    declined = cli(store, None, "decline", str(cid), "--call", "toolu_s2_book", "--reason", "not on Mondays")
    assert declined.returncode == 0 and "declined: Book 'Slot 2'" in declined.stdout, declined.stderr
    assert cli(store, server, "worker", "--drain").returncode == 0
    done = cli(store, None, "wait", str(cid))
    assert (done.returncode, done.stdout) == (0, "Understood: nothing booked.\n")
    refusal = server.received[-1]["messages"][-1]["content"][0]
    assert refusal["is_error"] is True
    assert "not on Mondays" in refusal["content"]
    again = cli(store, None, "approve", str(cid))
    assert again.returncode == 1
    assert f"conversation {cid} waits for no approval" in again.stderr
    assert cli(store, None, "wait", "999").returncode == 1
    empty = cli(store, None, "submit", "   ")
    assert empty.returncode != 0
    assert "empty" in empty.stderr


def test_submit_wait_blocks_until_a_running_worker_ends_the_turn(demo_db: Location, server: ScriptedServer) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))}
    env |= {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": DUMMY_KEY, "SCHEDULER_AGENT_STRICT": "1"}
    command = [sys.executable, "-c", "from scheduler_agent.cli import main; main()", "worker", "--db", str(demo_db)]
    running = subprocess.Popen(command, env=env, cwd=tempfile.gettempdir(), stderr=subprocess.PIPE, text=True)
    try:
        result = cli(demo_db, None, "submit", request_text(3), "--yes", "--wait", "--today", DEMO_TODAY)
    finally:
        running.terminate()
        _, said = running.communicate(timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1:] == ["Booked slot 3."]
    assert lines[0].isdigit()  # the id at once, then the answer
    assert running.returncode == 0
    assert "worker: stopped" in said  # SIGTERM while idle: a clean stop


def test_submit_wait_and_approve_start_without_the_sdk(demo_db: Location) -> None:
    """Only `worker` talks to the model: the other commands never import the SDK or vcrpy."""
    path = str(demo_db)
    code = (
        "import sys\nfrom scheduler_agent.cli import app\n"
        f"for args in (['submit', 'x', '--db', {path!r}], ['wait', '99', '--db', {path!r}],"
        f" ['approve', '1', '--db', {path!r}], ['decline', '1', '--db', {path!r}]):\n"
        "    try:\n        app(args)\n    except SystemExit:\n        pass\n"
        "print('LOADED', 'anthropic' in sys.modules, 'vcr' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tempfile.gettempdir())
    assert done.stdout.strip().splitlines()[-1] == "LOADED False False", done.stderr
    assert "waits for no approval" in done.stderr  # they ran, each to its clear line
