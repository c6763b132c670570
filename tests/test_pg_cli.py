"""The CLI with `--db postgresql://...` (and SCHEDULER_AGENT_DB): the same commands, a password never printed."""

from __future__ import annotations

from helpers import DEMO_TODAY, run_cli
from sqlalchemy import text as sql

from scheduler_agent.storage.db import open_db
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

BOOK = tool_use("toolu_c1", "create_event", {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30})


def test_seed_show_ask_and_list_on_a_postgresql_database(pg_url: str) -> None:
    seeded = run_cli(["calendar", "seed-demo", "--db", pg_url])
    assert seeded.returncode == 0, seeded.stderr
    assert "Demo calendar ready: Jordan Lee" in seeded.stdout
    shown = run_cli(
        ["calendar", "show", "--week", "2026-08-31", "--today", DEMO_TODAY], env={"SCHEDULER_AGENT_DB": pg_url}
    )
    assert shown.returncode == 0, shown.stderr
    assert "Hiring panel" in shown.stdout
    replies = [Reply([BOOK], "tool_use"), Reply([text("Booked Monday 14:00 with Priya.")])]
    with ScriptedServer(replies) as server:
        asked = run_cli(["ask", "Book Priya Monday 2pm", "--db", pg_url, "--today", DEMO_TODAY, "--yes"], server)
    assert asked.returncode == 0, asked.stderr
    assert "Booked Monday 14:00 with Priya." in asked.stdout
    conn = open_db(pg_url)
    assert [tuple(r) for r in conn.execute(sql("SELECT tool_use_id, kind FROM bookings"))] == [
        ("toolu_c1", "create_event")
    ]
    assert conn.execute(sql("SELECT count(*) FROM entries")).fetchone()[0] == 4
    conn.close()
    listed = run_cli(["conversations", "list", "--db", pg_url])
    assert listed.returncode == 0, listed.stderr
    assert "Book Priya Monday 2pm" in listed.stdout


def test_a_password_in_the_url_is_masked_in_db_path_and_in_errors() -> None:
    url = "postgresql://sam:s3cret@127.0.0.1:1/cal"  # nothing listens on port 1
    path = run_cli(["db", "path", "--db", url])
    assert path.returncode == 0
    assert path.stdout.strip() == "postgresql://sam:***@127.0.0.1:1/cal"
    failed = run_cli(["calendar", "people"], env={"SCHEDULER_AGENT_DB": url})
    assert failed.returncode != 0
    assert "s3cret" not in failed.stdout + failed.stderr
    assert "postgresql://sam:***@127.0.0.1:1/cal" in failed.stderr
    warning, error = failed.stderr.strip().splitlines()  # the password is warned about (issue 33), then the error
    assert warning.startswith("Warning: the --db URL holds a password (postgresql://sam:***@127.0.0.1:1/cal)")
    assert error.startswith("Error: ")
    assert "Traceback" not in failed.stderr
