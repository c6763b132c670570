"""The structure of an .ics file, checked before any event is read: content lines, BEGIN/END nesting.

A file that is not iCalendar at all, or is structurally broken (an unclosed VCALENDAR), is refused here
with one line naming the line at fault, whatever `--strict` says: nothing of it is imported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from scheduler_agent.calendar.types import CalendarError

_NAME = re.compile(r"[A-Za-z0-9-]+")
_BEFORE_PARAMETERS = re.compile(r"[^;:]*")  # a content line's name: all before its first ';' or ':'
# The usual line in one match: an ASCII name that ends at the first ';' or ':'. A line it does not match (no
# name, or one that only upper-cases into ASCII) is judged by property_name and _NAME, as every line was.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9-]+(?=[;:])")


class IcsError(CalendarError):
    """A file that cannot be imported; the message is one line naming the line or event at fault."""


@dataclass
class Lines:
    """The file's content lines, unfolded, each with the physical line it starts on; VEVENT spans."""

    lines: list[tuple[int, str]] = field(default_factory=list)
    vevents: list[tuple[int, int]] = field(default_factory=list)  # indexes into lines: BEGIN, END

    def find(self, span: tuple[int, int], name: str) -> tuple[int, str] | None:
        """The first line of property `name` inside `span`: (line number, its value)."""
        for number, line in self.lines[span[0] : span[1] + 1]:
            if property_name(line) == name:
                return number, line.split(":", 1)[1] if ":" in line else ""
        return None


def property_name(line: str) -> str:
    found = _BEFORE_PARAMETERS.match(line)
    assert found is not None  # the pattern matches the empty string too
    return found.group().upper()


def scan(text: str, name: str) -> Lines:
    """Unfold the lines and check the BEGIN/END structure, naming the line of the first problem."""
    scanned = Lines()
    for number, raw in enumerate(text.splitlines(), 1):
        if raw[:1] in (" ", "\t") and scanned.lines:
            previous_number, previous = scanned.lines[-1]
            scanned.lines[-1] = (previous_number, previous + raw[1:])
        elif raw.strip():
            scanned.lines.append((number, raw))
    if not scanned.lines:
        raise IcsError(f"{name} is empty: give an .ics file exported from a calendar (it starts with BEGIN:VCALENDAR)")
    number, first = scanned.lines[0]
    if first.strip().upper() != "BEGIN:VCALENDAR":
        raise IcsError(
            f"{name} line {number}: not an iCalendar file: it starts with {first[:40]!r}, not BEGIN:VCALENDAR; "
            "export the calendar as .ics (iCalendar) and import that"
        )
    open_components: list[tuple[str, int, int]] = []  # name, line number, index
    plain_name = _PLAIN_NAME.match
    for index, (number, line) in enumerate(scanned.lines):
        plain = plain_name(line)
        prop = plain.group().upper() if plain is not None else property_name(line)
        if ":" not in line or (plain is None and not _NAME.fullmatch(prop)):
            raise IcsError(
                f"{name} line {number}: {line[:60]!r} is not an iCalendar content line (NAME:VALUE, "
                "or NAME;PARAM=VALUE:VALUE); fix or remove that line"
            )
        if prop not in ("BEGIN", "END"):
            if not open_components:
                raise IcsError(f"{name} line {number}: {line[:60]!r} comes after END:VCALENDAR; remove it")
            continue
        component = line.split(":", 1)[1].strip().upper()
        if prop == "BEGIN":
            if not open_components and component != "VCALENDAR":
                raise IcsError(f"{name} line {number}: BEGIN:{component} is outside any VCALENDAR")
            open_components.append((component, number, index))
            continue
        if not open_components:
            raise IcsError(f"{name} line {number}: END:{component} has no BEGIN:{component} before it")
        begun, begun_at, begun_index = open_components.pop()
        if begun != component:
            raise IcsError(
                f"{name} line {number}: END:{component} closes BEGIN:{begun} of line {begun_at}; "
                f"end it with END:{begun}"
            )
        if component == "VEVENT":
            scanned.vevents.append((begun_index, index))
    if open_components:
        begun, begun_at, _ = open_components[-1]
        raise IcsError(f"{name} line {begun_at}: BEGIN:{begun} is never closed: the file ends before END:{begun}")
    return scanned
