"""What a new user hit on a fresh clone (issue 33), each reproduced through the CLI as a person runs it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import rows

from scheduler_agent.cli import app
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

runner = CliRunner()
Serve = Callable[..., ScriptedServer]
TODAY = ["--today", "2026-08-27T09:00"]
BOOK = tool_use("toolu_nu_1", "create_event", {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30})


def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), input=input)


# --- ask --json prints the object for every failure after the options are parsed ---------------------


def test_ask_json_without_credentials_prints_the_object(demo_db: Path) -> None:
    result = invoke("ask", "--json", "Book Priya", "--db", str(demo_db), *TODAY)
    assert result.exit_code == 1
    record = json.loads(result.stdout)
    assert record["outcome"] == "error"
    assert record["exit_code"] == 1
    assert "No Anthropic credentials" in record["exit_reason"]
    assert record["conversation"] is None
    assert result.stderr.count("\n") == 1  # and the edge's one line on stderr, as without --json
    assert "No Anthropic credentials" in result.stderr


def test_ask_json_with_a_usage_error_stays_clicks_line(demo_db: Path) -> None:
    result = invoke("ask", "--json", "-c", "--no-store", "Book Priya", "--db", str(demo_db), *TODAY)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "--no-store cannot continue" in result.stderr


# --- the approval question's line is ended before what follows it ------------------------------------


def test_the_end_of_input_at_the_approval_question_ends_its_line(demo_db: Path, api: Serve) -> None:
    api([Reply([BOOK], "tool_use"), Reply([text("Not booked.")])])
    result = invoke("ask", "book", "--db", str(demo_db), *TODAY, input="")
    assert result.exit_code == 0, result.stderr
    assert "Approve? [y]es / [n]o / no, <reason>: \n" in result.stderr
    assert "<reason>:   " not in result.stderr


def test_a_ctrl_c_at_the_approval_question_ends_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from scheduler_agent.cli.live import read_answer

    class Interrupted(io.StringIO):
        def readline(self, size: int | None = -1) -> str:
            raise KeyboardInterrupt

    err = io.StringIO()
    monkeypatch.setattr(sys, "stdin", Interrupted())
    monkeypatch.setattr(sys, "stderr", err)
    with pytest.raises(KeyboardInterrupt):
        read_answer("  Approve? ")
    assert err.getvalue() == "  Approve? \n"


# --- resume of a complete conversation: only the error ------------------------------------------------


def test_resume_of_a_complete_conversation_prints_only_the_error(demo_db: Path, api: Serve) -> None:
    api([Reply([text("Hello.")])])
    assert invoke("ask", "hi", "--db", str(demo_db), *TODAY).exit_code == 0
    result = invoke("resume", "1", "--db", str(demo_db))
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: Conversation 1 is complete: nothing to resume. Continue it with `scheduler-agent ask --cid 1 TEXT`.\n"
    )


# --- a text file as --db is not a SQLite database ----------------------------------------------------------


def test_a_text_file_as_the_database_is_said_not_to_be_one(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("shopping: milk, eggs, and a great deal more text than a header\n" * 20)
    result = invoke("calendar", "show", "--db", str(notes), "--week", "2026-08-24")
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert f"Error: the file {notes} is not a SQLite database (" in result.stderr
    assert "damaged" not in result.stderr
    assert ".recover" not in result.stderr


# --- lint: usage problems are exit 2, a clean list says so ---------------------------------------------


def test_lint_of_a_missing_file_is_a_usage_problem(tmp_path: Path) -> None:
    result = invoke("lint", str(tmp_path / "nothing.json"))
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: No file at")


def test_lint_of_a_file_that_is_not_json_is_a_usage_problem(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[not json\n")
    result = invoke("lint", str(path))
    assert result.exit_code == 2
    assert "is not valid JSON" in result.stderr


def test_lint_of_a_clean_list_prints_one_line(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "text", "text": "Hi."}]}]
    path.write_text(json.dumps(messages))
    result = invoke("lint", str(path))
    assert result.exit_code == 0
    assert result.stdout == f"{path}: ok (2 entries)\n"


def test_lint_of_a_list_with_errors_is_still_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text(json.dumps([{"role": "assistant", "content": "first"}]))
    assert invoke("lint", str(path)).exit_code == 1


# --- a context budget no request can keep to is refused at the start ---------------------------------


def test_a_context_budget_too_small_is_refused_naming_the_smallest(demo_db: Path, api: Serve) -> None:
    server = api([Reply([text("Monday 14:00.")])])
    result = invoke("ask", "Find Priya.", "--context-budget", "100", "--db", str(demo_db), *TODAY)
    assert result.exit_code == 2
    assert "--context-budget 100 is smaller than" in result.stderr
    assert server.received == []
    assert rows(demo_db, "SELECT count(*) FROM conversations") == [(0,)]
    smallest = result.stderr.split("give --context-budget ")[1].split()[0]
    works = invoke("ask", "Find Priya.", "--context-budget", smallest, "--db", str(demo_db), *TODAY)
    assert works.exit_code == 0, works.stderr
    assert len(server.received) == 1


def test_chat_refuses_a_context_budget_too_small_before_the_first_line(demo_db: Path, api: Serve) -> None:
    server = api([Reply([text("Hi.")])])
    result = invoke("chat", "--context-budget", "100", "--db", str(demo_db), *TODAY, input="hello\n")
    assert result.exit_code == 2
    assert "give --context-budget " in result.stderr
    assert server.received == []


# --- time zones are matched case-insensitively ------------------------------------------------------------


def test_a_time_zone_in_other_letters_is_taken_as_its_iana_name(demo_db: Path) -> None:
    result = invoke("calendar", "add-person", "sam", "--name", "Sam Roe", "--tz", "europe/london", "--db", str(demo_db))
    assert result.exit_code == 0, result.stderr
    assert rows(demo_db, "SELECT tz FROM people WHERE key = 'sam'") == [("Europe/London",)]


def test_a_misspelt_time_zone_is_refused_with_the_nearest_name(demo_db: Path) -> None:
    result = invoke("calendar", "add-person", "sam", "--name", "Sam Roe", "--tz", "Europe/Londn", "--db", str(demo_db))
    assert result.exit_code == 1
    assert "did you mean Europe/London?" in result.stderr


# --- edit-person lists the meetings the new hours leave outside -----------------------------------------


def test_narrowing_hours_lists_the_meetings_now_outside_them(demo_db: Path) -> None:
    result = invoke("calendar", "edit-person", "priya", "--hours", "10:00-17:00", "--db", str(demo_db), *TODAY)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == "Now outside priya's hours (in the next 8 weeks; nothing was moved):"
    assert any(line.endswith("Mon 2026-08-31 09:30-10:30 Weekly planning") for line in lines)
    assert any(line.endswith("Tue 2026-09-01 09:00-10:00 Sprint planning") for line in lines)
    assert not any("Design review" in line for line in lines)  # Thu 10:00-11:00: inside the new hours


def test_widening_hours_lists_nothing(demo_db: Path) -> None:
    result = invoke("calendar", "edit-person", "priya", "--hours", "08:00-18:00", "--db", str(demo_db), *TODAY)
    assert result.exit_code == 0, result.stderr
    assert "outside" not in result.stdout


# --- a password in a PostgreSQL URL is warned about, masked -----------------------------------------------


def test_a_password_in_the_db_url_is_warned_about_masked() -> None:
    result = invoke("db", "path", "--db", "postgresql://ada:s3cret@localhost/cal")
    assert "Warning: the --db URL holds a password (postgresql://ada:***@localhost/cal)" in result.stderr
    assert "PGPASSWORD or ~/.pgpass" in result.stderr
    assert "s3cret" not in result.stderr


def test_a_db_url_without_a_password_is_not_warned_about() -> None:
    result = invoke("db", "path", "--db", "postgresql://ada@localhost/cal")
    assert "Warning" not in result.stderr


# --- view -h says the real default name -----------------------------------------------------------------


def test_view_help_says_the_default_name_of_a_conversations_page() -> None:
    result = invoke("view", "-h")
    assert "conversation-ID.html" in " ".join(result.stdout.split())


# --- edit-person takes every option add-person takes --------------------------------------------------


def test_edit_person_takes_every_option_add_person_takes() -> None:
    add = {p.name for p in app.get_command(None, "calendar").get_command(None, "add-person").params}  # type: ignore
    edit = {p.name for p in app.get_command(None, "calendar").get_command(None, "edit-person").params}  # type: ignore
    assert add - edit == set()


def test_edit_person_sets_an_email(demo_db: Path) -> None:
    result = invoke("calendar", "edit-person", "priya", "--email", "priya@example.com", "--db", str(demo_db))
    assert result.exit_code == 0, result.stderr
    assert rows(demo_db, "SELECT email FROM person_contacts WHERE person_key = 'priya'") == [("priya@example.com",)]
