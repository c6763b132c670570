"""A scripted model for many conversations at once: each books its own slot, in three replies.

The request "Book slot N" (N from 0) gets, by the list's length: a `find_free_slots` call (a read),
then a `create_event` call for slot N (30 minutes with Priya from Monday 2026-09-14 on, past the demo
calendar's busy weeks: ten slots a working day, every half hour from 11:00), then the text
"Booked slot N.". Every tool_use id carries N, so the bookings of different conversations are told
apart, and a resumed conversation gets the same answer to the same request. Served by
ScriptedServer(script=booking_script()).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

from scheduler_agent.agent.types import JSON
from scheduler_agent.testing.scripted_server import Reply, text, tool_use

SLOTS_A_DAY = 10  # 11:00 to 15:30, every half hour
FIRST_DAY = date(2026, 9, 14)


def request_text(n: int) -> str:
    return f"Book slot {n}"


def slot_day(n: int) -> date:
    """Slot n's day: ten slots a working day, from Monday 2026-09-14 on, weekends left out."""
    k = n // SLOTS_A_DAY
    return FIRST_DAY + timedelta(days=k + 2 * (k // 5))


def slot_start(n: int) -> str:
    """Slot n's start, in the owner's local time, as create_event takes it."""
    day = slot_day(n)
    minutes = 11 * 60 + 30 * (n % SLOTS_A_DAY)
    return f"{day.isoformat()}T{minutes // 60:02d}:{minutes % 60:02d}"


def replies_for(n: int, delay: float = 0.0) -> list[Reply]:
    day = slot_day(n)
    week = (day - timedelta(days=day.weekday())).isoformat()
    book = {"with": "priya", "start": slot_start(n), "minutes": 30, "title": f"Slot {n}"}
    return [
        Reply(
            [tool_use(f"toolu_s{n}_find", "find_free_slots", {"person": "priya", "week": week})],
            "tool_use",
            delay=delay,
        ),
        Reply(
            [text(f"Booking slot {n}."), tool_use(f"toolu_s{n}_book", "create_event", book)], "tool_use", delay=delay
        ),
        Reply([text(f"Booked slot {n}.")], delay=delay),
    ]


def booking_script(delay: float = 0.0) -> Callable[[JSON], Reply | None]:
    """The reply to each request: the conversation's own script, by the list's length (1, 3, 5 entries)."""

    def script(request: JSON) -> Reply | None:
        messages = request.get("messages", [])
        first = messages[0]["content"] if messages else ""
        if not isinstance(first, str):
            first = " ".join(b.get("text", "") for b in first if isinstance(b, dict))
        found = re.search(r"Book slot (\d+)", first)
        if found is None:
            return None
        replies = replies_for(int(found.group(1)), delay)
        number = (len(messages) + 1) // 2
        return replies[number - 1] if 1 <= number <= len(replies) else None

    return script
