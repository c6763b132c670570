"""How an idle worker slot hears that work arrived: PostgreSQL's LISTEN/NOTIFY, or polling.

`submit`, and the answer that leaves no call waiting (`approve`/`decline`), send `NOTIFY` on
CHANNEL inside their transaction, so the notice goes out when the turn is really there. An idle
slot on PostgreSQL listens on a connection of its own and wakes at once; it still looks again after
its back-off (a lapsed lease sends no notice), so polling stays the fallback, and the only way on
SQLite.
"""

from __future__ import annotations

import threading

from scheduler_agent.storage.dialect import Connection, dialect

CHANNEL = "scheduler_agent_work"


def notify(conn: Connection) -> None:
    """Tell idle workers that a turn is queued (PostgreSQL; nothing to do on SQLite, where they poll)."""
    if dialect(conn) == "postgresql":
        conn.execute(f"NOTIFY {CHANNEL}")


class Polling:
    """Wait out the back-off; nothing tells a slot earlier."""

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        """Wait up to `seconds` (or until `stop`); True when told that work arrived."""
        stop.wait(seconds)
        return False

    def close(self) -> None:
        """Nothing to let go of when polling."""

    def lost(self) -> bool:
        """Whether what it listens on is gone (never, when polling)."""
        return False


class Listening(Polling):
    """LISTEN on a PostgreSQL connection of its own: a NOTIFY ends the wait at once."""

    def __init__(self, url: str) -> None:
        from scheduler_agent.storage import pg

        self.conn = pg.connect(url)
        try:
            self.conn.run_native(f"LISTEN {CHANNEL}")
        except BaseException:  # dropped between connecting and listening: not left open
            self.conn.close()
            raise

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        if stop.is_set():
            return False
        for _ in self.conn.raw.notifies(timeout=seconds, stop_after=1):
            return True  # a notice still pending wakes the next wait at once: one more look, no harm
        return False

    def close(self) -> None:
        self.conn.close()

    def lost(self) -> bool:
        return self.conn.lost
