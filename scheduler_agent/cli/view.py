"""`scheduler-agent view SOURCE`: the trace viewer's page for a stored conversation, a cassette or a dump.

Also the `--html FILE` of `conversations show`, `replay` and `demo`. The page is built in
scheduler_agent/view/ (no Click there); this module only finds the source and writes the file.
"""

from __future__ import annotations

import os
import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING

import click

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.cli.core import argument, command, examples
from scheduler_agent.cli.database import connect
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import ID, OUTPUT, SOURCE, db_option, refuse_overwriting
from scheduler_agent.storage.db import Location, in_use

if TYPE_CHECKING:
    from scheduler_agent.view.trace import Trace


def write_page(trace: Trace, path: Path) -> Path:
    """Write the page for `trace` to `path`: a new file is readable by its owner only (it holds a conversation),
    a file you already have keeps its mode (as every file this program writes: `/dev/null` stays /dev/null).
    Its folder is never made: the options that name it are checked first (cli/options.py, `refuse_overwriting`)."""
    from scheduler_agent.view.page import build_page

    page = build_page(trace).encode()
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(page)
    except OSError as exc:
        raise AgentError(f"Cannot write the page to {path}: {exc.strerror or exc}; give another file with -o") from None
    count = len(trace.requests)
    click.echo(f"wrote {path} ({count} request{'' if count == 1 else 's'}, {len(page):,} bytes)", err=True)
    return path


def cassette_page(cassette: Path, html: Path) -> None:
    from scheduler_agent.view.sources import from_cassette

    write_page(from_cassette(cassette), html)


def conversation_trace(db: Location | None, cid: int) -> Trace:
    from scheduler_agent.view.sources import from_conversation

    path = in_use(db)
    if isinstance(path, Path) and not path.is_file():
        raise AgentError(f"No database at {path}: give the file that holds conversation {cid} with --db")
    return from_conversation(connect(path), cid)


@command(
    "view",
    epilog=examples("scheduler-agent view 3 -o trace.html", "scheduler-agent view cassettes/no_mornings.yaml --open"),
)
@argument(
    "source",
    help="A stored conversation's id, a cassette (.yaml) or a --dump-array-file.",
    metavar="SOURCE",
    type=SOURCE,
)
@click.option(
    "-o",
    "--output",
    type=OUTPUT,
    metavar="FILE",
    help="The HTML file to write (default, in the current folder: conversation-ID.html for a conversation id, "
    "the file's name with .html for its extension for a file: trace.yaml gives trace.html).",
)
@click.option("--open", "open_page", is_flag=True, help="Open the page in the web browser once written.")
@db_option
@person_facing()
def view_command(source: str, output: Path | None, open_page: bool, db: Location | None) -> None:
    """One self-contained HTML page: each request, what it added, what it cost, and a search over every array."""
    from scheduler_agent.view.sources import from_file

    path = Path(source)
    if path.is_file():
        trace = from_file(path)
        default = Path(f"{path.stem}.html")
    elif source.isdigit():
        ctx = click.get_current_context()
        trace = conversation_trace(db, ID.convert(source, ctx.command.params[0], ctx))
        default = Path(f"conversation-{source}.html")
    else:
        what = f"{source} is a folder" if path.is_dir() else f"No file {source}"
        raise AgentError(
            f"{what} and not a conversation id: give an id (`scheduler-agent conversations list`), "
            "a cassette (.yaml) or a --dump-array-file"
        )
    if output is None:  # the default name, checked as -o is: `view x.html` of a dump named x.html keeps it
        database = in_use(db)
        others = {"the input SOURCE": path} | ({"the database in use": database} if isinstance(database, Path) else {})
        refuse_overwriting(default, "-o", others)
    written = write_page(trace, output or default)
    click.echo(str(written))
    if open_page and not webbrowser.open(written.resolve().as_uri()):
        click.echo(f"No web browser found to open it: open {written} yourself.", err=True)
