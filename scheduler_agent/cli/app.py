"""The command line: the root group, its table of subcommands, and the console script.

Every subcommand is imported only when it runs (cli/core.py's `LazyGroup`): `--help` prints the table and
imports no command module; `calendar`, `conversations`, `stats` and `lint` start without the SDK, vcrpy,
pydantic or rich. Only `ask`, `chat`, `resume`, `demo` and `replay` import the SDK, inside the command.
Shell completion is Click's (`_SCHEDULER_AGENT_COMPLETE`), installed by `--install-completion`.
"""

from __future__ import annotations

import sys

import click

from scheduler_agent.cli.core import RequestGroup, examples
from scheduler_agent.cli.edge import Unraisable

EXIT_CODES = """\b
Exit codes:
  0 done · 1 error · 2 usage
  3 iteration bound reached (the list is valid; send a new message to go on)
  4 the model stopped (max_tokens, refusal, context window, pause, an empty reply)
  5 the API unavailable (retries exhausted, connection, --timeout, a long retry-after)
  6 lint: a conversation that is only interrupted
  7 the model's reply could not be used (kept beside the list)
  8 the conversation is being run elsewhere
  9 wait: the submitted turn waits for `approve`/`decline`
  130 interrupted"""

_CLI = "scheduler_agent.cli"
COMMANDS = {  # name -> where the command is, and its one-line help (tests/test_cli_conventions.py checks both)
    "demo": (
        f"{_CLI}.offline:demo",
        "Replay a lesson offline (the canonical trace by default): no key, no network, a fresh calendar.",
    ),
    "replay": (
        f"{_CLI}.offline:replay",
        "Replay any cassette offline, with the calendar, clock and inputs it carries; exits as the original did.",
    ),
    "ask": (
        f"{_CLI}.live:ask_command",
        "One user turn against the API, stored (credentials as the SDK finds them: ANTHROPIC_API_KEY, ...).",
    ),
    "chat": (f"{_CLI}.live:chat_command", "An interactive session: the list carries over from turn to turn."),
    "resume": (
        f"{_CLI}.live:resume_command",
        "Finish an interrupted turn with no new input: run an unanswered round, or ask the model again.",
    ),
    "view": (
        f"{_CLI}.view:view_command",
        "One self-contained HTML page: each request, what it added, what it cost, and a search over every array.",
    ),
    "stats": (
        f"{_CLI}.offline:stats",
        "Interruptions across all stored conversations, each counted where it was known.",
    ),
    "lint": (
        f"{_CLI}.offline:lint",
        "Check a message list's grammar: exit 0 clean or warnings only, 1 errors, 6 a conversation that is only "
        "interrupted.",
    ),
    "calendar": (
        f"{_CLI}.calendar:calendar_app",
        "Look at and change the calendar the agent books into (the owner, people, events).",
    ),
    "conversations": (
        f"{_CLI}.conversations:conversations_app",
        "The stored conversations: list, show (the array exactly, with --json), delete.",
    ),
    "mcp": (
        f"{_CLI}.mcp:mcp_command",
        "Serve the calendar tools over MCP: stdio by default, or Streamable HTTP with --http.",
    ),
    "models": (
        f"{_CLI}.models:models_command",
        "The models of the SDK's model list that the price table prices, per million tokens; the default marked.",
    ),
    "db": (f"{_CLI}.database:db_app", "The database file that holds the calendar and the conversations."),
    # issues 16 and 36: many workers on Temporal, the lists in one database (cli/workers.py)
    "submit": (
        f"{_CLI}.workers:submit_command",
        "Store a user turn, start its workflow on Temporal, and print its conversation id (alone on the last line).",
    ),
    "worker": (
        f"{_CLI}.workers:worker_command",
        "Run submitted turns from Temporal with the same loop; SIGTERM lets the steps running finish, then stops.",
    ),
    "wait": (
        f"{_CLI}.workers:wait_command",
        "Block until a submitted turn ends and print it as `ask` does; exit as `ask` would (9: waits for approval).",
    ),
    "approve": (
        f"{_CLI}.workers:approve_command",
        "Approve a side effect a submitted turn waits on; its workflow goes on at once.",
    ),
    "decline": (
        f"{_CLI}.workers:decline_command",
        "Decline a side effect a submitted turn waits on; the model hears the reason as its workflow goes on.",
    ),
}


def _version(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if value:
        from importlib.metadata import version

        click.echo(f"scheduler-agent {version('scheduler-agent')}")
        ctx.exit()


def _completion(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        from scheduler_agent.cli.completion import install, script

        click.echo(
            install(ctx.find_root().command) if param.name == "install_completion" else script(ctx.find_root().command)
        )
        ctx.exit()


app = RequestGroup(
    "scheduler-agent",
    lazy=COMMANDS,
    default="ask",
    help="A scheduling agent: a while-loop around a stateless model, with the message list as its whole state.\n\n"
    'A request given instead of a command runs `ask`: `scheduler-agent "Book 30 minutes with Priya next week"`.',
    epilog=EXIT_CODES
    + "\n\n"
    + examples(
        "scheduler-agent demo",
        'scheduler-agent "Book 30 minutes with Priya next week, afternoons only"',
        'echo "Move it to Tuesday" | scheduler-agent ask -c -',
        "scheduler-agent --install-completion   # then restart the shell",
    ),
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"], "show_default": True},
    params=[
        click.Option(
            ["--version"],
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_version,
            help="Print the version and exit.",
        ),
        click.Option(
            ["--install-completion"],
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_completion,
            help="Install completion for the current shell.",
        ),
        click.Option(
            ["--show-completion"],
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_completion,
            help="Show completion for the current shell, to copy it or customize the installation.",
        ),
    ],
)


def main() -> None:
    unraisable = Unraisable()
    sys.unraisablehook = unraisable
    try:  # not Click's standalone mode, whose Ctrl-C while it parses is "Aborted!" and exit 1
        code = app.main(prog_name="scheduler-agent", standalone_mode=False)
    except click.ClickException as exc:  # a usage error: Click's message and code, as in standalone mode
        exc.show()
        code = exc.exit_code
    except click.Abort:  # Click's name for a Ctrl-C while it parses (it has ended the line): the one way here
        sys.stderr.write("Error: Interrupted.\n")
        code = 130
    except KeyboardInterrupt:  # outside any command's own edge and outside Click's: at exit
        sys.stderr.write("\nError: Interrupted.\n")
        code = 130
    finally:
        unraisable.running = False  # a Ctrl-C from here on is one at exit: it is let go
    raise SystemExit(code if isinstance(code, int) else 0)
