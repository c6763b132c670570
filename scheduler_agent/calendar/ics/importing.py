"""`calendar import`: an .ics file read (leniently, or with `--strict`) and stored in one transaction.

Each event becomes busy time for one person, keyed by its UID, so importing a file again updates what
changed instead of adding it twice. What is imported is complete: the whole import is one transaction,
and an interrupted one leaves nothing behind.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Connection

from scheduler_agent.agent.collector import collector_paused
from scheduler_agent.calendar.ics.read import ReadCalendar, read_ics
from scheduler_agent.calendar.ics.scan import IcsError
from scheduler_agent.calendar.imports import import_events
from scheduler_agent.calendar.people import get_owner, list_people, match_people, names_owner
from scheduler_agent.calendar.types import OWNER_KEY, ImportCounts, Person


def person_named(conn: Connection, text: str) -> Person:
    """The owner (`you`, `me`, their name) or the one person `text` names; else IcsError saying who exists."""
    owner = get_owner(conn)
    if names_owner(owner, text):
        return owner
    matches = match_people(conn, text)
    if len(matches) == 1:
        return matches[0]
    if matches:
        several = ", ".join(f"{p.key} ({p.name})" for p in matches)
        raise IcsError(f"--person {text!r} fits more than one person: {several}; give one of those keys")
    known = ", ".join(f"{p.key} ({p.name})" for p in list_people(conn)) or "nobody else yet"
    raise IcsError(
        f"no one called {text!r} is in the calendar: give 'you' for {owner.name} or one of {known} "
        "(add someone with `scheduler-agent calendar add-person`)"
    )


def import_file(conn: Connection, path: Path, person_text: str = OWNER_KEY, *, strict: bool = False) -> str:
    """Import the .ics file at `path` as `person_text`'s busy time; return what happened, one line per point.

    Lenient by default: an event that cannot be read is skipped and named; `strict` refuses the file
    for it instead. A broken file is refused either way, and then nothing is imported.
    """
    owner = get_owner(conn)
    person = person_named(conn, person_text)
    text = read_text(path)
    # Parsing 10,000 events makes millions of objects that all stay alive until the import ends; each
    # collection walked every one of them, a fifth of the parse's time and more after it (five full
    # collections instead of the parse's two). Any cycles left are collected once, afterwards.
    with collector_paused():
        try:
            read = read_ics(text, name=path.name, owner=owner, person=person, strict=strict)
        except IcsError as exc:
            raise IcsError(f"{exc}; nothing was imported") from None
        counts = import_events(conn, person.key, read.events, read.dropped)
    return import_summary(path.name, person, read, counts, owner.tz)


def read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise IcsError(f"cannot read {path} ({exc.strerror or exc}): give the path of an .ics file") from None
    return decode(data, path.name)


def decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IcsError(
            f"{name} is not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}): "
            "iCalendar files are UTF-8; export it again, or save it as UTF-8"
        ) from None


def import_summary(name: str, person: Person, read: ReadCalendar, counts: ImportCounts, owner_tz: str) -> str:
    """`Imported 5 events (2 recurring) for Priya Raman (priya) from team.ics: 3 new, ...; 1 warning (below).`,
    each event skipped for a problem and each one read with a warning on a line of its own, and the count of
    what was skipped."""
    whom = f"{person.name} ({person.key})"
    head = f"Imported {_count(len(read.events), 'event')} ({read.recurring} recurring) for {whom} from {name}"
    parts = [f"{counts.new} new"]
    if counts.updated:
        parts.append(f"{counts.updated} updated")
    if counts.unchanged:
        parts.append(f"{counts.unchanged} already there")
    if counts.removed:
        parts.append(f"{counts.removed} removed (cancelled or free in the file now)")
    warned = f"; {_count(len(read.warnings), 'warning')} (below)" if read.warnings else ""
    lines = [f"{head}: {', '.join(parts)}{warned}."]
    lines += [f"Skipped {problem}" for problem in read.problems]
    if read.skipped:
        reasons = [
            f"{read.cancelled} cancelled" if read.cancelled else "",
            f"{read.transparent} transparent (marked free)" if read.transparent else "",
            f"{read.no_length} with no length (no DTEND or DURATION)" if read.no_length else "",
            f"{len(read.problems)} that could not be read (above)" if read.problems else "",
        ]
        lines.append(f"Skipped {read.skipped}: {', '.join(reason for reason in reasons if reason)}.")
    lines += [f"Warning: {warning}" for warning in read.warnings]
    if read.superseded:
        lines.append(
            f"Left out {_count(read.superseded, 'older copy', 'older copies')} of an event "
            "(same UID, lower SEQUENCE or earlier DTSTAMP)."
        )
    if read.floating:
        lines.append(
            f"{_count(read.floating, 'event')} had floating times (no time zone): read as {owner_tz}, the owner's zone."
        )
    return "\n".join(lines)


def _count(number: int, noun: str, plural: str | None = None) -> str:
    return f"{number} {noun if number == 1 else plural or noun + 's'}"
