"""Each request holds the list as it was sent, whoever keeps it; a copy no one kept is reused, not made again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import demo_clock, scripted_send, slot_searches

from scheduler_agent.agent import growth
from scheduler_agent.agent.events import Event, RequestSent
from scheduler_agent.agent.growth import SentList
from scheduler_agent.session.session import Session, Settings
from scheduler_agent.storage import db
from scheduler_agent.testing.scripted_server import Reply, text


def grown(messages: list[Any], number: int) -> None:
    messages.append({"role": "assistant", "content": [{"type": "text", "text": f"reply {number}"}]})
    messages.append({"role": "user", "content": [{"type": "text", "text": f"more {number}"}]})


def test_a_copy_no_one_kept_is_brought_up_to_date_in_place() -> None:
    sent, messages = SentList(), [{"role": "user", "content": "hi"}]
    first = id(sent.of(messages))  # not kept
    assert sent.copied == 1
    for number in range(5):
        grown(messages, number)
        copy = sent.of(messages)
        assert copy == messages and copy is not messages
        assert [id(entry) for entry in copy] == [id(entry) for entry in messages]
        assert sent.copied == 3  # the two new entries, and the one that was last (it may have changed in place)
        assert id(copy) == first
        del copy
    messages[-1] = {"role": "user", "content": "replaced"}  # the end replaced by another object
    assert sent.of(messages)[-1] is messages[-1]
    other = list(messages)  # another list: copied whole
    assert sent.of(other) == other and sent.copied == len(other)


@pytest.mark.parametrize(
    "keep",
    [lambda copy: copy, lambda copy: {"messages": copy}, lambda copy: iter(copy)],
    ids=["the list", "a request holding it", "an iterator over it"],
)
def test_a_copy_someone_keeps_never_changes(keep: Callable[[list[Any]], Any]) -> None:
    sent, messages = SentList(), [{"role": "user", "content": "hi"}]
    kept: list[tuple[Any, list[Any]]] = []
    for number in range(4):
        copy = sent.of(messages)
        kept.append((keep(copy), list(messages)))
        del copy
        grown(messages, number)
    assert sent.of(messages) == messages and sent.copied == len(messages)  # the last one is kept: a new copy
    for holder, then in kept:
        if isinstance(holder, dict):
            holder = holder["messages"]
        assert list(holder) == then


def test_without_reference_counts_every_request_gets_a_new_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(growth, "_COUNT", None)  # an interpreter without sys.getrefcount
    sent, messages = SentList(), [{"role": "user", "content": "hi"}]
    previous = sent.of(messages)
    for number in range(3):
        grown(messages, number)
        copy = sent.of(messages)
        assert copy == messages and copy is not previous and sent.copied == len(messages)
        previous = copy


def sent_requests(demo_db: Path, keep: str) -> tuple[list[list[Any]], list[int], Session]:
    """A session's turn of four requests through the real SDK; what `keep` kept of each request, and each
    request's length as the loop had it when it was sent."""
    events: list[Event] = []
    kept: list[list[Any]] = []
    lengths: list[int] = []

    def listener(event: Event) -> None:
        if isinstance(event, RequestSent):
            lengths.append(len(session.messages))
            if keep == "events":
                events.append(event)
            elif keep == "lists":
                kept.append(event.request["messages"])

    with scripted_send([*slot_searches("toolu_s", 3), Reply([text("Monday 14:00.")])]) as (send, _):
        session = Session(
            db.connect(demo_db), demo_clock(), send, Settings("claude-sonnet-5-5", 10, strict=True), listener
        )
        session.ask("When is Priya free?")
    if keep == "events":
        kept = [event.request["messages"] for event in events if isinstance(event, RequestSent)]
    return kept, lengths, session


@pytest.mark.parametrize("keep", ["events", "lists"])
def test_every_request_kept_is_the_list_as_it_was_sent(demo_db: Path, keep: str) -> None:
    kept, lengths, session = sent_requests(demo_db, keep)
    assert lengths == [1, 3, 5, 7]
    assert [len(messages) for messages in kept] == lengths
    for messages in kept:
        assert all(a is b for a, b in zip(messages, session.messages, strict=False))
    assert len({id(messages) for messages in kept}) == 4  # four lists, none of them the loop's own
    assert all(messages is not session.messages for messages in kept)


def test_a_session_whose_requests_no_one_keeps_copies_only_what_each_round_added(demo_db: Path) -> None:
    """The real SDK and the real ModelAPI let go of each request once it is sent, so does the loop."""
    _, lengths, session = sent_requests(demo_db, "nothing")
    assert lengths == [1, 3, 5, 7]
    assert session.requests.sent.copied == 3
