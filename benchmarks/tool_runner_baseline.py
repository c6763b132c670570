"""The `ask` row's baseline: the SDK's own tool runner doing the same turn with the same tool functions.

    python -m benchmarks.tool_runner_baseline --db CALENDAR.db TEXT

`client.beta.messages.tool_runner` in its classic mode (`thread=False`): every iteration resends the whole list,
with no storage, no grammar check, no trace. The tools are the project's own
(`CalendarTools(conn, clock).run`), on the same calendar and pinned clock as `scheduler-agent ask
--today`. Credentials and the loopback URL come from the environment (ANTHROPIC_API_KEY,
ANTHROPIC_BASE_URL), as for the CLI. Prints the final answer; exits 1 if the turn did not end.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from datetime import date, time
from pathlib import Path
from typing import Any

import anthropic
from anthropic import beta_tool

from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.people import get_owner
from scheduler_agent.calendar.tools import CalendarTools, tool_definitions
from scheduler_agent.storage.db import connect

MODEL = "claude-sonnet-5-5"
SYSTEM = "You book meetings on the owner's calendar with the tools; today is Thursday 2026-08-27."


def system_prompt(conn: Any, clock: Clock) -> str:
    """The project's own system prompt when it can be had from its public function, else a short stand-in."""
    try:
        from scheduler_agent.session.session import system_prompt as render

        return str(render(conn, clock))
    except (ImportError, TypeError):
        return SYSTEM


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--today", default="2026-08-27")
    parser.add_argument("text")
    args = parser.parse_args(argv)
    conn = connect(args.db)
    clock = Clock.pinned_at(date.fromisoformat(args.today), time(9, 0), get_owner(conn).tz)
    calendar = CalendarTools(conn, clock)
    ids = itertools.count(1)

    def runnable(definition: dict[str, Any]) -> Any:
        name = definition["name"]

        def call(**arguments: Any) -> str:
            return calendar.run(name, arguments, f"toolu_runner_{next(ids)}", Deadline.after(30))

        return beta_tool(
            call, name=name, description=definition["description"], input_schema=definition["input_schema"]
        )

    client = anthropic.Anthropic()
    runner = client.beta.messages.tool_runner(
        model=MODEL,
        max_tokens=4096,
        system=system_prompt(conn, clock),
        tools=[runnable(d) for d in tool_definitions()],
        messages=[{"role": "user", "content": args.text}],
        max_iterations=10,
        thread=False,  # classic mode: the whole list is resent every iteration, no server-held thread
    )
    last = None
    for message in runner:
        last = message
    if last is None or last.stop_reason != "end_turn":
        sys.stderr.write(f"the turn did not end: {last and last.stop_reason}\n")
        return 1
    sys.stdout.write("".join(getattr(block, "text", "") for block in last.content) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
