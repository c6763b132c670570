"""The calendar in SQLite: the owner, the people, their events.

Times go in and come out as aware datetimes; they are stored in UTC as
`YYYY-MM-DDTHH:MM:SSZ`, so comparing the text compares the times. The owner is the person
keyed `you`. Errors a person (or the model) can fix are `CalendarError`, one actionable line.

An event may repeat (RFC 5545's RRULE, RDATE and EXDATE, usually from an imported .ics file):
it is stored once, and `events_for` expands it into the occurrences that overlap the range
asked about, in the wall-clock time of the event's own zone.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from importlib import resources
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.storage.db import transaction

OWNER_KEY = "you"
SET_OWNER_HINT = (
    "run `scheduler-agent calendar set-owner --name NAME --tz ZONE --hours 09:00-17:00`, "
    "or `scheduler-agent calendar seed-demo` for the demo calendar"
)
_KEY = re.compile(r"[a-z0-9_-]{1,32}")
_HOURS = re.compile(r"\s*(\d{1,2}:\d{2})\s*-\s*(\d{1,2}:\d{2})\s*")
_UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


class CalendarError(AgentError):
    """A problem a person can fix; the message is one line that says what to do."""


@dataclass(frozen=True)
class Person:
    key: str
    name: str
    tz: str
    work_start: time
    work_end: time

    @property
    def is_owner(self) -> bool:
        return self.key == OWNER_KEY

    @property
    def hours(self) -> str:
        """`09:00-17:00 Europe/London`."""
        return f"{self.work_start:%H:%M}-{self.work_end:%H:%M} {self.tz}"


@dataclass(frozen=True)
class Event:
    """One event, or one occurrence of a repeating event (same id, that occurrence's times)."""

    id: int
    title: str
    start: datetime  # aware, UTC
    end: datetime
    attendees: tuple[str, ...]  # person keys, the owner ('you') first
    recurring: bool = False


@dataclass(frozen=True)
class Recurrence:
    """How an event repeats, as RFC 5545 says: the first occurrence, the RRULE's and the RDATEs' starts,
    less the EXDATEs. Expanded in the wall-clock time of the event's zone."""

    rule: str | None = None  # an RRULE value with any UNTIL in UTC, e.g. 'FREQ=WEEKLY;BYDAY=MO'
    rdates: tuple[datetime, ...] = ()  # extra starts, aware
    exdates: tuple[datetime, ...] = ()  # starts left out, aware

    def __bool__(self) -> bool:
        return self.rule is not None or bool(self.rdates)


@dataclass(frozen=True)
class EventRecord:
    """Everything stored about one event: what `calendar export` writes."""

    event: Event  # its first occurrence when it repeats
    tz: str | None  # the zone its times were given in, when known
    all_day: bool
    recurrence: Recurrence  # falsy when it does not repeat
    created: datetime


@dataclass(frozen=True)
class ImportedEvent:
    """One event read from an .ics file, ready to store for one person."""

    uid: str
    recurrence_id: datetime | None  # set when it replaces one occurrence of the event with the same UID
    title: str
    start: datetime  # aware
    end: datetime
    tz: str | None
    all_day: bool = False
    recurrence: Recurrence = Recurrence()


@dataclass(frozen=True)
class ImportCounts:
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0  # imported before, cancelled in the file now


# --- values -------------------------------------------------------------------------------


def to_utc_text(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError(f"{moment.isoformat()} has no time zone; give an aware datetime")
    return moment.astimezone(UTC).strftime(_UTC_FORMAT)


def from_utc_text(text: str) -> datetime:
    return datetime.strptime(text, _UTC_FORMAT).replace(tzinfo=UTC)


def check_tz(tz: str) -> str:
    """Return `tz` if it names an IANA time zone, else raise CalendarError."""
    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise CalendarError(
            f"time zone {tz!r} is unknown: use an IANA name such as Europe/London or America/New_York"
        ) from None
    return tz


def parse_hours(text: str) -> tuple[time, time]:
    """`09:00-17:00` → (09:00, 17:00); raise CalendarError for anything else or an empty range."""
    match = _HOURS.fullmatch(text)
    try:
        if match is None:
            raise ValueError(text)
        start, end = (time.fromisoformat(part.zfill(5)) for part in match.groups())
    except ValueError:
        raise CalendarError(f"working hours {text!r} are not a range: use HH:MM-HH:MM, e.g. 09:00-17:00") from None
    return check_hours(start, end)


def check_hours(start: time, end: time) -> tuple[time, time]:
    if start.second or start.microsecond or end.second or end.microsecond:
        raise CalendarError(f"working hours {start}-{end} must be whole minutes, e.g. 09:00-17:00")
    if start >= end:
        raise CalendarError(
            f"working hours {start:%H:%M}-{end:%H:%M} end before they start: "
            "give the start first, within one day, e.g. 09:00-17:00"
        )
    return start, end


def _check_name(name: str) -> str:
    cleaned = " ".join(name.split())
    if not cleaned:
        raise CalendarError("the name is empty: give the person's full name, e.g. --name 'Priya Raman'")
    return cleaned


def _person(row: sqlite3.Row) -> Person:
    return Person(
        key=row["key"],
        name=row["name"],
        tz=row["tz"],
        work_start=time.fromisoformat(row["work_start"]),
        work_end=time.fromisoformat(row["work_end"]),
    )


# --- people -------------------------------------------------------------------------------


def get_owner(conn: sqlite3.Connection) -> Person:
    row = conn.execute("SELECT * FROM people WHERE key = ?", (OWNER_KEY,)).fetchone()
    if row is None:
        raise CalendarError(f"this calendar has no owner yet: {SET_OWNER_HINT}")
    return _person(row)


def set_owner(conn: sqlite3.Connection, name: str, tz: str, work_start: time, work_end: time) -> Person:
    """Create or replace the owner (key 'you')."""
    owner = _new_person(OWNER_KEY, name, tz, work_start, work_end)
    with transaction(conn):
        _upsert(conn, owner)
    return owner


def add_person(conn: sqlite3.Connection, key: str, name: str, tz: str, work_start: time, work_end: time) -> Person:
    """Add someone the owner meets. The key is short, lowercase, unique (e.g. 'priya')."""
    if key == OWNER_KEY:
        raise CalendarError(f"the key {OWNER_KEY!r} is the owner's: use set-owner, or pick another key")
    if not _KEY.fullmatch(key):
        suggestion = re.sub(r"[^a-z0-9_-]", "", key.lower().replace(" ", "-"))[:32] or "priya"
        raise CalendarError(f"key {key!r} must be 1-32 lowercase letters, digits, '-' or '_': e.g. {suggestion!r}")
    person = _new_person(key, name, tz, work_start, work_end)
    with transaction(conn):
        existing = conn.execute("SELECT name FROM people WHERE key = ?", (key,)).fetchone()
        if existing is not None:
            raise CalendarError(f"key {key!r} is already taken by {existing['name']}: choose another key")
        _upsert(conn, person)
    return person


def _new_person(key: str, name: str, tz: str, work_start: time, work_end: time) -> Person:
    check_hours(work_start, work_end)
    return Person(key, _check_name(name), check_tz(tz), work_start, work_end)


def _upsert(conn: sqlite3.Connection, person: Person) -> None:
    conn.execute(
        "INSERT INTO people (key, name, tz, work_start, work_end) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (key) DO UPDATE SET name = excluded.name, tz = excluded.tz, "
        "work_start = excluded.work_start, work_end = excluded.work_end",
        (person.key, person.name, person.tz, f"{person.work_start:%H:%M}", f"{person.work_end:%H:%M}"),
    )


def list_people(conn: sqlite3.Connection) -> list[Person]:
    """Everyone but the owner, by key."""
    rows = conn.execute("SELECT * FROM people WHERE key <> ? ORDER BY key", (OWNER_KEY,))
    return [_person(row) for row in rows]


def match_people(conn: sqlite3.Connection, text: str) -> list[Person]:
    """The people (not the owner) `text` names: by key, else full name, else first name; any case."""
    wanted = " ".join(text.split()).casefold()
    people = list_people(conn)
    for matches in (
        [p for p in people if p.key == wanted],
        [p for p in people if p.name.casefold() == wanted],
        [p for p in people if p.name.split()[0].casefold() == wanted],
    ):
        if matches:
            return matches
    return []


def find_person(conn: sqlite3.Connection, text: str) -> Person | None:
    """The one person `text` names, or None when no one (or more than one) fits."""
    matches = match_people(conn, text)
    return matches[0] if len(matches) == 1 else None


def names_owner(owner: Person, text: str) -> bool:
    wanted = " ".join(text.split()).casefold()
    return wanted in {OWNER_KEY, "me", "myself", owner.name.casefold(), owner.name.split()[0].casefold()}


# --- events -------------------------------------------------------------------------------


def add_event(
    conn: sqlite3.Connection,
    title: str,
    start: datetime,
    end: datetime,
    attendees: Iterable[str],
    event_id: int | None = None,
    *,
    tz: str | None = None,
    all_day: bool = False,
    recurrence: Recurrence | None = None,
) -> Event:
    """Insert an event (with `event_id` when a fixture gives one); no checks of availability here.

    `tz` is the zone its times were given in; an event that repeats (`recurrence`) needs one, since
    its rule repeats in that zone's wall-clock time. `start`/`end` are then its first occurrence.
    """
    keys = _attendee_order(attendees)
    title = " ".join(title.split())
    if not title:
        raise CalendarError("the event title is empty: give a short title, e.g. 'Design review'")
    if not keys:
        raise CalendarError("an event needs at least one attendee: give person keys, e.g. ['you', 'priya']")
    start_text, end_text = to_utc_text(start), to_utc_text(end)
    if start_text >= end_text:
        raise CalendarError(f"the event ends ({end.isoformat()}) before it starts ({start.isoformat()})")
    repeat = recurrence or Recurrence()
    if tz is not None:
        check_tz(tz)
    if repeat:
        if tz is None:
            raise CalendarError("a repeating event needs the time zone it repeats in, e.g. tz='Europe/London'")
        check_rule(repeat, start, tz)
    with transaction(conn):
        placeholders = ", ".join("?" for _ in keys)
        known = {row[0] for row in conn.execute(f"SELECT key FROM people WHERE key IN ({placeholders})", keys)}
        unknown = [key for key in keys if key not in known]
        if unknown:
            raise CalendarError(
                f"unknown attendee key(s): {', '.join(unknown)}; add them with `calendar add-person` first"
            )
        cursor = conn.execute(
            "INSERT INTO events (id, title, start_utc, end_utc, tz, all_day, rrule, rdates, exdates) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (event_id, title, start_text, end_text, tz, int(all_day), *_recurrence_columns(repeat)),
        )
        event_id = cursor.lastrowid
        assert event_id is not None
        conn.executemany(
            "INSERT INTO event_attendees (event_id, person_key) VALUES (?, ?)",
            [(event_id, key) for key in keys],
        )
    return Event(event_id, title, from_utc_text(start_text), from_utc_text(end_text), keys, bool(repeat))


def cancel_event(conn: sqlite3.Connection, event_id: int) -> Event:
    """Delete an event and return it as it was; its attendees go with it.

    A bookings record of the call that made it stays, with its event_id set to NULL: a
    resumed round still answers with it instead of booking again.
    """
    with transaction(conn):
        event = get_event(conn, event_id)
        if event is None:
            newest = conn.execute("SELECT max(id) FROM events").fetchone()[0]
            hint = "the calendar has no events" if newest is None else f"ids go up to {newest}"
            raise CalendarError(
                f"there is no event with id {event_id} ({hint}): "
                "`scheduler-agent calendar show --week YYYY-MM-DD` lists events with their ids (#N)"
            )
        conn.execute("DELETE FROM events WHERE id = ?", (event_id,))
    return event


def _attendee_order(keys: Iterable[str]) -> tuple[str, ...]:
    unique = set(keys)
    return tuple(sorted(unique, key=lambda key: (key != OWNER_KEY, key)))


_EVENT_COLUMNS = "e.id, e.title, e.start_utc, e.end_utc, e.tz, e.all_day, e.rrule, e.rdates, e.exdates, e.created_at"
_REPEATS = "(e.rrule IS NOT NULL OR e.rdates <> '')"


def events_for(conn: sqlite3.Connection, person_key: str, start_utc: datetime, end_utc: datetime) -> list[Event]:
    """`person_key`'s events that overlap [start_utc, end_utc), by start time.

    A repeating event gives each of its occurrences in the range, with that occurrence's times.
    """
    rows = conn.execute(
        f"SELECT {_EVENT_COLUMNS}, group_concat(all_a.person_key, ' ') AS keys "
        "FROM events e JOIN event_attendees a ON a.event_id = e.id AND a.person_key = ? "
        "JOIN event_attendees all_a ON all_a.event_id = e.id "
        f"WHERE (e.start_utc < ? AND e.end_utc > ?) OR {_REPEATS} "
        "GROUP BY e.id ORDER BY e.start_utc, e.id",
        (person_key, to_utc_text(end_utc), to_utc_text(start_utc)),
    )
    events: list[Event] = []
    for row in rows:
        record = _record(row)
        if not record.recurrence:
            events.append(record.event)
            continue
        assert record.tz is not None
        first = record.event
        events += [
            Event(first.id, first.title, begins, ends, first.attendees, recurring=True)
            for begins, ends in occurrences((first.start, first.end), record.tz, record.recurrence, start_utc, end_utc)
        ]
    return sorted(events, key=lambda event: (event.start, event.id))


def get_event(conn: sqlite3.Connection, event_id: int) -> Event | None:
    """The event with that id (its first occurrence, when it repeats)."""
    record = get_record(conn, event_id)
    return None if record is None else record.event


def get_record(conn: sqlite3.Connection, event_id: int) -> EventRecord | None:
    row = conn.execute(
        f"SELECT {_EVENT_COLUMNS}, group_concat(a.person_key, ' ') AS keys "
        "FROM events e JOIN event_attendees a ON a.event_id = e.id WHERE e.id = ? GROUP BY e.id",
        (event_id,),
    ).fetchone()
    return None if row is None else _record(row)


def event_records(conn: sqlite3.Connection, person_key: str | None = None) -> list[EventRecord]:
    """Every event as stored (repeating ones once), `person_key`'s only when given; by id."""
    where, args = "", []
    if person_key is not None:
        where, args = "WHERE e.id IN (SELECT event_id FROM event_attendees WHERE person_key = ?)", [person_key]
    rows = conn.execute(
        f"SELECT {_EVENT_COLUMNS}, group_concat(a.person_key, ' ') AS keys "
        f"FROM events e JOIN event_attendees a ON a.event_id = e.id {where} GROUP BY e.id ORDER BY e.id",
        args,
    )
    return [_record(row) for row in rows]


def _record(row: sqlite3.Row) -> EventRecord:
    recurrence = Recurrence(row["rrule"], _utc_list(row["rdates"]), _utc_list(row["exdates"]))
    event = Event(
        id=row["id"],
        title=row["title"],
        start=from_utc_text(row["start_utc"]),
        end=from_utc_text(row["end_utc"]),
        attendees=_attendee_order(row["keys"].split()),
        recurring=bool(recurrence),
    )
    created = datetime.strptime(row["created_at"], _UTC_FORMAT).replace(tzinfo=UTC)
    return EventRecord(event, row["tz"], bool(row["all_day"]), recurrence, created)


def _utc_list(text: str) -> tuple[datetime, ...]:
    return tuple(from_utc_text(part) for part in text.split())


def _recurrence_columns(recurrence: Recurrence) -> tuple[str | None, str, str]:
    """The (rrule, rdates, exdates) columns for `recurrence`."""
    return (
        recurrence.rule,
        " ".join(sorted({to_utc_text(moment) for moment in recurrence.rdates})),
        " ".join(sorted({to_utc_text(moment) for moment in recurrence.exdates})),
    )


# --- repeating events -----------------------------------------------------------------------

_NO_RULES_FINER_THAN = ("SECONDLY", "MINUTELY")


def check_rule(recurrence: Recurrence, start: datetime, tz: str) -> None:
    """Raise CalendarError unless `recurrence.rule` is an RRULE dateutil can expand from `start` in `tz`."""
    if recurrence.rule is None:
        return
    from dateutil.rrule import rrulestr  # only when a rule is stored or expanded

    rule = recurrence.rule
    parts = {part.split("=", 1)[0] for part in rule.upper().split(";")}
    if {"COUNT", "UNTIL"} <= parts:
        raise CalendarError(f"RRULE {rule!r} has both COUNT and UNTIL, which RFC 5545 forbids: keep one of them")
    frequency = re.search(r"(?:^|;)FREQ=([A-Z]+)", rule.upper())
    if frequency is not None and frequency.group(1) in _NO_RULES_FINER_THAN:
        raise CalendarError(
            f"RRULE {rule!r} repeats every {frequency.group(1).lower()[:-2]}: busy time can repeat "
            "hourly at most; give FREQ=HOURLY, DAILY, WEEKLY, MONTHLY or YEARLY"
        )
    try:
        rrulestr(rule, dtstart=start.astimezone(ZoneInfo(tz)))
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise CalendarError(
            f"RRULE {rule!r} is not a recurrence rule dateutil can read ({exc or type(exc).__name__}): "
            "write it as RFC 5545 says, e.g. FREQ=WEEKLY;BYDAY=MO;UNTIL=20261231T235959Z"
        ) from None


def occurrences(
    first: tuple[datetime, datetime], tz: str, recurrence: Recurrence, start: datetime, end: datetime
) -> list[tuple[datetime, datetime]]:
    """The occurrences, as UTC (start, end), of an event first held at `first` that repeat as
    `recurrence` says in the wall-clock time of `tz`, and overlap [start, end).

    Each occurrence lasts as long on the wall clock as the first (a 09:00-10:00 stays 09:00-10:00
    across a daylight-saving change). Only the range asked about is produced.
    """
    from dateutil.rrule import rruleset, rrulestr  # only when something repeats

    zone = ZoneInfo(tz)
    first_start = first[0].astimezone(zone)
    wall_length = first[1].astimezone(zone).replace(tzinfo=None) - first_start.replace(tzinfo=None)
    real_length = first[1] - first[0]
    earliest = start - max(wall_length, real_length)  # an occurrence that starts later may overlap the range
    starts = rruleset()
    starts.rdate(first_start)  # the first occurrence always counts (RFC 5545 3.8.5.3)
    if recurrence.rule is not None:
        rule_start = _skip_ahead(recurrence.rule, first_start, earliest - timedelta(days=1))
        starts.rrule(rrulestr(recurrence.rule, dtstart=rule_start))
    for moment in recurrence.rdates:
        starts.rdate(moment.astimezone(zone))
    for moment in recurrence.exdates:
        starts.exdate(moment.astimezone(zone))
    result = []
    for begins in starts.between(earliest, end):
        ends = (begins.replace(tzinfo=None) + wall_length).replace(tzinfo=zone)
        if begins == first[0] or ends <= begins:  # the first as stored; or a length the clocks swallowed
            ends = begins.astimezone(UTC) + real_length  # in UTC: aware arithmetic in one zone is wall-clock
        if ends > start:
            result.append((begins.astimezone(UTC), ends.astimezone(UTC)))
    return result


def _skip_ahead(rule: str, first_start: datetime, before: datetime) -> datetime:
    """A start for `rule` that gives the same occurrences from `before` on as `first_start`, but nearer.

    dateutil walks a rule from its start, so a daily rule begun years ago costs thousands of steps
    for one week. A DAILY or WEEKLY rule without COUNT repeats exactly every INTERVAL days or weeks
    on the wall clock, so a start moved on by whole periods keeps the same times, weekdays and
    phase. Any other rule keeps its own start.
    """
    parts = dict(part.split("=", 1) for part in rule.upper().split(";") if "=" in part)
    days = {"DAILY": 1, "WEEKLY": 7}.get(parts.get("FREQ", ""))
    if days is None or "COUNT" in parts or not parts.get("INTERVAL", "1").isdigit():
        return first_start
    period = days * max(int(parts.get("INTERVAL", "1")), 1)
    zone = first_start.tzinfo
    periods = (before.astimezone(zone).date() - first_start.date()).days // period
    if periods <= 0:
        return first_start
    return (first_start.replace(tzinfo=None) + timedelta(days=periods * period)).replace(tzinfo=zone)


# --- importing: events keyed by the file's UID and the person -----------------------------


def import_events(
    conn: sqlite3.Connection,
    person_key: str,
    events: Sequence[ImportedEvent],
    cancelled: Iterable[tuple[str, datetime | None]] = (),
) -> ImportCounts:
    """Store `events` as busy time for `person_key`, all or nothing, in one transaction.

    An event is keyed by (person, UID, RECURRENCE-ID): one imported before is updated in place
    (same id) or left alone when nothing changed, never added twice. `cancelled` are (UID,
    RECURRENCE-ID) keys the file now marks cancelled: events imported under them are removed.
    """
    counts = {"new": 0, "updated": 0, "unchanged": 0, "removed": 0}
    with transaction(conn):
        for item in events:
            row = _source_row(conn, person_key, item.uid, item.recurrence_id)
            if row is None:
                event = add_event(
                    conn,
                    item.title,
                    item.start,
                    item.end,
                    [person_key],
                    tz=item.tz,
                    all_day=item.all_day,
                    recurrence=item.recurrence,
                )
                conn.execute(
                    "INSERT INTO event_sources (event_id, person_key, uid, recurrence_id) VALUES (?, ?, ?, ?)",
                    (event.id, person_key, item.uid, _recurrence_id_text(item.recurrence_id)),
                )
                counts["new"] += 1
            elif _update_imported(conn, row["event_id"], item):
                counts["updated"] += 1
            else:
                counts["unchanged"] += 1
        for uid, recurrence_id in cancelled:
            row = _source_row(conn, person_key, uid, recurrence_id)
            if row is not None:
                conn.execute("DELETE FROM events WHERE id = ?", (row["event_id"],))
                counts["removed"] += 1
    return ImportCounts(**counts)


def _source_row(conn: sqlite3.Connection, person_key: str, uid: str, recurrence_id: datetime | None) -> Any:
    return conn.execute(
        "SELECT event_id FROM event_sources WHERE person_key = ? AND uid = ? AND recurrence_id = ?",
        (person_key, uid, _recurrence_id_text(recurrence_id)),
    ).fetchone()


def _recurrence_id_text(moment: datetime | None) -> str:
    return "" if moment is None else to_utc_text(moment)


def _update_imported(conn: sqlite3.Connection, event_id: int, item: ImportedEvent) -> bool:
    """Bring event `event_id` in line with `item`; False when it already was."""
    title = " ".join(item.title.split())
    if not title:
        raise CalendarError("the event title is empty: give a short title, e.g. 'Design review'")
    start_text, end_text = to_utc_text(item.start), to_utc_text(item.end)
    if start_text >= end_text:
        raise CalendarError(f"the event ends ({item.end.isoformat()}) before it starts ({item.start.isoformat()})")
    if item.recurrence:
        if item.tz is None:
            raise CalendarError("a repeating event needs the time zone it repeats in, e.g. tz='Europe/London'")
        check_rule(item.recurrence, item.start, item.tz)
    repeat = item.recurrence or Recurrence()  # EXDATEs alone do not make an event repeat: as add_event stores it
    wanted = (title, start_text, end_text, item.tz, int(item.all_day), *_recurrence_columns(repeat))
    row = conn.execute(
        "SELECT title, start_utc, end_utc, tz, all_day, rrule, rdates, exdates FROM events WHERE id = ?",
        (event_id,),
    ).fetchone()
    if tuple(row) == wanted:
        return False
    conn.execute(
        "UPDATE events SET title = ?, start_utc = ?, end_utc = ?, tz = ?, all_day = ?, rrule = ?, rdates = ?, "
        "exdates = ? WHERE id = ?",
        (*wanted, event_id),
    )
    return True


# --- bookings: what each create_event call booked -------------------------------------


@dataclass(frozen=True)
class Booking:
    tool_use_id: str
    event_id: int | None  # None once the event was cancelled
    result: str  # the tool_result text the call answered with


def booking_for(conn: sqlite3.Connection, tool_use_id: str) -> Booking | None:
    """The booking recorded for call `tool_use_id`, if that call booked anything."""
    row = conn.execute(
        "SELECT tool_use_id, event_id, result FROM bookings WHERE tool_use_id = ?", (tool_use_id,)
    ).fetchone()
    return None if row is None else Booking(row["tool_use_id"], row["event_id"], row["result"])


def record_booking(conn: sqlite3.Connection, tool_use_id: str, event_id: int, result: str) -> Booking:
    """Record what call `tool_use_id` booked; call it inside the transaction that inserted the event."""
    conn.execute(
        "INSERT INTO bookings (tool_use_id, event_id, result) VALUES (?, ?, ?)", (tool_use_id, event_id, result)
    )
    return Booking(tool_use_id, event_id, result)


# --- fixtures -----------------------------------------------------------------------------


def demo_fixture() -> dict[str, Any]:
    """The demo calendar shipped with the package (plain JSON, embedded in cassettes as their setup)."""
    source = resources.files("scheduler_agent") / "data" / "demo_calendar.json"
    data: dict[str, Any] = json.loads(source.read_text(encoding="utf-8"))
    return data


def seed_demo(conn: sqlite3.Connection) -> int:
    """Put the demo calendar in (idempotent); return how many events were added."""
    return load_fixture(conn, demo_fixture())


def load_fixture(conn: sqlite3.Connection, data: Mapping[str, Any]) -> int:
    """Put a fixture's owner, people and events in, in one transaction; idempotent.

    Returns how many events were added (0 when all were already there).

    A row already there and equal is left alone; an event already there (same title, times
    and attendees) is not added twice. An owner or person already there with other details
    is an error: a fixture never overwrites someone's real calendar.

    Format: {"owner": {"name", "tz", "hours": "09:00-17:00"},
             "people": [{"key", "name", "tz", "hours"}],
             "events": [{"id"?, "title", "start": ISO with offset, "minutes", "attendees": [keys],
                         "tz"?, "all_day"?, "rrule"?, "rdates"?: [ISO], "exdates"?: [ISO]}]}
    The optional keys are there only for an event that has them (a repeating one, an imported one).
    """
    owner_spec = data["owner"]
    owner = _new_person(OWNER_KEY, owner_spec["name"], owner_spec["tz"], *parse_hours(owner_spec["hours"]))
    people = [
        _new_person(spec["key"], spec["name"], spec["tz"], *parse_hours(spec["hours"]))
        for spec in data.get("people", [])
    ]
    added = 0
    with transaction(conn):
        for person in [owner, *people]:
            _ensure_person(conn, person)
        for spec in data.get("events", []):
            start = _fixture_start(spec["start"])
            end = start + timedelta(minutes=int(spec["minutes"]))
            if not _event_exists(conn, spec["title"], start, end, spec["attendees"]):
                recurrence = Recurrence(
                    spec.get("rrule"),
                    tuple(_fixture_start(text) for text in spec.get("rdates", [])),
                    tuple(_fixture_start(text) for text in spec.get("exdates", [])),
                )
                add_event(
                    conn,
                    spec["title"],
                    start,
                    end,
                    spec["attendees"],
                    spec.get("id"),
                    tz=spec.get("tz"),
                    all_day=bool(spec.get("all_day", False)),
                    recurrence=recurrence,
                )
                added += 1
    return added


def export_fixture(conn: sqlite3.Connection) -> dict[str, Any]:
    """The whole calendar in the fixture format, event ids kept: `load_fixture` on a new file rebuilds it
    exactly, so a recorded session replays with the same tool results (event ids included)."""
    owner = get_owner(conn)

    def spec(person: Person) -> dict[str, str]:
        return {"name": person.name, "tz": person.tz, "hours": f"{person.work_start:%H:%M}-{person.work_end:%H:%M}"}

    def moment(value: datetime) -> str:
        return value.astimezone(ZoneInfo(owner.tz)).isoformat(timespec="minutes")

    events = []
    for record in event_records(conn):
        event = record.event
        minutes = int((event.end - event.start).total_seconds() // 60)
        entry: dict[str, Any] = {
            "id": event.id,
            "title": event.title,
            "start": moment(event.start),
            "minutes": minutes,
            "attendees": list(event.attendees),
        }
        if record.tz is not None:
            entry["tz"] = record.tz
        if record.all_day:
            entry["all_day"] = True
        repeat = record.recurrence
        if repeat.rule is not None:
            entry["rrule"] = repeat.rule
        if repeat.rdates:
            entry["rdates"] = [moment(value) for value in repeat.rdates]
        if repeat.exdates:
            entry["exdates"] = [moment(value) for value in repeat.exdates]
        events.append(entry)
    return {
        "owner": spec(owner),
        "people": [{"key": person.key, **spec(person)} for person in list_people(conn)],
        "events": events,
    }


def _ensure_person(conn: sqlite3.Connection, person: Person) -> None:
    row = conn.execute("SELECT * FROM people WHERE key = ?", (person.key,)).fetchone()
    if row is None:
        _upsert(conn, person)
    elif _person(row) != person:
        raise CalendarError(
            f"this calendar already has {person.key!r} as {_person(row).name} ({_person(row).hours}), "
            f"not {person.name} ({person.hours}): load the fixture into a new file with --db PATH"
        )


def _fixture_start(text: str) -> datetime:
    start = datetime.fromisoformat(text)
    if start.tzinfo is None:
        raise CalendarError(f"fixture event start {text!r} has no offset: write it like 2026-08-31T09:30+01:00")
    return start


def _event_exists(
    conn: sqlite3.Connection, title: str, start: datetime, end: datetime, attendees: Sequence[str]
) -> bool:
    rows = conn.execute(
        "SELECT e.id, group_concat(a.person_key, ' ') AS keys FROM events e "
        "JOIN event_attendees a ON a.event_id = e.id "
        "WHERE e.title = ? AND e.start_utc = ? AND e.end_utc = ? GROUP BY e.id",
        (" ".join(title.split()), to_utc_text(start), to_utc_text(end)),
    )
    wanted = set(attendees)
    return any(set(row["keys"].split()) == wanted for row in rows)
