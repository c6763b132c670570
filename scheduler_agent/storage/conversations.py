"""Stored conversations: the list as it grows, and what else the API saw.

The store writes entries as they arrive: the user's turn before the request, the assistant
turn the instant the response is in hand (before any tool runs), a round's results in one
transaction. So a stored conversation is complete, ends with an unanswered call, or ends
with a user turn still waiting for the model; it never holds an answer without its question.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Literal

from sqlalchemy import Connection
from sqlalchemy import text as sql
from sqlalchemy.exc import IntegrityError

from scheduler_agent.agent.collector import collector_paused
from scheduler_agent.agent.errors import AgentError
from scheduler_agent.agent.request import encode_text, framed, framed_size, utf8_length
from scheduler_agent.agent.types import JSON
from scheduler_agent.grammar.check import rules_digest
from scheduler_agent.storage.db import transaction
from scheduler_agent.storage.statement import Statement

Counter = Literal["retries_exhausted", "tool_deadlines", "restarts"]
Stop = Literal["bound", "model"]
COUNTERS: tuple[Counter, ...] = ("retries_exhausted", "tool_deadlines", "restarts")


class NoSuchConversation(AgentError):
    """A conversation id that is not in the store."""


class ConversationChanged(AgentError):
    """Another process wrote the same conversation: it is being (or was) run elsewhere."""

    exit_code = 8


@dataclass
class Context:
    """What the API sees besides the list; stored with the conversation so a resume sends the same."""

    model: str
    max_tokens: int
    system: str
    tools: list[JSON]
    stream: bool = False  # the body says "stream": true
    options: dict[str, Any] = field(default_factory=dict)  # the turn's `-o` keys (agent/options.py), m038
    # each MCP server's name and the tools it offered, never its command (mcp_client/turn.py), m042
    mcp: dict[str, list[JSON]] = field(default_factory=dict)


@dataclass(frozen=True)
class Stored:
    id: int
    created_at: str
    context: Context
    started_on: str
    clock_pin: str | None
    counters: dict[str, int]
    last_stop: str | None = None  # 'bound' or 'model' when the last turn ended so (m008_turn_stops)
    checked: int = 0  # leading entries that passed this version's grammar check with no finding (m019, m034)
    sizes: tuple[int | None, ...] = ()  # each entry's size in bytes as encoded in a request; None: not stored
    written: tuple[str | None, ...] = ()  # each entry as a request writes it, where its size is stored (see load)


def _dumps(value: Any) -> str:
    """How the store writes JSON: compact, as a request carries it (so an entry's size is its text's)."""
    return encode_text(value)


def _context_row(context: Context) -> dict[str, object]:
    """The conversation row's columns that hold the context, as `create` and `update_context` bind them."""
    return {
        "model": context.model,
        "max_tokens": context.max_tokens,
        "system": context.system,
        "tools": _dumps(context.tools),
        "stream": int(context.stream),
        "options": _dumps(context.options),
        "mcp_servers": _dumps(context.mcp),
    }


def create(conn: Connection, context: Context, *, started_on: str, clock_pin: str | None) -> int:
    with transaction(conn):
        cid = conn.execute(
            sql(
                "INSERT INTO conversations (model, max_tokens, system, tools, stream, options, mcp_servers, "
                "started_on, clock_pin) VALUES (:model, :max_tokens, :system, :tools, :stream, :options, "
                ":mcp_servers, :started_on, :clock_pin) RETURNING id"
            ),
            {**_context_row(context), "started_on": started_on, "clock_pin": clock_pin},
        ).scalar_one()
    return int(cid)


def update_context(conn: Connection, cid: int, context: Context) -> None:
    """A new user turn may bring a new system prompt (a new day); the stored one is always the one in force."""
    with transaction(conn):
        conn.execute(
            sql(
                "UPDATE conversations SET model = :model, max_tokens = :max_tokens, system = :system, tools = :tools, "
                "stream = :stream, options = :options, mcp_servers = :mcp_servers WHERE id = :cid"
            ),
            {**_context_row(context), "cid": cid},
        )


