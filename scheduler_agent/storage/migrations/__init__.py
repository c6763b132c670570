"""The schema's history: Alembic revisions (`versions/`, one file each), applied when a database is opened.

`HEAD` names the newest revision. Opening a database compares the revision it stores (`alembic_version`)
with `HEAD` in one query, and imports Alembic only when they differ: a new database, one made by an earlier
version, or one made before the store moved to Alembic (it records migration names in `_migrations`; the
newest name, `mNNN_...`, is the revision `mNNN`, stamped before the rest are applied). Migrations run in
one transaction, under an advisory lock on PostgreSQL and the write lock on SQLite (BEGIN IMMEDIATE), so two
processes opening one database at once never apply one twice. `docs/storage.md` says how to add one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy import Connection

    from scheduler_agent.storage.dialect import Location

HEAD = "m044"  # the newest revision in versions/ (tests/test_schema.py checks that they agree)
SCRIPT_LOCATION = "scheduler_agent.storage:migrations"  # a package resource: found from any folder
LOCK = 0x5C4ED01E  # PostgreSQL's advisory lock, held (transaction-scoped) while migrations are checked and run


def config() -> Config:
    """Alembic's configuration, with no .ini file: the revisions are found in the installed package."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    return config


def revisions() -> list[str]:
    """Every revision, oldest first."""
    from alembic.script import ScriptDirectory

    return [script.revision for script in reversed(list(ScriptDirectory.from_config(config()).walk_revisions()))]


def upgrade(location: Location, target: str = "head") -> None:
    """Bring the database at `location` (an existing SQLite file, or a PostgreSQL URL) to `target`.

    A database made before the store moved to Alembic is stamped first (`adopted`). InputError (one line)
    when the database was made by a newer version of scheduler-agent. A revision may leave lines for the person
    in the configuration's `notices` (m044 does): they are printed to stderr once the revisions are committed.
    """
    import sys
    from pathlib import Path

    from alembic import command
    from alembic.util import CommandError
    from sqlalchemy import text

    from scheduler_agent.agent.errors import InputError
    from scheduler_agent.storage.dialect import mask
    from scheduler_agent.storage.engine import postgresql_engine, sqlite_engine

    engine = sqlite_engine(location) if isinstance(location, Path) else postgresql_engine(location)
    settings = config()
    try:
        with engine.connect() as connection, connection.begin():
            if connection.dialect.name == "postgresql":
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK})
            _adopt(connection, settings)
            settings.attributes["connection"] = connection
            command.upgrade(settings, target)
    except CommandError as exc:  # a revision this version does not have: the database is newer than the code
        raise InputError(
            f"{mask(str(location))} was made by a newer version of scheduler-agent ({exc}); upgrade scheduler-agent"
        ) from None
    finally:
        engine.dispose()
    for line in settings.attributes.get("notices", []):  # what a revision had to say, once it is committed
        print(line, file=sys.stderr)


def _adopt(connection: Connection, settings: Config) -> None:
    """Stamp a database made before Alembic (it has `_migrations`, no `alembic_version`) with the revision of
    the newest migration it records, so that `upgrade` applies only the ones after it."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from sqlalchemy import inspect, text

    inspector = inspect(connection)
    if inspector.has_table("alembic_version") or not inspector.has_table("_migrations"):
        return
    recorded = [row[0] for row in connection.execute(text("SELECT name FROM _migrations"))]
    revision = adopted(recorded, revisions())
    if revision is not None:
        MigrationContext.configure(connection).stamp(ScriptDirectory.from_config(settings), revision)


def adopted(recorded: list[str], known: list[str]) -> str | None:
    """The revision a database that recorded the migration names `recorded` is at: the newest of an unbroken
    run from the first revision (`m012_series` is the revision `m012`). None when it recorded none.

    InputError when it recorded a migration this version does not know (a newer version made it), or a
    later one without an earlier one (no version of scheduler-agent made that).
    """
    from scheduler_agent.agent.errors import InputError

    numbers = {name.split("_", 1)[0] for name in recorded}
    unknown = sorted(numbers - set(known))
    if unknown:
        raise InputError(
            f"the database was made by a newer version of scheduler-agent (migration {unknown[0]}); "
            "upgrade scheduler-agent to open it"
        )
    at: str | None = None
    for revision in known:
        if revision not in numbers:
            break
        at = revision
    done = set(known[: known.index(at) + 1]) if at is not None else set()
    if numbers - done:
        raise InputError(f"the database records migration {sorted(numbers - done)[0]} without the ones before it")
    return at
