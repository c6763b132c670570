"""A stored conversation is run by one process at a time: the session's side of storage/lease.py."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from scheduler_agent.storage import lease


class SessionLease:
    """Holds the lease on a conversation while a turn runs, and renews it before each wait."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.holder = lease.Holder.me()
        self.holding: int | None = None  # the conversation whose lease this session holds (a turn is running)

    @contextmanager
    def held(self, cid: int | None) -> Iterator[None]:
        """Claim `cid`'s lease (ConversationBusy, exit 8, when another process holds it) until the block ends;
        a conversation not stored (None) needs none."""
        if cid is None:
            yield
            return
        lease.claim(self.conn, cid, self.holder)
        self.holding = cid
        try:
            yield
        finally:
            self.holding = None
            lease.release(self.conn, cid, self.holder)

    def renew(self) -> None:
        """Before a wait (the model, a tool): push the expiry on, or stop if another process took it over."""
        if self.holding is None:
            return
        if not lease.renew(self.conn, self.holding, self.holder):
            raise lease.ConversationBusy(
                f"conversation {self.holding} was taken over by another process after this one's lease lapsed; "
                "this process stopped before changing anything more"
            )
