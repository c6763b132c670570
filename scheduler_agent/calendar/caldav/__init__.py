"""The owner's CalDAV server: its calendar synced into the store, every reader reading the store, and the
changes written to the server once per call (issues 37 and 39).

Reading: `sync.py` syncs the server's calendar into the store (WebDAV sync, RFC 6578, through the `caldav`
library); `people.py` syncs the busy time of a person's shared calendar (free-busy) for the days a reader
asks about; `replica.py` holds the SQL of what the store keeps (sync token, last sync, each resource's
href, ETag and UID); `fresh.py` is what every reader of busy time calls first: a sync when the last one is
older than `FRESH_SECONDS`, else nothing, and the one line saying the server could not be reached.

Writing: `remote.py` is the tools' `Calendar` on it (reads the store, writes to the server, then syncs);
`writes.py` (bookings: `If-None-Match: *`) and `changes.py` (moves and cancellations: `If-Match`) make
the PUTs; `server.py` is the client and the one resource a change is about, with its ETag. Besides:
`connect.py` (the stored connection, the password, the errors), `ics.py` (iCalendar in and out),
`types.py`, `snapshot.py` (what `--record` carries).
"""
