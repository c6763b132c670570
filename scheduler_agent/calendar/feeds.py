"""Subscribed iCalendar feeds: a secret address fetched over HTTP, its events one person's busy time.

A feed is fetched with `If-None-Match`/`If-Modified-Since` (a 304 costs nothing) by `feed_fetch.fetch`, which
keeps it to the subscription's flags (`Policy`: https and public addresses unless allowed), one deadline and a
size cap. A good copy replaces that feed's events in one transaction
(keyed by UID, so event ids stay); a copy that cannot be fetched or read keeps the last good one, and
`staleness_note` tells the model how old that is. A secret feed address is a credential: `masked` is the
only form in which it is ever printed (`calendar feeds`, errors, dumps); it is stored in the database only.
`webcal://` is read as `https://`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import Connection, Row, text

from scheduler_agent.calendar.feed_addresses import FeedError, Policy, check_url
from scheduler_agent.calendar.people import get_owner
from scheduler_agent.calendar.types import Person, from_utc_text, person_from_row, to_utc_text
from scheduler_agent.storage.db import transaction
from scheduler_agent.storage.statement import Statement

DEFAULT_REFRESH = timedelta(minutes=15)
TIMEOUT_SECONDS = 10.0  # the whole fetch: resolving, connecting, every redirect, headers and body
TURN_SECONDS = 1.0  # what a live turn waits on its due feeds before going on with the kept copies
MAX_BYTES = 20_000_000  # decoded
STRICT = Policy()  # https to public addresses only: what a subscription allows without flags
_DURATION = re.compile(r"(\d+)\s*([smhd])", re.IGNORECASE)


@dataclass(frozen=True)
class Feed:
    id: int
    person_key: str
    url: str  # a credential: print `masked(url)`, never this
    refresh: timedelta
    etag: str | None
    last_modified: str | None
    fetched_at: datetime | None
    ok_at: datetime | None
    result: str
    events: int = 0
    policy: Policy = STRICT
    skipped: str = ""  # the last good copy's skipped events, one line each

    @property
    def shown(self) -> str:
        return masked(self.url)


def masked(url: str) -> str:
    """`https://calendar.example.com/…` (the host is kept; the path and query are the secret)."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    host = f"[{host}]" if ":" in host else host  # an IPv6 address, written as in a URL
    port = f":{parts.port}" if parts.port else ""
    return (
        f"{parts.scheme}://{host}{port}/…" if parts.path.strip("/") or parts.query else f"{parts.scheme}://{host}{port}"
    )


def normalised_url(url: str, policy: Policy = STRICT) -> str:
    """`webcal://` as `https://`; anything but http(s), a password, or what `policy` refuses is a FeedError."""
    text = url.strip()
    if text.lower().startswith("webcal://"):
        text = "https://" + text[len("webcal://") :]
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FeedError(
            f"{masked(text) if parts.hostname else 'that address'} is not a feed address: give the https:// or "
            "webcal:// address your calendar shows for its secret iCal link"
        )
    check_url(text, policy, "the feed's address")
    return text


def parse_duration(text: str) -> timedelta:
    """`15m`, `1h`, `2h30m`, `90s`, `1d` as a timedelta (at least one minute)."""
    cleaned = text.strip().lower()
    found = _DURATION.findall(cleaned)
    if not found or _DURATION.sub("", cleaned).strip():
        raise FeedError(f"--refresh {text!r} is not a duration: write it like 15m, 1h or 2h30m")
    unit = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    seconds = sum(int(number) * unit[letter] for number, letter in found)
    if seconds < 60:
        raise FeedError(f"--refresh {text!r} is under a minute: fetch a feed at most once a minute, e.g. 15m")
    return timedelta(seconds=seconds)


