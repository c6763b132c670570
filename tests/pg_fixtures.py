"""PostgreSQL for the tests (a pytest plugin, loaded by conftest.py): one real server on loopback for the
session, a fresh database for each test, dropped when the test ends.

The server (scheduler_agent/testing/postgres.py) is stopped and its folder removed when the session ends
(session_cleanup.py), not in the last test's teardown.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from session_cleanup import for_the_session

from scheduler_agent.testing.postgres import PostgresServer, ServerUnavailable


@pytest.fixture(scope="session")
def pg_server() -> PostgresServer:
    """PostgreSQL for the whole session. Skipped, with the reason, only when none can be started here;
    where CI installed it (CI=true), failing to start it fails the tests."""
    return for_the_session(
        lambda: PostgresServer().start(),
        ServerUnavailable,
        "the PostgreSQL tests need a server, which CI installs",
        "no PostgreSQL server can be started",
    )


@pytest.fixture
def pg_url(pg_server: PostgresServer) -> Iterator[str]:
    """The URL of a new, empty database on the session's server; dropped (WITH FORCE) after the test."""
    url = pg_server.new_database()
    yield url
    pg_server.drop_database(url)
