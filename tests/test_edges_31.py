"""Issue 31's edges: a damaged schema page, a read-only database, a stalled reply, each said in words a person
can act on (the refused key is in test_cli.py, beside the other API errors)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from scheduler_agent.api import waiting
from scheduler_agent.cli import app
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text

runner = CliRunner()
WEEK = ("--week", "2026-08-24")


def invoke(*args: str) -> Result:
    return runner.invoke(app, list(args))


def test_a_damaged_schema_page_is_a_damaged_file_not_a_bug(demo_db: Path) -> None:
    """SQLite's message quotes the damaged bytes; Python's sqlite3 cannot decode it and raised UnicodeDecodeError."""
    data = bytearray(demo_db.read_bytes())
    at = data.find(b"CREATE TABLE people")
    assert at > 0
    data[at + 7 : at + 12] = b"\xff\xfe\xfd\xfc\xfb"  # inside the schema's text, as a bad disk would leave it
    demo_db.write_bytes(bytes(data))
    result = invoke("calendar", "show", *WEEK, "--db", str(demo_db))
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert f"Error: the database file {demo_db} is damaged (malformed database schema (people)" in result.stderr
    assert f"`sqlite3 {demo_db} .recover | sqlite3 recovered.db`" in result.stderr
    assert "internal error" not in result.stderr


def immutable(path: Path, on: bool) -> bool:
    """`chattr +i`: a file even root may not write (the suite runs as root, where permissions do not bind)."""
    done = subprocess.run(["chattr", "+i" if on else "-i", str(path)], capture_output=True, check=False)
    return done.returncode == 0


def test_a_database_that_cannot_be_written_says_what_to_change(demo_db: Path) -> None:
    if os.geteuid() != 0 or not immutable(demo_db, True):
        pytest.skip("needs root and a file system with chattr +i, to make a file even root cannot write")
    try:
        result = invoke("calendar", "add-person", "zed", "--name", "Zed", "--tz", "UTC", "--db", str(demo_db))
    finally:
        immutable(demo_db, False)
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert f"Error: the database file {demo_db} cannot be written (attempt to write a readonly database)" in (
        result.stderr
    )
    assert f"let your user write both the file and its folder {demo_db.parent}" in result.stderr
    assert "or give another file with --db" in result.stderr
    assert "try again" not in result.stderr


@pytest.mark.timeout(30)
def test_a_stalled_reply_is_not_waited_on_in_silence(
    demo_db: Path, api: Callable[..., ScriptedServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(waiting, "STILL_WAITING_SECONDS", 0.4)
    api([Reply([text("Monday 9:00.")], stall=1.5)])  # the headers, then nothing for 1.5 s
    result = invoke("ask", "When is Priya free?", "--db", str(demo_db), "--today", "2026-08-27")
    assert result.exit_code == 0, result.stderr
    said = [line for line in result.stderr.splitlines() if line.startswith("still waiting for the model's reply")]
    assert len(said) >= 2  # again and again, while nothing comes
    assert said[0].endswith("at most 600 s: --timeout); Ctrl-C stops it, and the conversation stays as it was")
    assert result.stdout.strip() == "Monday 9:00."


def test_a_reply_that_comes_at_once_says_nothing_of_waiting(
    demo_db: Path, api: Callable[..., ScriptedServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(waiting, "STILL_WAITING_SECONDS", 0.4)
    api([Reply([text("Monday 9:00.")])])
    result = invoke("ask", "When is Priya free?", "--db", str(demo_db), "--today", "2026-08-27")
    assert result.exit_code == 0, result.stderr
    assert "still waiting" not in result.stderr
