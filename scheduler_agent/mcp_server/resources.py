"""What our model reads besides the tools, for a client's model: the people, the owner's working hours and
standing preferences (resources), and the system prompt itself (a prompt). Each is read from the database
when asked, so it is as current as the calendar."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from scheduler_agent.calendar.people import get_owner, list_people
from scheduler_agent.calendar.prefs import preferences_block
from scheduler_agent.mcp_server.calls import Serving
from scheduler_agent.storage.db import open_db

PEOPLE = "scheduler://people"
HOURS = "scheduler://owner/working-hours"
PREFERENCES = "scheduler://owner/preferences"


def register(app: MCPServer, serving: Serving) -> None:
    @app.resource(PEOPLE, name="people", mime_type="text/plain", description="Who can be booked: keys, names, zones.")
    def people() -> str:
        return people_text(serving)

    @app.resource(HOURS, name="working-hours", mime_type="text/plain", description="The owner's working hours.")
    def hours() -> str:
        return hours_text(serving)

    @app.resource(
        PREFERENCES, name="preferences", mime_type="text/plain", description="The owner's standing preferences."
    )
    def preferences() -> str:
        return preferences_text(serving)

    @app.prompt(
        name="scheduling_assistant",
        description="The system prompt scheduler-agent's own model gets: today, the people, the preferences, "
        "and how to work with the five tools.",
    )
    def scheduling_assistant() -> str:
        return system_text(serving)


def people_text(serving: Serving) -> str:
    conn = open_db(serving.db)
    try:
        people = list_people(conn)
    finally:
        conn.close()
    lines = ["People in the calendar (key: name, time zone; working hours, Monday to Friday):"]
    lines += [f"- {p.key}: {p.name}, {p.tz}; {p.schedule}" for p in people] or ["- (nobody yet)"]
    return "\n".join(lines)


def hours_text(serving: Serving) -> str:
    conn = open_db(serving.db)
    try:
        owner = get_owner(conn)
    finally:
        conn.close()
    return f"{owner.name} works {owner.schedule}, Monday to Friday. Their time zone is {owner.tz}."


def preferences_text(serving: Serving) -> str:
    """The system prompt's own lines about them (`preferences_block`)."""
    conn = open_db(serving.db)
    try:
        owner = get_owner(conn)
        block = preferences_block(conn, owner.name).strip()
    finally:
        conn.close()
    return block or f"{owner.name} has no standing preferences."


def system_text(serving: Serving) -> str:
    from scheduler_agent.session.clock import clock_for
    from scheduler_agent.session.session import system_prompt

    conn = open_db(serving.db)
    try:
        return system_prompt(conn, clock_for(conn, serving.today))
    finally:
        conn.close()