def load(conn: Connection, cid: int) -> tuple[Stored, list[JSON]]:
    row = _CONVERSATION.first(conn, {"cid": cid})
    if row is None:
        raise NoSuchConversation(f"No conversation {cid}; `scheduler-agent conversations list` shows the ids")
    context = Context(
        row.model,
        row.max_tokens,
        row.system,
        json.loads(row.tools),
        bool(row.stream),
        json.loads(row.options),
        json.loads(row.mcp_servers),
    )
    with collector_paused(freeze=True):  # a pass would walk the list again: reading it makes no garbage
        rows = _entry_rows(conn, cid)
        messages: list[JSON] = json.loads("[" + ",".join(map(itemgetter(0), rows)) + "]")
    stored = Stored(
        row.id,
        row.created_at,
        context,
        row.started_on,
        row.clock_pin,
        {c: getattr(row, c) for c in COUNTERS},
        row.last_stop,
        row.checked if row.checked_rules == rules_digest() else 0,  # a mark holds for the rules that made it
        tuple(map(itemgetter(1), rows)),
        tuple(text if size is not None else None for text, size in rows),
    )
    return stored, messages


_CONVERSATION = Statement("SELECT * FROM conversations WHERE id = :cid", named=True)


def _entry_rows(conn: Connection, cid: int) -> list[tuple[str, int | None]]:
    """Each entry as its JSON text, and its stored size, by position: joined and parsed once by `load`.

    A size is given only where it is its text's, as this store writes them (m019 on); then the text is the
    entry exactly as a request writes it, and is sent as it is. A row of an older version (no size), or edited
    by hand since (a size no longer its text's), has None: measured, and encoded, from what was parsed.
    Framed here in one pass, on both databases: at 10,000 entries that is ~15% faster than SQLite writing each
    entry's JSON (`json_quote`, concatenation and `length(CAST(content AS BLOB))` for each row)."""
    rows: list[tuple[str, int | None]] = []
    add = rows.append
    for role, content, size in _ENTRIES.rows(conn, {"cid": cid}):
        text = framed(role, content)
        add((text, size if size == utf8_length(text) else None))
    return rows


_ENTRIES = Statement("SELECT role, content, size FROM entries WHERE conversation_id = :cid ORDER BY position")


def tail(conn: Connection, cid: int) -> tuple[int, str | None]:
    """How many entries are stored, and the stored text of the last one's content (None: no entries).

    One indexed read of the last entry: positions run from 0 with no gap (every writer appends at the count,
    a repair writes the list anew), so the count is the last position + 1; `count(*)` would read them all."""
    row = _TAIL.first(conn, {"cid": cid})
    return (int(row[0]), row[1]) if row else (0, None)


_TAIL = Statement(
    "SELECT position + 1, content FROM entries WHERE conversation_id = :cid ORDER BY position DESC LIMIT 1"
)


def latest_id(conn: Connection) -> int | None:
    """The most recent conversation that has entries (`-c`): one with no turn yet is nothing to continue."""
    row = conn.execute(sql("SELECT max(conversation_id) FROM entries")).fetchone()
    return int(row[0]) if row and row[0] is not None else None


def set_stop(conn: Connection, cid: int, stop: Stop | None, checked: int | None = None) -> None:
    """Keep how the last turn ended ('bound', 'model'; None: done or not ended yet), for `--state stopped`;
    `checked`: the mark of how many leading entries passed the grammar check with no finding (None: unchanged)."""
    if checked is None:
        _SET_STOP.run(conn, {"stop": stop, "cid": cid})
    else:
        _SET_STOP_CHECKED.run(conn, {"stop": stop, "checked": checked, "rules": rules_digest(), "cid": cid})


_SET_STOP = Statement("UPDATE conversations SET last_stop = :stop WHERE id = :cid")
_SET_STOP_CHECKED = Statement(
    "UPDATE conversations SET last_stop = :stop, checked = :checked, checked_rules = :rules WHERE id = :cid"
)


