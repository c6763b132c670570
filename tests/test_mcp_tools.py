"""Our loop consuming an MCP server's tools (issue 41): our own `scheduler-agent mcp`, started over stdio by
`ask --mcp`, the model played by the loopback scripted API.

The tools in the request as `cal__tool`, a call answered, an approval and a refusal, a trusted server's
read-only tool run without asking, a timeout, a server killed in the middle of a call answered as an error
result, what the conversation stores (the server's name and tools, never its command), and `resume`
refusing without the same `--mcp`. The server is the venv's console script on a calendar of its own.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import mcp_types as types
import pytest
from helpers import DEMO_TODAY, DUMMY_KEY, rows
from sqlalchemy import Connection

from scheduler_agent.calendar.fixtures import seed_demo
from scheduler_agent.mcp_client.connection import result_content
from scheduler_agent.mcp_client.toolbox import api_name
from scheduler_agent.storage import db
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

SCRIPT = str(Path(sys.executable).parent / "scheduler-agent")
MONDAY = "2026-08-31"
BOOKING = {"with": "priya", "start": f"{MONDAY}T14:00", "minutes": 30}
FIND = tool_use("toolu_mcp_1", "cal__find_free_slots", {"person": "priya", "week": MONDAY})
BOOK = tool_use("toolu_mcp_2", "cal__create_event", BOOKING)
MONDAY_2PM_UTC = f"{MONDAY}T13:00:00Z"


@pytest.fixture
def other_db(tmp_path: Path) -> Path:
    """The calendar the MCP server serves: the demo one, in a file of its own."""
    path = tmp_path / "other.db"
    conn = db.connect(path)
    seed_demo(conn)
    conn.close()
    return path


def server_command(other_db: Path, *env: str) -> str:
    """`cal=COMMAND` for --mcp: our own server on `other_db`, approving its own changes (our loop asks)."""
    command = [*(["env", *env] if env else []), SCRIPT, "mcp", "--db", str(other_db), "--today", DEMO_TODAY, "--yes"]
    return "cal=" + shlex.join(command)


def run(
    args: list[str], server: ScriptedServer, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real CLI in a new process against the scripted API, `stdin` its standard input (approvals)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))}
    clean |= {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": DUMMY_KEY, "SCHEDULER_AGENT_STRICT": "1"}
    clean |= env or {}
    command = [sys.executable, "-c", "from scheduler_agent.cli import main; main()", *args]
    return subprocess.run(
        command, input=stdin, env=clean, capture_output=True, text=True, timeout=120, cwd=tempfile.gettempdir()
    )


def booked(path: Path) -> int:
    return len(rows(path, f"SELECT id FROM events WHERE start_utc = '{MONDAY_2PM_UTC}'"))


def results(server: ScriptedServer, request: int) -> list[dict]:  # type: ignore[type-arg]
    return [b for b in server.received[request]["messages"][-1]["content"] if b["type"] == "tool_result"]


def test_the_servers_tools_are_sent_a_call_is_answered_and_a_booking_approved(
    demo_db: Path, other_db: Path, tmp_path: Path
) -> None:
    replies = [Reply([FIND], "tool_use"), Reply([BOOK], "tool_use"), Reply([text("Booked on your other calendar.")])]
    with ScriptedServer(replies) as api:
        done = run(["ask", "book", "--db", str(demo_db), "--mcp", server_command(other_db)], api, stdin="y\ny\n")
    assert done.returncode == 0, done.stderr
    names = [tool["name"] for tool in api.received[0]["tools"]]
    assert names[-5:] == [
        "cal__find_free_slots",
        "cal__create_event",
        "cal__list_events",
        "cal__move_event",
        "cal__cancel_event",
    ]
    assert "find_free_slots" in names  # the calendar's own tools are still there, first
    found = results(api, 1)[0]
    assert "is_error" not in found
    assert found["content"][0]["text"].splitlines()[2] == "- Mon 2026-08-31 14:00-15:00"
    assert "? Run 'create_event' on the MCP server 'cal' with " + json.dumps(BOOKING) in done.stderr
    assert "is_error" not in results(api, 2)[0]
    assert booked(other_db) == 1
    assert booked(demo_db) == 0  # the agent's own calendar is untouched
    (stored,) = rows(demo_db, "SELECT mcp_servers FROM conversations")
    offered = json.loads(str(stored[0]))
    assert [tool["sent_as"] for tool in offered["cal"]] == names[-5:]
    assert SCRIPT not in str(stored[0])  # the command is never stored


def test_a_refusal_goes_back_to_the_model_and_nothing_runs(demo_db: Path, other_db: Path) -> None:
    replies = [Reply([BOOK], "tool_use"), Reply([text("Another day, then?")])]
    with ScriptedServer(replies) as api:
        done = run(
            ["ask", "book", "--db", str(demo_db), "--mcp", server_command(other_db)], api, stdin="no, not Mondays\n"
        )
    assert done.returncode == 0, done.stderr
    answer = results(api, 1)[0]
    assert answer["is_error"] is True
    assert "Their reason: 'not Mondays'" in answer["content"]
    assert booked(other_db) == 0


def test_a_trusted_servers_read_only_tool_runs_without_asking_from_the_config_file(
    demo_db: Path, other_db: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config" / "scheduler-agent"
    config.mkdir(parents=True)
    command = server_command(other_db).removeprefix("cal=")
    (config / "mcp.toml").write_text(f"[servers.cal]\ncommand = {json.dumps(command)}\ntrusted = true\n")
    replies = [Reply([FIND], "tool_use"), Reply([BOOK], "tool_use"), Reply([text("Done.")])]
    with ScriptedServer(replies) as api:
        done = run(
            ["ask", "book", "--db", str(demo_db)], api, stdin="y\n", env={"XDG_CONFIG_HOME": str(tmp_path / "config")}
        )
    assert done.returncode == 0, done.stderr
    assert "'find_free_slots' on the MCP server" not in done.stderr  # read-only and trusted: not asked
    assert done.stderr.count("? Run 'create_event' on the MCP server 'cal'") == 1  # a change still is
    assert booked(other_db) == 1


def test_yes_approves_every_mcp_tool(demo_db: Path, other_db: Path) -> None:
    replies = [Reply([BOOK], "tool_use"), Reply([text("Done.")])]
    with ScriptedServer(replies) as api:
        done = run(["ask", "book", "--yes", "--db", str(demo_db), "--mcp", server_command(other_db)], api)
    assert done.returncode == 0, done.stderr
    assert "? Run" not in done.stderr
    assert booked(other_db) == 1


def test_a_server_killed_mid_call_is_an_error_result_the_model_reads(demo_db: Path, other_db: Path) -> None:
    dying = server_command(other_db, "SCHEDULER_AGENT_FAULT=after_calendar_write")  # SIGKILL before it answers
    replies = [Reply([BOOK], "tool_use"), Reply([FIND], "tool_use"), Reply([text("Your other calendar stopped.")])]
    with ScriptedServer(replies) as api:
        done = run(["ask", "book", "--yes", "--db", str(demo_db), "--mcp", dying], api)
    assert done.returncode == 0, done.stderr
    answer = results(api, 1)[0]
    assert answer["is_error"] is True
    assert answer["content"].startswith("create_event on the MCP server 'cal' got no answer: the server stopped")
    assert "Whether it did anything is not known" in answer["content"]
    later = results(api, 2)[0]  # a later call to the dead server: answered at once, with the same text
    assert later["is_error"] is True
    assert "the server stopped" in later["content"]
    assert booked(other_db) == 1  # it died after writing: why the model is told "not known"


def test_a_call_past_the_tool_deadline_is_a_timeout_result(demo_db: Path, other_db: Path) -> None:
    slow = server_command(
        other_db, "SCHEDULER_AGENT_TEST_PAUSE_AT=between_check_and_insert", "SCHEDULER_AGENT_TEST_PAUSE=4"
    )
    replies = [Reply([BOOK], "tool_use"), Reply([text("It timed out.")])]
    with ScriptedServer(replies) as api:
        done = run(["ask", "book", "--yes", "--tool-deadline", "1", "--db", str(demo_db), "--mcp", slow], api)
    assert done.returncode == 0, done.stderr
    answer = results(api, 1)[0]
    assert answer["is_error"] is True
    assert answer["content"].startswith("cal__create_event did not finish: it timed out after 1 seconds")
    assert "Whether it changed anything is not known" in answer["content"]


def test_resume_refuses_without_the_same_mcp_and_goes_on_with_it(demo_db: Path, other_db: Path) -> None:
    replies = [Reply([BOOK], "tool_use"), Reply([text("Booked.")])]
    with ScriptedServer(replies) as api:
        crashed = run(
            ["ask", "book", "--yes", "--db", str(demo_db), "--mcp", server_command(other_db)],
            api,
            env={"SCHEDULER_AGENT_FAULT": "after_assistant_stored"},
        )
        assert crashed.returncode == -9
        refused = run(["resume", "1", "--yes", "--db", str(demo_db)], api)
        assert refused.returncode == 2
        assert refused.stderr.strip().splitlines()[-1] == (
            "Error: conversation 1 used the MCP server 'cal': give the same --mcp cal=COMMAND_OR_URL (or its "
            "[servers.NAME] table in the config file) to go on with it"
        )
        assert booked(other_db) == 0
        resumed = run(["resume", "1", "--yes", "--db", str(demo_db), "--mcp", server_command(other_db)], api)
    assert resumed.returncode == 0, resumed.stderr
    assert booked(other_db) == 1
    assert [t["name"] for t in api.received[1]["tools"]] == [t["name"] for t in api.received[0]["tools"]]


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("Work=cmd", "the server name 'Work' must be lowercase letters, digits, '_' or '-'"),
        ("work", "give NAME=COMMAND or NAME=URL"),
        ("work=", "give NAME=COMMAND or NAME=URL"),
        ("work='unclosed", "the command cannot be split as a shell would"),
    ],
)
def test_a_bad_mcp_value_is_one_line_and_exit_2(demo_db: Path, value: str, said: str) -> None:
    with ScriptedServer([]) as api:
        done = run(["ask", "book", "--db", str(demo_db), "--mcp", value], api)
    assert done.returncode == 2
    assert said in done.stderr
    assert "Traceback" not in done.stderr
    assert api.received == []


def test_trusting_a_server_not_given_is_refused(demo_db: Path, other_db: Path) -> None:
    with ScriptedServer([]) as api:
        done = run(["ask", "book", "--db", str(demo_db), "--mcp", server_command(other_db), "--mcp-trust", "cla"], api)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == "Error: --mcp-trust cla: no server of that name (the servers: cal)"


def test_a_name_that_does_not_fit_the_api_is_rewritten_and_kept_apart() -> None:
    assert api_name("cal", "get.events/v2", set()) == "cal__get_events_v2"
    long = api_name("cal", "x" * 80, set())
    assert len(long) == 64
    assert api_name("cal", "a.b", {"cal__a_b"}) != "cal__a_b"


def test_text_and_images_are_passed_on_anything_else_named_in_one_line() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="Two events."),
            types.ImageContent(type="image", data="aGVsbG8=", mime_type="image/png"),
            types.AudioContent(type="audio", data="aGVsbG8=", mime_type="audio/wav"),
            types.ResourceLink(type="resource_link", uri="file:///cal.ics", name="cal"),
        ],
        structured_content={"events": 2},
    )
    assert result_content("cal", result) == [
        {"type": "text", "text": "Two events."},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGVsbG8="}},
        {"type": "text", "text": "[The server also sent audio (audio/wav), which is not passed on.]"},
        {
            "type": "text",
            "text": "[The server also sent a link to the resource file:///cal.ics, which is not passed on.]",
        },
        {
            "type": "text",
            "text": "[The server also sent structured content (JSON; the text above carries what the server said in "
            "words), which is not passed on.]",
        },
    ]


def test_a_server_over_streamable_http(demo_db: Path, other_db: Path) -> None:
    from radicale_server import free_port
    from test_mcp import serving, stop

    address = f"127.0.0.1:{free_port()}"
    process = serving(other_db, address, "--yes")
    try:
        with ScriptedServer([Reply([BOOK], "tool_use"), Reply([text("Booked.")])]) as api:
            done = run(["ask", "book", "--yes", "--db", str(demo_db), "--mcp", f"cal=http://{address}/mcp"], api)
    finally:
        stop(process)
    assert done.returncode == 0, done.stderr
    assert "is_error" not in results(api, 1)[0]
    assert booked(other_db) == 1


def test_the_workers_list_and_store_a_turns_tools_and_go_on_only_with_the_same_server(
    demo_conn: Connection, other_db: Path
) -> None:
    from scheduler_agent.mcp_client.servers import parse_spec
    from scheduler_agent.mcp_client.toolbox import McpServers
    from scheduler_agent.mcp_client.turn import MissingServer, go_on_with, list_and_store
    from scheduler_agent.storage import conversations

    cid = conversations.create(demo_conn, conversations.Context("m", 100, "s", []), started_on=MONDAY, clock_pin=None)
    servers = McpServers([parse_spec(server_command(other_db))])
    try:
        stored = list_and_store(demo_conn, cid, servers, ["find_free_slots"])
    finally:
        servers.close()
    record, _ = conversations.load(demo_conn, cid)
    assert record.context.mcp == stored
    assert [tool["sent_as"] for tool in stored["cal"]][:2] == ["cal__find_free_slots", "cal__create_event"]
    with pytest.raises(MissingServer, match="conversation 1 used the MCP server 'cal'"):
        go_on_with(record.context, None, cid)
    again = McpServers([parse_spec("cal=true")])  # by name: adopted from the store, nothing started
    go_on_with(record.context, again, cid)
    assert [d["name"] for d in again.definitions] == [tool["sent_as"] for tool in stored["cal"]]
