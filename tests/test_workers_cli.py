"""The worker commands as a person runs them, on Temporal (issues 16 and 36): submit, worker, wait, approve,
decline. Each is the real CLI in a new process against the loopback scripted API and the session's Temporal
dev server (a task queue of the test's own), on a SQLite file and on PostgreSQL.
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

from scheduler_agent.testing.booking_script import booking_script, request_text
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text
from scheduler_agent.testing.temporal import TemporalServer

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


def temporal_env(temporal: TemporalServer) -> dict[str, str]:
    queue = os.environ["SCHEDULER_AGENT_TASK_QUEUE"]
    return {"SCHEDULER_AGENT_TEMPORAL": temporal.address, "SCHEDULER_AGENT_TASK_QUEUE": queue}


@pytest.fixture
def worker(temporal: TemporalServer, store: Location, server: ScriptedServer) -> Iterator[subprocess.Popen[str]]:
    """`scheduler-agent worker` running for the test; SIGTERM when it ends."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))}
    env |= {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": DUMMY_KEY, "SCHEDULER_AGENT_STRICT": "1"}
    env |= temporal_env(temporal)
    command = [sys.executable, "-c", "from scheduler_agent.cli import main; main()", "worker", "--db", str(store)]
    running = subprocess.Popen(command, env=env, cwd=tempfile.gettempdir(), stderr=subprocess.PIPE, text=True)
    yield running
    running.terminate()
    _, said = running.communicate(timeout=60)
    assert running.returncode == 0, said
    assert "worker: stopped" in said  # SIGTERM: a clean stop


def cli(temporal: TemporalServer, store: Location, *args: str) -> subprocess.CompletedProcess[str]:
    result = run_cli([*args, "--db", str(store)], None, env=temporal_env(temporal), timeout=120)
    assert "Traceback" not in result.stderr and "bug in scheduler-agent" not in result.stderr, result.stderr
    return result


def needs_approval(temporal: TemporalServer, store: Location) -> list[int]:
    """`conversations list --state needs-approval --json`: the ids it lists."""
    listed = cli(temporal, store, "conversations", "list", "--state", "needs-approval", "--json")
    assert listed.returncode == 0, listed.stderr
    return [int(row["id"]) for row in json.loads(listed.stdout)]


def submitted_id(result: subprocess.CompletedProcess[str]) -> int:
    assert result.returncode == 0, result.stderr
    return int(result.stdout.strip().splitlines()[-1])  # the id alone on the last line


def test_a_booking_waits_for_approve_through_the_commands(
    temporal: TemporalServer, store: Location, server: ScriptedServer, worker: subprocess.Popen[str]
) -> None:
    cid = submitted_id(cli(temporal, store, "submit", request_text(1), "--today", DEMO_TODAY))
    waiting = cli(temporal, store, "wait", str(cid))
    assert waiting.returncode == 9, waiting.stderr
    assert "Book 'Slot 1' on Mon 2026-09-14 11:30-12:00" in waiting.stderr
    assert "[toolu_s1_book]" in waiting.stderr
    assert f"scheduler-agent approve {cid}" in waiting.stderr
    assert needs_approval(temporal, store) == [cid]

    approved = cli(temporal, store, "approve", str(cid))
    assert approved.returncode == 0, approved.stderr
    assert "approved: Book 'Slot 1'" in approved.stdout
    assert f"conversation {cid} goes on" in approved.stdout  # the workflow took the update at once
    done = cli(temporal, store, "wait", str(cid))
    assert (done.returncode, done.stdout) == (0, "Booked slot 1.\n")
    assert needs_approval(temporal, store) == []


def test_decline_with_a_reason_reaches_the_model_and_the_mistakes_a_person_can_make(
    temporal: TemporalServer, store: Location, server: ScriptedServer, worker: subprocess.Popen[str]
) -> None:
    cid = submitted_id(cli(temporal, store, "submit", request_text(2), "--today", DEMO_TODAY))
    assert cli(temporal, store, "wait", str(cid)).returncode == 9
    wrong = cli(temporal, store, "decline", str(cid), "--call", "toolu_nope")
    assert wrong.returncode == 1
    assert wrong.stderr.strip().splitlines() == [
        f"Error: conversation {cid} has no call 'toolu_nope' waiting; the calls waiting: toolu_s2_book"
    ]
    declined = cli(temporal, store, "decline", str(cid), "--call", "toolu_s2_book", "--reason", "not on Mondays")
    assert declined.returncode == 0, declined.stderr
    assert "declined: Book 'Slot 2'" in declined.stdout
    done = cli(temporal, store, "wait", str(cid))
    assert (done.returncode, done.stdout) == (0, "Understood: nothing booked.\n")
    refusal = server.received[-1]["messages"][-1]["content"][0]
    assert refusal["is_error"] is True
    assert "not on Mondays" in refusal["content"]
    again = cli(temporal, store, "approve", str(cid))
    assert again.returncode == 1
    assert f"conversation {cid} waits for no approval" in again.stderr
    assert cli(temporal, store, "wait", "999").returncode == 1
    empty = cli(temporal, store, "submit", "   ")
    assert empty.returncode != 0
    assert "empty" in empty.stderr


def test_submit_wait_blocks_until_a_running_worker_ends_the_turn(
    temporal: TemporalServer, store: Location, server: ScriptedServer, worker: subprocess.Popen[str]
) -> None:
    result = cli(temporal, store, "submit", request_text(3), "--yes", "--wait", "--today", DEMO_TODAY)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1:] == ["Booked slot 3."]
    assert lines[0].isdigit()  # the id at once, then the answer


