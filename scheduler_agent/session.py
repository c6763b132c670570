"""One user turn against the calendar: the system prompt, the tools and the request, around the loop."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import timedelta

from scheduler_agent.calendar_store import get_owner, list_people
from scheduler_agent.calendar_tools import CalendarTools
from scheduler_agent.clock import Clock
from scheduler_agent.events import JSON, Report, TurnOutcome
from scheduler_agent.loop import Send, add_user_text, run_turn
from scheduler_agent.prompt_loader import render
from scheduler_agent.request import build_request


def system_prompt(conn: sqlite3.Connection, clock: Clock) -> str:
    """prompts/system.md filled from the calendar and the clock."""
    owner = get_owner(conn)
    today = clock.today(owner.tz)
    next_monday = today + timedelta(days=7 - today.weekday())
    people = "\n".join(f"- {p.key}: {p.name}, {p.tz}" for p in list_people(conn)) or "- (nobody yet)"
    return render(
        "system.md",
        owner_name=owner.name,
        owner_tz=owner.tz,
        weekday=today.strftime("%A"),
        today=today.isoformat(),
        next_monday=next_monday.isoformat(),
        people=people,
    )


@dataclass(frozen=True)
class Settings:
    model: str
    max_iterations: int


def ask(
    messages: list[JSON],
    text: str,
    *,
    conn: sqlite3.Connection,
    clock: Clock,
    send: Send,
    settings: Settings,
    report: Report,
) -> TurnOutcome:
    """Add the person's text to `messages` and run the loop until the model answers or a bound stops it."""
    toolbox = CalendarTools(conn, clock)
    system = system_prompt(conn, clock)
    add_user_text(messages, text)

    def build(current: list[JSON]) -> JSON:
        return build_request(model=settings.model, system=system, tools=toolbox.definitions, messages=current)

    return run_turn(
        messages, build=build, send=send, toolbox=toolbox, max_iterations=settings.max_iterations, report=report
    )
