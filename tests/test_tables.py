"""The text tables (cli/tables.py): a column is as wide as its widest cell, so rows stay aligned.

`/history` and `conversations show` lost their alignment from entry [10] on (the position grew a digit);
`/tokens` did once a count outgrew its fixed width.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from scheduler_agent.agent.types import JSON
from scheduler_agent.cli import app
from scheduler_agent.cli.tables import entry_table, table
from scheduler_agent.storage import conversations, db
from scheduler_agent.storage.conversations import Context, Journal


def test_each_column_is_as_wide_as_its_widest_cell() -> None:
    lines = table([("1", "a", "x"), ("1,234,567", "bbb", "y")], "><<")
    assert lines == ["        1 a   x", "1,234,567 bbb y"]


def test_the_last_column_left_aligned_leaves_no_trailing_spaces() -> None:
    assert table([("a", "short"), ("b", "much longer")], "<<", gap="  ") == ["a  short", "b  much longer"]


def test_a_minimum_width_keeps_a_column_as_it_was() -> None:
    assert entry_table([(0, "user", "hi")]) == ["[0] user      hi"]


def test_entries_from_ten_on_stay_in_the_same_columns() -> None:
    lines = entry_table([(n, "user" if n % 2 == 0 else "assistant", f"text {n}") for n in range(12)])
    assert lines[9] == "[9]  assistant text 9"
    assert lines[10] == "[10] user      text 10"
    assert {line.index("text") for line in lines} == {15}


def test_conversations_show_aligns_entry_ten_with_entry_nine(demo_db: Path) -> None:
    conn = db.connect(demo_db)
    context = Context("claude-sonnet-5-5", 1024, "s", [])
    cid = conversations.create(conn, context, started_on="2026-08-27", clock_pin=None)
    messages: list[JSON] = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": [{"type": "text", "text": f"entry {n}"}]}
        for n in range(12)
    ]
    Journal(conn, cid, []).sync(messages)
    conn.close()
    result = CliRunner().invoke(app, ["conversations", "show", str(cid), "--db", str(demo_db)])
    assert result.exit_code == 0, result.stderr
    shown = [line for line in result.stdout.splitlines() if line.startswith("[")]
    assert shown[9] == "[9]  assistant entry 9"
    assert shown[10] == "[10] user      entry 10"
    assert len({line.index("entry") for line in shown}) == 1


def test_calendar_people_pads_the_keys_to_the_longest(demo_db: Path) -> None:
    result = CliRunner().invoke(app, ["calendar", "people", "--db", str(demo_db)])
    assert result.exit_code == 0, result.stderr
    names = {line.split(maxsplit=1)[0]: line for line in result.stdout.splitlines()}
    columns = {line.index(line.split(maxsplit=1)[1]) for line in names.values()}
    assert len(columns) == 1
