"""Connecting to a CalDAV server: the stored connection, where its password comes from, and the errors.

The connection (server, user, calendar, where the password is read from) lives in the database; the
password never does. It is read each time from the environment variable named at `connect`
(`env:VAR`), from `~/.netrc` (`netrc`), from the system keyring (`keyring`, when the `keyring`
package is installed), or asked on the terminal (`ask`). Every failure a server can cause (down,
slow, 401/403/404/5xx, malformed data) becomes a `CalDAVError`: one line saying what to do.

The `caldav` library (and its HTTP client, niquests) is imported only here and in the modules beside it,
only when a CalDAV calendar is used.
"""

from __future__ import annotations

import getpass
import netrc
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sqlalchemy import Connection as Db
from sqlalchemy import text

from scheduler_agent.calendar.types import OWNER_KEY, SET_OWNER_HINT, CalendarError
from scheduler_agent.storage.db import transaction
from scheduler_agent.storage.statement import Statement

if TYPE_CHECKING:
    from caldav.davclient import DAVClient

REQUEST_DEADLINE_SECONDS = 10.0
"""The time one request to the server gets before it counts as not answering."""

KEYRING_SERVICE = "scheduler-agent-caldav"
CONNECT_HINT = "run `scheduler-agent calendar connect caldav URL --user NAME --password-env VAR`"
CONNECT_EXAMPLE_URL = "https://dav.example.com/"


class CalDAVError(CalendarError):
    """The CalDAV server could not be used; the message says why and what to do."""


@dataclass(frozen=True)
class Connection:
    """How to reach the owner's calendar. Never holds the password."""

    url: str
    username: str
    calendar_url: str
    calendar_name: str
    password_source: str  # 'env:VAR', 'netrc', 'keyring' or 'ask'
    email: str | None = None
    invites: bool = True

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or self.url


# --- stored connection ------------------------------------------------------------------------


def save_connection(conn: Db, connection: Connection) -> None:
    with transaction(conn):
        if (
            conn.execute(text("SELECT 1 FROM people WHERE key = :OWNER_KEY"), {"OWNER_KEY": OWNER_KEY}).fetchone()
            is None
        ):
            raise CalendarError(f"connect a calendar server after setting the owner: {SET_OWNER_HINT}")
        conn.execute(
            text(
                "INSERT INTO caldav_connections (person_key, url, username, calendar_url, calendar_name, "
                "password_source, email, invites) VALUES (:OWNER_KEY, :url, :username, :calendar_url, "
                ":calendar_name, :password_source, :email, :invites) ON CONFLICT (person_key) DO UPDATE "
                "SET url = excluded.url, username = excluded.username, calendar_url = excluded.calendar_url, "
                "calendar_name = excluded.calendar_name, password_source = excluded.password_source, "
                "email = excluded.email, invites = excluded.invites"
            ),
            {
                "OWNER_KEY": OWNER_KEY,
                "url": connection.url,
                "username": connection.username,
                "calendar_url": connection.calendar_url,
                "calendar_name": connection.calendar_name,
                "password_source": connection.password_source,
                "email": connection.email,
                "invites": int(connection.invites),
            },
        )


def load_connection(conn: Db) -> Connection | None:
    """The owner's CalDAV connection, or None when the calendar is the local SQLite one."""
    row = conn.execute(
        text("SELECT * FROM caldav_connections WHERE person_key = :OWNER_KEY"), {"OWNER_KEY": OWNER_KEY}
    ).fetchone()
    if row is None:
        return None
    return Connection(
        url=row.url,
        username=row.username,
        calendar_url=row.calendar_url,
        calendar_name=row.calendar_name,
        password_source=row.password_source,
        email=row.email,
        invites=bool(row.invites),
    )


@dataclass(frozen=True)
class Contact:
    key: str
    email: str | None
    caldav_url: str | None


