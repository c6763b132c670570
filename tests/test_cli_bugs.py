"""The bugs a new user hit (issue 9), each reproduced through the CLI as a person runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import rows
from sqlalchemy import text as sql
from sqlalchemy.exc import IntegrityError

from scheduler_agent.calendar.clock import Clock
from scheduler_agent.cli import app
from scheduler_agent.playback.cassette_file import read_setup
from scheduler_agent.session.session import Session, Settings
from scheduler_agent.storage import conversations, db, listing
from scheduler_agent.storage.migrations import HEAD
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

runner = CliRunner()
Serve = Callable[..., ScriptedServer]
TODAY = ["--today", "2026-08-27T09:00"]
FIND = {"person": "priya", "week": "2026-08-31"}


def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), input=input)


# --- 1. a conversation is created when its first turn is written ----------------------------------


def test_chats_left_at_once_store_nothing_and_continue_goes_to_the_real_last_one(demo_db: Path, api: Serve) -> None:
    server = api([Reply([text("Booked Monday 10:30 for 30 minutes.")]), Reply([text("Made it 45 minutes.")])])
    first = invoke("ask", "Book Priya Monday, 30 minutes. Nothing before 10am.", "--db", str(demo_db), *TODAY)
    assert first.exit_code == 0, first.stderr
    for _ in range(3):  # chat, then Ctrl-D at once
        left = invoke("chat", "--db", str(demo_db), *TODAY, input="")
        assert left.exit_code == 0, left.stderr
        assert "conversation" not in left.stderr  # nothing was stored, so no id is announced
    assert rows(demo_db, "SELECT id FROM conversations") == [(1,)]
    follow_up = invoke("ask", "-c", "Make it 45 minutes instead", "--db", str(demo_db))
    assert follow_up.exit_code == 0, follow_up.stderr
    sent = server.received[1]["messages"]
    assert "Nothing before 10am" in sent[0]["content"][0]["text"]
    assert len(sent) == 3
    assert "conversation 1" in follow_up.stderr
    assert "conversations stored:        1" in invoke("stats", "--db", str(demo_db)).stdout


def test_continue_and_stats_skip_empty_conversations_an_older_version_left(demo_db: Path, api: Serve) -> None:
    server = api([Reply([text("Noted: never before 10am.")]), Reply([text("Still after 10am.")])])
    assert invoke("ask", "Never before 10am.", "--db", str(demo_db), *TODAY).exit_code == 0
    conn = db.connect(demo_db)
    record, _ = conversations.load(conn, 1)
    for _ in range(2):  # what 0.1.0 wrote when a chat was left at once
        conversations.create(conn, record.context, started_on="2026-08-27", clock_pin=None)
    conn.close()
    assert conversations.latest_id(db.connect(demo_db)) == 1
    result = invoke("ask", "-c", "And Priya?", "--db", str(demo_db))
    assert result.exit_code == 0, result.stderr
    assert server.received[1]["messages"][0]["content"][0]["text"] == "Never before 10am."
    assert "conversations stored:        1" in invoke("stats", "--db", str(demo_db)).stdout
    listed = invoke("conversations", "list", "--db", str(demo_db)).stdout
    assert listed.count("entries") == 1
    assert " 4 entries" in listed


def test_a_session_stores_its_row_with_its_first_turn(demo_db: Path) -> None:
    with ScriptedServer([Reply([text("hi")])]) as server:
        from scheduler_agent.api.client import ModelAPI, make_client

        conn = db.connect(demo_db)
        send = ModelAPI(make_client(api_key="sk-ant-test-dummy", base_url=server.url, max_retries=0)).send
        session = Session(conn, Clock(), send, Settings("claude-sonnet-5-5", 10), lambda event: None)
        heard: list[int] = []
        session.announce = heard.append
        session.store()
        assert session.cid is None
        assert rows(demo_db, "SELECT count(*) FROM conversations") == [(0,)]
        session.ask("hello")
        assert heard == [1]
        assert session.cid == 1
        assert rows(demo_db, "SELECT position, role FROM entries") == [(0, "user"), (1, "assistant")]


# --- 4. resume says what the state really is -----------------------------------------------------


def test_resume_of_a_conversation_with_no_turn_says_so(demo_db: Path, api: Serve) -> None:
    server = api([])
    conn = db.connect(demo_db)
    from scheduler_agent.storage.conversations import Context

    conversations.create(conn, Context("claude-sonnet-5-5", 1024, "s", []), started_on="2026-08-27", clock_pin=None)
    conn.close()
    result = invoke("resume", "1", "--db", str(demo_db))
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: Nothing to resume: conversation 1 has no turn yet. Start it with `scheduler-agent ask --cid 1 TEXT`."
    )
    assert "bug" not in result.stderr
    assert server.received == []


def test_a_never_answered_turn_is_shown_as_waiting_and_resume_asks_again(demo_db: Path, api: Serve) -> None:
    overloaded = Reply(status=529, error_type="overloaded_error", error_message="Overloaded")
    api([overloaded])
    assert invoke("ask", "Find Priya", "--db", str(demo_db), *TODAY, "--no-stream").exit_code == 5
    shown = invoke("conversations", "show", "1", "--db", str(demo_db)).stdout
    assert "waiting for the model's reply: `scheduler-agent resume 1` asks it again" in shown
    api([Reply([text("Monday 14:00.")])])
    result = invoke("resume", "1", "--db", str(demo_db))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "Monday 14:00."


# --- 6. no credentials: one line, nothing stored ---------------------------------------------------


@pytest.mark.parametrize("config_dir", [True, False], ids=["empty-config-dir", "no-config-dir"])
@pytest.mark.parametrize("command", ["ask", "chat"])
def test_without_credentials_one_line_and_nothing_stored(
    demo_db: Path, command: str, config_dir: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not config_dir:
        monkeypatch.delenv("ANTHROPIC_CONFIG_DIR")
    args = ["ask", "Book Priya"] if command == "ask" else ["chat"]
    result = invoke(*args, "--db", str(demo_db), *TODAY, input="Book Priya\n")
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert result.stderr.strip().count("\n") == 0, result.stderr  # one line, said at the start
    assert result.stderr.startswith("Error: ")
    assert "No Anthropic credentials" in result.stderr
    assert "scheduler-agent demo" in result.stderr
    assert "Chatting" not in result.stderr
    assert rows(demo_db, "SELECT count(*) FROM conversations") == [(0,)]
    assert rows(demo_db, "SELECT count(*) FROM entries") == [(0,)]


def test_an_auth_token_is_credentials_as_the_sdk_sees_them(
    demo_db: Path, api: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = api([Reply([text("ok")])])
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "token-for-test")
    assert invoke("ask", "hi", "--db", str(demo_db), *TODAY).exit_code == 0
    assert len(server.received) == 1


# --- 7. resume --max-iterations counts from the resume --------------------------------------------


def test_resume_at_the_bound_says_both_counts(demo_db: Path, api: Serve) -> None:
    calls = [Reply([tool_use(f"toolu_r{i}", "find_free_slots", FIND)], "tool_use") for i in range(5)]
    api(calls)
    assert invoke("ask", "find", "--db", str(demo_db), *TODAY, "--max-iterations", "3").exit_code == 3
    result = invoke("resume", "1", "--db", str(demo_db), "--max-iterations", "2")
    assert result.exit_code == 3
    assert "Stopped after 5 iterations in this turn, 2 since resuming (the bound" in result.stderr
    assert "this many more" in invoke("resume", "--help").stdout.replace("\n", " ")
    assert "stopped" in invoke("conversations", "show", "1", "--db", str(demo_db)).stdout


# --- 3. a recorded chat that used /new replays -------------------------------------------------


def test_a_recorded_chat_with_new_and_tokens_replays_as_it_ran(demo_db: Path, api: Serve, tmp_path: Path) -> None:
    find = tool_use("toolu_n1", "find_free_slots", FIND)
    api(
        [
            Reply([find], "tool_use"),
            Reply([text("Monday 14:00 is free.")]),
            Reply([text("A fresh start: hello.")]),
            Reply([text("Two lines, one message.")]),
        ]
    )
    path = tmp_path / "chat.yaml"
    typed = "when is priya free?\n/tokens\n/new\nhello\n/multi\nline one\nline two\n/end\n/tokens\n/quit\n"
    live = invoke("chat", "--record", str(path), "--db", str(demo_db), *TODAY, input=typed)
    assert live.exit_code == 0, live.stderr
    setup = read_setup(path)
    assert setup["inputs"] == typed.splitlines()  # every line typed, slash commands included
    replayed = invoke("replay", str(path))
    assert replayed.exit_code == 0, replayed.stderr
    assert "differs" not in replayed.stderr
    assert replayed.stdout.count("iteration entries") == 2  # both /tokens tables again
    assert "Monday 14:00 is free." in replayed.stdout
    assert "Two lines, one message." in replayed.stdout
    assert "you> /new" in replayed.stderr
    assert "Started a new conversation." in replayed.stderr


# --- 8. the context budget counts the system prompt and tools, and the trace says it trimmed --------


def test_the_context_budget_counts_the_system_prompt_and_tools(demo_db: Path, api: Serve) -> None:
    from scheduler_agent.agent.trim import estimate_tokens

    calls = [Reply([tool_use(f"toolu_cb{i}", "find_free_slots", FIND)], "tool_use") for i in range(2)]
    server = api([*calls, Reply([text("Monday 14:00.")])])
    probe = invoke("ask", "Never before 10am. Find Priya.", "-n", "--db", str(demo_db), *TODAY, "--no-stream")
    assert probe.exit_code == 0
    body = server.received[-1]
    fixed = estimate_tokens(body["system"]) + estimate_tokens(body["tools"])
    whole = estimate_tokens(body["messages"])  # the list alone, 5 entries, fits a budget of whole + 10 ...
    server = api([*calls, Reply([text("Monday 14:00.")])])
    budget = str(fixed + whole - 10)  # ... but not once the system prompt and tools are counted
    result = invoke(
        "ask", "Never before 10am. Find Priya.", "--context-budget", budget, "-n", "--db", str(demo_db), *TODAY
    )
    assert result.exit_code == 0, result.stderr
    assert len(server.received[-1]["messages"]) == 3  # the oldest round was left out
    assert "[iteration 3] sending 3 of 5 entries (budget)" in result.stderr
    assert "[iteration 2] sending 3 entries" in result.stderr  # nothing left out: nothing said


# --- 8. the approval says the other person's time; people get people's wording ---------------------


def test_the_approval_question_gives_the_other_persons_local_time(demo_db: Path, api: Serve) -> None:
    book = tool_use("toolu_tz1", "create_event", {"with": "aiko", "start": "2026-08-31T14:00", "minutes": 30})
    api([Reply([book], "tool_use"), Reply([text("Booked.")])])
    result = invoke("ask", "Book Aiko Monday 3pm", "--db", str(demo_db), *TODAY, input="y\n")
    assert result.exit_code == 0, result.stderr
    assert (
        "Mon 2026-08-31 14:00-14:30 (Europe/London) for you and Aiko Tanaka (aiko); for Aiko Tanaka that is "
        "Mon 2026-08-31 09:00-09:30 America/New_York" in result.stderr
    )


def test_calendar_commands_speak_to_people_not_to_the_model(demo_db: Path) -> None:
    past = invoke(
        "calendar", "add-event", "--with", "priya", "--start", "2026-08-20T10:00", "--db", str(demo_db), *TODAY
    )
    assert past.exit_code == 1
    assert "is in the past" in past.stderr
    assert "find_free_slots" not in past.stderr
    assert "calendar show --person" in past.stderr
    busy = invoke(
        "calendar", "add-event", "--with", "priya", "--start", "2026-08-31T09:00", "--db", str(demo_db), *TODAY
    )
    twice = invoke(
        "calendar", "add-event", "--with", "priya", "--start", "2026-08-31T09:00", "--db", str(demo_db), *TODAY
    )
    assert busy.exit_code == 0
    assert twice.exit_code == 1
    assert "is not free" in twice.stderr
    assert "create_event" not in twice.stderr
    assert "find_free_slots" not in twice.stderr


def test_migration_m008_adds_the_turn_stop_to_a_database_made_before_it(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = db.connect(path, to="m007")
    conn.execute(
        sql("INSERT INTO conversations (model, max_tokens, system, tools, started_on) VALUES ('m', 1, 's', '[]', 'd')")
    )
    conn.execute(sql('INSERT INTO entries VALUES (1, 0, \'user\', \'[{"type":"text","text":"hi"}]\')'))
    conn.close()
    migrated = db.connect(path)
    assert db.revision(migrated) == HEAD
    assert conversations.load(migrated, 1)[0].last_stop is None
    assert listing.summaries(migrated)[0].state == "waiting"
    conversations.set_stop(migrated, 1, "bound")
    assert listing.summaries(migrated)[0].state == "stopped"
    with pytest.raises(IntegrityError):
        migrated.execute(sql("UPDATE conversations SET last_stop = 'nonsense'"))


def test_ask_json_when_the_api_is_unavailable_still_prints_one_object(demo_db: Path, api: Serve) -> None:
    import json

    overloaded = Reply(status=529, error_type="overloaded_error", error_message="Overloaded")
    api([overloaded] * 3)
    result = invoke("ask", "find", "--json", "--db", str(demo_db), *TODAY)
    assert result.exit_code == 5
    record = json.loads(result.stdout)
    assert record["outcome"] == "error"
    assert record["exit_code"] == 5
    assert "unavailable" in record["exit_reason"]
    assert record["conversation"] == 1
    assert record["tool_calls"] == []


# --- an outside tester's bad input: each a clear line and an exit code, never "internal error" ----------

HUGE = "99999999999999999999999"  # past SQLite's largest INTEGER


@pytest.mark.parametrize(
    "args",
    [
        ["conversations", "show", HUGE],
        ["conversations", "delete", HUGE],
        ["conversations", "repair", HUGE],
        ["resume", HUGE],
        ["wait", HUGE],
        ["approve", HUGE],
        ["decline", HUGE],
        ["view", HUGE],
        ["calendar", "cancel", HUGE],
        ["ask", "--cid", HUGE, "hi"],
        ["submit", "--cid", HUGE, "hi"],
    ],
)
def test_an_id_too_large_for_the_database_is_a_usage_error_naming_the_range(demo_db: Path, args: list[str]) -> None:
    result = invoke(*args, "--db", str(demo_db))
    assert result.exit_code == 2
    assert "is not an id: an id is a whole number from 1 to 9223372036854775807" in result.stderr
    assert "internal error" not in result.stderr
    assert rows(demo_db, "SELECT COUNT(*) FROM events") == [(28,)]


def into_a_closed_pipe(args: list[str]) -> tuple[int, str]:
    """The real CLI, its stdout a pipe whose reader has already gone (as `| head -1` leaves it once it has its
    line): the exit code and what it wrote to stderr."""
    import os
    import subprocess
    import sys

    reader, writer = os.pipe()
    os.close(reader)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))}
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from scheduler_agent.cli import main; main()", *args],
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            env=clean,
            timeout=60,
        )
    finally:
        os.close(writer)
    return done.returncode, done.stderr


@pytest.mark.parametrize("command", ["calendar show --week 2026-08-24", "conversations list", "lint"])
def test_a_closed_pipe_ends_the_command_quietly(demo_db: Path, tmp_path: Path, command: str) -> None:
    messages = tmp_path / "messages.json"
    messages.write_text('[{"role": "user", "content": "hi"}, {"role": "user", "content": "again"}]')
    args = command.split() + ([str(messages)] if command == "lint" else ["--db", str(demo_db)])
    code, stderr = into_a_closed_pipe(args)
    assert stderr == ""
    assert code == 1


def damage(path: Path, offset: int, size: int = 4096) -> bytes:
    """Overwrite `size` bytes of the file at `offset` (as a bad disk or a cut copy would); the file's bytes after."""
    with path.open("r+b") as file:
        file.seek(offset)
        file.write(bytes(range(256)) * (size // 256))
    return path.read_bytes()


@pytest.mark.parametrize("offset", [20480], ids=["malformed in the middle"])  # at 0: not a database (issue 33)
def test_a_damaged_database_is_one_line_that_says_so_and_what_to_do(demo_db: Path, offset: int) -> None:
    before = damage(demo_db, offset)
    result = invoke("calendar", "show", "--db", str(demo_db), "--week", "2026-08-24")
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert f"Error: the database file {demo_db} is damaged (" in result.stderr
    assert f"restore a copy you kept, or save what can be read with `sqlite3 {demo_db} .recover" in result.stderr
    assert "internal error" not in result.stderr
    assert demo_db.read_bytes() == before


def test_a_bugs_traceback_never_follows_a_link_planted_in_the_temporary_folder(
    demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import re

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in the listing")

    temporary, victim = tmp_path / "tmp", tmp_path / "victim.txt"
    temporary.mkdir()
    victim.write_text("someone else's file\n")
    (temporary / "last-error.txt").symlink_to(victim)
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "a-file" / "share"))  # the data folder cannot be made
    monkeypatch.setenv("TMPDIR", str(temporary))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    monkeypatch.setattr(listing, "summaries", broken)
    result = invoke("conversations", "list", "--db", str(demo_db))
    assert result.exit_code == 1
    assert "internal error (RuntimeError: a bug in the listing)" in result.stderr
    assert victim.read_text() == "someone else's file\n"
    found = re.search(r"with the traceback in (\S+) \(", result.stderr)
    assert found is not None
    written = Path(found.group(1))
    assert written.parent == temporary
    assert not written.is_symlink()
    assert written.stat().st_mode & 0o777 == 0o600
    assert "RuntimeError: a bug in the listing" in written.read_text()


@pytest.mark.parametrize("command", ["view", "replay"])
@pytest.mark.parametrize("name", ["deep.json", "deep.yaml"])
def test_view_and_replay_of_a_file_nested_too_deep_is_one_line(tmp_path: Path, command: str, name: str) -> None:
    path = tmp_path / name
    path.write_text("[" * 10_000 + "]" * 10_000)
    result = invoke(command, str(path))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {path} is too deeply nested to be a message list (")
    assert result.stderr.count("\n") == 1


def test_replay_of_a_file_that_is_not_utf8_says_it_cannot_read_it(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_bytes(b"metadata: \xe9\xff\n" * 100)
    result = invoke("replay", str(path))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: Cannot read cassette {path}: 'utf-8' codec can't decode byte 0xe9")
    assert result.stderr.count("\n") == 1


def piped(args: list[str], data: bytes, **env: str) -> tuple[int, str]:
    """The real CLI in a new process with `data` on stdin (and a key for a server nobody listens on)."""
    import os
    import subprocess
    import sys

    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))}
    clean |= {"ANTHROPIC_API_KEY": "sk-ant-fake-not-real", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", **env}
    done = subprocess.run(
        [sys.executable, "-c", "from scheduler_agent.cli import main; main()", *args],
        input=data,
        capture_output=True,
        env=clean,
        timeout=60,
    )
    return done.returncode, done.stderr.decode()


@pytest.mark.parametrize("decoding", ["utf-8:strict", "utf-8:surrogateescape"])  # how this Python reads stdin
@pytest.mark.parametrize(
    ("command", "source"), [(["ask", "-"], "the text on standard input"), (["chat"], "the line typed")]
)
def test_text_piped_in_that_is_not_utf8_is_refused_before_anything_is_stored(
    demo_db: Path, command: list[str], source: str, decoding: str
) -> None:
    code, stderr = piped([*command, "--db", str(demo_db)], b"caf\xe9 with Priya\n", PYTHONIOENCODING=decoding)
    assert code == 1
    assert stderr.splitlines()[-1] == (
        f"Error: {source} is not valid UTF-8 text (byte 0xe9 at character 4): give it as UTF-8 (e.g. `iconv -t utf-8`)"
    )
    assert "internal error" not in stderr
    assert rows(demo_db, "SELECT COUNT(*) FROM conversations") == [(0,)]


@pytest.mark.parametrize(
    "args",
    [
        ["ask", "caf\udce9"],
        ["calendar", "add-person", "zz", "--name", "caf\udce9", "--tz", "UTC", "--hours", "09:00-17:00"],
    ],
)
def test_an_argument_that_is_not_utf8_is_a_usage_error_naming_it(demo_db: Path, args: list[str]) -> None:
    result = invoke(*args, "--db", str(demo_db))
    assert result.exit_code == 2
    assert "not valid UTF-8 text (byte 0xe9 at character 4): give it as UTF-8" in result.stderr
    assert rows(demo_db, "SELECT COUNT(*) FROM conversations") == [(0,)]
    assert rows(demo_db, "SELECT COUNT(*) FROM people WHERE key = 'zz'") == [(0,)]


# --- an outside tester's report: what a person names as an output, or a mistyped --db, loses nothing -----

CASSETTE = Path(__file__).parents[1] / "cassettes" / "no_mornings.yaml"


def error_lines(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [line for line in result.stderr.splitlines() if line.strip()]


def events_in(path: Path) -> int:
    return int(rows(path, "SELECT count(*) FROM events")[0][0])


@pytest.mark.parametrize("link", ["itself", "symlink", "hard link"])
def test_view_refuses_to_write_its_page_over_the_cassette_it_reads(tmp_path: Path, link: str) -> None:
    source = tmp_path / "n.yaml"
    source.write_bytes(CASSETTE.read_bytes())
    output = tmp_path / "out.yaml"
    if link == "itself":
        output = source
    elif link == "symlink":
        output.symlink_to(source)
    else:
        output.hardlink_to(source)
    result = invoke("view", str(source), "-o", str(output), "--db", str(tmp_path / "none.db"))
    assert result.exit_code == 1, result.output
    assert error_lines(result) == [
        f"Error: -o {output} is the input SOURCE ({source}): writing it would lose it; give another file"
    ]
    assert source.read_bytes() == CASSETTE.read_bytes()
    assert not (tmp_path / "none.db").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["view", str(CASSETTE), "-o", "{db}"],
        ["calendar", "export", "--out", "{db}"],
        ["conversations", "show", "1", "--html", "{db}"],
        ["ask", "hi", "--record", "{db}"],
        ["ask", "hi", "--dump-array-file", "{db}"],
    ],
)
def test_an_output_that_is_the_database_in_use_is_refused_and_the_calendar_kept(
    demo_db: Path, api: Serve, args: list[str]
) -> None:
    api([Reply([text("ok")])])
    before = demo_db.read_bytes()
    events = events_in(demo_db)
    result = invoke(*(arg.format(db=demo_db) for arg in args), "--db", str(demo_db))
    assert result.exit_code == 1, result.output
    [line] = error_lines(result)
    assert f"{demo_db} is the database in use" in line or f"{demo_db} is an SQLite database" in line
    assert demo_db.read_bytes() == before
    assert events_in(demo_db) == events
    assert rows(demo_db, "SELECT count(*) FROM conversations") == [(0,)]