def delete(conn: Connection, cid: int) -> None:
    with transaction(conn):
        if conn.execute(sql("DELETE FROM conversations WHERE id = :cid"), {"cid": cid}).rowcount == 0:
            raise NoSuchConversation(f"No conversation {cid}; `scheduler-agent conversations list` shows the ids")


def bump(conn: Connection, cid: int, counter: Counter) -> None:
    """Count one interruption of this conversation, where it is known."""
    assert counter in COUNTERS
    with transaction(conn):
        conn.execute(sql(f"UPDATE conversations SET {counter} = {counter} + 1 WHERE id = :cid"), {"cid": cid})


def totals(conn: Connection) -> dict[str, int]:
    """Counts over the conversations that have entries (an older version stored empty ones at a chat's start)."""
    row = conn.execute(
        sql(
            "SELECT count(*), "
            + ", ".join(f"coalesce(sum({c}), 0)" for c in COUNTERS)
            + " FROM conversations c WHERE EXISTS (SELECT 1 FROM entries e WHERE e.conversation_id = c.id)"
        )
    ).one()
    return {"conversations": row[0], **{c: row[i + 1] for i, c in enumerate(COUNTERS)}}


@dataclass(frozen=True)
class Reply:
    """One reply as the API sent it, stored beside the list (see migration m007_replies)."""

    position: int  # the list's length when its request was sent: the reply's index if it was appended
    iteration: int
    model: str
    stop_reason: str | None
    usage: JSON
    request_bytes: int
    appended: bool = True
    body: JSON | None = None  # the whole reply, kept only when it was not appended


def replies(conn: Connection, cid: int) -> list[Reply]:
    """The conversation's replies in the order they arrived."""
    rows = conn.execute(
        sql(
            "SELECT position, iteration, model, stop_reason, usage, request_bytes, appended, body FROM replies"
            " WHERE conversation_id = :cid ORDER BY seq"
        ),
        {"cid": cid},
    ).fetchall()
    return [
        Reply(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], bool(r[6]), json.loads(r[7]) if r[7] else None)
        for r in rows
    ]


_INSERT_REPLY = Statement(
    "INSERT INTO replies (conversation_id, seq, position, iteration, model, stop_reason, usage, request_bytes,"
    " appended, body) VALUES (:cid, (SELECT coalesce(max(seq), 0) + 1 FROM replies WHERE conversation_id = :cid),"
    " :position, :iteration, :model, :stop_reason, :usage, :request_bytes, :appended, :body)"
)
_UPDATE_LAST_ENTRY = Statement(
    "UPDATE entries SET content = :text, size = :size WHERE conversation_id = :cid AND position = :position"
)
_UPDATE_CHECKED = Statement("UPDATE conversations SET checked = :checked, checked_rules = :rules WHERE id = :cid")
_INSERT_ENTRY = Statement(
    "INSERT INTO entries (conversation_id, position, role, content, size) VALUES (:cid, :position, :role, :text, :size)"
)


def _insert_reply(conn: Connection, cid: int, reply: Reply) -> None:
    _INSERT_REPLY.run(
        conn,
        {
            "cid": cid,
            "position": reply.position,
            "iteration": reply.iteration,
            "model": reply.model,
            "stop_reason": reply.stop_reason,
            "usage": _dumps(reply.usage),
            "request_bytes": reply.request_bytes,
            "appended": int(reply.appended),
            "body": _dumps(reply.body) if reply.body is not None else None,
        },
    )


