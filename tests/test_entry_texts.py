"""One encoding of each entry serves the check, the size and the store, and each gives the answer it gave alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Connection
from sqlalchemy import text as sql

from scheduler_agent.agent.request import encode, encode_text
from scheduler_agent.grammar.check import IncrementalChecker, check
from scheduler_agent.session.entry_texts import EntryTexts, content_text
from scheduler_agent.session.sizes import EntrySizes
from scheduler_agent.storage import conversations, db
from scheduler_agent.storage.conversations import Context, Journal

UNICODE = 'Réunion 🗓️ — 会議, e\u0301, \u202e, "quoted" \\ back'


def user(value: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": value}]}


def round_of(number: int) -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": f"toolu_{number}", "name": "find_free_slots", "input": {"who": UNICODE}}
    result = {"type": "tool_result", "tool_use_id": call["id"], "content": UNICODE}
    return [
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}, call]},
        {"role": "user", "content": [result]},
    ]


def test_the_texts_are_each_entrys_content_as_encoded_as_the_list_grows_and_changes() -> None:
    texts, messages = EntryTexts(), [user(UNICODE)]
    assert texts.update(messages) == [encode_text(messages[0]["content"])]
    for number in range(5):
        messages += round_of(number)
        assert texts.update(messages) == [encode_text(entry["content"]) for entry in messages]
        assert texts.encoded == 3  # the two new entries, and the one that was last (it may have changed)
    messages[-1]["content"] = [*messages[-1]["content"], {"type": "text", "text": "and"}]  # text joins the turn
    assert texts.update(messages)[-1] == encode_text(messages[-1]["content"])
    del messages[-3:]
    messages.append(user("replaced"))
    assert texts.update(messages) == [encode_text(entry["content"]) for entry in messages]
    copy = list(messages)  # another list: encoded whole
    texts.update(copy)
    assert texts.encoded == len(copy)


def test_a_stored_list_is_seeded_with_its_last_text_only_and_reads_the_rest_on_demand() -> None:
    messages = [user("one"), *round_of(1), user(UNICODE)]
    texts = EntryTexts()
    texts.seed(messages)
    assert texts.texts == [None, None, None, encode_text(messages[-1]["content"])]
    assert texts.text(messages, 1) == encode_text(messages[1]["content"])
    messages += round_of(2)
    assert texts.update(messages)[-3:] == [encode_text(entry["content"]) for entry in messages[-3:]]
    assert texts.encoded == 3


def test_an_entry_that_is_not_an_object_or_not_json_has_no_text() -> None:
    assert content_text("a string entry") is None
    assert content_text({"role": "user"}) is None
    assert content_text({"role": "user", "content": {1, 2}}) is None
    loop: list[Any] = []
    loop.append(loop)
    assert content_text({"role": "user", "content": loop}) is None
    assert EntryTexts().update(["odd", user("x")]) == [None, encode_text(user("x")["content"])]


def test_sizes_from_the_texts_are_the_encodings() -> None:
    texts, sizes, messages = EntryTexts(), EntrySizes(), [user(UNICODE)]
    for number in range(4):
        messages += round_of(number)
        assert sizes.total(messages, texts.update(messages)) == len(encode(messages))  # type: ignore[arg-type]
    messages.append({"role": "user", "content": "plain", "cache_control": {"type": "ephemeral"}})  # a third key
    assert sizes.total(messages, texts.update(messages)) == len(encode(messages))  # type: ignore[arg-type]


def test_the_checker_with_the_texts_as_fingerprint_answers_as_a_whole_walk() -> None:
    texts = EntryTexts()
    checker = IncrementalChecker(texts.fingerprint)
    messages: list[Any] = [user("find a slot")]
    steps = [
        lambda: messages.extend(round_of(1)),
        lambda: messages[-1]["content"].append({"type": "text", "text": ""}),  # in place: an empty text block
        lambda: messages[-1]["content"].pop(),
        lambda: messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1"}]}),
        lambda: messages.pop(),
        lambda: messages[-1].update(role="assistant"),  # in place: the role itself
        lambda: messages[-1].update(role="user"),
        lambda: messages.append("not an entry"),
    ]
    for step in steps:
        step()
        texts.update(messages)
        assert checker.check(messages, mode="request") == check(messages, mode="request")


def test_the_journal_stores_the_same_rows_from_the_texts(tmp_path: Path) -> None:
    """Two conversations grown the same way, one journal given the texts and one not: the same rows."""
    conn = db.connect(tmp_path / "c.db")
    context = Context("claude-sonnet-5-5", 100, "system", [], False)
    lists: list[list[dict[str, Any]]] = [[user(UNICODE)], [user(UNICODE)]]
    journals = []
    texts = EntryTexts()
    for _ in lists:
        cid = conversations.create(conn, context, started_on="2026-08-27", clock_pin=None)
        journals.append(Journal(conn, cid, []))

    def sync() -> None:
        journals[0].sync(lists[0], texts=texts.update(lists[0]))
        journals[1].sync(lists[1])

    sync()
    for number in range(3):
        for messages in lists:
            messages += round_of(number)
        sync()
    for messages in lists:  # text joins the trailing user turn, in place
        messages[-1]["content"] = [*messages[-1]["content"], {"type": "text", "text": UNICODE}]
    sync()
    rows = [stored_rows(conn, journal.cid) for journal in journals]
    assert rows[0] == rows[1]
    assert [row[1] for row in rows[0]] == [encode_text(entry["content"]) for entry in lists[0]]
    assert [row[2] for row in rows[0]] == [len(encode(entry)) for entry in lists[0]]


def stored_rows(conn: Connection, cid: int) -> list[tuple[str, str, int]]:
    query = sql("SELECT role, content, size FROM entries WHERE conversation_id = :cid ORDER BY position")
    return [tuple(row) for row in conn.execute(query, {"cid": cid})]  # type: ignore[misc]


def test_read_from_names_where_a_reader_must_read_again() -> None:
    from scheduler_agent.agent.growth import read_from

    a, b, c, d = user("a"), user("b"), user("c"), user("d")
    messages = [a, b, c]
    assert read_from(messages, None, []) == 0  # never read
    assert read_from(messages, messages, [a, b, c]) == 2  # nothing new: the last one again (in place?)
    messages.append(d)
    assert read_from(messages, messages, [a, b, c]) == 2  # the one that was last, then the new one
    messages[2:] = [user("x")]  # the end replaced
    assert read_from(messages, messages, [a, b, c, d]) == 2
    del messages[1:]
    assert read_from(messages, messages, [a, b, c, d]) == 1  # removed at the end: nothing to read again
    assert read_from(list(messages), messages, [a]) == 0  # another list: read it whole


def test_a_reply_as_it_arrived_is_the_text_kept_for_the_entry_that_holds_its_content() -> None:
    """The check compares the newest assistant entry with the reply as it arrived; when the entry holds the
    reply's content itself, the text the store just encoded is that reply's, and is not encoded again."""
    texts, messages = EntryTexts(), [user("find a slot")]
    content = round_of(1)[0]["content"]
    messages.append({"role": "assistant", "content": content})
    texts.update(messages)
    assert texts.of_content(1, content) is texts.texts[1]
    assert texts.of_content(1, list(content)) is None  # an equal copy is not the content that arrived
    assert texts.of_content(0, content) is None
    assert texts.of_content(2, content) is None  # not encoded yet


def test_a_request_is_sent_as_the_entries_joined_once_and_stays_its_plain_encoding_as_the_list_changes() -> None:
    """All but the last entry are kept joined and encoded (`Written.joined`), each entry once, when it is first
    sent: each request is still byte for byte the list's plain encoding, after entries are appended, after
    the last one changes in place, and after entries already joined are taken off and others put in."""
    from scheduler_agent.agent.request import Request, Written

    texts, messages = EntryTexts(), [user(UNICODE)]

    def sent() -> bytes:
        texts.update(messages)
        body = {"model": "m", "max_tokens": 5, "messages": list(messages), "stream": False}
        return encode(Request(body, texts.aligned))

    def plain() -> bytes:
        return encode({"model": "m", "max_tokens": 5, "messages": list(messages), "stream": False})

    for number in range(4):
        messages += round_of(number)
        assert sent() == plain()
    written = texts.aligned(messages)
    assert isinstance(written, Written) and written.joined_count == len(messages) - 1
    assert bytes(written.joined) == ",".join(str(text) for text in written[:-1]).encode()
    messages[-1]["content"] = [*messages[-1]["content"], {"type": "text", "text": "and"}]  # the last changes
    assert sent() == plain()
    del messages[2:]  # entries already joined go, and others come
    messages += [*round_of(9), user("again")]
    assert sent() == plain()
    assert texts.aligned([*messages[:-1], user("other")]) is None  # not the entries it knows: encoded whole