@pytest.mark.parametrize(
    "option",
    [
        ["view", str(CASSETTE), "--db", "{db}", "-o"],
        ["calendar", "export", "--db", "{db}", "--out"],
        ["demo", "--html"],
        ["demo", "--dump-array-file"],
    ],
)
def test_an_output_that_is_another_sqlite_database_is_refused(demo_db: Path, tmp_path: Path, option: list[str]) -> None:
    other = tmp_path / "other.db"
    other.write_bytes(demo_db.read_bytes())
    result = invoke(*(arg.format(db=demo_db) for arg in option), str(other))
    assert result.exit_code == 1, result.output
    assert error_lines(result) == [
        f"Error: {option[-1]} {other} is an SQLite database: writing it would lose it; give another file"
    ]
    assert other.read_bytes() == demo_db.read_bytes()


def test_an_ordinary_existing_file_is_still_overwritten(demo_db: Path, tmp_path: Path) -> None:
    page, ics = tmp_path / "old.html", tmp_path / "old.ics"
    page.write_text("old")
    ics.write_text("old")
    assert invoke("view", str(CASSETTE), "-o", str(page), "--db", str(demo_db)).exit_code == 0
    assert invoke("calendar", "export", "--out", str(ics), "--db", str(demo_db)).exit_code == 0
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert ics.read_text().startswith("BEGIN:VCALENDAR")


