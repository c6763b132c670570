"""What a session writes: the conversation's row with its first turn, the list as it grows, a row per reply.

Nothing is written for a conversation that is not stored. Each write is one transaction; the list is
written by a Journal (storage/conversations.py), which inserts only the entries not yet stored.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection

from scheduler_agent.agent.types import JSON
from scheduler_agent.session.entry_texts import EntryTexts
from scheduler_agent.storage import conversations
from scheduler_agent.storage.conversations import Context, Counter, Journal, Reply, Stop
from scheduler_agent.storage.db import transaction


class SessionStore:
    """The stored side of one session: its id (None until stored), its journal, the rows beside the list."""

    def __init__(self, conn: Connection, cid: int | None, messages: list[JSON], texts: EntryTexts) -> None:
        """`texts`: the list's entry texts, shared with the request builder (session/entry_texts.py)."""
        self.conn, self.cid, self.texts = conn, cid, texts
        self.journal = Journal(conn, cid, messages) if cid is not None else None
        self.pending: tuple[str, str | None] | None = None  # set by Session.store(): (started_on, clock pin)
        self.request_bytes = 0  # the size of the last request sent, for its reply's row
        self.checked = 0  # leading entries the last request's check passed with no finding
        self._checked_stored: int | None = None  # the mark as last written (None: not written by this session)

    def sync(self, messages: list[JSON], context: Callable[[], Context], reply: Reply | None = None) -> int | None:
        """Store what changed in the list (and `reply`); the id of the conversation if this call created it."""
        created = None
        if self.journal is None and self.pending is not None and messages:
            created = self._create(messages, context())
        if self.journal is not None:
            self.journal.sync(messages, reply, texts=self.texts.update(messages))
        return created

    def _create(self, messages: list[JSON], context: Context) -> int:
        """Write the conversation's row and its first entries in one transaction."""
        started_on, pin = self.pending or ("", None)
        with transaction(self.conn):
            cid = conversations.create(self.conn, context, started_on=started_on, clock_pin=pin)
            journal = Journal(self.conn, cid, [])
            journal.sync(messages, texts=self.texts.update(messages))
        self.cid, self.journal, self.pending = cid, journal, None
        return cid

    def reload_if_changed(self, messages: list[JSON]) -> Context | None:
        """When another process wrote the conversation since this one last did, make `messages` what is stored
        and return its stored context; else None.

        The count and the last entry's stored text are compared first (two indexed reads): only when they
        differ is the whole list loaded and compared as the journal knows it."""
        if self.cid is None or self.journal is None:
            return None
        count, last = conversations.tail(self.conn, self.cid)
        if count == self.journal.stored and last == self.journal.last:
            return None
        record, stored = conversations.load(self.conn, self.cid)
        if len(stored) == self.journal.stored and Journal(self.conn, self.cid, stored).last == self.journal.last:
            return None  # the same list, stored in another spelling (an older version's JSON)
        messages[:] = stored
        self.journal = Journal(self.conn, self.cid, messages)
        return record.context

    def holds(self, position: int) -> bool:
        """Whether the entry at `position` of the list is stored already."""
        return self.journal is not None and self.journal.stored > position

    def stored_entry(self, position: int) -> JSON | None:
        """The entry stored at `position` when the store holds more than a list of that length: a step run again
        on the list as it was before it ran. None when it holds no more, as in every run of a session's own list
        (the journal's count says so: nothing is read)."""
        if self.cid is None or not self.holds(position):
            return None
        return conversations.load(self.conn, self.cid)[1][position]

    def stored_reply(self, position: int) -> JSON | None:
        """The reply whose assistant turn is stored at `position` (see `stored_entry`), as the API's body: the turn's
        content, and its row's model, stop_reason and usage. None when no assistant turn is stored there."""
        entry = self.stored_entry(position)
        if self.cid is None or entry is None or entry["role"] != "assistant":
            return None
        rows = [r for r in conversations.replies(self.conn, self.cid) if r.position == position and r.appended]
        if not rows:  # stored by a version that kept no reply rows: a turn with calls was asking for them
            asked = any(b.get("type") == "tool_use" for b in entry["content"] if isinstance(b, dict))
            rows = [Reply(position, 0, "", "tool_use" if asked else "end_turn", {}, 0)]
        row = rows[-1]
        return {
            "type": "message",
            "role": "assistant",
            "model": row.model,
            "content": entry["content"],
            "stop_reason": row.stop_reason,
            "usage": row.usage,
        }

    def bump(self, counter: Counter) -> None:
        if self.cid is not None:
            conversations.bump(self.conn, self.cid, counter)

    def set_stop(self, stop: Stop | None) -> None:
        """How the turn ended (None: it has not yet), with the check's mark when it moved: once a turn, not once
        an iteration (the mark rewrites the conversation's row). A turn cut short leaves the mark of an earlier
        one, which still holds (the list only grows): a resume then checks those few entries again."""
        if self.cid is not None:
            mark = self.checked if self.checked != self._checked_stored else None
            conversations.set_stop(self.conn, self.cid, stop, mark)
            self._checked_stored = self.checked

    def reply_record(self, iteration: int, reply: JSON, position: int, kept: bool = False) -> Reply:
        """The row beside the list; a reply kept out of the list (`kept`) keeps its whole body there."""
        body = reply if isinstance(reply, dict) else {"unreadable": repr(reply)}
        usage = body.get("usage")
        stop_reason = body.get("stop_reason")
        return Reply(
            position=position,
            iteration=iteration,
            model=str(body.get("model", "")),
            stop_reason=stop_reason if isinstance(stop_reason, str) else None,
            usage=dict(usage) if isinstance(usage, dict) else {},
            request_bytes=self.request_bytes,
            appended=not kept,
            body=body if kept else None,
        )
