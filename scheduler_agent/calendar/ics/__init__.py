"""iCalendar (RFC 5545) files in and out of the calendar: `calendar import`, `calendar export`, and feeds.

scan (the file's structure) -> parse (the file as icalendar reads it; what is read with a warning) ->
values (one event's times) -> read (events grouped into busy time, lenient or strict) -> importing
(stored in one transaction); export writes the calendar back out.
This package imports `icalendar` (about 50 ms): the CLI imports it only for the commands that need it.
"""

from scheduler_agent.calendar.ics.export import Exported, event_uid, export_calendar, person_label, write_file
from scheduler_agent.calendar.ics.importing import decode, import_file, import_summary, person_named, read_text
from scheduler_agent.calendar.ics.parse import Skip, Warned
from scheduler_agent.calendar.ics.read import ReadCalendar, read_ics
from scheduler_agent.calendar.ics.scan import IcsError

__all__ = [
    "Exported",
    "IcsError",
    "ReadCalendar",
    "Skip",
    "Warned",
    "decode",
    "event_uid",
    "export_calendar",
    "import_file",
    "import_summary",
    "person_label",
    "person_named",
    "read_ics",
    "read_text",
    "write_file",
]
