"""Every test runs with no credentials and with every data path inside its own tmp dir."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import demo_clock
from radicale_server import OWNER_USER, RadicaleServer, ServerProcess, client_for, make_calendars, unique_passwords
from sqlalchemy import Connection

from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer

# What the run starts, it ends (session_cleanup.py); the PostgreSQL fixtures (pg_fixtures.py); pytester, for
# the test that runs a small session of its own to check that clean-up.
pytest_plugins = ["session_cleanup", "pg_fixtures", "temporal_fixtures", "pytester"]


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Clear ANTHROPIC_* and SCHEDULER_AGENT_*, point HOME and the SDK's config dir at tmp, run strict."""
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_")):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(home / ".config" / "anthropic"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("SCHEDULER_AGENT_STRICT", "1")  # any grammar violation raises
    # Subprocesses started with `python -c` import from their working directory first: from tmp, they get
    # the installed package (with its prompts and cassettes), not the source tree beside the tests.
    monkeypatch.chdir(tmp_path)
    yield tmp_path


@pytest.fixture
def demo_db(tmp_path: Path) -> Path:
    """A calendar file seeded with the demo data."""
    from scheduler_agent.calendar.fixtures import seed_demo
    from scheduler_agent.storage import db

    path = tmp_path / "cal.db"
    conn = db.connect(path)
    seed_demo(conn)
    conn.close()
    return path


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., ScriptedServer]]:
    """Point the SDK at a loopback server with scripted replies; a dummy key, never a real one."""
    servers: list[ScriptedServer] = []

    def serve(replies: list[Reply], **options: bool) -> ScriptedServer:
        server = ScriptedServer(replies, **options).__enter__()
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-dummy")
        servers.append(server)
        return server

    yield serve
    for server in servers:
        server.__exit__(None, None, None)


@pytest.fixture
def demo_conn(tmp_path: Path) -> Iterator[Connection]:
    """The demo calendar (a SQLite file in the test's folder), open; closed after the test."""
    from scheduler_agent.calendar.fixtures import seed_demo
    from scheduler_agent.storage.db import connect

    conn = connect(tmp_path / "calendar.db")
    seed_demo(conn)
    yield conn
    conn.close()


@pytest.fixture
def empty_conn(tmp_path: Path) -> Iterator[Connection]:
    """A new SQLite database, migrated, with nobody in it; closed after the test."""
    from scheduler_agent.storage.db import connect

    conn = connect(tmp_path / "empty.db")
    yield conn
    conn.close()


@pytest.fixture
def tools(demo_conn: Connection) -> CalendarTools:
    """The calendar tools on the demo calendar, the clock pinned at Thu 2026-08-27 09:00 London time."""
    return CalendarTools(demo_conn, demo_clock())


def _browser(javascript: bool) -> Iterator[Any]:
    """A headless chromium for the module; where CI installed it (CI=true), failing to start it fails the test."""
    from browser import BrowserUnavailable, start, stop

    try:
        driver = start(javascript=javascript)
    except BrowserUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the browser tests need chromium, which CI installs: {exc}")
        pytest.skip(f"no browser: {exc}")
    try:
        yield driver
    finally:
        stop(driver)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium with JavaScript on."""
    yield from _browser(javascript=True)


@pytest.fixture(scope="module")
def browser_without_js() -> Iterator[Any]:
    """Chromium with JavaScript off."""
    yield from _browser(javascript=False)


# --- CalDAV (issue 15): a real Radicale server on loopback ------------------------------------


@pytest.fixture
def radicale(tmp_path: Path) -> Iterator[RadicaleServer]:
    """Radicale on a free loopback port, users jordan (the owner) and priya with unique passwords, their
    calendars made (jordan: work, personal; priya: shared, readable by jordan, and private, not)."""
    with RadicaleServer(tmp_path / "radicale", unique_passwords()) as server:
        make_calendars(server)
        yield server


@pytest.fixture(params=["radicale", "xandikos"])
def dav_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProcess]:
    """Radicale (as `radicale`), then Xandikos with Jordan's 'work' calendar and a 'shared' one standing for
    Priya's (Xandikos serves one principal): `calendar_url(server, OWNER_USER, "work")` and
    `shared_url(server)` are the same on both."""
    if request.param == "radicale":
        yield request.getfixturevalue("radicale")
        return
    from xandikos_server import XandikosServer

    with XandikosServer(tmp_path / "xandikos", unique_passwords()) as server:
        principal = client_for(server, OWNER_USER).principal()  # type: ignore[arg-type, no-untyped-call]
        for cal_id in ("work", "shared"):
            principal.make_calendar(name=cal_id.capitalize(), cal_id=cal_id)
        yield server


# --- PostgreSQL (issue 16): pg_server and pg_url are in pg_fixtures.py ---------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def any_db(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where a database is, once for each kind: a SQLite file, and a PostgreSQL URL."""
    if request.param == "sqlite":
        return tmp_path / "any.db"
    url: str = request.getfixturevalue("pg_url")
    return url


@pytest.fixture
def any_conn(any_db: Path | str) -> Iterator[Connection]:
    """The demo calendar, open, on each database (as `demo_conn` is on SQLite)."""
    from scheduler_agent.calendar.fixtures import seed_demo
    from scheduler_agent.storage.db import open_db

    conn = open_db(any_db)
    seed_demo(conn)
    yield conn
    conn.close()


@pytest.fixture
def any_tools(any_conn: Connection) -> CalendarTools:
    """The calendar tools on the demo calendar on each database, the clock as for `tools`."""
    return CalendarTools(any_conn, demo_clock())