def plural(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def format_duration(length: timedelta) -> str:
    seconds = int(length.total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes = rest // 60
    return " ".join(part for part in (f"{hours}h" if hours else "", f"{minutes}m" if minutes else "") if part) or "0m"


# --- the feeds table --------------------------------------------------------------------------


def subscribe(
    conn: Connection, url: str, person: Person, refresh: timedelta = DEFAULT_REFRESH, policy: Policy = STRICT
) -> Feed:
    """Keep a feed of `person`'s busy time (or change its refresh age and flags when it is kept already).

    An address the flags refuse is a FeedError before anything is stored."""
    address = normalised_url(url, policy)
    with transaction(conn):
        conn.execute(
            text(
                "INSERT INTO feeds (person_key, url, refresh_seconds, allow_http, allow_private) VALUES (:key, "
                ":address, :refresh, :allow_http, :allow_private) "
                "ON CONFLICT (person_key, url) DO UPDATE SET refresh_seconds = excluded.refresh_seconds, "
                "allow_http = excluded.allow_http, allow_private = excluded.allow_private"
            ),
            {
                "key": person.key,
                "address": address,
                "refresh": int(refresh.total_seconds()),
                "allow_http": int(policy.allow_http),
                "allow_private": int(policy.allow_private),
            },
        )
    row = conn.execute(
        text("SELECT id FROM feeds WHERE person_key = :key AND url = :address"), {"key": person.key, "address": address}
    ).one()
    feed = get_feed(conn, row[0])
    assert feed is not None
    return feed


def unsubscribe(conn: Connection, feed_id: int) -> None:
    """Forget a feed and its events."""
    with transaction(conn):
        conn.execute(  # by (person, origin): the prefix of event_sources' unique index (m036)
            text(
                "DELETE FROM events WHERE id IN (SELECT event_id FROM event_sources "
                "WHERE person_key = (SELECT person_key FROM feeds WHERE id = :feed_id) AND origin = :origin)"
            ),
            {"feed_id": feed_id, "origin": origin(feed_id)},
        )
        conn.execute(text("DELETE FROM feeds WHERE id = :feed_id"), {"feed_id": feed_id})


def origin(feed_id: int) -> str:
    return f"feed:{feed_id}"


def list_feeds(conn: Connection, person_keys: list[str] | None = None) -> list[Feed]:
    rows = conn.execute(
        text(
            "SELECT f.*, (SELECT count(*) FROM event_sources s WHERE s.person_key = f.person_key "
            "AND s.origin = 'feed:' || f.id) AS events "
            "FROM feeds f ORDER BY f.id"
        )
    ).fetchall()
    feeds = [_feed(row) for row in rows]
    return feeds if person_keys is None else [feed for feed in feeds if feed.person_key in person_keys]


def get_feed(conn: Connection, feed_id: int) -> Feed | None:
    return next((feed for feed in list_feeds(conn) if feed.id == feed_id), None)


def _feed(row: Row[Any]) -> Feed:
    def moment(text: str | None) -> datetime | None:
        return None if text is None else from_utc_text(text)

    return Feed(
        row.id,
        row.person_key,
        row.url,
        timedelta(seconds=row.refresh_seconds),
        row.etag,
        row.last_modified,
        moment(row.fetched_at),
        moment(row.ok_at),
        row.result,
        row.events,
        Policy(allow_http=bool(row.allow_http), allow_private=bool(row.allow_private)),
        row.skipped,
    )


def _record(conn: Connection, feed: Feed, now: datetime, result: str, ok: bool, **headers: str | None) -> None:
    values: dict[str, Any] = {"fetched_at": to_utc_text(now), "result": result}
    if ok:
        values["ok_at"] = to_utc_text(now)
    values.update(headers)  # the column names are this module's own (etag, last_modified)
    sets = ", ".join(f"{column} = :{column}" for column in values)
    conn.execute(text(f"UPDATE feeds SET {sets} WHERE id = :id"), {**values, "id": feed.id})


# --- fetching ----------------------------------------------------------------------------------


def due(feed: Feed, now: datetime) -> bool:
    return feed.fetched_at is None or now - feed.fetched_at >= feed.refresh


def refresh(conn: Connection, feed: Feed, now: datetime | None = None, seconds: float | None = None) -> str:
    """Fetch `feed` now, within `seconds` in all, and store what it gives; return one line saying what happened
    (the URL masked). A failure is recorded and returned, never raised: the last good copy stays.
    """
    import httpcore2
    import httpx2

    from scheduler_agent.calendar.feed_fetch import Deadline, fetch

    moment = now or datetime.now(UTC)
    budget = TIMEOUT_SECONDS if seconds is None else seconds
    headers = {"Accept": "text/calendar, */*;q=0.5", "User-Agent": "scheduler-agent"}
    if feed.etag:
        headers["If-None-Match"] = feed.etag
    if feed.last_modified:
        headers["If-Modified-Since"] = feed.last_modified
    clock = Deadline(budget)
    try:
        got = fetch(feed.url, headers, feed.policy, budget, MAX_BYTES)
    except FeedError as exc:  # refused, too large, too many redirects: their text holds no path or query
        return _failed(conn, feed, moment, str(exc))
    except (httpx2.TimeoutException, httpcore2.TimeoutException):
        why = f"no complete answer after {clock.elapsed():.1f} s (the limit for the whole fetch: {budget:g} s)"
        return _failed(conn, feed, moment, why)
    except (httpx2.HTTPError, httpx2.InvalidURL, httpx2.StreamError) as exc:  # their text may hold the URL
        return _failed(conn, feed, moment, f"cannot be fetched ({type(exc).__name__})")
    if got.status == 304:
        with transaction(conn):
            _record(conn, feed, moment, "not modified (304)", ok=True)
        return f"feed {feed.id} ({feed.shown}) for {feed.person_key}: not modified"
    if got.status != 200:
        return _failed(conn, feed, moment, f"the server answered {got.status} {got.reason}")
    return _store(conn, feed, moment, got.body, got.etag, got.last_modified)


def _failed(conn: Connection, feed: Feed, now: datetime, why: str) -> str:
    kept = f"keeping the copy of {feed.ok_at:%Y-%m-%d %H:%M} UTC" if feed.ok_at else "no copy yet"
    result = f"failed: {why}"
    with transaction(conn):
        _record(conn, feed, now, result, ok=False)
    return f"feed {feed.id} ({feed.shown}) for {feed.person_key}: {result}; {kept}"


def _store(conn: Connection, feed: Feed, now: datetime, body: bytes, etag: str | None, modified: str | None) -> str:
    from scheduler_agent.calendar.ics import IcsError, decode, read_ics
    from scheduler_agent.calendar.imports import import_events

    owner = get_owner(conn)
    person = person_from_row(
        conn.execute(text("SELECT * FROM people WHERE key = :person_key"), {"person_key": feed.person_key}).one()
    )
    name = f"feed {feed.id}"
    try:
        read = read_ics(decode(body, name), name=name, owner=owner, person=person)
        with transaction(conn):
            counts = import_events(
                conn, person.key, read.events, read.dropped, origin=origin(feed.id), replace_all=True
            )
            skipped = f", {len(read.problems)} skipped" if read.problems else ""
            changes = f"{counts.new} new, {counts.updated} updated, {counts.removed} removed{skipped}"
            result = f"ok: {plural(len(read.events), 'event')} ({changes})"
            skips = "\n".join(f"Skipped {problem}" for problem in read.problems)
            _record(conn, feed, now, result, ok=True, etag=etag, last_modified=modified, skipped=skips)
    except IcsError as exc:
        return _failed(conn, feed, now, f"not a readable iCalendar file ({str(exc).replace(feed.url, feed.shown)})")
    return "\n".join([f"feed {feed.id} ({feed.shown}) for {feed.person_key}: {result}", *skips.splitlines()])


def refresh_for_turn(conn: Connection, now: datetime | None = None, seconds: float | None = None) -> str:
    """Refresh the due feeds within `seconds` in all (a live turn's short budget), then say in one line which
    copy of each the turn uses; '' when none was due. A feed not fetched in time keeps its last good copy."""
    moment = now or datetime.now(UTC)
    budget = TURN_SECONDS if seconds is None else seconds
    started = time.monotonic()
    used = []
    for feed in [feed for feed in list_feeds(conn) if due(feed, moment)]:
        refresh(conn, feed, moment, max(budget - (time.monotonic() - started), 0.05))
        after = get_feed(conn, feed.id) or feed
        if after.result.startswith("not modified"):
            used.append(f"feed {feed.id} ({feed.person_key}) its copy, unchanged on the server (checked now)")
            continue
        if not after.result.startswith("failed"):
            used.append(f"feed {feed.id} ({feed.person_key}) fetched now")
            continue
        copy = f"its copy of {after.ok_at:%Y-%m-%d %H:%M} UTC" if after.ok_at else "no copy (never fetched)"
        used.append(f"feed {feed.id} ({feed.person_key}) {copy}, as this refresh {after.result}")
    return f"This turn uses {'; '.join(used)}." if used else ""


# Only what the line needs: the feeds whose last fetch failed or that never got a good copy (a tool call reads it).
_STALE = Statement(
    "SELECT person_key, ok_at FROM feeds WHERE substr(result, 1, 6) = 'failed' OR ok_at IS NULL ORDER BY id"
)


def staleness_note(conn: Connection, person_keys: list[str], now: datetime) -> str:
    """A line for the model when a feed under these people's busy time failed its last fetch: how old it is."""
    notes = []
    for person_key, ok_at in _STALE.rows(conn):
        if person_key in person_keys:
            age = "never fetched" if ok_at is None else f"last fetched {_age(now - from_utc_text(ok_at))} ago"
            notes.append(f"{person_key}'s subscribed calendar could not be refreshed ({age})")
    if not notes:
        return ""
    return "Note: " + "; ".join(notes) + ": that busy time may be out of date."


def _age(length: timedelta) -> str:
    minutes = max(int(length.total_seconds() // 60), 0)
    if minutes < 120:
        return f"{minutes} min"
    if minutes < 48 * 60:
        return f"{minutes // 60} h"
    return f"{minutes // 1440} days"


__all__ = ["Feed", "FeedError", "masked", "refresh", "refresh_for_turn", "staleness_note", "subscribe"]
