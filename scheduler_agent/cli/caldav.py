"""`scheduler-agent calendar connect` and `calendar backends`: the owner's calendar on a CalDAV server.

Listed in the `calendar` command group's table (cli/calendar.py). The password is read from the
environment variable named by `--password-env`, from `~/.netrc`, or asked once on a terminal (and kept
in the system keyring when `keyring` is installed); the database stores only where it comes from.
Nothing here imports the `caldav` library until a server is actually used.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import click
from sqlalchemy import Connection, text

from scheduler_agent.calendar.caldav import connect as cc
from scheduler_agent.calendar.types import CalendarError
from scheduler_agent.cli.calendar import examples
from scheduler_agent.cli.core import argument, command
from scheduler_agent.cli.database import existing
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import db_option
from scheduler_agent.storage.db import Location, in_use
from scheduler_agent.storage.dialect import mask


@command(
    "connect",
    epilog=examples(
        "connect caldav https://cal.example.com/dav/ --user jordan --password-env CALDAV_PASSWORD",
        "connect --list",
    ),
)
@argument("kind", help="The kind of server: caldav.", metavar="KIND", required=False)
@argument("url", help="The server's URL, e.g. https://dav.example.com/.", metavar="URL", required=False)
@click.option("--user", metavar="NAME", help="Your user name on the server.")
@click.option("--password-env", metavar="VAR", help="Read the password from this environment variable.")
@click.option("--calendar", metavar="NAME", help="Which of your calendars to book into (see --list).")
@click.option("--list", "list_only", is_flag=True, help="List your calendars on the server; change nothing.")
@click.option("--email", help="Your e-mail address, the ORGANIZER of what is booked.")
@click.option("--no-invites", is_flag=True, help="Write SCHEDULE-AGENT=CLIENT: the server sends no invitations.")
@db_option
def connect_command(
    kind: str | None,
    url: str | None,
    user: str | None,
    password_env: str | None,
    calendar: str | None,
    list_only: bool,
    email: str | None,
    no_invites: bool,
    db: Location | None,
) -> None:
    """Book on your calendar server (CalDAV: Nextcloud, Fastmail, iCloud, Radicale, ...) instead of locally."""
    from scheduler_agent.calendar.caldav.server import Server

    with person_facing():
        conn = existing(db)
        try:
            stored = cc.load_connection(conn)
            if kind is None and url is None:
                if not list_only or stored is None:
                    raise CalendarError(f"give the server: {cc.CONNECT_HINT}")
                connection = stored
                password = cc.password_for(connection)
            else:
                if kind != "caldav" or url is None:
                    raise CalendarError(f"the kind of server is 'caldav', then its URL: {cc.CONNECT_HINT}")
                if user is None:
                    raise CalendarError(f"give your user name on the server with --user NAME: {cc.CONNECT_HINT}")
                url = cc.check_server_url(url, f"give the server's address, e.g. {cc.CONNECT_EXAMPLE_URL}")
                url = url if url.endswith("/") else url + "/"
                connection = cc.Connection(url, user, url, "", "ask", email, not no_invites)
                connection, password = _password(connection, password_env)
            calendars = Server(conn, connection, password).list_calendars()
            if list_only:
                for name, where in calendars:
                    click.echo(f"{name}  {where}")
                if not calendars:
                    click.echo(f"(no calendars for {connection.username} on {connection.host})")
                return
            name, where = _choose(calendars, calendar, connection)
            chosen = cc.Connection(
                connection.url, connection.username, where, name, connection.password_source, email, not no_invites
            )
            cc.save_connection(conn, chosen)
            _first_sync(conn, chosen, password)
        finally:
            conn.close()


def _first_sync(conn: Connection, chosen: cc.Connection, password: str) -> None:
    """What `connect` does after storing the connection: asks about scheduling once, syncs, and says what
    happens to the local events and where bookings go."""
    from scheduler_agent.calendar.caldav import replica
    from scheduler_agent.calendar.caldav.server import Server
    from scheduler_agent.calendar.caldav.sync import sync
    from scheduler_agent.storage.db import transaction

    with transaction(conn):
        replica.forget_sync(conn)  # a new connection: everything is synced again (matched by href: no doubles)
    server = Server(conn, chosen, password)
    with server.errors(chosen.calendar_url, "asking what the server supports"):
        scheduling = bool(server.client.supports_scheduling())
    with transaction(conn):
        replica.set_scheduling(conn, scheduling)
    changes = sync(conn, chosen, password, client=server.client)
    click.echo(
        f"Connected: calendar {chosen.calendar_name!r} ({chosen.calendar_url}) as {chosen.username}; the password "
        f"comes from {_source_text(chosen.password_source)} and is never stored by scheduler-agent."
    )
    click.echo(f"Synced: {len(changes.changes)} event(s) of the server copied into the local store.")
    click.echo(_local_line(replica.local_event_count(conn)))
    click.echo(WHERE_BOOKINGS_GO)
    click.echo(f"Invitations: {replica.invitations_text(chosen.invites, scheduling)}")


WHERE_BOOKINGS_GO = (
    "Bookings: create_event, move_event and cancel_event write to the server, then to the local copy; every "
    "view reads the local copy, synced first when older than 5 s."
)


def _local_line(count: int) -> str:
    return (
        f"Local events: your {count} local event(s) stay in the local calendar and keep counting as your busy "
        "time; they are not copied to the server."
    )


def _password(connection: cc.Connection, password_env: str | None) -> tuple[cc.Connection, str]:
    """Where the password comes from, and the password: --password-env, ~/.netrc, the keyring, a terminal."""
    if password_env is not None:
        found = replace(connection, password_source=f"env:{password_env}")
        return found, cc.password_for(found)
    if cc.netrc_password(connection.host, connection.username) is not None:
        found = replace(connection, password_source="netrc")
        return found, cc.password_for(found)
    in_keyring = replace(connection, password_source="keyring")
    if cc.keyring_password(in_keyring) is not None:
        return in_keyring, cc.password_for(in_keyring)
    password = cc.ask_password(connection)
    if cc.keep_in_keyring(connection, password):
        return in_keyring, password
    return replace(connection, password_source="ask"), password


def _choose(calendars: list[tuple[str, str]], wanted: str | None, connection: cc.Connection) -> tuple[str, str]:
    names = ", ".join(repr(name) for name, _ in calendars) or "none"
    if wanted is None:
        if len(calendars) == 1:
            return calendars[0]
        raise CalendarError(
            f"{connection.username} has {len(calendars)} calendars on {connection.host} ({names}): "
            "choose one with --calendar NAME"
        )
    folded = wanted.casefold().strip("/")
    for name, where in calendars:
        if folded in (name.casefold(), where.rstrip("/").rsplit("/", 1)[-1].casefold()):
            return name, where
    raise CalendarError(
        f"there is no calendar {wanted!r} for {connection.username} on {connection.host}: the calendars are {names}"
    )


def _source_text(source: str) -> str:
    if source.startswith("env:"):
        return f"the environment variable {source[4:]}"
    return {"netrc": "~/.netrc", "keyring": "the system keyring", "ask": "a terminal prompt, each time"}.get(
        source, source
    )


@command("backends", epilog=examples("backends"))
@db_option
def backends_command(db: Location | None) -> None:
    """Show the calendars the agent uses, where bookings go, the last sync, and check each server answers."""
    with person_facing():
        conn = existing(db)
        try:
            events = conn.execute(text("SELECT count(*) FROM events")).scalar_one()
            click.echo(f"local   SQLite calendar {mask(str(in_use(db)))}: {events} event(s)")
            connection = cc.load_connection(conn)
            if connection is None:
                click.echo("caldav  not connected (the agent books on the local calendar)")
                return
            failed = _check_caldav(conn, connection)
        finally:
            conn.close()
        if failed:
            raise click.exceptions.Exit(1)


def _check_caldav(conn: Connection, connection: cc.Connection) -> int:
    from scheduler_agent.calendar.caldav import replica
    from scheduler_agent.calendar.caldav.fresh import last_sync_line
    from scheduler_agent.calendar.caldav.people import person_busy, store_busy
    from scheduler_agent.calendar.caldav.server import Server
    from scheduler_agent.calendar.caldav.sync import sync
    from scheduler_agent.calendar.people import list_people

    state = replica.sync_state(conn)
    click.echo(
        f"caldav  your calendar {connection.calendar_name!r} {connection.calendar_url} as {connection.username} "
        f"(password from {_source_text(connection.password_source)})"
    )
    click.echo(f"        {WHERE_BOOKINGS_GO}")
    click.echo(f"        {_local_line(replica.local_event_count(conn))}")
    scheduling = None if state is None else state.scheduling
    click.echo(f"        Invitations: {replica.invitations_text(connection.invites, scheduling)}")
    failed = 0
    try:
        password = cc.password_for(connection)
        changes = sync(conn, connection, password)
        click.echo(f"        answers; synced now: {len(changes.changes)} change(s)")
    except CalendarError as exc:
        from scheduler_agent.storage.db import transaction

        with transaction(conn):
            replica.record_failure(conn, str(exc))
        click.echo(f"        does not answer: {exc}")
        click.echo(f"        {last_sync_line(conn)}")
        return 1
    click.echo(f"        {last_sync_line(conn)}")
    server = Server(conn, connection, password)
    urls = {key: c.caldav_url for key, c in cc.contacts(conn).items() if c.caldav_url}
    for person in list_people(conn):
        if person.key not in urls:
            continue
        try:  # their next 7 days synced into the store, as a reader would
            now = datetime.now(UTC)
            busy = person_busy(server, person, str(urls[person.key]), now, now + timedelta(days=7))
            store_busy(server, person.key, now, now + timedelta(days=7), busy)
            click.echo(f"caldav  {person.key}: {urls[person.key]}: answers; {len(busy)} busy interval(s) in 7 days")
        except CalendarError as exc:
            click.echo(f"caldav  {person.key}: {urls[person.key]}: does not answer: {exc}")
            failed += 1
    return failed


@command("sync", epilog=examples("sync"))
@db_option
def sync_command(db: Location | None) -> None:
    """Sync your calendar server's calendar into the local store now, and print what changed."""
    from scheduler_agent.calendar.caldav.sync import sync
    from scheduler_agent.calendar.people import get_owner

    with person_facing():
        conn = existing(db)
        try:
            connection = cc.load_connection(conn)
            if connection is None:
                raise CalendarError(f"no calendar server is connected: {cc.CONNECT_HINT}")
            try:
                changes = sync(conn, connection, cc.password_for(connection))
            except CalendarError as exc:
                from scheduler_agent.calendar.caldav import replica
                from scheduler_agent.storage.db import transaction

                with transaction(conn):
                    replica.record_failure(conn, str(exc))
                raise
            lines = changes.lines(get_owner(conn).tz)
            for line in lines:
                click.echo(line)
            how = "" if changes.with_token else " (the server gives no sync token: every event was compared)"
            click.echo(f"Synced {connection.calendar_name!r}: {len(lines) or 'nothing'} changed{how}.")
        finally:
            conn.close()


