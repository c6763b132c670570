"""`scheduler-agent view SOURCE`: the trace viewer's page for a stored conversation, a cassette or a dump.

Also the `--html FILE` of `conversations show`, `replay` and `demo`. The page is built in
scheduler_agent/view/ (no Typer there); this module only finds the source and writes the file.
"""

from __future__ import annotations

import os
import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.cli.calendar import connect
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import DbOption, default_db_path

if TYPE_CHECKING:
    from scheduler_agent.view.trace import Trace

HtmlOption = Annotated[
    Path | None,
    typer.Option(
        "--html",
        help="Also write the trace viewer's page (one self-contained HTML file) to FILE.",
        metavar="FILE",
        show_default=False,
    ),
]


def write_page(trace: Trace, path: Path) -> Path:
    """Write the page for `trace` to `path`, readable by its owner only (it holds a conversation)."""
    from scheduler_agent.view.page import build_page

    page = build_page(trace).encode()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(page)
        path.chmod(0o600)
    except OSError as exc:
        raise AgentError(f"Cannot write the page to {path}: {exc.strerror or exc}; give another file with -o") from None
    count = len(trace.requests)
    typer.echo(f"wrote {path} ({count} request{'' if count == 1 else 's'}, {len(page):,} bytes)", err=True)
    return path


def cassette_page(cassette: Path, html: Path) -> None:
    from scheduler_agent.view.sources import from_cassette

    write_page(from_cassette(cassette), html)


def conversation_trace(db: Path | None, cid: int) -> Trace:
    from scheduler_agent.view.sources import from_conversation

    path = db if db is not None else default_db_path()
    if not path.is_file():
        raise AgentError(f"No database at {path}: give the file that holds conversation {cid} with --db")
    return from_conversation(connect(path), cid)


@person_facing()
def view_command(
    source: Annotated[
        str,
        typer.Argument(help="A stored conversation's id, a cassette (.yaml) or a --dump-array-file.", metavar="SOURCE"),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            help="The HTML file to write (default: SOURCE's name + .html, here).",
            metavar="FILE",
            show_default=False,
        ),
    ] = None,
    open_page: Annotated[bool, typer.Option("--open", help="Open the page in the web browser once written.")] = False,
    db: DbOption = None,
) -> None:
    """One self-contained HTML page: each request, what it added, what it cost, and a search over every array."""
    from scheduler_agent.view.sources import from_file

    path = Path(source)
    if path.is_file():
        trace = from_file(path)
        default = Path(f"{path.stem}.html")
    elif source.isdigit():
        trace = conversation_trace(db, int(source))
        default = Path(f"conversation-{source}.html")
    else:
        raise AgentError(
            f"No file {source} and not a conversation id: give an id (`scheduler-agent conversations list`), "
            "a cassette (.yaml) or a --dump-array-file"
        )
    written = write_page(trace, output or default)
    typer.echo(str(written))
    if open_page and not webbrowser.open(written.resolve().as_uri()):
        typer.echo(f"No web browser found to open it: open {written} yourself.", err=True)
