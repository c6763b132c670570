"""What the worker tests share: the demo calendar on each database (import `store` into a test module)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_agent.calendar.fixtures import seed_demo
from scheduler_agent.storage import db

Location = Path | str  # a SQLite file, or a PostgreSQL URL


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, demo_db: Path) -> Location:
    """The demo calendar on each database: the SQLite file, and a new PostgreSQL database (pgstore's fixture)."""
    if request.param == "sqlite":
        return demo_db
    url: str = request.getfixturevalue("pg_url")
    conn = db.open_db(url)
    seed_demo(conn)
    conn.close()
    return url
