"""A resume reads the stored list once: a mark of how far it passed the check, and each entry's size, stored."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from helpers import scripted_session, slot_searches, stored_session
from sqlalchemy import text as sql

from scheduler_agent.agent.events import Event, RequestSent
from scheduler_agent.agent.request import encode
from scheduler_agent.grammar.check import IncrementalChecker, check, rules_digest
from scheduler_agent.session.session import Session, Settings
from scheduler_agent.storage import conversations, db
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use


def rounds(count: int, prefix: str = "toolu_p") -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [text("Find a slot with Priya — 会議 🗓️")]}]
    for n in range(count):
        call = tool_use(f"{prefix}{n}", "find_free_slots", {"person": "priya", "week": "2026-08-31"})
        messages.append({"role": "assistant", "content": [text(f"Looking {n}."), call]})
        result = {"type": "tool_result", "tool_use_id": call["id"], "content": "- Mon 14:00-15:00"}
        messages.append({"role": "user", "content": [result]})
    return messages


def test_a_trusted_prefix_gives_the_whole_walks_answer_examining_only_the_last_round() -> None:
    messages = rounds(50)
    assert check(messages, mode="request") == []
    reused = tool_use("toolu_p3", "find_free_slots", {"person": "priya"})  # an id of the trusted prefix again
    later = [
        {"role": "assistant", "content": [text("Again."), reused]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_p3", "content": "ok"}]},
        {"role": "assistant", "content": [tool_use("toolu_unanswered", "find_free_slots", {})]},
    ]
    for tail in ([], later[:2], later):
        whole = [*messages, *copy.deepcopy(tail)]
        checker = IncrementalChecker()
        checker.trust(whole, len(messages))
        found = checker.check(whole, mode="request")
        assert found == check(whole, mode="request")
        assert checker.examined <= 3 + len(tail)  # the last round of the prefix, then the tail
    warned = check([*messages, *later[:2]], mode="request")
    assert [v.level for v in warned] == ["warning"]
    assert "first at messages[7].content[1]" in warned[0].cause


def test_no_mark_walks_it_all() -> None:
    messages = rounds(5)
    checker = IncrementalChecker()
    checker.trust(messages, 0)
    assert checker.check(messages, mode="request") == []
    assert checker.examined == len(messages)


def test_a_resumed_session_sends_its_first_request_examining_and_measuring_only_the_new_entries(demo_db: Path) -> None:
    calls = slot_searches("toolu_r", 6)
    events: list[Event] = []
    with ScriptedServer([*calls, Reply([text("Monday 14:00.")]), Reply([text("Tuesday too.")])]) as server:
        conn = db.connect(demo_db)
        first = stored_session(conn, server, events, "When is Priya free? — 会議")
        record, stored = conversations.load(conn, first.cid)
        sent = [event for event in events if isinstance(event, RequestSent)]
        assert record.checked == len(sent[-1].request["messages"])  # the mark: the last list sent, checked clean
        assert record.sizes == tuple(len(encode(entry)) for entry in stored)  # each entry's size, stored exactly
        events.clear()
        again = scripted_session(conn, server, events, first.cid)
        again.ask("And Tuesday?")
        sent = [event for event in events if isinstance(event, RequestSent)]
        assert sent[0].size == len(encode(sent[0].request)) == len(encode(server.received[-1]))
        assert again.requests.checker.examined <= 5  # the prefix's last round and the new turn, not 15 entries
        assert again.requests.sizes.entries.measured <= 2  # the new turn and the entry before it


@pytest.mark.parametrize("rules", ["0123456789abcdef", None], ids=["other rules", "before m034"])
def test_a_mark_made_by_other_rules_is_not_trusted_and_the_list_is_checked_whole(
    demo_db: Path, rules: str | None
) -> None:
    """A version whose check differs (a new rule, a fix), or one before the digest was stored, made the mark:
    the resumed list is examined whole on its first request, and the mark is then this version's."""
    calls = slot_searches("toolu_d", 4)
    events: list[Event] = []
    with ScriptedServer([*calls, Reply([text("Monday.")]), Reply([text("Tuesday.")])]) as server:
        conn = db.connect(demo_db)
        first = stored_session(conn, server, events, "When is Priya free?")
        assert conversations.load(conn, first.cid)[0].checked > 0  # trusted by the rules that made it
        conn.execute(sql("UPDATE conversations SET checked_rules = :rules"), {"rules": rules})
        record, stored = conversations.load(conn, first.cid)
        assert record.checked == 0
        again = scripted_session(conn, server, events, first.cid)
        again.ask("And Tuesday?")
        assert again.requests.checker.examined == len(stored) + 1  # every stored entry, and the new turn
        row = conn.execute(sql("SELECT checked, checked_rules FROM conversations")).fetchone()
        assert row[0] == len(stored) + 1
        assert row[1] == rules_digest()


def test_the_rules_digest_is_of_the_checks_own_code() -> None:
    from importlib import resources

    import scheduler_agent.grammar.check as grammar_check

    digest = rules_digest()
    assert len(digest) == 16
    assert int(digest, 16) >= 0
    assert rules_digest() == digest  # one per process
    assert {"rules.py", "walk.py", "blocks.py", "check.py"} <= set(grammar_check._RULE_MODULES)
    for name in grammar_check._RULE_MODULES:  # each is a file of the package that is read
        assert (resources.files("scheduler_agent.grammar") / name).is_file()