def check_server_url(url: str, what_to_give: str) -> str:
    """`url` if it is an http(s) URL with a host, else CalendarError: nothing has been sent anywhere yet."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CalendarError(f"CalDAV URL {url!r} is not an http(s) URL with a host: {what_to_give}")
    return url


def set_contact(conn: Db, key: str, email: str | None, caldav_url: str | None) -> None:
    """Set a person's e-mail address and/or shared CalDAV calendar (None leaves a field as it is)."""
    if email is not None and ("@" not in email or any(c.isspace() for c in email)):
        raise CalendarError(f"e-mail address {email!r} is not one: give e.g. priya@example.com")
    if caldav_url is not None:
        check_server_url(caldav_url, "give the calendar's full URL")
    if caldav_url is not None and not caldav_url.endswith("/"):
        caldav_url += "/"
    with transaction(conn):
        if conn.execute(text("SELECT 1 FROM people WHERE key = :key"), {"key": key}).fetchone() is None:
            raise CalendarError(f"there is no person {key!r}: add them with `scheduler-agent calendar add-person`")
        conn.execute(
            text(
                "INSERT INTO person_contacts (person_key, email, caldav_url) VALUES (:key, :email, :caldav_url) "
                "ON CONFLICT (person_key) DO UPDATE SET email = coalesce(excluded.email, person_contacts.email), "
                "caldav_url = coalesce(excluded.caldav_url, person_contacts.caldav_url)"
            ),
            {"key": key, "email": email, "caldav_url": caldav_url},
        )


# Read before every read of a connected calendar (whose calendars are shared): on the driver (storage/statement.py).
_CONTACTS = Statement(
    "SELECT p.key, c.email, c.caldav_url FROM people p LEFT JOIN person_contacts c ON c.person_key = p.key"
)


def contacts(conn: Db) -> dict[str, Contact]:
    return {key: Contact(key, email, url) for key, email, url in _CONTACTS.rows(conn)}


# --- the password -----------------------------------------------------------------------------


def password_for(connection: Connection, ask: Callable[[str], str] | None = None) -> str:
    """The password, from where `connection.password_source` says; CalDAVError saying how to give it."""
    source = connection.password_source
    if source.startswith("env:"):
        variable = source[4:]
        value = os.environ.get(variable)
        if not value:
            raise CalDAVError(
                f"the environment variable {variable} is not set: export {variable} with the password "
                f"of {connection.username} on {connection.host}"
            )
        return value
    if source == "netrc":
        found = netrc_password(connection.host, connection.username)
        if found is None:
            raise CalDAVError(
                f"~/.netrc has no entry for machine {connection.host} login {connection.username}: add one, "
                f"or {CONNECT_HINT}"
            )
        return found
    if source == "keyring":
        found = keyring_password(connection)
        if found is None:
            raise CalDAVError(
                f"the system keyring has no password for {connection.username}@{connection.host}: {CONNECT_HINT}"
            )
        return found
    if source == "ask":
        return ask_password(connection, ask)
    raise CalDAVError(f"the stored password source {source!r} is unknown: {CONNECT_HINT}")


def netrc_password(host: str, username: str) -> str | None:
    try:
        entry = netrc.netrc().authenticators(host)
    except (FileNotFoundError, netrc.NetrcParseError, OSError):
        return None
    if entry is None or (entry[0] and entry[0] != username):
        return None
    return entry[2] or None


def _keyring() -> Any | None:
    try:
        import keyring  # optional: the system keyring, when installed
    except ImportError:
        return None
    return keyring


def keyring_password(connection: Connection) -> str | None:
    module = _keyring()
    if module is None:
        return None
    try:
        found = module.get_password(KEYRING_SERVICE, f"{connection.username}@{connection.url}")
    except Exception:  # no usable backend: same as no password there
        return None
    return found if isinstance(found, str) and found else None


def keep_in_keyring(connection: Connection, password: str) -> bool:
    """Store the password in the system keyring; False when there is no keyring to store it in."""
    module = _keyring()
    if module is None:
        return False
    try:
        module.set_password(KEYRING_SERVICE, f"{connection.username}@{connection.url}", password)
    except Exception:
        return False
    return keyring_password(connection) == password


