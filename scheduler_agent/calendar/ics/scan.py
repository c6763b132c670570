"""The structure of an .ics file, checked before any event is read: content lines, BEGIN/END nesting.

A file that is not iCalendar at all, or is structurally broken (an unclosed VCALENDAR), is refused here
with one line naming the line at fault, whatever `--strict` says: nothing of it is imported. VEVENTs
outside any VCALENDAR (a file of bare VEVENTs, or some before or after it) are kept in `Scanned.outside`
for the reader to put inside one (`wrapped`), as khal and the reference read them.

The usual file (CRLF or LF lines, no blank ones, every name plain ASCII) is checked in a few passes over
its whole text (`_well_formed`), and its lines are numbered only if a message needs them. Any other file,
and any file that shortcut doubts, is checked line by line (`_scan_lines`), which names what is wrong.
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
# For the whole text at once: a line after the first that is not such a plain line with a ':' in it.
_NOT_PLAIN = re.compile(r"\n(?![A-Za-z0-9-]+(?::|;[^\n]*:))")
_BEGIN_OR_END = re.compile(r"\n((?:[Bb][Ee][Gg][Ii][Nn]|[Ee][Nn][Dd])[;:][^\n]*)")
# Line breaks other than LF and CRLF that `str.splitlines` also splits at (a lone CR is counted apart).
_OTHER_BREAKS = "\v\f\x1c\x1d\x1e\x85\u2028\u2029"


class IcsError(CalendarError):
    """A file that cannot be imported; the message is one line naming the line or event at fault."""


@dataclass
class Scanned:
    """The file's content lines, unfolded, each with the physical line it starts on; VEVENT spans."""

    lines: list[tuple[int, str]] = field(default_factory=list)
    vevents: list[tuple[int, int]] = field(default_factory=list)  # indexes into lines: BEGIN, END
    outside: list[tuple[int, int]] = field(default_factory=list)  # VEVENTs outside any VCALENDAR: BEGIN, END


@dataclass
class Lines:
    """A checked file: how many VEVENTs it has, and its lines, numbered when first asked for."""

    text: str
    name: str
    count: int  # VEVENTs
    scanned: Scanned | None = None

    def numbered(self) -> Scanned:
        if self.scanned is None:
            self.scanned = _scan_lines(self.text, self.name)
        return self.scanned

    def line(self, vevent: int) -> int:
        """The line number of the BEGIN of VEVENT number `vevent` (from 0, in file order)."""
        scanned = self.numbered()
        return scanned.lines[scanned.vevents[vevent][0]][0]

    def of(self, vevent: int) -> list[tuple[int, str]]:
        """VEVENT number `vevent`'s content lines, BEGIN and END included: (line number, line)."""
        scanned = self.numbered()
        begin, end = scanned.vevents[vevent]
        return scanned.lines[begin : end + 1]

    def find(self, vevent: int, name: str) -> tuple[int, str] | None:
        """The first line of property `name` inside VEVENT number `vevent`: (line number, its value)."""
        for number, line in self.of(vevent):
            if property_name(line) == name:
                return number, line.split(":", 1)[1] if ":" in line else ""
        return None


def property_name(line: str) -> str:
    found = _BEFORE_PARAMETERS.match(line)
    assert found is not None  # the pattern matches the empty string too
    return found.group().upper()


def wrapped(scanned: Scanned) -> str:
    """The file's text with each run of VEVENTs outside any VCALENDAR put inside one of its own, in place.

    The VEVENTs keep their order, so the n-th VEVENT icalendar reads is still the n-th of the file."""
    begins = {begin for begin, _ in scanned.outside}
    ends = {end for _, end in scanned.outside}
    out: list[str] = []
    for index, (_, line) in enumerate(scanned.lines):
        if index in begins and index - 1 not in ends:
            out.append("BEGIN:VCALENDAR")
        out.append(line)
        if index in ends and index + 1 not in begins:
            out.append("END:VCALENDAR")
    return "\r\n".join(out) + "\r\n"


def scan(text: str, name: str) -> Lines:
    """Check the file's lines and its BEGIN/END structure; IcsError names the line of the first problem."""
    count = _well_formed(text)
    if count is not None:
        return Lines(text, name, count)
    scanned = _scan_lines(text, name)
    return Lines(text, name, len(scanned.vevents), scanned)


def _well_formed(text: str) -> int | None:
    """How many VEVENTs a file has that `_scan_lines` would accept, found a whole text at a time; None when
    the file is not of the usual shape (then `_scan_lines` decides, and says what is wrong if anything is)."""
    if text.count("\r") != text.count("\r\n") or any(mark in text for mark in _OTHER_BREAKS):
        return None  # lines `splitlines` would break differently
    text = text.rstrip("\r\n")  # blank lines at the end: `_scan_lines` skips them too
    if "\n\n" in text or "\n\r\n" in text or text[:1] in ("", " ", "\t", "\r", "\n"):
        return None  # a blank line, or an empty file or one that starts with a folded line
    unfolded = text.replace("\r\n ", "").replace("\r\n\t", "").replace("\n ", "").replace("\n\t", "")
    body = "\n" + unfolded  # every line after a '\n'
    second = body.find("\n", 1)
    first = body[1:second] if second > 0 else body[1:]
    if first.strip().upper() != "BEGIN:VCALENDAR" or _NOT_PLAIN.search(body):
        return None
    open_components: list[str] = []
    count = 0
    closed_at = -1  # where the last END that closed every component ends: a BEGIN must follow at once
    for found in _BEGIN_OR_END.finditer(body):
        line = found.group(1)
        component = line.split(":", 1)[1].strip().upper()
        if closed_at >= 0 and found.start() != closed_at:
            return None  # a line after END:VCALENDAR that is not a BEGIN
        closed_at = -1
        if line[0] in "Bb":
            if not open_components and component != "VCALENDAR":
                return None
            open_components.append(component)
            continue
        if not open_components or open_components.pop() != component:
            return None
        count += component == "VEVENT"
        if not open_components:
            closed_at = found.end()
    if open_components or closed_at != len(body):
        return None  # something is never closed, or lines follow the last END:VCALENDAR
    return count


def _scan_lines(text: str, name: str) -> Scanned:
    """Unfold the lines and check the BEGIN/END structure, naming the line of the first problem."""
    scanned = Scanned()
    for number, raw in enumerate(text.splitlines(), 1):
        if raw[:1] in (" ", "\t") and scanned.lines:
            previous_number, previous = scanned.lines[-1]
            scanned.lines[-1] = (previous_number, previous + raw[1:])
        elif raw.strip():
            scanned.lines.append((number, raw))
    if not scanned.lines:
        raise IcsError(f"{name} is empty: give an .ics file exported from a calendar (it starts with BEGIN:VCALENDAR)")
    number, first = scanned.lines[0]
    if first.strip().upper() not in ("BEGIN:VCALENDAR", "BEGIN:VEVENT"):
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
            if not open_components and component not in ("VCALENDAR", "VEVENT"):
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
            if not open_components:  # a bare VEVENT, as khal and the reference read them: the reader wraps it
                scanned.outside.append((begun_index, index))
    if open_components:
        begun, begun_at, _ = open_components[-1]
        raise IcsError(f"{name} line {begun_at}: BEGIN:{begun} is never closed: the file ends before END:{begun}")
    return scanned
