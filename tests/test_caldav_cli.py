"""`calendar connect`, `calendar backends` and `calendar add-person --caldav` through the real CLI (a new
process) against a real Radicale; and that no password reaches any file or output."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from helpers import on_a_terminal, run_cli
from radicale_server import OWNER_USER, PRIYA_USER, RadicaleServer, calendar_url
from sqlalchemy import text as sql
from sqlalchemy.exc import IntegrityError

from scheduler_agent.calendar.caldav.writes import Writer
from scheduler_agent.storage.db import connect, revision
from scheduler_agent.storage.migrations import HEAD

NO_KEYRING = {"PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}  # never the machine's own keyring


def cli(db: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    result = run_cli(["calendar", *args, "--db", str(db)], env={**NO_KEYRING, **(env or {})})
    outputs.append(result.stdout + result.stderr)
    return result


outputs: list[str] = []  # every CLI run's stdout and stderr, for the credential test


def assert_one_line_error(result: subprocess.CompletedProcess[str], *parts: str) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    for part in parts:
        assert part in result.stderr


@pytest.fixture
def db(tmp_path: Path, radicale: RadicaleServer) -> Path:
    """Owner Jordan and Priya (her shared calendar on the server, an e-mail address), set up by the CLI."""
    (tmp_path / "data").mkdir()  # a path the person gives: its folder must exist (no parents are made)
    path = tmp_path / "data" / "cal.db"
    assert cli(path, "set-owner", "--name", "Jordan Lee", "--tz", "Europe/London").returncode == 0
    added = cli(
        path, "add-person", "priya", "--name", "Priya Raman", "--tz", "Europe/London",
        "--email", "priya@example.com", "--caldav", calendar_url(radicale, PRIYA_USER, "shared"),
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert "priya: e-mail priya@example.com, busy time from http://127.0.0.1" in added.stdout
    return path


def owner_env(radicale: RadicaleServer) -> dict[str, str]:
    return {"JORDAN_PASSWORD": radicale.users[OWNER_USER]}


Connect = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def connect_owner(db: Path, radicale: RadicaleServer) -> Connect:
    """`calendar connect caldav URL --user jordan --password-env JORDAN_PASSWORD *more`; the right password
    in that variable unless `env` is given."""

    def run(*more: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        args = ("connect", "caldav", radicale.url, "--user", OWNER_USER, "--password-env", "JORDAN_PASSWORD")
        return cli(db, *args, *more, env=owner_env(radicale) if env is None else env)

    return run


def test_connect_lists_chooses_and_backends_checks_each_server(
    db: Path, radicale: RadicaleServer, connect_owner: Connect
) -> None:
    env = owner_env(radicale)
    listed = connect_owner("--list")
    assert listed.returncode == 0, listed.stderr
    assert set(listed.stdout.splitlines()) == {
        f"Work  {calendar_url(radicale, OWNER_USER, 'work')}",
        f"Personal  {calendar_url(radicale, OWNER_USER, 'personal')}",
    }

    unchosen = connect_owner()
    assert_one_line_error(unchosen, "has 2 calendars", "'Work'", "choose one with --calendar NAME")

    connected = connect_owner("--calendar", "work", "--email", "jordan@example.com")
    assert connected.returncode == 0, connected.stderr
    assert connected.stdout.splitlines()[0] == (
        f"Connected: calendar 'Work' ({calendar_url(radicale, OWNER_USER, 'work')}) as jordan; the password comes "
        "from the environment variable JORDAN_PASSWORD and is never stored by scheduler-agent."
    )
    no_scheduling = "Your calendar server does not send invitations (no CalDAV scheduling): tell the attendees."
    assert f"Invitations: {no_scheduling}" in connected.stdout  # Radicale does no scheduling: asked, and said

    backends = cli(db, "backends", env=env)
    assert backends.returncode == 0, backends.stderr
    lines = backends.stdout.splitlines()
    assert lines[0].startswith("local   SQLite calendar")
    assert lines[0].endswith(": 0 event(s)")
    assert lines[1].startswith("caldav  your calendar 'Work' http://127.0.0.1")
    assert lines[1].endswith("(password from the environment variable JORDAN_PASSWORD)")
    assert lines[2].startswith("        Bookings: create_event, move_event and cancel_event write to the server")
    assert lines[3].startswith("        Local events: your 0 local event(s) stay in the local calendar")
    assert lines[4] == f"        Invitations: {no_scheduling}"  # as connect said it: the stored answer
    assert lines[5] == "        answers; synced now: 0 change(s)"
    assert re.fullmatch(r"        last synced [0-9] s ago \(\S+ \S+ UTC\)", lines[6])
    assert lines[7].startswith("caldav  priya: http://127.0.0.1")
    assert "answers; 0 busy interval(s)" in lines[7]

    again = cli(db, "connect", "--list", env=env)  # the stored connection
    assert again.returncode == 0
    assert "Work  " in again.stdout


def test_wrong_credentials_are_one_line_and_no_traceback(
    db: Path, radicale: RadicaleServer, connect_owner: Connect
) -> None:
    wrong = {"JORDAN_PASSWORD": "not-the-password"}
    result = connect_owner(env=wrong)
    assert_one_line_error(result, "refused the user name or password", "(401)", "calendar connect caldav URL")
    assert sqlite3.connect(db).execute("SELECT count(*) FROM caldav_connections").fetchone() == (0,)

    ok = connect_owner("--calendar", "Work")
    assert ok.returncode == 0, ok.stderr
    checked = cli(db, "backends", env=wrong)  # the password changed since
    assert checked.returncode == 1
    assert "Traceback" not in checked.stdout + checked.stderr
    assert "does not answer: the CalDAV server at 127.0.0.1" in checked.stdout
    assert "(401)" in checked.stdout
    unset = cli(db, "backends")
    assert "does not answer: the environment variable JORDAN_PASSWORD is not set" in unset.stdout


def test_the_server_down_is_one_line(db: Path, radicale: RadicaleServer, connect_owner: Connect) -> None:
    radicale.kill()
    result = connect_owner()
    assert_one_line_error(result, "cannot reach the CalDAV server", "is it running")


def test_the_password_from_netrc(db: Path, radicale: RadicaleServer) -> None:
    netrc = Path(os.environ["HOME"]) / ".netrc"
    netrc.write_text(f"machine 127.0.0.1 login {OWNER_USER} password {radicale.users[OWNER_USER]}\n", encoding="utf-8")
    netrc.chmod(0o600)
    result = cli(db, "connect", "caldav", radicale.url, "--user", OWNER_USER, "--calendar", "personal")
    assert result.returncode == 0, result.stderr
    assert "calendar 'Personal'" in result.stdout
    assert "the password comes from ~/.netrc" in result.stdout
    assert cli(db, "backends").returncode == 0


def test_no_password_source_and_no_terminal_says_how_to_give_one(db: Path, radicale: RadicaleServer) -> None:
    result = cli(db, "connect", "caldav", radicale.url, "--user", OWNER_USER)
    assert_one_line_error(result, "asked on a terminal and there is none", "--password-env VAR", "~/.netrc")


@pytest.mark.parametrize("url", ["notaurl", "dav.example.com/", "ftp://dav.example.com/", "https:///cal/"])
def test_connect_to_an_address_that_is_not_a_url_sends_nothing(db: Path, url: str) -> None:
    result = cli(db, "connect", "caldav", url, "--user", OWNER_USER, "--password-env", "JORDAN_PASSWORD")
    assert_one_line_error(result, f"CalDAV URL {url!r} is not an http(s) URL with a host", "https://dav.example.com/")
    assert "the CalDAV server at" not in result.stderr  # no server was asked, so none is blamed
    assert sqlite3.connect(db).execute("SELECT count(*) FROM caldav_connections").fetchone() == (0,)


def test_add_person_with_a_bad_address_adds_nothing(db: Path) -> None:
    result = cli(db, "add-person", "sam", "--name", "Sam Okafor", "--tz", "Europe/London", "--email", "not an address")
    assert_one_line_error(result, "is not one: give e.g. priya@example.com")
    assert sqlite3.connect(db).execute("SELECT count(*) FROM people WHERE key = 'sam'").fetchone() == (0,)
    bad_url = cli(db, "add-person", "sam", "--name", "Sam Okafor", "--tz", "Europe/London", "--caldav", "ftp://x/")
    assert_one_line_error(bad_url, "is not an http(s) URL")


def test_no_credential_reaches_any_file_or_output(
    db: Path, radicale: RadicaleServer, tmp_path: Path, connect_owner: Connect
) -> None:
    """A unique password: not in the database (with -wal and -shm), any file under HOME, or any run's output.
    (test_caldav_secrets.py does the same for a whole session: cassette, dump, chat history.)"""
    env = owner_env(radicale)
    connect_owner("--list")
    connect_owner("--calendar", "work")
    cli(db, "backends", env=env)
    cli(db, "backends", env={"JORDAN_PASSWORD": "not-the-password"})
    conn = connect(db)  # a booking, as the tools will make it, with the database open (so -wal and -shm exist)
    os.environ["JORDAN_PASSWORD"] = radicale.users[OWNER_USER]
    try:
        start = datetime.now(UTC).replace(microsecond=0) + timedelta(days=30)
        Writer.open(conn).create("toolu_secret", "Plan", start, start + timedelta(minutes=30), ["priya"])
    finally:
        del os.environ["JORDAN_PASSWORD"]
    files = [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
    assert all(path.exists() for path in files)
    secret = radicale.users[OWNER_USER].encode()
    for path in [*files, *Path(os.environ["HOME"]).rglob("*")]:
        if path.is_file():
            assert secret not in path.read_bytes(), path
    assert outputs
    assert all(radicale.users[OWNER_USER] not in text for text in outputs)
    assert conn.execute(sql("SELECT password_source FROM caldav_connections")).fetchone()[0] == "env:JORDAN_PASSWORD"
    conn.close()


def test_the_migrations_add_connections_and_contacts(tmp_path: Path) -> None:
    conn = connect(tmp_path / "fresh.db")
    assert revision(conn) == HEAD  # m017 and m018 among them
    contact_columns = {row[1] for row in conn.execute(sql("PRAGMA table_info(person_contacts)"))}
    assert contact_columns == {"person_key", "email", "caldav_url"}
    connections = {row[1] for row in conn.execute(sql("PRAGMA table_info(caldav_connections)"))}
    assert not any("password" in column and column != "password_source" for column in connections)
    with pytest.raises(IntegrityError):  # a connection needs the owner first
        conn.execute(
            sql(
                "INSERT INTO caldav_connections (person_key, url, username, calendar_url, password_source) "
                "VALUES ('you', 'http://x/', 'u', 'http://x/c/', 'env:X')"
            )
        )


def test_the_calendar_commands_start_without_the_caldav_library() -> None:
    code = (
        "import sys; from scheduler_agent.cli.app import app; print('caldav' in sys.modules, 'niquests' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["False", "False"], result.stderr


FILE_KEYRING = '''
import json, os
from keyring.backend import KeyringBackend

class FileKeyring(KeyringBackend):
    """A keyring for the test: a JSON file, standing in for the system keyring."""
    priority = 1
    path = os.environ["TEST_KEYRING_FILE"]

    def _load(self):
        return json.load(open(self.path)) if os.path.exists(self.path) else {}

    def get_password(self, service, username):
        return self._load().get(service + " " + username)

    def set_password(self, service, username, password):
        data = self._load()
        data[service + " " + username] = password
        json.dump(data, open(self.path, "w"))

    def delete_password(self, service, username):
        pass
'''


def test_a_password_typed_once_on_a_terminal_is_kept_in_the_keyring(
    db: Path, radicale: RadicaleServer, tmp_path: Path
) -> None:
    (tmp_path / "testkeyring.py").write_text(FILE_KEYRING, encoding="utf-8")
    keyring_file = tmp_path / "keyring.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))} | {
        "PYTHONPATH": str(tmp_path),
        "PYTHON_KEYRING_BACKEND": "testkeyring.FileKeyring",
        "TEST_KEYRING_FILE": str(keyring_file),
    }
    args = ["calendar", "connect", "caldav", radicale.url, "--user", OWNER_USER, "--calendar", "work", "--db", str(db)]
    code, screen = on_a_terminal(args, env, b"Password of", [radicale.users[OWNER_USER]])
    assert code == 0, screen
    assert f"Password of {OWNER_USER} on 127.0.0.1: " in screen
    assert "the password comes from the system keyring" in screen
    assert radicale.users[OWNER_USER] in keyring_file.read_text(encoding="utf-8")  # kept there, and only there
    for path in (db, db.with_name(db.name + "-wal")):
        assert not path.exists() or radicale.users[OWNER_USER].encode() not in path.read_bytes()

    checked = subprocess.run(  # later, without a terminal: read from the keyring, not asked again
        [sys.executable, "-c", "from scheduler_agent.cli import main; main()", "calendar", "backends", "--db", str(db)],
        env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, cwd="/",
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "password from the system keyring" in checked.stdout
    assert "answers; synced now: 0 change(s)" in checked.stdout
