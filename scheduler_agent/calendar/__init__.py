"""The calendar the agent reads and books into, and the tools the model calls on it.

`types` holds the values (people, events, recurrence); `people`, `events`, `recurrence`, `imports`,
`bookings` and `fixtures` keep them in SQLite; `slots` is free-window arithmetic on aware datetimes;
`clock` is the one injectable clock; `ics` reads and writes iCalendar files; `tools` is what the model
calls: find_free_slots and create_event, with their input parsing and their texts.
"""
