"""`scheduler-agent calendar import|export|subscribe|feeds`: iCalendar files and subscribed feeds.

They alone load `icalendar` (about 50 ms), inside the command.
"""

from __future__ import annotations

from pathlib import Path

import click

from scheduler_agent.calendar.types import OWNER_KEY
from scheduler_agent.cli.calendar import calendar_session, examples
from scheduler_agent.cli.core import argument, command
from scheduler_agent.cli.options import OUTPUT, PATH, db_option
from scheduler_agent.cli.terminal import say
from scheduler_agent.storage.db import Location


@command("import", epilog=examples("import priya.ics --person priya", "import mine.ics"))
@argument("file", help="An iCalendar (.ics) file, e.g. from Google Calendar or Outlook.", metavar="FILE", type=PATH)
@click.option(
    "--person",
    metavar="PERSON",
    default=OWNER_KEY,
    help="Whose busy time it is: a key or name; 'you' is the owner.",
)
@click.option("--strict", is_flag=True, help="Refuse the whole file if any event in it cannot be read.")
@db_option
def import_command(file: Path, person: str, strict: bool, db: Location | None) -> None:
    """Import an .ics file as busy time for one person; an event that cannot be read is skipped and named.

    One transaction: what is imported is complete. Importing it again never doubles and picks up edits."""
    with calendar_session(db, creates=True) as conn:
        from scheduler_agent.calendar import ics  # icalendar costs ~50 ms: only these commands load it

        say(ics.import_file(conn, file, person, strict=strict))


@command("export", epilog=examples("export > all.ics", "export --person priya --out priya.ics"))
@click.option("--person", metavar="PERSON", help="Only this person's events: a key or name; 'you' is the owner.")
@click.option("--out", metavar="PATH", type=OUTPUT, help="Write the .ics file here.  [default: standard output]")
@db_option
def export_command(person: str | None, out: Path | None, db: Location | None) -> None:
    """Export the events as an iCalendar (.ics) file, RFC 5545, that other calendars can import."""
    with calendar_session(db) as conn:
        from scheduler_agent.calendar import ics
        from scheduler_agent.cli.caldav import sync_first

        sync_first(conn)
        who = ics.person_named(conn, person) if person is not None else None
        exported = ics.export_calendar(conn, who)
        if out is None:
            click.echo(exported.text, nl=False)
            return
        ics.write_file(out, exported.text)
        say(
            f"Exported {exported.events} event(s) ({exported.recurring} recurring) "
            f"for {ics.person_label(who)} to {out}."
        )


@command(
    "subscribe",
    epilog=examples(
        "subscribe https://calendar.example.com/priya/basic.ics --person priya",
        "subscribe webcal://example.com/me.ics --person you --refresh 1h",
    ),
)
@argument("url", help="The feed's secret iCal address (https:// or webcal://).", metavar="URL")
@click.option(
    "--person", metavar="PERSON", required=True, help="Whose busy time it is: a key or name; 'you' is the owner."
)
@click.option(
    "--refresh",
    metavar="DURATION",
    default="15m",
    help="Fetch it again before a turn when older than this, e.g. 15m, 1h.",
)
@click.option("--allow-http", is_flag=True, help="Allow plain http:// (unencrypted) for this feed and its redirects.")
@click.option(
    "--allow-private",
    is_flag=True,
    help="Allow loopback and private addresses (127.0.0.1, 10/8, 192.168/16, ...): a feed on your own network.",
)
@db_option
def subscribe_command(
    url: str, person: str, refresh: str, allow_http: bool, allow_private: bool, db: Location | None
) -> None:
    """Subscribe to a calendar feed (Google's, Outlook's, Fastmail's secret address) and fetch it now.

    Only https:// to public addresses unless --allow-http or --allow-private says otherwise; the flags are
    kept with the feed and apply at every refresh."""
    with calendar_session(db) as conn:
        from scheduler_agent.calendar import feeds, ics
        from scheduler_agent.calendar.feed_addresses import Policy

        who = ics.person_named(conn, person)
        policy = Policy(allow_http=allow_http, allow_private=allow_private)
        feed = feeds.subscribe(conn, url, who, feeds.parse_duration(refresh), policy)
        line = feeds.refresh(conn, feed)
        fetched = feeds.get_feed(conn, feed.id)
        assert fetched is not None
        if fetched.ok_at is None:
            feeds.unsubscribe(conn, feed.id)
            raise feeds.FeedError(f"{line.splitlines()[0]}; nothing was subscribed: check the address and try again")
        say(
            f"Subscribed {who.name} ({who.key}) to {feed.shown}, refreshed when older than "
            f"{feeds.format_duration(fetched.refresh)}."
        )
        say(line)


@command("feeds", epilog=examples("feeds", "feeds --refresh"))
@click.option("--refresh", is_flag=True, help="Fetch every feed now.")
@db_option
def feeds_command(refresh: bool, db: Location | None) -> None:
    """List the subscribed feeds (addresses masked) with their last fetch and its result."""
    with calendar_session(db) as conn:
        from scheduler_agent.calendar import feeds

        kept = feeds.list_feeds(conn)
        if not kept:
            click.echo("No feeds: subscribe with `scheduler-agent calendar subscribe URL --person NAME`.")
            return
        if refresh:
            for feed in kept:
                say(feeds.refresh(conn, feed).splitlines()[0])  # its skipped events are listed below
            kept = feeds.list_feeds(conn)
        for feed in kept:
            fetched = f"{feed.fetched_at:%Y-%m-%d %H:%M} UTC" if feed.fetched_at else "never"
            allowed = [
                flag
                for flag, on in (
                    ("--allow-http", feed.policy.allow_http),
                    ("--allow-private", feed.policy.allow_private),
                )
                if on
            ]
            say(
                f"#{feed.id}  {feed.person_key}  {feed.shown}  every {feeds.format_duration(feed.refresh)}  "
                f"{' '.join(allowed) + '  ' if allowed else ''}"
                f"{feeds.plural(feed.events, 'event')}  last fetch {fetched}: {feed.result}"
            )
            for skipped in feed.skipped.splitlines():
                say(f"    {skipped}")
