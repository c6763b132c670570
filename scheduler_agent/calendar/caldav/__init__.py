"""The owner's CalDAV calendar as a source synced into the store (issue 37).

`sync.py` syncs the server's calendar into the store (WebDAV sync, RFC 6578, through the `caldav`
library); `replica.py` holds the SQL of what the replica keeps (sync token, last sync, each resource's
href, ETag and UID); `fresh.py` is what every reader of busy time calls first: a sync when the last one is
older than `FRESH_SECONDS`, else nothing, and the one line saying the server could not be reached.
"""
