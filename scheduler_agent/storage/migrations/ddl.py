"""What a revision needs to write its SQL once for both databases: the few words that differ, by name.

A revision writes SQLite's SQL with `{int}`, `{text}`, `{id}`, `{now}` and `{like}` where PostgreSQL's
words differ, and `run` fills them in for the database being migrated (braces meant literally are doubled,
as in `str.format`). Where whole statements differ, the revision says `if postgresql():` beside them.
Nothing here parses SQL.
"""

from __future__ import annotations

from alembic import op

WORDS = {
    "sqlite": {
        "int": "INTEGER",
        "text": "TEXT",
        "id": "id INTEGER PRIMARY KEY",
        "now": "(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
        "like": "LIKE",
    },
    # 64-bit integers and byte-order text, as SQLite has; a serial id (see `serial_id`); now as the same text;
    # LIKE that ignores ASCII case, as SQLite's does.
    "postgresql": {
        "int": "BIGINT",
        "text": 'TEXT COLLATE "C"',
        "id": "id BIGSERIAL PRIMARY KEY",
        "now": "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')",
        "like": "ILIKE",
    },
}


def postgresql() -> bool:
    """Whether the database being migrated is PostgreSQL."""
    return bool(op.get_bind().dialect.name == "postgresql")


def run(*statements: str) -> None:
    """Run each statement, its `{word}`s filled in for this database (one statement per call)."""
    words = WORDS["postgresql" if postgresql() else "sqlite"]
    for statement in statements:
        op.execute(statement.format(**words))


def serial_id(*tables: str) -> None:
    """On PostgreSQL, give each table's serial `id` SQLite's behaviour (m001's `sa_fill_id`): NULL takes the
    next id, and an id given explicitly moves the sequence past it. Nothing to do on SQLite."""
    if postgresql():
        for table in tables:
            op.execute(
                f"CREATE TRIGGER {table}_fill_id BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION sa_fill_id()"
            )
