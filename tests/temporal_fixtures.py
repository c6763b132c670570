"""Temporal for the tests (a pytest plugin, loaded by conftest.py): one real dev server on loopback for the
session (scheduler_agent/testing/temporal.py), stopped when the session ends (session_cleanup.py). Each test
uses a task queue of its own, so no test's worker runs another test's turns."""

from __future__ import annotations

import itertools
import os

import pytest
from session_cleanup import for_the_session

from scheduler_agent.testing.temporal import ServerUnavailable, TemporalServer

_queues = itertools.count(1)


@pytest.fixture(scope="session")
def temporal_server(tmp_path_factory: pytest.TempPathFactory) -> TemporalServer:
    """The Temporal dev server for the whole session; where CI installed it (CI=true), failing to start fails."""
    return for_the_session(
        lambda: TemporalServer(tmp_path_factory.mktemp("temporal")).start(),
        ServerUnavailable,
        "the Temporal tests need the dev server, which the test extra installs",
        "no Temporal dev server can be started",
    )


@pytest.fixture
def temporal(temporal_server: TemporalServer, monkeypatch: pytest.MonkeyPatch) -> TemporalServer:
    """The session's server, and a task queue of this test's own, both in the environment the CLI reads."""
    monkeypatch.setenv("SCHEDULER_AGENT_TEMPORAL", temporal_server.address)
    monkeypatch.setenv("SCHEDULER_AGENT_TASK_QUEUE", f"test-{os.getpid()}-{next(_queues)}")
    return temporal_server