def ask_password(connection: Connection, ask: Callable[[str], str] | None = None) -> str:
    if ask is None:
        if not sys.stdin.isatty():
            raise CalDAVError(
                f"the password of {connection.username} on {connection.host} is asked on a terminal and "
                f"there is none: {CONNECT_HINT} (or add it to ~/.netrc)"
            )
        ask = getpass.getpass
    value = ask(f"Password of {connection.username} on {connection.host}: ")
    if not value:
        raise CalDAVError("no password given: type the password, or give it with --password-env VAR")
    return value


# --- the client and its errors ----------------------------------------------------------------


def open_client(url: str, username: str, password: str, deadline_seconds: float) -> DAVClient:
    from caldav.davclient import DAVClient  # only when a CalDAV calendar is used

    client = DAVClient(
        url=url,
        username=username,
        password=password,
        timeout=deadline_seconds,  # type: ignore[arg-type]
        enable_rfc6764=False,
    )
    client.session.hooks["response"].append(_raise_server_failure)
    return client


class ServerFailed(Exception):
    """A 5xx answer, raised before the library tries to read its (HTML, or empty) body as XML."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(f"HTTP {status} {reason}".strip())
        self.status = status


def _raise_server_failure(response: Any, *args: Any, **kwargs: Any) -> Any:
    status = int(getattr(response, "status_code", 0) or 0)
    if status >= 500:
        raise ServerFailed(status, str(getattr(response, "reason", "") or ""))
    return response


@contextmanager
def server_errors(url: str, doing: str, deadline_seconds: float = REQUEST_DEADLINE_SECONDS) -> Iterator[None]:
    """Turn what the server or the network did into one CalDAVError line that says what to do."""
    import niquests
    from caldav.lib import error as dav

    host = urlsplit(url).netloc or url
    try:
        yield
    except dav.AuthorizationError as exc:
        if "403" in str(exc.reason) or "Forbidden" in str(exc.reason):
            raise CalDAVError(
                f"the CalDAV server at {host} refused access while {doing} (403 Forbidden): "
                "the user needs read access to that calendar; ask its owner to share it"
            ) from None
        raise CalDAVError(
            f"the CalDAV server at {host} refused the user name or password while {doing} (401): check them, "
            f"then {CONNECT_HINT}"
        ) from None
    except dav.NotFoundError:
        raise CalDAVError(
            f"the CalDAV server at {host} has nothing at {url} (404) while {doing}: check the calendar's URL "
            "(`scheduler-agent calendar connect --list` shows yours)"
        ) from None
    except (niquests.exceptions.Timeout, TimeoutError):
        raise CalDAVError(
            f"the CalDAV server at {host} did not answer within {deadline_seconds:g} s while {doing}: "
            "it is slow or stuck; try again later"
        ) from None
    except (niquests.exceptions.ConnectionError, ConnectionError):
        raise CalDAVError(
            f"cannot reach the CalDAV server at {host} while {doing} (connection failed): is it running, "
            "and is the URL right?"
        ) from None
    except ServerFailed as exc:
        raise CalDAVError(
            f"the CalDAV server at {host} failed while {doing} ({exc}): it has a problem of its own; try again later"
        ) from None
    except dav.DAVError as exc:
        raise CalDAVError(
            f"the CalDAV server at {host} failed while {doing} ({exc.reason or type(exc).__name__}): try again later"
        ) from None
    except (SyntaxError, ValueError, KeyError) as exc:  # lxml's XMLSyntaxError is a SyntaxError
        raise CalDAVError(
            f"the CalDAV server at {host} sent data that cannot be read while {doing} ({type(exc).__name__}): "
            "it may not be a CalDAV server; check the URL"
        ) from None


def check_status(url: str, status: int, doing: str) -> None:
    """A plain request's status, as `server_errors` would word it (for what the library leaves to us)."""
    host = urlsplit(url).netloc or url
    if status in (401, 403):
        what = "refused the user name or password (401)" if status == 401 else "refused access (403 Forbidden)"
        raise CalDAVError(f"the CalDAV server at {host} {what} while {doing}: {CONNECT_HINT}")
    if status == 404:
        raise CalDAVError(f"the CalDAV server at {host} has no calendar at {url} (404) while {doing}")
    if status >= 400:
        raise CalDAVError(f"the CalDAV server at {host} failed while {doing} (HTTP {status}): try again later")