@pytest.mark.parametrize(
    "args",
    [
        ["demo", "--dump-array-file", "{dir}"],
        ["demo", "--html", "{dir}"],
        ["view", str(CASSETTE), "-o", "{dir}"],
        ["calendar", "export", "--out", "{dir}", "--db", "{db}"],
        ["ask", "hi", "--dump-array-file", "{dir}", "--db", "{db}"],
        ["ask", "hi", "--record", "{dir}", "--db", "{db}"],
    ],
)
def test_a_folder_given_as_an_output_file_is_a_usage_error_before_anything_runs(
    demo_db: Path, tmp_path: Path, api: Serve, args: list[str]
) -> None:
    server = api([Reply([text("ok")])])
    folder = tmp_path / "folder"
    folder.mkdir()
    result = invoke(*(arg.format(dir=folder, db=demo_db) for arg in args))
    assert result.exit_code == 2, result.output
    [line] = error_lines(result)
    assert line.startswith("Error: Invalid value for -") and f"{folder} is a folder: give a file to write" in line
    assert result.stdout == ""
    assert server.received == []
    assert rows(demo_db, "SELECT count(*) FROM conversations") == [(0,)]
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        ["view", str(CASSETTE), "--db", "{db}", "-o"],
        ["demo", "--html"],
        ["calendar", "export", "--db", "{db}", "--out"],
    ],
)
def test_an_output_in_a_missing_folder_is_refused_and_no_folder_is_made(
    demo_db: Path, tmp_path: Path, args: list[str]
) -> None:
    missing = tmp_path / "no" / "such"
    result = invoke(*(arg.format(db=demo_db) for arg in args), str(missing / "o.html"))
    assert result.exit_code == 1, result.output
    [line] = error_lines(result)
    assert f"the folder {missing} does not exist" in line
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["calendar", "cancel", "1"],
        ["calendar", "export"],
        ["calendar", "feeds"],
        ["calendar", "backends"],
        ["calendar", "prefs", "list"],
        ["calendar", "prefs", "remove", "1"],
        ["calendar", "remove-person", "priya"],
        ["calendar", "edit-person", "priya", "--name", "P"],
        ["calendar", "add-event", "--with", "priya", "--start", "2026-08-31T10:00"],
        ["calendar", "subscribe", "http://127.0.0.1:9/a.ics", "--person", "you"],
        ["calendar", "connect", "--list"],
        ["conversations", "delete", "1"],
        ["conversations", "repair", "1"],
        ["wait", "1"],
        ["approve", "1"],
        ["decline", "1"],
        ["submit", "hi"],
    ],
)
def test_a_mistyped_db_is_refused_and_not_created_by_a_command_that_needs_a_calendar(
    tmp_path: Path, args: list[str]
) -> None:
    typo = tmp_path / "typo.db"
    result = invoke(*args, "--db", str(typo))
    assert result.exit_code == 1, result.output
    [line] = error_lines(result)
    assert line.startswith(f"Error: no database at {typo}: check the --db path"), line
    assert list(tmp_path.glob("typo*")) == []