def sync_first(conn: Connection) -> None:
    """For `calendar show` and `export`: sync the server's calendar first when the last sync is older than
    5 s; when the server cannot be reached, one line on stderr, and the store is read as it is."""
    if cc.load_connection(conn) is None:
        return
    from scheduler_agent.calendar.caldav.fresh import refresh

    note = refresh(conn)
    if note:
        click.echo(f"Note: {note}; showing the local copy.", err=True)


def sync_people_first(conn: Connection, keys: list[str], start: datetime, end: datetime) -> None:
    """For `calendar show --person`: the busy time of those of `keys` with a shared calendar of their own,
    synced into the store for the range shown; when it cannot be, one line on stderr, and the store is read."""
    connection = cc.load_connection(conn)
    if connection is None or not any(c.caldav_url for key, c in cc.contacts(conn).items() if key in keys):
        return
    from scheduler_agent.calendar.caldav.people import refresh_people
    from scheduler_agent.calendar.caldav.server import Server

    note = refresh_people(Server(conn, connection, cc.password_for(connection)), keys, start, end, {})
    if note:
        click.echo(f"Note: {note}; showing the local copy.", err=True)


def save_contact(conn: Connection, key: str, email: str | None, caldav_url: str | None) -> str:
    """For `calendar add-person --email/--caldav`: store them; a sentence saying what was stored, or ''."""
    if email is None and caldav_url is None:
        return ""
    cc.set_contact(conn, key, email, caldav_url)
    parts = [f"e-mail {email}" if email else "", f"busy time from {caldav_url}" if caldav_url else ""]
    return f"  {key}: {', '.join(p for p in parts if p)}."