class Journal:
    """Writes a conversation's list to the store as it grows: `sync(messages)` after every change.

    Each call is one transaction that inserts the entries not yet stored and rewrites the last
    stored entry if it changed (text joining a trailing user turn after a stop at the bound).
    """

    def __init__(self, conn: Connection, cid: int, messages: list[JSON]) -> None:
        self.conn, self.cid = conn, cid
        self.stored = len(messages)
        self.last = _dumps(messages[-1]["content"]) if messages else None

    def sync(
        self,
        messages: list[JSON],
        reply: Reply | None = None,
        checked: int | None = None,
        texts: Sequence[str | None] | None = None,
    ) -> None:
        """Store what changed in the list, and `reply` (the one that just arrived) in the same transaction;
        `checked`: how many leading entries passed the grammar check with no finding (None: unchanged);
        `texts`: each entry's content as stored (`_dumps`), where the caller keeps them (agent/entry_texts.py)."""
        if len(messages) < self.stored:
            raise AgentError(f"conversation {self.cid}: the list shrank from {self.stored} to {len(messages)} entries")
        known: Sequence[str | None] = texts if texts is not None else ()  # _text_of encodes what is not known
        written = [_text_of(messages, known, i) for i in range(max(self.stored - 1, 0), len(messages))]
        try:
            self._write(messages, written, reply, checked)
        except IntegrityError as exc:  # another process stored entries here meanwhile
            raise ConversationChanged(
                f"conversation {self.cid} was changed by another process while this one ran ({exc.orig}); nothing more "
                f"was stored here: `scheduler-agent conversations show {self.cid}` shows what it holds"
            ) from None
        self.stored = len(messages)
        self.last = written[-1] if messages else None

    def _write(self, messages: list[JSON], texts: list[str], reply: Reply | None, checked: int | None) -> None:
        """`texts`: the stored text of each entry from the last one stored before (if any) to the end."""
        with transaction(self.conn):
            if reply is not None:
                _insert_reply(self.conn, self.cid, reply)
            if self.stored and (text := texts[0]) != self.last:
                size = framed_size(messages[self.stored - 1]["role"], text)
                _UPDATE_LAST_ENTRY.run(
                    self.conn, {"text": text, "size": size, "cid": self.cid, "position": self.stored - 1}
                )
            _insert_entries(self.conn, self.cid, messages, self.stored, texts[1:] if self.stored else texts)
            if checked is not None:
                _UPDATE_CHECKED.run(self.conn, {"checked": checked, "rules": rules_digest(), "cid": self.cid})


def _text_of(messages: list[JSON], texts: Sequence[str | None], index: int) -> str:
    known = texts[index] if index < len(texts) else None
    return known if known is not None else _dumps(messages[index]["content"])


def _insert_entries(
    conn: Connection, cid: int, messages: list[JSON], start: int, texts: Sequence[str] | None = None
) -> None:
    """Insert `messages[start:]`; `texts`: their stored texts, in order, when the caller has them."""
    for offset, position in enumerate(range(start, len(messages))):
        entry = messages[position]
        text = texts[offset] if texts is not None else _dumps(entry["content"])
        role = entry["role"]
        _INSERT_ENTRY.run(
            conn,
            {"cid": cid, "position": position, "role": role, "text": text, "size": framed_size(role, text)},
        )


def rewrite(conn: Connection, cid: int, before: list[JSON], after: list[JSON], changes: list[str]) -> None:
    """Replace the stored list by `after` (a repair), recording the changes and the list `before` beside it."""
    with transaction(conn):
        stored = [m for m in load(conn, cid)[1]]
        if stored != before:
            raise AgentError(f"conversation {cid} changed while it was being repaired: run the repair again")
        conn.execute(sql("DELETE FROM entries WHERE conversation_id = :cid"), {"cid": cid})
        _insert_entries(conn, cid, after, 0)
        conn.execute(sql("UPDATE conversations SET checked = 0 WHERE id = :cid"), {"cid": cid})  # check it all
        conn.execute(
            sql(
                "INSERT INTO repairs (conversation_id, seq, changes, before) VALUES"
                " (:cid, (SELECT coalesce(max(seq), 0) + 1 FROM repairs WHERE conversation_id = :cid), "
                ":changes, :before)"
            ),
            {"cid": cid, "changes": _dumps(changes), "before": _dumps(before)},
        )


def repairs(conn: Connection, cid: int) -> list[tuple[str, list[str]]]:
    """(when, changes) of each repair of the conversation, oldest first."""
    rows = conn.execute(
        sql("SELECT repaired_at, changes FROM repairs WHERE conversation_id = :cid ORDER BY seq"), {"cid": cid}
    ).fetchall()
    return [(row[0], json.loads(row[1])) for row in rows]
