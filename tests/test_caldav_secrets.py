"""No CalDAV password reaches any file or output of a CalDAV-backed session: a unique password, then a
grep of the database with its -wal and -shm, the cassette and the array dump, the chat history (a chat
on a terminal, so readline keeps one), every other file under HOME and the test's folder, and the
stdout and stderr of every run."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import DUMMY_KEY, on_a_terminal, run_cli
from radicale_server import OWNER_USER, RadicaleServer
from test_caldav_crash import ASK, BOOK, PASSWORD_ENV, SCRIPT, TODAY, on_the_server, set_up

from scheduler_agent.storage.db import connect
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use


def test_no_caldav_password_reaches_any_file_or_output_of_a_session(radicale: RadicaleServer, tmp_path: Path) -> None:
    password = radicale.users[OWNER_USER]
    (tmp_path / "data").mkdir()
    db = set_up(tmp_path / "data" / "cal.db", radicale)
    held = connect(db)  # held open, so the -wal and -shm files stay as the runs leave them
    env = {PASSWORD_ENV: password}
    cassette, dump = tmp_path / "data" / "session.yaml", tmp_path / "data" / "arrays.jsonl"
    outputs: list[str] = []

    with ScriptedServer(SCRIPT) as model:
        asked = run_cli(
            ["ask", ASK, "--yes", "--record", str(cassette), "--dump-array", "--dump-array-file", str(dump),
             "--db", str(db), "--today", TODAY],
            model, env=env,
        )  # fmt: skip
    outputs.append(asked.stdout + asked.stderr)
    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert len(on_the_server(radicale)) == 1  # the session did write to the server

    chat_script = [
        Reply([tool_use("toolu_chat_1", "create_event", {**BOOK, "start": "2027-03-03T15:00"})], "tool_use"),
        Reply([text("Booked Wednesday 15:00 as well.")]),
    ]
    with ScriptedServer(chat_script) as model:
        chat_env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))}
        chat_env |= {"ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": DUMMY_KEY, **env}
        args = ["chat", "--yes", "--db", str(db), "--today", TODAY]
        code, screen = on_a_terminal(args, chat_env, b"you> ", ["Book Priya on Wednesday at 3pm too", "/dump", "/quit"])
    outputs.append(screen)
    assert code == 0, screen
    assert "Booked Wednesday 15:00 as well." in screen
    assert len(on_the_server(radicale)) == 2

    for command in (["conversations", "show", "1"], ["calendar", "backends"], ["calendar", "connect", "--list"]):
        shown = run_cli([*command, "--db", str(db)], env=env)
        outputs.append(shown.stdout + shown.stderr)
        assert shown.returncode == 0, shown.stdout + shown.stderr

    history = Path(os.environ["HOME"]) / ".local" / "share" / "scheduler-agent" / "chat-history"
    files = [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm"), cassette, dump, history]
    assert all(path.is_file() for path in files), [path for path in files if not path.is_file()]
    assert "Book Priya on Wednesday" in history.read_text(encoding="utf-8")
    everything = {*files, *(p for p in tmp_path.rglob("*") if p.is_file() and "radicale" not in p.parts)}
    for path in everything:
        assert password.encode() not in path.read_bytes(), path
    assert all(password not in output for output in outputs)
    held.close()
