"""A stored conversation is run by one process at a time: the session's side of storage/lease.py."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection

from scheduler_agent.storage import lease


class SessionLease:
    """Holds the lease on a conversation while a turn runs, and renews it before each wait.

    A renewal is a write (a commit), so it is made only when a tenth of the lease has passed since the
    last claim or renewal: the lease then still runs for at least nine tenths of LEASE_SECONDS (more than
    a wait may take, `--timeout` included), so no other process can have taken it meanwhile."""

    def __init__(self, conn: Connection, seconds: float = lease.LEASE_SECONDS) -> None:
        self.conn, self.seconds = conn, seconds
        self.holder = lease.Holder.me()
        self.holding: int | None = None  # the conversation whose lease this session holds (a turn is running)
        self._since = 0.0  # time.monotonic() at the last claim or renewal

    @contextmanager
    def held(self, cid: int | None) -> Iterator[None]:
        """Claim `cid`'s lease (ConversationBusy, exit 8, when another process holds it) until the block ends;
        a conversation not stored (None) needs none."""
        if cid is None:
            yield
            return
        lease.claim(self.conn, cid, self.holder, self.seconds)
        self.holding, self._since = cid, time.monotonic()
        try:
            yield
        finally:
            self.holding = None
            lease.release(self.conn, cid, self.holder)

    def renew(self) -> None:
        """Before a wait (the model, a tool): push the expiry on, or stop if another process took it over."""
        if self.holding is None or time.monotonic() - self._since < self.seconds / 10:
            return
        self._since = time.monotonic()
        if not lease.renew(self.conn, self.holding, self.holder, self.seconds):
            raise lease.ConversationBusy(
                f"conversation {self.holding} was taken over by another process after this one's lease lapsed; "
                "this process stopped before changing anything more"
            )
