"""A submitted turn holds its conversation's lease until its workflow ends (issue 36): while it is queued or
running on a worker, a local `ask --cid`, `resume` or a second `submit --cid` exits 8 with one line and writes
nothing; once a worker has ended the turn, the conversation is free again. Real CLI, real Temporal dev server,
on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import worker_stores
from helpers import DEMO_TODAY, DUMMY_KEY, run_cli
from test_workers_cli import cli, submitted_id, temporal_env

from scheduler_agent.testing.booking_script import booking_script, request_text
from scheduler_agent.testing.scripted_server import ScriptedServer
from scheduler_agent.testing.temporal import TemporalServer

Location = worker_stores.Location
store = worker_stores.store  # the demo calendar on each database (a fixture)


def entries(temporal: TemporalServer, store: Location, cid: int) -> list[object]:
    shown = cli(temporal, store, "conversations", "show", str(cid), "--json")
    assert shown.returncode == 0, shown.stderr
    found = json.loads(shown.stdout)
    return list(found["messages"] if isinstance(found, dict) else found)


def test_a_queued_turn_holds_its_conversation_until_a_worker_ends_it(temporal: TemporalServer, store: Location) -> None:
    with ScriptedServer([], script=booking_script()) as server:
        model = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": DUMMY_KEY}
        cid = submitted_id(cli(temporal, store, "submit", request_text(5), "--yes", "--today", DEMO_TODAY))
        before = entries(temporal, store, cid)

        for args in (
            ["resume", str(cid)],
            ["ask", "--cid", str(cid), "and Tuesday?"],
            ["submit", "--cid", str(cid), "x"],
        ):
            refused = run_cli([*args, "--db", str(store)], env=temporal_env(temporal) | model, timeout=120)
            assert refused.returncode == 8, (args, refused.stderr)
            lines = [line for line in refused.stderr.strip().splitlines() if line != f"conversation {cid}"]
            assert lines == [
                f"Error: conversation {cid} is being run elsewhere: its submitted turn (workflow "
                + lines[0].split("(workflow ", 1)[-1]
            ], (args, refused.stderr)
            assert "`scheduler-agent wait` waits for it" in lines[0]
        assert entries(temporal, store, cid) == before  # nothing written by the refused ones
        assert server.received == []  # nor was the model asked

        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))}
        env |= model | temporal_env(temporal) | {"SCHEDULER_AGENT_STRICT": "1"}
        command = [sys.executable, "-c", "from scheduler_agent.cli import main; main()", "worker", "--drain"]
        worked = subprocess.run([*command, "--db", str(store)], env=env, capture_output=True, text=True, timeout=180)
        assert worked.returncode == 0, worked.stderr
        done = cli(temporal, store, "wait", str(cid))
        assert (done.returncode, done.stdout) == (0, "Booked slot 5.\n")

        again = cli(temporal, store, "submit", "--cid", str(cid), request_text(6), "--yes", "--today", DEMO_TODAY)
        assert submitted_id(again) == cid  # the lease went with the ended turn
