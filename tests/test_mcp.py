"""`scheduler-agent mcp` with the `mcp` package's own client, over stdio and over Streamable HTTP (issue 40).

The server is the venv's console script, started as a subprocess on the demo calendar with the clock
pinned: the tools, their annotations and schemas, a slot found and booked, a conflict's text, approval by
elicitation (yes; no with a reason), a client that cannot ask, the idempotency key (a repeat changes nothing,
another input is refused), and a SIGKILL between the write and the answer followed by the same call.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from helpers import DEMO_TODAY
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from radicale_server import free_port

SCRIPT = str(Path(sys.executable).parent / "scheduler-agent")
MONDAY = "2026-08-31"  # the week after DEMO_TODAY's: Priya and the owner are free 14:00-15:00 that Monday
BOOKING = {"with": "priya", "start": f"{MONDAY}T14:00", "minutes": 30}
QUESTION = (
    "Book 'Meeting with Priya Raman' on Mon 2026-08-31 14:00-14:30 (Europe/London) for you and Priya Raman "
    "(priya). Approve?"
)
Elicit = Callable[[Any, types.ElicitRequestParams], Awaitable[types.ElicitResult]]


def answering(content: dict[str, Any] | None, asked: list[str], action: str = "accept") -> Elicit:
    """An elicitation callback that records each question and answers with `content`."""

    async def answer(_: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return answer


def params(db: Path, *flags: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    args = ["mcp", "--db", str(db), "--today", DEMO_TODAY, *flags]
    return StdioServerParameters(command=SCRIPT, args=args, env={**os.environ, **(env or {})})


@asynccontextmanager
async def over_stdio(
    server: StdioServerParameters, elicit: Elicit | None = None, mode: str = "auto", errlog: Path | None = None
) -> AsyncIterator[Client]:
    with open(errlog or os.devnull, "a") as err:
        async with Client(stdio_client(server, errlog=err), elicitation_callback=elicit, mode=mode) as client:
            yield client


def text(result: types.CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def events_at(db: Path, start_utc: str) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [row[0] for row in conn.execute("SELECT title FROM events WHERE start_utc LIKE ?", (start_utc + "%",))]
    finally:
        conn.close()


MONDAY_2PM_UTC = f"{MONDAY}T13:00"  # 14:00 Europe/London in summer


def test_the_tools_their_schemas_and_annotations(demo_db: Path) -> None:
    async def run() -> list[types.Tool]:
        async with over_stdio(params(demo_db)) as client:
            return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in anyio.run(run)}
    ours = json.loads((Path(__file__).parents[1] / "prompts" / "tools.json").read_text())
    assert list(tools) == [d["name"] for d in ours]
    for definition in ours:
        schema = tools[definition["name"]].input_schema
        key = schema["properties"].pop("idempotency_key", None)
        assert schema == definition["input_schema"]
        assert (key is not None) == (definition["name"] in ("create_event", "move_event", "cancel_event"))
    hints = {
        name: (t.annotations.read_only_hint, t.annotations.destructive_hint, t.annotations.idempotent_hint)
        for name, t in tools.items()
        if t.annotations is not None
    }
    assert {name: t.annotations.open_world_hint for name, t in tools.items() if t.annotations} == dict.fromkeys(
        tools, False
    )
    assert hints == {
        "find_free_slots": (True, False, True),
        "list_events": (True, False, True),
        "create_event": (False, False, False),
        "move_event": (False, True, False),
        "cancel_event": (False, True, False),
    }


def test_find_a_slot_book_it_and_a_conflicts_text(demo_db: Path) -> None:
    async def run() -> list[types.CallToolResult]:
        async with over_stdio(params(demo_db, "--yes")) as client:
            found = await client.call_tool("find_free_slots", {"person": "priya", "week": MONDAY})
            elsewhere = await client.call_tool("find_free_slots", {"person": "aiko", "week": MONDAY})
            booked = await client.call_tool("create_event", BOOKING)
            again = await client.call_tool("create_event", BOOKING)
            listed = await client.call_tool("list_events", {"start": MONDAY, "end": MONDAY})
            event_id = int(re.search(r"Event id: (\d+)", text(booked)).group(1))  # type: ignore[union-attr]
            moved = await client.call_tool("move_event", {"event_id": event_id, "start": f"{MONDAY}T14:30"})
            return [found, elsewhere, booked, again, listed, moved]

    found, elsewhere, booked, again, listed, moved = anyio.run(run)
    assert not found.is_error
    assert "- Mon 2026-08-31 14:00-15:00" in text(found).splitlines()
    assert "The same windows" not in text(found)  # Priya works in the owner's zone
    lines = text(elsewhere).splitlines()  # Aiko in New York: each window in her zone too, converted here
    assert "- Mon 2026-08-31 14:00-15:00" in lines
    assert lines[-1].startswith(
        "The same windows for Aiko Tanaka (aiko) in America/New_York: Mon 2026-08-31 09:00-10:00"
    )
    assert not booked.is_error
    assert text(booked).startswith("Booked 'Meeting with Priya Raman' on Mon 2026-08-31 14:00-14:30 (Europe/London)")
    assert again.is_error
    assert text(again).startswith(
        "Mon 2026-08-31 14:00-14:30 (Europe/London) is not free: it overlaps 'Meeting with Priya Raman'"
    )
    assert "Mon 2026-08-31 14:00-14:30 'Meeting with Priya Raman' with you, priya" in text(listed)  # one booking
    assert not moved.is_error  # --yes: moves too
    assert text(moved).startswith("Moved 'Meeting with Priya Raman' from Mon 2026-08-31 14:00-14:30 to Mon 2026-08-31")
    assert events_at(demo_db, MONDAY_2PM_UTC) == []
    assert events_at(demo_db, "2026-08-31T13:30") == ["Meeting with Priya Raman"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # a request mid-call (2025-11-25); an input_required round
def test_approval_by_elicitation_yes(demo_db: Path, mode: str) -> None:
    asked: list[str] = []

    async def run() -> types.CallToolResult:
        async with over_stdio(params(demo_db), answering({"approve": True}, asked), mode) as client:
            return await client.call_tool("create_event", BOOKING)

    result = anyio.run(run)
    assert asked == [QUESTION]
    assert not result.is_error
    assert events_at(demo_db, MONDAY_2PM_UTC) == ["Meeting with Priya Raman"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_approval_by_elicitation_no_with_a_reason(demo_db: Path, mode: str) -> None:
    asked: list[str] = []

    async def run() -> tuple[types.CallToolResult, types.CallToolResult]:
        answer = answering({"approve": False, "reason": "not on Mondays"}, asked)
        async with over_stdio(params(demo_db), answer, mode) as client:
            declined = await client.call_tool("create_event", BOOKING)
            clash = await client.call_tool("create_event", {**BOOKING, "start": f"{MONDAY}T15:00"})
            return declined, clash

    result, clash = anyio.run(run)
    assert asked == [QUESTION]  # every check comes before the question: a clash is refused without asking
    assert clash.is_error
    assert "is not free: it overlaps 'Hiring panel'" in text(clash)
    assert result.is_error
    assert text(result) == (
        f"Not run: the user declined ({QUESTION.removesuffix('. Approve?')}). Their reason: 'not on Mondays'. "
        "Nothing was booked. Propose something else that fits what they said, or ask them what they would like."
    )
    assert events_at(demo_db, MONDAY_2PM_UTC) == []


def test_a_declined_form_is_a_no_without_a_reason(demo_db: Path) -> None:
    async def run() -> types.CallToolResult:
        async with over_stdio(params(demo_db), answering(None, [], action="decline")) as client:
            return await client.call_tool("create_event", BOOKING)

    result = anyio.run(run)
    assert result.is_error
    assert "They gave no reason." in text(result)
    assert events_at(demo_db, MONDAY_2PM_UTC) == []


def test_a_client_that_cannot_ask_is_told_to_start_the_server_with_yes(demo_db: Path) -> None:
    async def run() -> list[types.CallToolResult]:
        async with over_stdio(params(demo_db)) as client:  # no elicitation callback: no elicitation capability
            refused = await client.call_tool("create_event", BOOKING)
        async with over_stdio(params(demo_db, "--yes")) as client:
            booked = await client.call_tool("create_event", BOOKING)
            event_id = int(re.search(r"Event id: (\d+)", text(booked)).group(1))  # type: ignore[union-attr]
            cancelled = await client.call_tool("cancel_event", {"event_id": event_id})
        return [refused, booked, cancelled]

    refused, booked, cancelled = anyio.run(run)
    assert refused.is_error
    assert "Nothing was booked. Tell the user to start the server as `scheduler-agent mcp --yes`" in text(refused)
    assert not booked.is_error  # --yes: bookings and moves without asking
    assert cancelled.is_error  # but never a cancellation
    assert "Nothing was cancelled. Tell the user to start the server as `scheduler-agent mcp --yes-cancel`" in text(
        cancelled
    )
    assert events_at(demo_db, MONDAY_2PM_UTC) == ["Meeting with Priya Raman"]


def test_the_same_key_repeats_and_another_input_is_refused_by_name(demo_db: Path) -> None:
    keyed = {**BOOKING, "idempotency_key": "book-priya-1"}

    async def run() -> list[types.CallToolResult]:
        async with over_stdio(params(demo_db, "--yes")) as client:
            first = await client.call_tool("create_event", keyed)
            repeat = await client.call_tool("create_event", keyed)
            other = await client.call_tool("create_event", {**keyed, "minutes": 45})
            return [first, repeat, other]

    first, repeat, other = anyio.run(run)
    assert not first.is_error
    assert not repeat.is_error
    assert text(repeat) == text(first)
    assert events_at(demo_db, MONDAY_2PM_UTC) == ["Meeting with Priya Raman"]
    assert other.is_error
    assert text(other).startswith(
        "Not run: the idempotency key 'book-priya-1' already answered a create_event call with another input"
    )
    assert events_at(demo_db, MONDAY_2PM_UTC) == ["Meeting with Priya Raman"]


def test_a_sigkill_between_the_write_and_the_answer_then_the_same_key_books_once(demo_db: Path) -> None:
    keyed = {**BOOKING, "idempotency_key": "after-a-crash"}
    dying = params(demo_db, "--yes", env={"SCHEDULER_AGENT_FAULT": "after_calendar_write"})

    async def crash() -> None:
        async with over_stdio(dying) as client:
            await client.call_tool("create_event", keyed)

    with pytest.raises(ExceptionGroup) as lost:  # the connection ends with no answer: the client raises
        anyio.run(crash)
    assert lost.group_contains(MCPError, match="Connection closed")
    assert events_at(demo_db, MONDAY_2PM_UTC) == ["Meeting with Priya Raman"]  # written, never answered

    async def again() -> types.CallToolResult:
        async with over_stdio(params(demo_db, "--yes")) as client:
            return await client.call_tool("create_event", keyed)

    result = anyio.run(again)
    assert not result.is_error
    assert text(result).startswith("Booked 'Meeting with Priya Raman' on Mon 2026-08-31 14:00-14:30")
    assert events_at(demo_db, MONDAY_2PM_UTC) == ["Meeting with Priya Raman"]


def test_bad_input_is_an_error_result_with_the_loops_text(demo_db: Path, tmp_path: Path) -> None:
    errors = tmp_path / "stderr.txt"

    async def run() -> list[types.CallToolResult]:
        async with over_stdio(params(demo_db, "--yes"), errlog=errors) as client:
            return [
                await client.call_tool("create_event", {**BOOKING, "minutes": "half an hour"}),
                await client.call_tool("no_such_tool", {}),
                await client.call_tool("cancel_event", {"event_id": 10**6}),
                await client.call_tool("create_event", {**BOOKING, "idempotency_key": ""}),
            ]

    schema, unknown, missing, empty_key = anyio.run(run)
    assert schema.is_error
    assert text(schema) == (
        "create_event was not run: field 'minutes' must be an integer, got 'half an hour'. "
        "Call it again with input that fits its schema."
    )
    assert unknown.is_error
    assert "no_such_tool" in text(unknown)
    assert missing.is_error
    assert text(missing).startswith("There is no event #1000000. Call list_events")
    assert empty_key.is_error
    assert text(empty_key).startswith("create_event was not run: idempotency_key must be a text of 1 to 200")
    assert "Traceback" not in errors.read_text()


def test_resources_and_the_system_prompt(demo_db: Path) -> None:
    rule = ["calendar", "prefs", "add", "No meetings before 10am", "--not-before", "10:00", "--db", str(demo_db)]
    subprocess.run([SCRIPT, *rule], check=True, capture_output=True)

    async def run() -> tuple[list[str], str, str, str, str]:
        async with over_stdio(params(demo_db)) as client:
            uris = sorted(str(r.uri) for r in (await client.list_resources()).resources)

            async def read(uri: str) -> str:
                content = (await client.read_resource(uri)).contents[0]
                assert isinstance(content, types.TextResourceContents)
                return content.text

            prompt = (await client.get_prompt("scheduling_assistant")).messages[0].content
            assert isinstance(prompt, types.TextContent)
            return (
                uris,
                await read("scheduler://people"),
                await read("scheduler://owner/working-hours"),
                await read("scheduler://owner/preferences"),
                prompt.text,
            )

    uris, people, hours, preferences, prompt = anyio.run(run)
    assert uris == ["scheduler://owner/preferences", "scheduler://owner/working-hours", "scheduler://people"]
    assert "- priya: Priya Raman, Europe/London; 09:00-17:00 Europe/London" in people.splitlines()
    assert hours.startswith("Jordan Lee works 09:00-17:00 Europe/London")
    assert preferences.splitlines() == [
        "Standing preferences of Jordan Lee (set with `calendar prefs`; follow them in every booking):",
        "- #1 No meetings before 10am [the tools check this: no meeting starts before 10:00]",
    ]
    assert prompt.startswith("You are the scheduling assistant of Jordan Lee.")
    assert "Today is Thursday 2026-08-27." in prompt
    assert "- #1 No meetings before 10am [the tools check this: no meeting starts before 10:00]" in prompt


def test_stdout_carries_nothing_but_json_rpc(demo_db: Path, tmp_path: Path) -> None:
    """A whole session, a notice-worthy failure included, with stdout copied aside by `tee`."""
    copy = tmp_path / "stdout.jsonl"
    command = f"{SCRIPT} mcp --db {demo_db} --today {DEMO_TODAY} | tee {copy}"
    server = StdioServerParameters(command="sh", args=["-c", command], env=dict(os.environ))

    async def run() -> None:
        async with over_stdio(server, answering({"approve": True}, []), mode="legacy") as client:
            await client.list_tools()
            await client.call_tool("no_such_tool", {})
            await client.call_tool("create_event", BOOKING)
            await client.read_resource("scheduler://people")

    anyio.run(run)
    lines = copy.read_text().splitlines()
    assert len(lines) >= 5
    assert [json.loads(line)["jsonrpc"] for line in lines] == ["2.0"] * len(lines)


# --- over Streamable HTTP -------------------------------------------------------------------------------


@asynccontextmanager
async def over_http(url: str, headers: dict[str, str] | None = None) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers=headers or {}, timeout=30)
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        yield client


def serving(db: Path, address: str, *flags: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    args = [SCRIPT, "mcp", "--db", str(db), "--today", DEMO_TODAY, "--http", address, *flags]
    process = subprocess.Popen(args, env={**os.environ, **(env or {})}, stderr=subprocess.PIPE)
    host, _, port = address.rpartition(":")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            httpx2.get(f"http://{host}:{port}/", timeout=1)
            return process
        except httpx2.TransportError:
            assert process.poll() is None, process.stderr.read() if process.stderr else b""
            time.sleep(0.1)
    process.kill()
    raise AssertionError("the server did not start listening")


def stop(process: subprocess.Popen[bytes]) -> str:
    process.terminate()
    _, err = process.communicate(timeout=20)
    return err.decode()


def test_over_http_book_a_slot_and_the_host_check_on_loopback(demo_db: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    process = serving(demo_db, address, "--yes")
    try:

        async def run() -> tuple[list[str], types.CallToolResult]:
            async with over_http(f"http://{address}/mcp") as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                return names, await client.call_tool("create_event", {**BOOKING, "idempotency_key": "http-1"})

        names, booked = anyio.run(run)
        rebound = httpx2.post(f"http://{address}/mcp", json={}, headers={"Host": "evil.example"}, timeout=10)
    finally:
        err = stop(process)
    assert names == ["find_free_slots", "create_event", "list_events", "move_event", "cancel_event"]
    assert not booked.is_error
    assert events_at(demo_db, MONDAY_2PM_UTC) == ["Meeting with Priya Raman"]
    assert rebound.status_code == 421
    assert "Traceback" not in err


def test_over_http_a_token_is_needed_and_checked(demo_db: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    token = "test-token-not-a-secret"
    process = serving(demo_db, address, "--token-env", "MCP_TEST_TOKEN", env={"MCP_TEST_TOKEN": token})
    try:
        url = f"http://{address}/mcp"
        without = httpx2.post(url, json={}, timeout=10)
        wrong = httpx2.post(url, json={}, headers={"Authorization": "Bearer nope"}, timeout=10)

        async def run() -> list[str]:
            async with over_http(url, {"Authorization": f"Bearer {token}"}) as client:
                return [tool.name for tool in (await client.list_tools()).tools]

        names = anyio.run(run)
    finally:
        err = stop(process)
    assert without.status_code == 401
    assert wrong.status_code == 401
    assert len(names) == 5
    assert token not in err


def test_off_loopback_without_a_token_is_refused_in_one_line(demo_db: Path) -> None:
    done = subprocess.run(
        [SCRIPT, "mcp", "--db", str(demo_db), "--http", f"0.0.0.0:{free_port()}"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "give --token-env VAR" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_an_empty_token_variable_and_a_calendar_without_owner_are_one_line_each(tmp_path: Path) -> None:
    empty = subprocess.run(
        [SCRIPT, "mcp", "--http", "8765", "--token-env", "NO_SUCH_VARIABLE_HERE"], capture_output=True, text=True
    )
    assert empty.returncode == 1
    assert empty.stderr.strip().splitlines() == [
        "Error: --token-env NO_SUCH_VARIABLE_HERE: that environment variable is empty or not set; put the token there"
    ]
    fresh = subprocess.run([SCRIPT, "mcp", "--db", str(tmp_path / "new.db")], capture_output=True, text=True)
    assert fresh.returncode == 1
    assert len(fresh.stderr.strip().splitlines()) == 1
    assert "this calendar has no owner yet" in fresh.stderr
    assert fresh.stdout == ""


def test_over_http_approval_the_key_a_clash_and_a_sigkill(demo_db: Path) -> None:
    """The stdio stories again over Streamable HTTP, where elicitation is an `input_required` round."""
    asked: list[str] = []
    answers = iter([{"approve": True}, {"approve": False, "reason": "too early"}])

    async def answer(_: Any, request: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(request.message)
        return types.ElicitResult(action="accept", content=next(answers))

    keyed = {**BOOKING, "idempotency_key": "over-http"}
    address = f"127.0.0.1:{free_port()}"
    process = serving(demo_db, address)
    try:

        async def run() -> list[types.CallToolResult]:
            http = httpx2.AsyncClient(timeout=30)
            transport = streamable_http_client(f"http://{address}/mcp", http_client=http)
            async with http, Client(transport, elicitation_callback=answer) as client:
                return [
                    await client.call_tool("find_free_slots", {"person": "priya", "week": MONDAY}),
                    await client.call_tool("create_event", keyed),
                    await client.call_tool("create_event", keyed),
                    await client.call_tool("create_event", {**keyed, "minutes": 45}),
                    await client.call_tool("create_event", {**BOOKING, "start": f"{MONDAY}T15:00"}),
                    await client.call_tool("create_event", {**BOOKING, "start": f"{MONDAY}T09:00"}),
                ]

        found, booked, repeat, other, clash, declined = anyio.run(run)
    finally:
        err = stop(process)
    assert "- Mon 2026-08-31 14:00-15:00" in text(found).splitlines()
    assert asked[0] == QUESTION
    assert text(booked).startswith("Booked 'Meeting with Priya Raman' on Mon 2026-08-31 14:00-14:30")
    assert text(repeat) == text(booked)
    assert other.is_error
    assert "the idempotency key 'over-http' already answered a create_event call" in text(other)
    assert clash.is_error
    assert "is not free: it overlaps 'Hiring panel'" in text(clash)
    assert len(asked) == 2  # the repeat, the other input and the clash asked nothing
    assert declined.is_error
    assert "Their reason: 'too early'. Nothing was booked." in text(declined)
    assert events_at(demo_db, MONDAY_2PM_UTC) == ["Meeting with Priya Raman"]
    assert events_at(demo_db, f"{MONDAY}T08:00") == []
    assert "Traceback" not in err

    crash = {**BOOKING, "start": "2026-09-02T09:15", "idempotency_key": "http-crash"}
    wednesday_utc = "2026-09-02T08:15"
    address = f"127.0.0.1:{free_port()}"
    dying = serving(demo_db, address, "--yes", env={"SCHEDULER_AGENT_FAULT": "after_calendar_write"})

    async def call(url: str) -> types.CallToolResult:
        async with over_http(url) as client:
            return await client.call_tool("create_event", crash)

    try:
        with pytest.raises(Exception):  # noqa: B017 (the transport's own error for a server that vanished)
            anyio.run(call, f"http://{address}/mcp")
        assert dying.wait(timeout=20) == -9  # SIGKILL: after the write, before the answer
    finally:
        stop(dying)
    assert events_at(demo_db, wednesday_utc) == ["Meeting with Priya Raman"]
    address = f"127.0.0.1:{free_port()}"
    process = serving(demo_db, address, "--yes")
    try:
        again = anyio.run(call, f"http://{address}/mcp")
    finally:
        stop(process)
    assert not again.is_error
    assert text(again).startswith("Booked 'Meeting with Priya Raman' on Wed 2026-09-02 09:15-09:45")
    assert events_at(demo_db, wednesday_utc) == ["Meeting with Priya Raman"]


def test_without_the_sdk_the_command_says_which_extra_to_install(demo_db: Path) -> None:
    code = (
        "import sys\n"
        "sys.modules['mcp'] = None  # as if the extra were not installed: importing it raises ImportError\n"
        "from scheduler_agent.cli.app import main\n"
        f"sys.argv = ['scheduler-agent', 'mcp', '--db', {str(demo_db)!r}]\n"
        "main()"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: serving over MCP needs the official MCP SDK, which is not installed: pip install 'scheduler-agent[mcp]'"
    ]