@pytest.mark.parametrize(
    "args",
    [
        ["calendar", "seed-demo"],
        ["calendar", "set-owner", "--name", "Jordan", "--tz", "UTC", "--hours", "09:00-17:00"],
        ["calendar", "add-person", "priya", "--name", "Priya", "--tz", "UTC", "--hours", "09:00-17:00"],
        ["calendar", "prefs", "add", "No meetings before 10am"],
    ],
)
def test_the_commands_that_start_a_calendar_still_create_the_file(tmp_path: Path, args: list[str]) -> None:
    new = tmp_path / "new.db"
    result = invoke(*args, "--db", str(new))
    assert result.exit_code == 0, result.output
    assert new.is_file()


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--from", "0001-01-01T00:00"),
        ("--from", "0999-12-31T00:00"),
        ("--from", "9999-12-31T00:00"),
        ("--to", "9999-12-31T00:00"),
    ],
)
def test_show_json_refuses_a_from_or_to_at_the_ends_of_the_calendar(demo_db: Path, option: str, value: str) -> None:
    start = [] if option == "--from" else ["--from", "2026-08-31T00:00"]
    result = invoke("calendar", "show", "--json", *start, option, value, "--db", str(demo_db))
    assert result.exit_code == 1, result.output
    assert error_lines(result) == [
        f"Error: {option} {value!r} is outside the calendar: give a date in the years 1000 to 9998"
    ]


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["ask", "hi", "--timeout", "nan"], {}),
        (["ask", "hi"], {"SCHEDULER_AGENT_TIMEOUT": "nan"}),
        (["ask", "hi", "--tool-deadline", "inf"], {}),
        (["worker", "--timeout", "nan"], {}),
    ],
)
def test_a_number_of_seconds_that_is_not_finite_is_a_usage_error(
    demo_db: Path, args: list[str], env: dict[str, str]
) -> None:
    # Click's FloatRange let `nan` past its bound: `ask` then failed at once, "no whole reply within nan s" (exit 5)
    loopback = {"ANTHROPIC_API_KEY": "sk-ant-not-a-key", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}  # never out
    result = runner.invoke(app, [*args, "--db", str(demo_db)], env={**loopback, **env})
    assert result.exit_code == 2, result.output
    assert "is not a number of seconds: give one of at least" in result.stderr
    assert rows(demo_db, "SELECT count(*) FROM conversations") == [(0,)]  # nothing ran


HIDE_TEMPORALIO = (
    "import sys; sys.modules['temporalio'] = None; "
    "from scheduler_agent.cli import main; sys.argv[0] = 'scheduler-agent'; main()"
)


@pytest.mark.parametrize("args", [["worker"], ["submit", "hi"], ["wait", "1"]])
def test_a_worker_command_without_temporalio_names_the_extra_in_one_line(tmp_path: Path, args: list[str]) -> None:
    """`temporalio` is an extra: a command that needs it, run without it, names the extra (no "internal error")."""
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path)}
    command = [sys.executable, "-c", HIDE_TEMPORALIO, *args, "--db", str(tmp_path / "a.db")]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1
    wanted = "this command needs temporalio, which is not installed: pip install 'scheduler-agent[temporal]'"
    assert done.stderr == f"Error: {wanted}\n"
