"""A third-party MCP server nobody here wrote, in front of the Radicale fixture (issue 41): `calendar-mcp` from
PyPI, a CalDAV MCP server on the `mcp` 1.x SDK. The test command installs it into its own venv,
`.venv-calendar-mcp` (with `mcp<2`; never at run time, never a dependency of the package: it is AGPL). The
agent, driven by the scripted API, looks at the free time and books through it, with approval, and the event
is on Radicale."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest
from radicale_server import OWNER_USER, RadicaleServer, client_for
from test_mcp_tools import results, run

from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

SERVER = Path(__file__).resolve().parents[1] / ".venv-calendar-mcp" / "bin" / "calendar-mcp"
LOOK = tool_use("toolu_cm_1", "cal__free_busy", {"days_ahead": 7})
BOOKING = {
    "summary": "Meeting with Priya",
    "start": "2027-01-11T14:00",
    "end": "2027-01-11T14:30",
    "calendar_id": "Work",
}
BOOK = tool_use("toolu_cm_2", "cal__create_event", BOOKING)


@pytest.fixture
def calendar_mcp() -> Path:
    if not SERVER.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{SERVER} is missing: the test command makes it (python3 -m venv .venv-calendar-mcp ...)")
        pytest.skip(f"{SERVER} is not installed here: make it as the README's test command does")
    return SERVER


def test_the_agent_books_on_radicale_through_calendar_mcp_with_approval(
    demo_db: Path, radicale: RadicaleServer, calendar_mcp: Path
) -> None:
    env = {
        "CALENDAR_MCP_URL": radicale.user_url(OWNER_USER),
        "CALENDAR_MCP_USERNAME": OWNER_USER,
        "CALENDAR_MCP_PASSWORD": radicale.users[OWNER_USER],
    }
    replies = [Reply([LOOK], "tool_use"), Reply([BOOK], "tool_use"), Reply([text("Booked on your Work calendar.")])]
    with ScriptedServer(replies) as api:
        done = run(
            ["ask", "book", "--db", str(demo_db), "--mcp", f"cal={shlex.quote(str(calendar_mcp))}"],
            api,
            stdin="y\ny\n",
            env=env,
        )
    assert done.returncode == 0, done.stderr
    names = [tool["name"] for tool in api.received[0]["tools"]]
    assert {"cal__free_busy", "cal__create_event", "cal__delete_event"} <= set(names)
    looked = results(api, 1)[0]
    assert "is_error" not in looked
    assert "busy" in looked["content"][0]["text"]
    assert "? Run 'free_busy' on the MCP server 'cal'" in done.stderr  # no annotations: every tool is asked
    assert "? Run 'create_event' on the MCP server 'cal'" in done.stderr
    assert "is_error" not in results(api, 2)[0]
    work = client_for(radicale, OWNER_USER).principal().calendar(cal_id="work")  # type: ignore[no-untyped-call]
    titles = [str(event.icalendar_component["SUMMARY"]) for event in work.events()]
    assert titles == ["Meeting with Priya"]
    assert radicale.users[OWNER_USER] not in api.received[-1].__repr__()  # the password never reaches the model
