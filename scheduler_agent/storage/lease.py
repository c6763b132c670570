"""A conversation is run by one process at a time: a lease in the database, by conversation id.

    claim(conn, cid, holder)    # or ConversationBusy (exit 8): who holds it, and since when
    renew(conn, cid, holder)    # push the expiry on while running
    release(conn, cid, holder)  # when the turn ends, however it ends

A lease names its holder (a process on a host) and expires: a holder that died without
releasing (SIGKILL, power cut) loses it when it expires, or at once when it was a process on
this same host that no longer exists. Any store with a transaction can hold this table; a submitted
turn's workflow holds it too, on whichever Temporal worker runs its step (workflows/records.py).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.storage.db import transaction
from scheduler_agent.storage.statement import Statement

LEASE_SECONDS = 15 * 60.0  # renewed at every step of a turn; a step waits at most --timeout for the model


class ConversationBusy(AgentError):
    """The conversation is being run elsewhere: another process holds its lease."""

    exit_code = 8


@dataclass(frozen=True)
class Holder:
    """Who runs a conversation: a process on a host. `lease_seconds`: how long its claims and renewals
    last; not part of who it is."""

    host: str
    pid: int
    lease_seconds: float = field(default=LEASE_SECONDS, compare=False)

    @classmethod
    def me(cls) -> Holder:
        return cls(socket.gethostname(), os.getpid())

    def __str__(self) -> str:
        if self.host.startswith("workflow:"):  # a submitted turn's (workflows/records.py): whichever worker runs it
            workflow = self.host.removeprefix("workflow:")
            return f"its submitted turn (workflow {workflow}; `scheduler-agent wait` waits for it)"
        return f"process {self.pid} on {self.host}"

    def alive(self) -> bool | None:
        """Whether the process still exists; None when it runs on another host (only expiry tells)."""
        if self.host != socket.gethostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


@dataclass(frozen=True)
class Lease:
    cid: int
    holder: Holder
    since: str  # ISO, UTC
    expires: str  # ISO, UTC


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# Built once: a session renews its lease at every step of a turn.
_CURRENT = Statement("SELECT holder_host, holder_pid, since, expires FROM leases WHERE conversation_id = :cid")
_CLAIM = Statement(
    "INSERT INTO leases (conversation_id, holder_host, holder_pid, since, expires) "
    "VALUES (:cid, :host, :pid, :since, :expires) "
    "ON CONFLICT (conversation_id) DO UPDATE SET holder_host = excluded.holder_host, "
    "holder_pid = excluded.holder_pid, since = excluded.since, expires = excluded.expires"
)
_RENEW = Statement(
    "UPDATE leases SET expires = :expires WHERE conversation_id = :cid AND holder_host = :host AND holder_pid = :pid"
)
_RELEASE = Statement("DELETE FROM leases WHERE conversation_id = :cid AND holder_host = :host AND holder_pid = :pid")


def current(conn: Connection, cid: int) -> Lease | None:
    """The lease on `cid`, if one is recorded (it may have expired)."""
    row = _CURRENT.first(conn, {"cid": cid})
    return None if row is None else Lease(cid, Holder(row[0], int(row[1])), row[2], row[3])


def claim(conn: Connection, cid: int, holder: Holder, seconds: float | None = None) -> Lease:
    """Take the lease on `cid` for `holder` (for `seconds`, else the holder's own lease length), or raise
    ConversationBusy naming who holds it and since when."""
    now = _now()
    seconds = holder.lease_seconds if seconds is None else seconds
    with transaction(conn):
        held = check_free(conn, cid, holder)
        since = held.since if held is not None and held.holder == holder else _iso(now)
        expires = _iso(now + timedelta(seconds=seconds))
        _CLAIM.run(
            conn,
            {"cid": cid, "host": holder.host, "pid": holder.pid, "since": since, "expires": expires},
        )
    return Lease(cid, holder, since, expires)


def renew(conn: Connection, cid: int, holder: Holder, seconds: float | None = None) -> bool:
    """Push the expiry of `holder`'s lease on (by `seconds`, else its own lease length); False if it no
    longer holds it."""
    seconds = holder.lease_seconds if seconds is None else seconds
    expires = _iso(_now() + timedelta(seconds=seconds))
    changed = _RENEW.run(conn, {"expires": expires, "cid": cid, "host": holder.host, "pid": holder.pid})
    return changed == 1


def release(conn: Connection, cid: int, holder: Holder) -> None:
    """Give the lease up (nothing happens if `holder` does not hold it)."""
    _RELEASE.run(conn, {"cid": cid, "host": holder.host, "pid": holder.pid})


def check_free(conn: Connection, cid: int, holder: Holder) -> Lease | None:
    """Raise ConversationBusy, as `claim` would, when someone other than `holder` holds `cid`; take nothing.
    The lease recorded on `cid` otherwise (None: none), which `claim` goes on from."""
    held = current(conn, cid)
    if held is not None and held.holder != holder and not _lapsed(held, _now()):
        raise ConversationBusy(
            f"conversation {cid} is being run elsewhere: {held.holder} has held it since {held.since} "
            f"(until {held.expires} unless renewed). Wait for it to finish, then try again"
        )
    return held


def _lapsed(lease: Lease, now: datetime) -> bool:
    if lease.expires < _iso(now):
        return True
    return lease.holder.alive() is False
