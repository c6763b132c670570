"""MCP servers' tools on the workers (issues 36 and 41): `submit --mcp` and `worker --mcp`, on Temporal.

The conversation keeps each server's name and the tools it offered, never its command; the worker starts the
servers it is given. At the turn's start an activity lists the tools and stores them with the turn; the model
step sends them, the tool round calls `cal__tool` on the worker's server, and an MCP tool waits for `approve`
as a booking does. A worker without the server fails the turn in one line naming it. Each is the real CLI in a
new process: our own `scheduler-agent mcp` over stdio as the server, the loopback scripted API as the model,
the session's Temporal dev server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import test_mcp_tools
from helpers import DEMO_TODAY, DUMMY_KEY, rows, run_cli
from test_mcp_tools import BOOK, BOOKING, FIND, SCRIPT, booked, server_command

from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text
from scheduler_agent.testing.temporal import TemporalServer

other_db = test_mcp_tools.other_db  # the calendar the MCP server serves (a fixture)


def temporal_env(temporal: TemporalServer) -> dict[str, str]:
    queue = os.environ["SCHEDULER_AGENT_TASK_QUEUE"]
    return {"SCHEDULER_AGENT_TEMPORAL": temporal.address, "SCHEDULER_AGENT_TASK_QUEUE": queue}


SEARCH_THEN_BOOK = [
    Reply([FIND], "tool_use"),
    Reply([BOOK], "tool_use"),
    Reply([text("Booked on your other calendar.")]),
]
# two turns: a booking the server dies in the middle of, then a search in the next turn
DIES_THEN_SEARCH = [
    Reply([BOOK], "tool_use"),
    Reply([text("Your other calendar stopped.")]),
    Reply([FIND], "tool_use"),
    Reply([text("Monday 14:00 is free.")]),
]


@pytest.fixture
def api(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    """The model: SEARCH_THEN_BOOK, or the replies a test gives (`indirect`)."""
    with ScriptedServer(getattr(request, "param", SEARCH_THEN_BOOK)) as running:
        yield running


@pytest.fixture
def start_worker(temporal: TemporalServer, demo_db: Path, api: ScriptedServer) -> Iterator[object]:
    """Starts `scheduler-agent worker ARGS...` for the test (as `start_worker(*args)`); SIGTERM at its end."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))}
        env |= {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": DUMMY_KEY, "SCHEDULER_AGENT_STRICT": "1"}
        env |= temporal_env(temporal) | {"XDG_CONFIG_HOME": str(demo_db.parent / "no-config")}
        command = [sys.executable, "-c", "from scheduler_agent.cli import main; main()", "worker", "--db", str(demo_db)]
        process = subprocess.Popen(
            [*command, *args], env=env, cwd=tempfile.gettempdir(), stderr=subprocess.PIPE, text=True
        )
        started.append(process)
        return process

    yield start
    for process in started:
        process.terminate()
        _, said = process.communicate(timeout=60)
        assert process.returncode == 0, said
        assert "worker: stopped" in said


def cli(temporal: TemporalServer, demo_db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = temporal_env(temporal) | {"XDG_CONFIG_HOME": str(demo_db.parent / "no-config")}
    result = run_cli([*args, "--db", str(demo_db)], None, env=env, timeout=120)
    assert "Traceback" not in result.stderr and "bug in scheduler-agent" not in result.stderr, result.stderr
    return result


def submitted_id(result: subprocess.CompletedProcess[str]) -> int:
    assert result.returncode == 0, result.stderr
    return int(result.stdout.strip().splitlines()[-1])


def test_a_submitted_turn_calls_the_workers_mcp_server_with_approval(
    temporal: TemporalServer, demo_db: Path, other_db: Path, api: ScriptedServer, start_worker: object
) -> None:
    start_worker("--mcp", server_command(other_db))  # type: ignore[operator]
    submitted = cli(
        temporal, demo_db, "submit", "book", "--mcp", "cal=any-command --on-the-submitting-machine",
        "--mcp-trust", "cal", "--today", DEMO_TODAY,
    )  # fmt: skip
    cid = submitted_id(submitted)
    waiting = cli(temporal, demo_db, "wait", str(cid))
    assert waiting.returncode == 9, waiting.stderr  # the booking waits; the trusted read-only search did not
    assert f"? Run 'create_event' on the MCP server 'cal' with {json.dumps(BOOKING)}  [toolu_mcp_2]" in waiting.stderr
    assert "'find_free_slots' on the MCP server" not in waiting.stderr

    names = [tool["name"] for tool in api.received[0]["tools"]]  # the tools the activity listed and stored
    assert "find_free_slots" in names and names[-5:] == [
        "cal__find_free_slots",
        "cal__create_event",
        "cal__list_events",
        "cal__move_event",
        "cal__cancel_event",
    ]
    found = [b for b in api.received[1]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert [(b["tool_use_id"], "is_error" in b) for b in found] == [("toolu_mcp_1", False)]
    assert found[0]["content"][0]["text"].splitlines()[2] == "- Mon 2026-08-31 14:00-15:00"  # the server's answer
    assert api.received[1]["tools"] == api.received[0]["tools"]  # the stored list, sent by each step

    approved = cli(temporal, demo_db, "approve", str(cid))
    assert approved.returncode == 0, approved.stderr
    done = cli(temporal, demo_db, "wait", str(cid))
    assert (done.returncode, done.stdout) == (0, "Booked on your other calendar.\n")
    booking = [b for b in api.received[2]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert [(b["tool_use_id"], "is_error" in b) for b in booking] == [("toolu_mcp_2", False)]
    assert booked(other_db) == 1 and booked(demo_db) == 0  # on the server's calendar, not the agent's

    (stored,) = rows(demo_db, "SELECT mcp_servers FROM conversations")
    offered = json.loads(str(stored[0]))
    assert [tool["sent_as"] for tool in offered["cal"]] == names[-5:]
    assert SCRIPT not in str(stored[0]) and "any-command" not in str(stored[0])  # never a command


def test_a_worker_without_the_server_fails_the_turn_naming_it(
    temporal: TemporalServer, demo_db: Path, other_db: Path, api: ScriptedServer, start_worker: object
) -> None:
    start_worker()  # type: ignore[operator]
    cid = submitted_id(cli(temporal, demo_db, "submit", "book", "--mcp", server_command(other_db)))
    failed = cli(temporal, demo_db, "wait", str(cid))
    assert failed.returncode == 2, failed.stderr
    assert failed.stderr.strip().splitlines()[-1] == (
        f"Error: conversation {cid} uses the MCP server 'cal', which this worker was not given: start the workers "
        "with --mcp cal=COMMAND_OR_URL (or its [servers.NAME] table in mcp.toml)"
    )
    assert api.received == []  # the model was never asked
    env = {"XDG_CONFIG_HOME": str(demo_db.parent / "no-config")}
    resumed = run_cli(["resume", str(cid), "--db", str(demo_db)], api, env=env)  # refused too, before anything runs
    assert resumed.returncode == 2, resumed.stderr
    assert f"conversation {cid} used the MCP server 'cal': give the same --mcp cal=COMMAND_OR_URL" in resumed.stderr
    assert api.received == []


@pytest.mark.parametrize("api", [DIES_THEN_SEARCH], indirect=True)
def test_a_server_that_died_in_one_turn_is_started_again_for_the_next(
    temporal: TemporalServer, demo_db: Path, other_db: Path, api: ScriptedServer, start_worker: object
) -> None:
    dying = server_command(other_db, "SCHEDULER_AGENT_FAULT=after_calendar_write")  # SIGKILL after a booking
    start_worker("--mcp", dying)  # type: ignore[operator]
    first = submitted_id(cli(temporal, demo_db, "submit", "book", "--yes", "--mcp", dying))
    assert cli(temporal, demo_db, "wait", str(first)).returncode == 0
    died = [b for b in api.received[1]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert died[0]["is_error"] is True and "the server stopped" in died[0]["content"]
    assert booked(other_db) == 1  # it died after writing

    second = submitted_id(cli(temporal, demo_db, "submit", "find", "--yes", "--mcp", dying))
    done = cli(temporal, demo_db, "wait", str(second))
    assert (done.returncode, done.stdout) == (0, "Monday 14:00 is free.\n")
    found = [b for b in api.received[3]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert "is_error" not in found[0]  # the worker started the server again for the new turn
    assert found[0]["content"][0]["text"].startswith("Free")
