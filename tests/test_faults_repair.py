"""`conversations repair ID`: lists that earlier versions stored wedged are mended by the smallest change."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import text as sql

from scheduler_agent.cli import app
from scheduler_agent.grammar.check import check
from scheduler_agent.storage import conversations
from scheduler_agent.storage.conversations import Context, Journal
from scheduler_agent.storage.db import connect
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

runner = CliRunner()
FIND = {"person": "priya", "week": "2026-08-31"}


def invoke(*args: str, input: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=input)


def user(*texts: str) -> dict[str, Any]:
    return {"role": "user", "content": [text(t) for t in texts]}


def result(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "- Mon 14:00-15:00"}


def store_wedged(db: Path, messages: list[Any]) -> int:
    """Store `messages` as an earlier version did: verbatim, unchecked."""
    conn = connect(db)
    cid = conversations.create(
        conn, Context("claude-sonnet-5-5", 1024, "system", []), started_on="2026-08-27", clock_pin=None
    )
    Journal(conn, cid, []).sync(messages)
    return cid


WEDGED = {
    "an empty reply": [user("Book Priya"), {"role": "assistant", "content": []}, user("hello?")],
    "a whitespace reply": [user("Book Priya"), {"role": "assistant", "content": [text("  ")]}, user("hello?")],
    "an empty user text": [user("Book Priya"), {"role": "assistant", "content": [text("Which day?")]}, user("")],
    "a call with no name": [
        user("Book Priya"),
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "", "input": FIND}]},
        {"role": "user", "content": [result("toolu_1")]},
        user("hello?"),
    ],
    "a call whose input is a string": [
        user("Book Priya"),
        {"role": "assistant", "content": [tool_use("toolu_1", "find_free_slots", "priya")]},  # type: ignore[arg-type]
        user("hello?"),
    ],
    "a call left without its result": [
        user("Book Priya"),
        {"role": "assistant", "content": [tool_use("toolu_1", "find_free_slots", FIND)]},
        user("hello?"),
    ],
}


@pytest.mark.parametrize("messages", WEDGED.values(), ids=WEDGED.keys())
def test_a_wedged_list_is_named_repaired_and_goes_on(
    demo_db: Path, api: Callable[..., ScriptedServer], messages: list[Any]
) -> None:
    cid = store_wedged(demo_db, messages)
    assert check(messages, mode="conversation") != []
    server = api([Reply([text("Done.")])])
    refused = invoke("ask", "go on", "--cid", str(cid), "--db", str(demo_db), "--yes")
    assert refused.exit_code == 1
    assert "NOT sent" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert "a bug in the code" not in refused.stderr  # the source is named
    assert f"conversations repair {cid}" in refused.stderr
    assert server.received == []

    before = conversations.load(connect(demo_db), cid)[1]  # the refused text joined the last user turn
    repaired = invoke("conversations", "repair", str(cid), "--db", str(demo_db), "--yes")
    assert repaired.exit_code == 0, (repaired.stdout, repaired.stderr)
    assert "The smallest change that makes it valid:" in repaired.stdout
    conn = connect(demo_db)
    after = conversations.load(conn, cid)[1]
    assert check(after, mode="conversation") == []
    assert invoke("lint", str(_as_file(demo_db.parent, after))).exit_code in (0, 6)
    [(_, changes)] = conversations.repairs(conn, cid)
    assert changes
    assert (
        json.loads(
            conn.execute(sql("SELECT before FROM repairs WHERE conversation_id = :cid"), {"cid": cid}).fetchone()[0]
        )
        == before
    )

    goes_on = invoke("ask", "go on", "--cid", str(cid), "--db", str(demo_db), "--yes")
    assert goes_on.exit_code == 0 and goes_on.stdout.strip() == "Done.", goes_on.stderr
    assert check(conversations.load(conn, cid)[1], mode="conversation") == []


def _as_file(folder: Path, messages: list[Any]) -> Path:
    path = folder / "list.json"
    path.write_text(json.dumps(messages))
    return path


def test_the_empty_reply_is_taken_out_and_the_two_user_turns_joined(demo_db: Path) -> None:
    cid = store_wedged(demo_db, WEDGED["an empty reply"])
    invoke("conversations", "repair", str(cid), "--db", str(demo_db), "--yes")
    assert conversations.load(connect(demo_db), cid)[1] == [user("Book Priya", "hello?")]


def test_repair_asks_first_and_a_no_changes_nothing(demo_db: Path) -> None:
    cid = store_wedged(demo_db, WEDGED["an empty reply"])
    declined = invoke("conversations", "repair", str(cid), "--db", str(demo_db), input="n\n")
    assert declined.exit_code == 1
    assert "Nothing was changed." in declined.stderr
    assert "the model's reply at messages[1]" in declined.stdout  # what is wrong, and whose it was
    assert conversations.load(connect(demo_db), cid)[1] == WEDGED["an empty reply"]
    assert sqlite3.connect(demo_db).execute("SELECT count(*) FROM repairs").fetchone()[0] == 0
    accepted = invoke("conversations", "repair", str(cid), "--db", str(demo_db), input="y\n")
    assert accepted.exit_code == 0
    assert "Repaired conversation" in accepted.stdout


def test_a_valid_list_needs_no_repair(demo_db: Path) -> None:
    cid = store_wedged(demo_db, [user("Book Priya"), {"role": "assistant", "content": [text("Done.")]}])
    result = invoke("conversations", "repair", str(cid), "--db", str(demo_db))
    assert result.exit_code == 0
    assert "nothing to repair" in result.stdout
