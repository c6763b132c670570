"""The loop as a durable workflow on a real Temporal server (issue 36): the same requests, a small history,
a workflow module the sandbox can import, and the commands as a person runs them.

The Temporal dev server is the session's (temporal_fixtures.py); each test has a task queue of its own. What
talks to Temporal runs in a process of its own (the CLI, or the `temporal` CLI itself), as a person runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import worker_stores
from helpers import DEMO_TODAY, demo_clock, run_cli
from sqlalchemy import text as sql
from test_same_requests import task_bodies

from scheduler_agent.lessons.authoring import setup_for
from scheduler_agent.lessons.scripts import LESSONS
from scheduler_agent.playback.replay import calendar_from, settings_of
from scheduler_agent.session.session import Settings
from scheduler_agent.storage import db
from scheduler_agent.testing.booking_script import booking_script, request_text
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use
from scheduler_agent.testing.temporal import TemporalServer, find_binary
from scheduler_agent.workflows.names import WORKFLOW, TurnKey
from scheduler_agent.workflows.submission import store_turn

Location = worker_stores.Location
store = worker_stores.store  # the demo calendar on SQLite and on PostgreSQL (a fixture)


def temporal_env(temporal: TemporalServer) -> dict[str, str]:
    return {
        "SCHEDULER_AGENT_TEMPORAL": temporal.address,
        "SCHEDULER_AGENT_TASK_QUEUE": os.environ["SCHEDULER_AGENT_TASK_QUEUE"],
    }


def cli(
    temporal: TemporalServer, where: Location, server: ScriptedServer | None, *args: str
) -> subprocess.CompletedProcess[str]:
    result = run_cli([*args, "--db", str(where)], server, env=temporal_env(temporal), timeout=120)
    assert "Traceback" not in result.stderr and "bug in scheduler-agent" not in result.stderr, result.stderr
    return result


def temporal_cli(temporal: TemporalServer, *args: str) -> str:
    """The `temporal` CLI itself, against the test's server: what it printed."""
    done = subprocess.run(
        [str(find_binary()), *args, "--address", temporal.address], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def start_stored_turn(temporal: TemporalServer, key: TurnKey, approved: list[str]) -> None:
    """Start the workflow of a turn stored in-process (as `submit` does after storing it), by the temporal CLI."""
    turn = {"store": key.store, "cid": key.cid, "turn": key.turn, "approved": approved}
    queue = temporal_env(temporal)["SCHEDULER_AGENT_TASK_QUEUE"]
    temporal_cli(
        temporal,
        "workflow",
        "start",
        "--type",
        WORKFLOW,
        "--task-queue",
        queue,
        "--workflow-id",
        key.workflow_id,
        "--input",
        json.dumps(turn),
    )


def history_size(temporal: TemporalServer, key: TurnKey) -> int:
    """The server's own count of the workflow's history, in bytes (`describe`'s historySizeBytes)."""
    described = json.loads(
        temporal_cli(temporal, "workflow", "describe", "--workflow-id", key.workflow_id, "-o", "json")
    )
    return int(described["workflowExecutionInfo"]["historySizeBytes"])


def test_the_workflow_module_imports_only_temporalio_and_the_names() -> None:
    """Temporal's sandbox imports the workflow's module again for each run: no SDK, database or Click in it."""
    code = (
        "import sys\nimport scheduler_agent.workflows.turn\n"
        "banned = ('anthropic', 'sqlalchemy', 'sqlite3', 'click', 'psycopg', 'httpx', 'scheduler_agent.agent',"
        " 'scheduler_agent.storage', 'scheduler_agent.calendar', 'scheduler_agent.cli')\n"
        "print(sorted(m for m in sys.modules if m.startswith(banned)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tempfile.gettempdir())
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_no_mornings_task_through_a_worker_sends_the_bytes_it_sends_directly(
    temporal: TemporalServer, tmp_path: Path
) -> None:
    lesson = LESSONS["no_mornings"]
    setup = setup_for(lesson, live=False)
    with calendar_from(setup, tmp_path) as (conn, clock):
        key = store_turn(conn, lesson.inputs[0], clock=clock, settings=settings_of(setup))
    start_stored_turn(temporal, key, ["create_event", "move_event", "cancel_event"])
    with ScriptedServer(lesson.replies) as server:
        worked = cli(temporal, tmp_path / "calendar.db", server, "worker", "--drain")
        assert worked.returncode == 0, worked.stderr
        waited = cli(temporal, tmp_path / "calendar.db", None, "wait", str(key.cid))
        assert waited.returncode == 0, waited.stderr
        through_a_worker = list(server.bodies)
    direct = task_bodies()
    assert len(through_a_worker) == len(direct)
    for body, wanted in zip(through_a_worker, direct, strict=True):
        assert body == wanted  # one request per assert: a failure names which moved


def test_a_40_iteration_turn_keeps_its_history_under_100_kb(temporal: TemporalServer, demo_db: Path) -> None:
    """The list stays in the store: Temporal's history holds ids, iteration numbers and outcome codes only."""
    searches = [
        Reply([text(f"Looking {n}"), tool_use(f"toolu_look_{n}", "find_free_slots", {"person": "priya"})], "tool_use")
        for n in range(39)
    ]
    conn = db.connect(demo_db)
    key = store_turn(conn, "Look 39 times", clock=demo_clock(), settings=Settings("claude-sonnet-5-5", 40))
    conn.close()
    start_stored_turn(temporal, key, [])
    with ScriptedServer([*searches, Reply([text("Done looking.")])]) as server:
        worked = cli(temporal, demo_db, server, "worker", "--drain", "--max-iterations", "40")
        assert worked.returncode == 0, worked.stderr
        assert len(server.received) == 40
    size = history_size(temporal, key)
    assert size < 100_000, size
    conn = db.connect(demo_db)
    stored = conn.execute(
        sql("SELECT count(*) FROM entries WHERE conversation_id = :cid"), {"cid": key.cid}
    ).fetchone()[0]
    conn.close()
    assert stored == 1 + 2 * 39 + 1  # the whole list is in the store


def test_submit_prints_the_id_then_a_worker_runs_it_and_wait_prints_it_as_ask(
    temporal: TemporalServer, store: Location
) -> None:
    with ScriptedServer([], script=booking_script()) as server:
        submitted = cli(temporal, store, None, "submit", request_text(0), "--yes", "--today", DEMO_TODAY)
        assert submitted.returncode == 0, submitted.stderr
        cid = int(submitted.stdout.strip().splitlines()[-1])  # the id alone on the last line
        assert server.received == []  # submitting never calls the model
        assert cli(temporal, store, server, "worker", "--drain").returncode == 0
        waited = cli(temporal, store, None, "wait", str(cid))
    assert waited.returncode == 0, waited.stderr
    assert waited.stdout == "Booked slot 0.\n"
    assert "→ create_event" in waited.stderr
    assert "toolu_s0_book" in waited.stderr  # the turn's calls, as the trace
    conn = db.open_db(store)
    assert conn.execute(sql("SELECT count(*) FROM events WHERE title = 'Slot 0'")).fetchone()[0] == 1
    conn.close()
