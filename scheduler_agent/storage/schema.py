"""The schema as SQLAlchemy `MetaData`: every table, column, key and index the migrations build, on either database.

The migrations (`storage/migrations/versions/`) build the schema; this module says what it is, in one place,
and `tests/test_schema.py` upgrades an empty database to the head revision on SQLite and on PostgreSQL and
asks Alembic's `compare_metadata` whether the two differ. A migration that changes the schema changes this
module in the same commit.

The dialects differ in four named types and one constraint, all here:

- `Int`: SQLite's INTEGER (64-bit there already), PostgreSQL's BIGINT.
- `Str`: TEXT; on PostgreSQL with `COLLATE "C"`, so text sorts byte-wise as in SQLite and ISO timestamps
  in text compare as times.
- `Moment`: a booked instant, TEXT on SQLite, TIMESTAMPTZ on PostgreSQL (a range needs a real time there).
- `utc_now()`: the `created_at` default, 'YYYY-MM-DDTHH:MM:SSZ' in UTC, written in each database's words.
- `booked_time`: an exclusion constraint on PostgreSQL (no double booking whatever races), a plain index
  on SQLite (where BEGIN IMMEDIATE serialises every check with its write).

A serial `id` on PostgreSQL also has a trigger (`sa_fill_id`, made by m001) that gives it SQLite's
behaviour: NULL takes the next id, an explicit id moves the sequence past it. Triggers and CHECK
constraints are not compared by Alembic; the migrations are their record.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
    literal_column,
    text,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnClause, FunctionElement
from sqlalchemy.types import TypeEngine

Int: TypeEngine[int] = BigInteger().with_variant(Integer(), "sqlite")
Str: TypeEngine[str] = Text().with_variant(postgresql.TEXT(collation="C"), "postgresql")
Moment: TypeEngine[Any] = Text().with_variant(postgresql.TIMESTAMP(timezone=True), "postgresql")


class utc_now(FunctionElement[str]):  # a SQL function's name, lower case as SQL writes it
    """Now, as text 'YYYY-MM-DDTHH:MM:SSZ' in UTC: the `created_at` default on either database."""

    type = Text()
    inherit_cache = True


@compiles(utc_now, "sqlite")
def _utc_now_sqlite(element: utc_now, compiler: Any, **kw: Any) -> str:
    return "(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))"


@compiles(utc_now, "postgresql")
def _utc_now_postgresql(element: utc_now, compiler: Any, **kw: Any) -> str:
    return "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"


metadata = MetaData()

SINGLE = text("rrule IS NULL AND rdates = ''")  # an event that does not repeat
LENGTH: ColumnClause[float] = literal_column(
    "(julianday(end_utc) - julianday(start_utc))"
)  # m035: julianday() on both databases


def _id() -> Column[int]:
    return Column("id", Int, primary_key=True, autoincrement=True)


def _now(name: str = "created_at") -> Column[str]:
    return Column(name, Str, nullable=False, server_default=utc_now())


def _text(
    name: str, *args: Any, default: str | None = None, nullable: bool = False, unique: bool | None = None
) -> Column[str]:
    server_default = None if default is None else text(f"'{default}'")
    return Column(name, Str, *args, nullable=nullable, server_default=server_default, unique=unique)


def _int(name: str, *args: Any, default: int | None = None, nullable: bool = False) -> Column[int]:
    server_default = None if default is None else text(str(default))
    return Column(name, Int, *args, nullable=nullable, server_default=server_default)


def _ref(name: str, target: str, on_delete: str | None = None, nullable: bool = False) -> Column[Any]:
    kind = Str if target == "people.key" else Int
    return Column(name, kind, ForeignKey(target, ondelete=on_delete), nullable=nullable)


people = Table(
    "people",
    metadata,
    Column("key", Str, CheckConstraint("key <> '' AND key = lower(key)"), primary_key=True),
    _text("name", CheckConstraint("name <> ''")),
    _text("tz"),
    _text("work_start"),
    _text("work_end", CheckConstraint("work_start < work_end")),
    _text("days", default=""),
    _text("days_off", default=""),
    _int("buffer_minutes", CheckConstraint("buffer_minutes BETWEEN 0 AND 120"), default=0),
    _text("lunch", default=""),
)

events = Table(
    "events",
    metadata,
    _id(),
    _text("title", CheckConstraint("title <> ''")),
    _text("start_utc"),
    _text("end_utc", CheckConstraint("start_utc < end_utc")),
    _now(),
    _text("tz", nullable=True),
    _int("all_day", CheckConstraint("all_day IN (0, 1)"), default=0),
    _text("rrule", nullable=True),
    _text("rdates", default=""),
    _text("exdates", default=""),
    Index(
        "events_repeating",
        "start_utc",
        sqlite_where=text("rrule IS NOT NULL OR rdates <> ''"),
        postgresql_where=text("rrule IS NOT NULL OR rdates <> ''"),
    ),
    Index("events_single_by_time", "start_utc", "end_utc", sqlite_where=SINGLE, postgresql_where=SINGLE),
    Index("events_single_by_length", LENGTH, sqlite_where=SINGLE, postgresql_where=SINGLE),
)

event_attendees = Table(
    "event_attendees",
    metadata,
    _ref("event_id", "events.id", "CASCADE"),
    _ref("person_key", "people.key"),
    PrimaryKeyConstraint("event_id", "person_key"),
    Index("event_attendees_by_person", "person_key", "event_id"),
)

bookings = Table(
    "bookings",
    metadata,
    Column("tool_use_id", Str, CheckConstraint("tool_use_id <> ''"), primary_key=True),
    _ref("event_id", "events.id", "SET NULL", nullable=True),
    _text("result"),
    _now(),
    _text("kind", CheckConstraint("kind IN ('create_event', 'move_event', 'cancel_event')"), default="create_event"),
    _text("input_hash", default=""),
)

conversations = Table(
    "conversations",
    metadata,
    _id(),
    _now(),
    _text("model"),
    _int("max_tokens"),
    _text("system"),
    _text("tools"),
    _text("started_on"),
    _text("clock_pin", nullable=True),
    _int("retries_exhausted", default=0),
    _int("tool_deadlines", default=0),
    _int("restarts", default=0),
    _int("stream", default=0),
    _text("last_stop", CheckConstraint("last_stop IN ('bound', 'model')"), nullable=True),
    _int("checked", CheckConstraint("checked >= 0"), default=0),
    _text("checked_rules", nullable=True),
    _text("options", default="{}"),
    _text("mcp_servers", default="{}"),  # m042: each MCP server's name and the tools it offered
)

entries = Table(
    "entries",
    metadata,
    _ref("conversation_id", "conversations.id", "CASCADE"),
    _int("position", CheckConstraint("position >= 0")),
    _text("role", CheckConstraint("role IN ('user', 'assistant')")),
    _text("content"),
    _int("size", CheckConstraint("size IS NULL OR size > 0"), nullable=True),
    PrimaryKeyConstraint("conversation_id", "position"),
)

approvals = Table(
    "approvals",
    metadata,
    Column("tool_use_id", Str, CheckConstraint("tool_use_id <> ''"), primary_key=True),
    _int("approved", CheckConstraint("approved IN (0, 1)")),
    _text("reason", default=""),
    _int("end_of_input", default=0),
    _now("answered_at"),
)

replies = Table(
    "replies",
    metadata,
    _ref("conversation_id", "conversations.id", "CASCADE"),
    _int("seq"),
    _int("position"),
    _int("iteration"),
    _text("model", default=""),
    _text("stop_reason", nullable=True),
    _text("usage", default="{}"),
    _int("request_bytes", default=0),
    _int("appended", default=1),
    _text("body", nullable=True),
    _now(),
    PrimaryKeyConstraint("conversation_id", "seq"),
)

leases = Table(
    "leases",
    metadata,
    Column("conversation_id", Int, ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True),
    _text("holder_host"),
    _int("holder_pid"),
    _text("since"),
    _text("expires"),
)

repairs = Table(
    "repairs",
    metadata,
    _ref("conversation_id", "conversations.id", "CASCADE"),
    _int("seq"),
    _text("changes"),
    _text("before"),
    _now("repaired_at"),
    PrimaryKeyConstraint("conversation_id", "seq"),
)

event_series = Table(
    "event_series",
    metadata,
    Column("event_id", Int, ForeignKey("events.id", ondelete="CASCADE"), primary_key=True),
    _text("components"),
    _text("version"),
    _text("zone"),
    _text("day_zone"),
    _text("expanded_from", nullable=True),
    _text("expanded_until", nullable=True),
    _text("far_from", nullable=True),
    _text("far_until", nullable=True),
)

occurrences = Table(
    "occurrences",
    metadata,
    _ref("event_id", "events.id", "CASCADE"),
    _text("start_utc"),
    _text("end_utc", CheckConstraint("start_utc < end_utc")),
    _text("title"),
    Index("occurrences_by_event", "event_id"),
    Index("occurrences_by_time_event", "start_utc", "end_utc", "event_id"),
    Index("occurrences_by_length", LENGTH),
)

feeds = Table(
    "feeds",
    metadata,
    _id(),
    _ref("person_key", "people.key"),
    _text("url", CheckConstraint("url <> ''")),
    _int("refresh_seconds", CheckConstraint("refresh_seconds > 0"), default=900),
    _text("etag", nullable=True),
    _text("last_modified", nullable=True),
    _text("fetched_at", nullable=True),
    _text("ok_at", nullable=True),
    _text("result", default="never fetched"),
    _now(),
    _int("allow_http", default=0),
    _int("allow_private", default=0),
    _text("skipped", default=""),
    UniqueConstraint("person_key", "url"),
)

event_sources = Table(
    "event_sources",
    metadata,
    Column("event_id", Int, ForeignKey("events.id", ondelete="CASCADE"), primary_key=True),
    _ref("person_key", "people.key"),
    _text("origin", default=""),
    _text("uid", CheckConstraint("uid <> ''")),
    _text("recurrence_id", default=""),
    UniqueConstraint("person_key", "origin", "uid", "recurrence_id"),
)

preferences = Table(
    "preferences",
    metadata,
    _id(),
    _text("text", CheckConstraint("text <> ''")),
    _text("rule", CheckConstraint("rule IN ('', 'not_before', 'not_after', 'no_days', 'max_per_day')"), default=""),
    _text("value", default=""),
    _now(),
)

caldav_connections = Table(
    "caldav_connections",
    metadata,
    Column("person_key", Str, ForeignKey("people.key", ondelete="CASCADE"), primary_key=True),
    _text("url", CheckConstraint("url <> ''")),
    _text("username", CheckConstraint("username <> ''")),
    _text("calendar_url", CheckConstraint("calendar_url <> ''")),
    _text("calendar_name", default=""),
    _text("password_source", CheckConstraint("password_source <> ''")),
    _text("email", nullable=True),
    _int("invites", CheckConstraint("invites IN (0, 1)"), default=1),
    _now(),
    _text("sync_token", nullable=True),  # m041: the replica (calendar/caldav/sync.py)
    _text("synced_at", nullable=True),
    _text("sync_failed", default=""),
    _int("scheduling", CheckConstraint("scheduling IN (0, 1)"), nullable=True),
)

caldav_events = Table(
    "caldav_events",
    metadata,
    _id(),
    _text("href", CheckConstraint("href <> ''"), unique=True),
    _text("uid"),
    _text("tool_use_id", nullable=True, unique=True),
    _text("etag", nullable=True),  # m041
    _ref("event_id", "events.id", "SET NULL", nullable=True),
    _text("organizer", nullable=True),
)

person_contacts = Table(
    "person_contacts",
    metadata,
    Column("person_key", Str, ForeignKey("people.key", ondelete="CASCADE"), primary_key=True),
    _text("email", CheckConstraint("email IS NULL OR email LIKE '%_@_%'"), nullable=True),
    _text("caldav_url", CheckConstraint("caldav_url IS NULL OR caldav_url LIKE 'http%://%'"), nullable=True),
)

caldav_bookings = Table(
    "caldav_bookings",
    metadata,
    Column("tool_use_id", Str, CheckConstraint("tool_use_id <> ''"), primary_key=True),
    _text("kind", CheckConstraint("kind IN ('create_event', 'move_event', 'cancel_event')")),
    _text("href", CheckConstraint("href <> ''")),
    _text("uid"),
    _text("etag", nullable=True),
    _ref("event_id", "caldav_events.id", nullable=True),
    _int("written", CheckConstraint("written IN (0, 1)"), default=0),
    _now(),
)

booked_time = Table(
    "booked_time",
    metadata,
    _ref("event_id", "events.id", "CASCADE"),
    _ref("person_key", "people.key", "CASCADE"),
    Column("start_utc", Moment, nullable=False),
    Column("end_utc", Moment, CheckConstraint("start_utc < end_utc"), nullable=False),
    PrimaryKeyConstraint("event_id", "person_key"),
    # What keeps a person from being booked twice: the one difference that is a constraint, not a type.
    postgresql.ExcludeConstraint(
        (literal_column("person_key"), "="),
        (literal_column("tstzrange(start_utc, end_utc)"), "&&"),
        name="booked_time_no_overlap",
        using="gist",
    ).ddl_if(dialect="postgresql"),
    Index("booked_time_by_person", "person_key", "start_utc").ddl_if(dialect="sqlite"),
)

pending_approvals = Table(
    "pending_approvals",
    metadata,
    Column("tool_use_id", Str, CheckConstraint("tool_use_id <> ''"), primary_key=True),
    _ref("conversation_id", "conversations.id", "CASCADE"),
    _text("name"),
    _text("summary"),
    _text("asked_at"),
    Index("pending_approvals_by_conversation", "conversation_id"),
)

calendar_identity = Table(
    "calendar_identity",
    metadata,
    Column("id", Int, CheckConstraint("id = 1"), primary_key=True, autoincrement=False),
    _text("token", CheckConstraint("token <> ''")),
)


def made_on(thing: Any, dialect: str) -> bool:
    """Whether `schema.py` makes `thing` (an index or constraint) on `dialect` (see its `ddl_if`)."""
    condition = getattr(thing, "_ddl_if", None)
    return condition is None or condition.dialect in (None, dialect)
