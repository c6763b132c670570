"""`scheduler-agent calendar prefs ...`: the owner's standing preferences (see calendar/prefs.py).

They are rendered into the system prompt of every new user turn, so `--dump-array` shows them; the
structured ones (`--not-before`, `--not-after`, `--no-days`, `--max-per-day`) are checked by the tools.
"""

from __future__ import annotations

import click

from scheduler_agent.calendar.prefs import add_preference, list_preferences, remove_preference
from scheduler_agent.calendar.types import CalendarError
from scheduler_agent.cli.calendar import calendar_session, examples
from scheduler_agent.cli.core import HELP, Command, argument
from scheduler_agent.cli.options import db_option
from scheduler_agent.cli.terminal import say
from scheduler_agent.storage.db import Location

prefs_app = click.Group(
    "prefs",
    help="The owner's standing preferences: in every conversation's system prompt; the structured ones "
    "are also checked by the tools.",
    no_args_is_help=True,
    context_settings=HELP,
)


@prefs_app.command(
    "add",
    cls=Command,
    epilog=examples(
        'prefs add "No meetings before 10am" --not-before 10:00', 'prefs add "Keep Fridays free" --no-days fri'
    ),
)
@argument("text", help="The preference in words, e.g. 'No meetings before 10am'.", metavar="TEXT", required=False)
@click.option("--not-before", metavar="TEXT", help="No meeting starts before HH:MM (the tools check it).")
@click.option("--not-after", metavar="TEXT", help="No meeting ends after HH:MM (the tools check it).")
@click.option("--no-days", metavar="TEXT", help="No meetings on these weekdays, e.g. fri or mon,fri.")
@click.option(
    "--max-per-day", metavar="INTEGER", type=int, help="At most N of your meetings a day (the tools check it)."
)
@db_option
def prefs_add_command(
    text: str | None,
    not_before: str | None,
    not_after: str | None,
    no_days: str | None,
    max_per_day: int | None,
    db: Location | None,
) -> None:
    """Add a standing preference: free text for the model, or a rule the tools also check (one per command)."""
    rules = {
        "not_before": not_before,
        "not_after": not_after,
        "no_days": no_days,
        "max_per_day": None if max_per_day is None else str(max_per_day),
    }
    given = {rule: value for rule, value in rules.items() if value is not None}
    with calendar_session(db, creates=True) as conn:
        if len(given) > 1:
            raise CalendarError("give one rule per `prefs add` (e.g. --not-before 10:00), then add the next")
        rule, value = next(iter(given.items()), ("", ""))
        preference = add_preference(conn, text, rule, value)
        checked = f" (checked by the tools: {preference.rule_text})" if preference.rule else ""
        say(f"Added preference #{preference.id}: {preference.text}{checked}.")


@prefs_app.command("list", cls=Command, epilog=examples("prefs list"))
@db_option
def prefs_list_command(db: Location | None) -> None:
    """List the standing preferences, as the system prompt shows them."""
    with calendar_session(db) as conn:
        preferences = list_preferences(conn)
        if not preferences:
            click.echo("No preferences yet: add one with `scheduler-agent calendar prefs add TEXT`.")
        for preference in preferences:
            checked = f"  [checked: {preference.rule_text}]" if preference.rule else ""
            say(f"#{preference.id}  {preference.text}{checked}")


@prefs_app.command("remove", cls=Command, epilog=examples("prefs remove 1"))
@argument("preference_id", help="The preference's number, #N in `prefs list`.", metavar="PREFERENCE_ID", type=int)
@db_option
def prefs_remove_command(preference_id: int, db: Location | None) -> None:
    """Remove a standing preference."""
    with calendar_session(db) as conn:
        removed = remove_preference(conn, preference_id)
        say(f"Removed preference #{removed.id}: {removed.text}.")
