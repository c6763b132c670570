"""Each of a session's two steps is safe to run twice, as a durable engine runs one again after a crash.

The engine keeps the list as it was before a step and, when it never heard that the step finished, runs
the step again on that list in a new process: the session opened from the store. Taken from the store
then: a reply already stored (the model is not asked again), a round already stored (no tool runs
again). A round that was not stored runs again, and the booking it had made is answered from its
`tool_use` record, not made twice.
"""

from __future__ import annotations

from typing import Any

from helpers import scripted_session
from sqlalchemy import Connection
from sqlalchemy import text as sql_text

from scheduler_agent.agent.events import Event, RequestSent, Stop, ToolCalled
from scheduler_agent.agent.loop import add_user_text, run_turn
from scheduler_agent.agent.toolbox import run_call
from scheduler_agent.agent.types import JSON
from scheduler_agent.lessons.scripts import CANONICAL, CANONICAL_REPLIES, book
from scheduler_agent.storage import conversations
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text

BOOKED_MONDAY = "SELECT count(*) FROM events WHERE start_utc = '2026-08-31T13:00:00Z'"  # 14:00 London


def count(conn: Connection, query: str) -> int:
    return int(conn.execute(sql_text(query)).scalar_one())


def stored(conn: Connection, cid: int) -> tuple[list[JSON], list[Any]]:
    """The stored list, and the reply rows beside it."""
    return conversations.load(conn, cid)[1], conversations.replies(conn, cid)


def test_the_canonical_turn_run_again_step_by_step_asks_nothing_and_books_nothing(any_conn: Connection) -> None:
    """The engine ran every step, and heard of none: each runs again, and each takes what it stored."""
    events: list[Event] = []
    with ScriptedServer(CANONICAL_REPLIES) as server:
        first = scripted_session(any_conn, server, events)
        first.store()
        assert first.ask(CANONICAL).stop is Stop.DONE
        assert first.cid is not None
        sent, rows_before = len(server.received), stored(any_conn, first.cid)
        again = scripted_session(any_conn, server, [], cid=first.cid)  # a new process, from the store
        heard: list[Event] = []
        again.model_step.report = again.tool_round.report = heard.append
        del again.messages[1:]  # the list as the engine held it before the turn's first step
        outcome = run_turn(
            again.messages,
            model_step=again.model_step,
            tool_round=again.tool_round,
            max_iterations=10,
            report=heard.append,
        )
    assert len(server.received) == sent == 3  # the model was not asked again
    assert outcome.stop is Stop.DONE
    assert outcome.text == CANONICAL_REPLIES[2].content[0]["text"]
    assert again.messages == first.messages  # the same list, entry for entry
    assert stored(any_conn, first.cid) == rows_before  # nothing stored twice: no entry, no reply row
    assert count(any_conn, BOOKED_MONDAY) == 1  # booked once
    assert not [e for e in heard if isinstance(e, (RequestSent, ToolCalled))]  # no request built, no tool run


def test_a_model_step_run_again_returns_the_stored_reply_for_its_iteration(demo_conn: Connection) -> None:
    events: list[Event] = []
    replies = [Reply([text("Looking.")], "end_turn")]
    with ScriptedServer(replies) as server:
        session = scripted_session(demo_conn, server, events)
        session.store()
        add_user_text(session.messages, "Is Priya free on Monday?")
        session.sync()
        assert session.model_step(session.messages, 1) is not None  # the turn ended: a reply with no calls
        assert session.cid is not None
        entries, rows = stored(demo_conn, session.cid)
        again = scripted_session(demo_conn, server, [], cid=session.cid)
        del again.messages[1:]
        outcome = again.model_step(again.messages, 1)
    assert len(server.received) == 1  # asked once
    assert outcome is not None
    assert outcome.stop is Stop.DONE
    assert outcome.text == "Looking."
    assert outcome.iterations == 1
    assert again.messages == entries == session.messages  # the reply appended verbatim, from the store
    assert [(r.position, r.iteration) for r in rows] == [(1, 1)]  # the row that says it answered iteration 1
    assert stored(demo_conn, session.cid) == (entries, rows)


def test_a_tool_round_not_stored_runs_again_and_answers_the_booking_from_its_record(demo_conn: Connection) -> None:
    """The round booked, then the process died before the round was stored: the round runs again."""
    call = book("toolu_repeat_1", "2026-08-31T14:00")
    with ScriptedServer([Reply([call], "tool_use")]) as server:
        session = scripted_session(demo_conn, server, [])
        session.store()
        add_user_text(session.messages, "Book Priya on Monday at two.")
        session.sync()
        assert session.model_step(session.messages, 1) is None  # the turn goes on: a call to answer
    before = run_call(session.toolbox, call).block  # the first run's booking; its round never stored
    assert count(demo_conn, BOOKED_MONDAY) == 1
    assert session.cid is not None
    assert len(stored(demo_conn, session.cid)[0]) == 2  # the assistant turn is stored, its answer is not

    session.tool_round(session.messages, 1)

    assert count(demo_conn, BOOKED_MONDAY) == 1  # found by its tool_use id, not booked again
    assert session.messages[-1] == {"role": "user", "content": [before]}  # answered as the first run was
    assert stored(demo_conn, session.cid)[0] == session.messages  # and stored, in one transaction


def test_a_tool_round_run_again_after_it_was_stored_runs_no_tool(demo_conn: Connection) -> None:
    call = book("toolu_repeat_2", "2026-08-31T14:00")
    with ScriptedServer([Reply([call], "tool_use")]) as server:
        session = scripted_session(demo_conn, server, [])
        session.store()
        add_user_text(session.messages, "Book Priya on Monday at two.")
        session.sync()
        session.model_step(session.messages, 1)
    session.tool_round(session.messages, 1)
    assert session.cid is not None
    entries = stored(demo_conn, session.cid)[0]
    again = scripted_session(demo_conn, server, [], cid=session.cid)
    heard: list[Event] = []
    again.tool_round.report = heard.append
    del again.messages[2:]  # the list as it was before the round

    again.tool_round(again.messages, 1)

    assert not [e for e in heard if isinstance(e, ToolCalled)]  # no tool ran
    assert again.messages == entries  # the stored round, appended
    assert stored(demo_conn, session.cid)[0] == entries  # nothing stored twice
    assert count(demo_conn, BOOKED_MONDAY) == 1