def test_without_a_temporal_server_submit_changes_nothing_and_says_so_in_one_line(demo_db: Location) -> None:
    free = "127.0.0.1:9"  # nothing listens there
    result = run_cli(["submit", "hi", "--db", str(demo_db)], None, env={"SCHEDULER_AGENT_TEMPORAL": free})
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: no Temporal server answers at {free}")
    listed = run_cli(["conversations", "list", "--json", "--db", str(demo_db)])
    assert json.loads(listed.stdout) == []


def test_wait_approve_and_decline_start_without_the_sdk(demo_db: Location) -> None:
    """Only `worker` talks to the model: the other commands never import the SDK or vcrpy."""
    path = str(demo_db)
    code = (
        "import sys\nfrom scheduler_agent.cli import app\n"
        f"for args in (['wait', '99', '--db', {path!r}],"
        f" ['approve', '1', '--db', {path!r}], ['decline', '1', '--db', {path!r}]):\n"
        "    try:\n        app(args)\n    except SystemExit:\n        pass\n"
        "print('LOADED', 'anthropic' in sys.modules, 'vcr' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tempfile.gettempdir())
    assert done.stdout.strip().splitlines()[-1] == "LOADED False False", done.stderr
    assert "No conversation 1;" in done.stderr  # they ran, each to its clear line


def test_a_submit_killed_between_storing_the_turn_and_starting_its_workflow_is_repaired_by_wait(
    temporal: TemporalServer, store: Location, server: ScriptedServer, worker: subprocess.Popen[str]
) -> None:
    env = temporal_env(temporal) | {"SCHEDULER_AGENT_FAULT": "submit_stored"}
    killed = run_cli(["submit", request_text(4), "--yes", "--today", DEMO_TODAY, "--db", str(store)], env=env)
    assert killed.returncode == -9  # SIGKILL after the turn was stored, before its workflow was started
    listed = cli(temporal, store, "conversations", "list", "--json")
    [row] = json.loads(listed.stdout)
    done = cli(temporal, store, "wait", str(row["id"]))
    assert done.returncode == 9, done.stderr  # started again without the --yes the dead submit had
    assert "had no workflow: started it now" in done.stderr
    assert cli(temporal, store, "approve", str(row["id"])).returncode == 0
    finished = cli(temporal, store, "wait", str(row["id"]))
    assert (finished.returncode, finished.stdout) == (0, "Booked slot 4.\n")


def test_a_turn_whose_model_stays_down_past_its_retries_fails_with_ask_s_exit_code(
    temporal: TemporalServer, demo_db: Location
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))}
    env |= {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": DUMMY_KEY} | temporal_env(temporal)
    cid = submitted_id(cli(temporal, demo_db, "submit", "hi", "--today", DEMO_TODAY))
    command = [sys.executable, "-c", "from scheduler_agent.cli import main; main()", "worker", "--drain"]
    worked = subprocess.run(
        [*command, "--timeout", "2", "--db", str(demo_db)], env=env, capture_output=True, text=True, timeout=120
    )
    assert worked.returncode == 0, worked.stderr
    failed = cli(temporal, demo_db, "wait", str(cid))
    assert failed.returncode == 5, failed.stderr  # ModelUnavailable, as `ask` exits
    [line] = failed.stderr.strip().splitlines()
    assert line.startswith("Error: ")


def test_a_worker_whose_timeout_a_step_could_not_cover_is_refused_in_one_line(demo_db: Location) -> None:
    """A step's start-to-close timeout must cover the worker's `--timeout` (the API's retries included) and a
    tool's deadline, or Temporal would take a step still waiting for the model from a live worker."""
    from scheduler_agent.workflows.names import STEP_SECONDS

    fits = STEP_SECONDS - 30  # with the default --tool-deadline, 30 s
    too_long = run_cli(["worker", "--timeout", str(fits + 1), "--db", str(demo_db)], None)
    assert too_long.returncode == 1
    assert too_long.stderr.strip().splitlines() == [
        f"Error: --timeout {fits + 1:g} with --tool-deadline 30 is more than a step may take on Temporal "
        f"({STEP_SECONDS:g} s, its start-to-close timeout): give --timeout at most {fits:g}"
    ]
    free = "127.0.0.1:9"  # nothing listens there: a --timeout that fits gets as far as connecting
    env = {"ANTHROPIC_API_KEY": DUMMY_KEY, "SCHEDULER_AGENT_TEMPORAL": free}
    fitting = run_cli(["worker", "--timeout", str(fits), "--db", str(demo_db)], None, env=env)
    assert fitting.returncode == 1
    assert fitting.stderr.strip().splitlines()[-1].startswith(f"Error: no Temporal server answers at {free}")
