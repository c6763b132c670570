"""The schema is written once: the migrations build exactly what `storage/schema.py` says, on both databases.

Alembic's `compare_metadata` reads the database an empty one becomes at the head revision and lists every
table, column, type, nullability, key, foreign key, index and unique constraint that differs from the
`MetaData`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine
from sqlalchemy import text as sql

from scheduler_agent.storage import db, migrations, schema
from scheduler_agent.storage.dialect import Location
from scheduler_agent.storage.engine import postgresql_engine, sqlite_engine

# SQLite cannot reflect an index on an expression (m035's lengths): Alembic says so, and compares the rest.
pytestmark = pytest.mark.filterwarnings("ignore:.*expression-based index")


def engine_for(location: Location) -> Engine:
    return sqlite_engine(location) if isinstance(location, Path) else postgresql_engine(location)


def on_this_database(dialect: str) -> Any:
    """Alembic's `include_object`: leave out what `schema.py` makes on the other database only (`ddl_if`)."""

    def include(thing: Any, name: str | None, kind: str, reflected: bool, compare_to: Any) -> bool:
        return reflected or schema.made_on(thing, dialect)

    return include


def sqlite_reflection_gaps(difference: Any) -> bool:
    """What SQLite's reflection cannot say, so Alembic reports it on every SQLite database: a primary key that
    is not declared NOT NULL reads as nullable, and the ON DELETE of a column's inline REFERENCES is not read
    (`test_sqlite_keeps_every_on_delete_the_metadata_names` checks those)."""
    if isinstance(difference, list):
        return all(
            change[0] == "modify_nullable"
            and schema.metadata.tables[change[2]].c[change[3]].primary_key
            and (change[5], change[6]) == (True, False)
            for change in difference
        )
    return difference[0] in ("add_fk", "remove_fk")


def differences(location: Location) -> list[Any]:
    db.open_db(location).close()
    engine = engine_for(location)
    with engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"include_object": on_this_database(connection.dialect.name)}
        )
        found = compare_metadata(context, schema.metadata)
        sqlite = connection.dialect.name == "sqlite"
    engine.dispose()
    return [difference for difference in found if not (sqlite and sqlite_reflection_gaps(difference))]


def test_an_empty_database_upgraded_to_the_head_is_the_metadata(any_db: Location) -> None:
    assert differences(any_db) == []


def test_a_column_the_metadata_does_not_have_is_found(any_db: Location) -> None:
    """The comparison can fail: a column added by hand, as a migration missing from `schema.py` would."""
    conn = db.open_db(any_db)
    conn.execute(sql("ALTER TABLE people ADD COLUMN nickname TEXT"))
    conn.close()
    found = differences(any_db)
    assert [(change[0], change[2], change[3].name) for change in found] == [("remove_column", "people", "nickname")]


def test_sqlite_keeps_every_on_delete_the_metadata_names(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "fk.db")
    for table in schema.metadata.sorted_tables:
        kept = {
            (row._mapping["from"], row._mapping["table"], row._mapping["on_delete"])
            for row in conn.execute(sql(f"PRAGMA foreign_key_list({table.name})"))
        }
        named = {(key.parent.name, key.column.table.name, key.ondelete or "NO ACTION") for key in table.foreign_keys}
        assert kept == named, table.name


def test_head_in_code_is_the_newest_revision() -> None:
    assert migrations.revisions()[-1] == migrations.HEAD


def test_an_up_to_date_database_stores_the_head(any_db: Location) -> None:
    conn = db.open_db(any_db)
    assert db.revision(conn) == migrations.HEAD
    conn.close()
    engine = engine_for(any_db)
    with engine.connect() as connection:
        assert connection.execute(sql("SELECT version_num FROM alembic_version")).scalar_one() == migrations.HEAD
    engine.dispose()


def test_opening_an_up_to_date_database_imports_no_alembic(tmp_path: Path) -> None:
    path = tmp_path / "current.db"
    db.connect(path).close()
    code = (
        "import sys; from pathlib import Path; from scheduler_agent.storage import db; "
        f"db.connect(Path({str(path)!r})).close(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
