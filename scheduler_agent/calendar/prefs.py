"""The owner's standing preferences: free text for the model, and the common rules in a form the tools check.

They live in the `preferences` table and reach the model through the list, never a side store: the
system prompt renders them (`preferences_block`), so every request carries them. A structured rule
(`not_before`, `not_after`, `no_days`, `max_per_day`) is also applied by `find_free_slots` and
`create_event`/`move_event`, which name it when it decides ("09:00 is before your 10:00 rule").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import Connection
from sqlalchemy import text as sql

from scheduler_agent.calendar.types import WEEKDAY_KEYS, CalendarError
from scheduler_agent.storage.db import transaction
from scheduler_agent.storage.statement import Statement

RULES = ("not_before", "not_after", "no_days", "max_per_day")
MAX_TEXT = 300
MAX_PER_DAY_LIMIT = 20


@dataclass(frozen=True)
class Preference:
    id: int
    text: str
    rule: str = ""  # '' for text only, else one of RULES
    value: str = ""

    @property
    def rule_text(self) -> str:
        """`not before 10:00`: what the tools check, or '' for a text-only preference."""
        match self.rule:
            case "not_before":
                return f"no meeting starts before {self.value}"
            case "not_after":
                return f"no meeting ends after {self.value}"
            case "no_days":
                days = ", ".join(day.title() for day in self.value.split())
                return f"no meetings on {days}"
            case "max_per_day":
                return f"at most {self.value} meetings a day"
        return ""


@dataclass(frozen=True)
class Rules:
    """The structured preferences, combined: what the tools check."""

    not_before: tuple[time, Preference] | None = None
    not_after: tuple[time, Preference] | None = None
    no_days: dict[int, Preference] | None = None
    max_per_day: tuple[int, Preference] | None = None

    def closed(self, day: date, tz: str) -> list[tuple[datetime, datetime]]:
        """The parts of `day` (in the owner's zone `tz`) the rules keep free of meetings, as aware intervals."""
        zone = ZoneInfo(tz)
        start = datetime.combine(day, time(0), tzinfo=zone)
        end = datetime.combine(day + timedelta(days=1), time(0), tzinfo=zone)
        if self.no_days and day.weekday() in self.no_days:
            return [(start, end)]
        closed = []
        if self.not_before is not None:
            closed.append((start, datetime.combine(day, self.not_before[0], tzinfo=zone)))
        if self.not_after is not None:
            closed.append((datetime.combine(day, self.not_after[0], tzinfo=zone), end))
        return closed


_PREFERENCES = Statement("SELECT id, text, rule, value FROM preferences ORDER BY id")  # every tool call reads them


def list_preferences(conn: Connection) -> list[Preference]:
    return [Preference(*row) for row in _PREFERENCES.rows(conn)]


def add_preference(conn: Connection, text: str | None, rule: str = "", value: str = "") -> Preference:
    """Store one preference; `text` defaults to the rule in words. CalendarError for a bad rule or value."""
    if rule and rule not in RULES:
        raise CalendarError(f"unknown rule {rule!r}: the rules are {', '.join(RULES)}")
    value = check_value(rule, value) if rule else ""
    cleaned = " ".join((text or "").split()) or Preference(0, "", rule, value).rule_text
    if not cleaned:
        raise CalendarError(
            "the preference is empty: give its text, e.g. `calendar prefs add 'No meetings before 10am'`, "
            "or a rule, e.g. --not-before 10:00"
        )
    if len(cleaned) > MAX_TEXT:
        raise CalendarError(f"the preference is {len(cleaned)} characters long: keep it under {MAX_TEXT}")
    with transaction(conn):
        pid = conn.execute(
            sql("INSERT INTO preferences (text, rule, value) VALUES (:text, :rule, :value) RETURNING id"),
            {"text": cleaned, "rule": rule, "value": value},
        ).scalar_one()
    return Preference(int(pid), cleaned, rule, value)


def remove_preference(conn: Connection, preference_id: int) -> Preference:
    with transaction(conn):
        found = [p for p in list_preferences(conn) if p.id == preference_id]
        if not found:
            ids = ", ".join(f"#{p.id}" for p in list_preferences(conn)) or "none yet"
            raise CalendarError(
                f"there is no preference #{preference_id} (the preferences are {ids}): `calendar prefs list` shows them"
            )
        conn.execute(sql("DELETE FROM preferences WHERE id = :preference_id"), {"preference_id": preference_id})
    return found[0]


def check_value(rule: str, value: str) -> str:
    """The stored form of a rule's value; CalendarError with an example when it does not fit."""
    text = value.strip()
    if rule in ("not_before", "not_after"):
        try:
            return f"{time.fromisoformat(text.zfill(5)):%H:%M}"
        except ValueError:
            flag = rule.replace("_", "-")
            raise CalendarError(f"--{flag} {value!r} is not a time: give HH:MM, e.g. --{flag} 10:00") from None
    if rule == "no_days":
        days = [part.strip().lower()[:3] for part in text.replace(",", " ").split()]
        bad = [day for day in days if day not in WEEKDAY_KEYS]
        if not days or bad:
            raise CalendarError(
                f"--no-days {value!r} must be weekdays ({', '.join(WEEKDAY_KEYS)}), "
                "e.g. --no-days fri or --no-days mon,fri"
            )
        return " ".join(sorted(set(days), key=WEEKDAY_KEYS.index))
    if not text.isdigit() or not 1 <= int(text) <= MAX_PER_DAY_LIMIT:
        raise CalendarError(f"--max-per-day {value!r} must be a whole number from 1 to {MAX_PER_DAY_LIMIT}")
    return str(int(text))


def rules_of(preferences: Sequence[Preference]) -> Rules:
    """The strictest of each structured rule (the latest start, the earliest end, every day named, the lowest cap)."""
    not_before = not_after = max_per_day = None
    no_days: dict[int, Preference] = {}
    for preference in preferences:
        if preference.rule in ("not_before", "not_after"):
            moment = time.fromisoformat(preference.value)
            if preference.rule == "not_before" and (not_before is None or moment > not_before[0]):
                not_before = (moment, preference)
            if preference.rule == "not_after" and (not_after is None or moment < not_after[0]):
                not_after = (moment, preference)
        elif preference.rule == "no_days":
            for day in preference.value.split():
                no_days.setdefault(WEEKDAY_KEYS.index(day), preference)
        elif preference.rule == "max_per_day":
            cap = int(preference.value)
            if max_per_day is None or cap < max_per_day[0]:
                max_per_day = (cap, preference)
    return Rules(not_before, not_after, no_days or None, max_per_day)


def preferences_block(conn: Connection, owner_name: str) -> str:
    """What the system prompt says about the preferences: '' when there are none (it renders as before)."""
    preferences = list_preferences(conn)
    if not preferences:
        return ""
    lines = [f"\n\nStanding preferences of {owner_name} (set with `calendar prefs`; follow them in every booking):"]
    for preference in preferences:
        checked = f" [the tools check this: {preference.rule_text}]" if preference.rule else ""
        lines.append(f"- #{preference.id} {preference.text}{checked}")
    return "\n".join(lines)
