"""PostgreSQL for the tests (a pytest plugin, loaded by conftest.py): one real server on loopback for the
session, a fresh database for each test, dropped when the test ends.

The server (scheduler_agent/testing/postgres.py) is stopped and its folder removed when the session ends
(session_cleanup.py), not in the last test's teardown.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from session_cleanup import at_session_end

from scheduler_agent.testing.postgres import PostgresServer, ServerUnavailable


@pytest.fixture(scope="session")
def pg_server() -> PostgresServer:
    """PostgreSQL for the whole session. Skipped, with the reason, only when none can be started here;
    where CI installed it (CI=true), failing to start it fails the tests."""
    try:
        server = PostgresServer().start()
    except ServerUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the PostgreSQL tests need a server, which CI installs: {exc}")
        pytest.skip(f"no PostgreSQL server can be started: {exc}")
    at_session_end(server.stop)
    return server


@pytest.fixture
def pg_url(pg_server: PostgresServer) -> Iterator[str]:
    """The URL of a new, empty database on the session's server; dropped (WITH FORCE) after the test."""
    url = pg_server.new_database()
    yield url
    pg_server.drop_database(url)