def test_an_entry_stored_before_the_sizes_is_measured_and_a_repair_clears_the_mark(demo_db: Path) -> None:
    events: list[Event] = []
    with ScriptedServer([Reply([text("Hello.")]), Reply([text("Again.")])]) as server:
        conn = db.connect(demo_db)
        first = stored_session(conn, server, events, "hi")
        conn.execute(sql("UPDATE entries SET size = NULL"))  # as an older version stored them
        conn.execute(sql("UPDATE conversations SET checked = 0"))
        events.clear()
        scripted_session(conn, server, events, first.cid).ask("again")
        sent = next(event for event in events if isinstance(event, RequestSent))
        assert sent.size == len(encode(sent.request))
        _, before = conversations.load(conn, first.cid)
        conversations.rewrite(conn, first.cid, before, before[:2], ["dropped the last turn"])
        record, _ = conversations.load(conn, first.cid)
        assert record.checked == 0
        assert record.sizes == tuple(len(encode(entry)) for entry in before[:2])


def test_conversations_show_writes_its_lines_in_one_call(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from scheduler_agent.cli import app
    from scheduler_agent.cli import conversations as command

    events: list[Event] = []
    with ScriptedServer(
        [
            Reply([tool_use("toolu_w1", "find_free_slots", {"person": "priya"})], "tool_use"),
            Reply([text("Monday 14:00.")]),
        ]
    ) as server:
        conn = db.connect(demo_db)
        stored_session(conn, server, events, "When is Priya free?")
    writes: list[str] = []
    echo = command.click.echo
    monkeypatch.setattr(
        command.click, "echo", lambda message=None, **kw: (writes.append(str(message)), echo(message, **kw))
    )
    result = CliRunner().invoke(app, ["conversations", "show", "1", "--db", str(demo_db)])
    assert result.exit_code == 0, result.output
    assert len(writes) == 1
    assert "[0] user      When is Priya free?" in writes[0]
    assert '→ find_free_slots(person="priya")  [toolu_w1]' in writes[0]
    assert "Monday 14:00." in writes[0]


def test_the_lease_is_renewed_with_a_write_only_once_a_tenth_of_it_has_passed(demo_db: Path) -> None:
    from scheduler_agent.session.lease import SessionLease
    from scheduler_agent.storage import lease
    from scheduler_agent.storage.conversations import Context

    conn = db.connect(demo_db)
    cid = conversations.create(conn, Context("m", 10, "s", []), started_on="2026-08-27", clock_pin=None)
    keeper = SessionLease(conn)
    with keeper.held(cid):
        before = lease.current(conn, cid)
        keeper.renew()  # just claimed: no write
        assert lease.current(conn, cid) == before
    often = SessionLease(conn, seconds=0.0)  # a tenth of nothing has always passed: every renewal writes
    with often.held(cid):
        other = lease.Holder("elsewhere", 1)
        conn.execute(
            sql("UPDATE leases SET holder_host = :host, holder_pid = :pid"), {"host": other.host, "pid": other.pid}
        )  # taken over
        with pytest.raises(lease.ConversationBusy, match="taken over by another process"):
            often.renew()


def test_a_version_one_database_has_no_mark_and_no_sizes_and_both_are_worked_out(tmp_path: Path) -> None:
    import shutil

    path = tmp_path / "v1.db"
    shutil.copyfile(Path(__file__).parent / "data" / "v1.db", path)
    conn = db.connect(path)  # applies m019 to the old file
    columns = {row[1] for row in conn.execute(sql("PRAGMA table_info(entries)"))}
    assert "size" in columns
    ids = [row[0] for row in conn.execute(sql("SELECT id FROM conversations ORDER BY id"))]
    assert ids
    for cid in ids:
        record, messages = conversations.load(conn, cid)
        assert record.checked == 0  # checked whole, once, on its first request
        assert record.sizes == (None,) * len(messages)
        opened = Session.stored(conn, cid, lambda request: {}, Settings("m", 10), lambda event: None, None)
        sizes = opened.requests.sizes.entries
        assert sizes.total(opened.messages) == len(encode(opened.messages))  # type: ignore[arg-type]
        assert sizes.measured <= 1  # measured when it was opened (none stored); only the last one again
        checker = IncrementalChecker()
        checker.trust(messages, record.checked)
        assert checker.check(messages, mode="conversation") == check(messages, mode="conversation")
        assert checker.examined == len(messages)


def test_the_mark_is_written_once_a_turn_and_a_turn_cut_short_keeps_the_one_before(demo_db: Path) -> None:
    """The mark rewrites the conversation's row, so it goes with the turn's stop, not with each iteration. A
    turn that ends in an error leaves the mark of the turn before, which still holds: the list only grew."""

    failing = Reply(status=400, error_type="invalid_request_error", error_message="no")
    turn, cut_short = slot_searches("toolu_m", 3), slot_searches("toolu_n", 3)
    script = [*turn, Reply([text("Monday.")]), *cut_short, failing, Reply([text("Again.")])]
    events: list[Event] = []
    with ScriptedServer(script) as server:
        conn = db.connect(demo_db)
        marks: list[str] = []
        conn.connection.driver_connection.set_trace_callback(
            lambda sql: marks.append(sql) if "checked_rules =" in sql else None
        )
        first = stored_session(conn, server, events, "When is Priya free?")
        assert len(marks) == 1  # four iterations, one mark: at the turn's end
        record, stored = conversations.load(conn, first.cid)
        assert record.checked == len(stored) - 1  # the last request's list: all but the final reply
        with pytest.raises(Exception, match="rejected"):
            first.ask("And Tuesday?")  # three iterations, then the API refuses the fourth request
        after, grown = conversations.load(conn, first.cid)
        assert len(grown) == len(stored) + 7
        assert after.checked == record.checked  # the earlier turn's mark, still a clean prefix
        events.clear()
        again = scripted_session(conn, server, events, first.cid)
        again.resume()
        assert again.requests.checker.examined < len(grown)  # from the earlier mark's last round, not whole
        assert conversations.load(conn, first.cid)[0].checked == len(grown)
