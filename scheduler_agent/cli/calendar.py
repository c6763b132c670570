"""`scheduler-agent calendar ...`: look at and change the calendar the agent books into.

Booking goes through the same code as the `create_event` tool, so a person and the model
meet the same checks. A problem a person can fix is one `Error: ...` line and exit 1.
The commands live in cli/calendar_people.py (the owner and people), cli/calendar_events.py (events
and the week view), cli/calendar_files.py (iCalendar files and feeds), cli/caldav.py and cli/prefs.py;
each is imported only when one of its commands runs. `import` and `export` alone load `icalendar`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection

from scheduler_agent.cli.core import group
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.storage.db import Location


def examples(*commands: str) -> str:
    """A command's "Examples:" epilog, kept as written (Click's \\b stops it rewrapping the lines)."""
    return "Examples:\n\n\b\n" + "\n".join(f"  scheduler-agent calendar {command}" for command in commands)


# The tools' texts are written for the model (they name tools); a person at the command line gets these.
FOR_PEOPLE = {
    "e.g. one from find_free_slots.": "e.g. a free window from `scheduler-agent calendar show --person KEY`.",
    "find_free_slots lists the free windows.": "`scheduler-agent calendar show --person KEY` lists the free windows.",
    "call create_event again with a start inside a free window.": "give a --start inside a free window.",
    "call find_free_slots for the next week, or try a shorter meeting.": (
        "look at the next week (`scheduler-agent calendar show --week DATE`), or try a shorter --minutes."
    ),
    "Tell the user: create_event only books inside both people's working hours.": (
        "Meetings are booked only inside both people's working hours."
    ),
    "Use one of those keys; if the user means someone else, ask them (they can add a person with "
    "`scheduler-agent calendar add-person`).": (
        "Give one of those keys, or add the person with `scheduler-agent calendar add-person`."
    ),
    "Tell the user to add them with": "Add them with",
}


def for_people(text: str) -> str:
    """A tool's text, as said to a person at the command line rather than to the model."""
    for model_words, people_words in FOR_PEOPLE.items():
        text = text.replace(model_words, people_words)
    return text


@contextmanager
def _calendar(db: Location | None, creates: bool = False) -> Iterator[Connection]:
    """The open calendar for one command, with person-facing errors. A --db file that does not exist is refused
    (never created) unless the command `creates` a calendar: seed-demo, set-owner, add-person, import, prefs add.
    A command that acts on what a calendar holds would only fail on a new one, and leave the file behind."""
    from scheduler_agent.cli.database import connect, existing  # a command module: not for `calendar --help`

    with person_facing():
        conn = connect(db) if creates else existing(db)
        try:
            yield conn
        finally:
            conn.close()


calendar_session = _calendar  # for the command groups in other modules (cli/prefs.py)


_PEOPLE, _EVENTS, _FILES = (f"scheduler_agent.cli.calendar_{part}" for part in ("people", "events", "files"))
calendar_app = group(
    "calendar",
    "Look at and change the calendar the agent books into (the owner, people, events).",
    {  # name -> where the command is, and its one-line help (the test checks that they agree)
        "seed-demo": (
            f"{_PEOPLE}:seed_demo_command",
            "Put the demo calendar in (Jordan Lee and colleagues); running it again changes nothing.",
        ),
        "people": (f"{_PEOPLE}:people_command", "List the owner and the people the agent can book with."),
        "set-owner": (
            f"{_PEOPLE}:set_owner_command",
            "Set who the calendar belongs to ('you'): name, time zone, working hours.",
        ),
        "add-person": (f"{_PEOPLE}:add_person_command", "Add someone the owner meets."),
        "edit-person": (
            f"{_PEOPLE}:edit_person_command",
            "Change someone's name, zone, hours (per weekday too), days off, buffer, lunch, e-mail or CalDAV "
            "calendar; the rest stays.",
        ),
        "remove-person": (
            f"{_PEOPLE}:remove_person_command",
            "Remove someone; refused while they have future meetings, unless --cancel-meetings.",
        ),
        "add-event": (
            f"{_EVENTS}:add_event_command",
            "Book a meeting with the same checks as the agent's create_event tool.",
        ),
        "cancel": (f"{_EVENTS}:cancel_command", "Cancel (delete) one event, for everyone attending."),
        "show": (
            f"{_EVENTS}:show_command",
            "Show a week's events (yours, and the person's) and the free windows you share.",
        ),
        "import": (
            f"{_FILES}:import_command",
            "Import an .ics file as busy time for one person; an event that cannot be read is skipped and named.",
        ),
        "export": (
            f"{_FILES}:export_command",
            "Export the events as an iCalendar (.ics) file, RFC 5545, that other calendars can import.",
        ),
        "subscribe": (
            f"{_FILES}:subscribe_command",
            "Subscribe to a calendar feed (Google's, Outlook's, Fastmail's secret address) and fetch it now.",
        ),
        "feeds": (
            f"{_FILES}:feeds_command",
            "List the subscribed feeds (addresses masked) with their last fetch and its result.",
        ),
        "connect": (
            "scheduler_agent.cli.caldav:connect_command",
            "Book on your calendar server (CalDAV: Nextcloud, Fastmail, iCloud, Radicale, ...) instead of locally.",
        ),
        "backends": (
            "scheduler_agent.cli.caldav:backends_command",
            "Show the calendars the agent uses, where bookings go, the last sync, and check each server answers.",
        ),
        "sync": (
            "scheduler_agent.cli.caldav:sync_command",
            "Sync your calendar server's calendar into the local store now, and print what changed.",
        ),
        "prefs": (
            "scheduler_agent.cli.prefs:prefs_app",
            "The owner's standing preferences: in every conversation's system prompt; the structured ones "
            "are also checked by the tools.",
        ),
    },
)
