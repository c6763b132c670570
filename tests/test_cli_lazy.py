"""The CLI on Click starts fast: each subcommand's module is imported only when it runs (issue 14).

`--help` prints the table of names and one-line helps without importing any command module; the fast
paths load none of the SDK, vcrpy, yaml, pydantic, rich or Typer; the table says what each command says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from scheduler_agent.cli import app
from scheduler_agent.cli.core import LazyGroup

HEAVY = ("anthropic", "vcr", "yaml", "pydantic", "rich", "typer")
COMMAND_MODULES = [
    f"scheduler_agent.cli.{name}"
    for name in (
        "live",
        "offline",
        "calendar",
        "calendar_people",
        "calendar_events",
        "calendar_files",
        "caldav",
        "prefs",
        "conversations",
        "database",
        "repair",
        "view",
        "render",
    )
]


def loaded_after(args: list[str], seed: Path | None = None) -> tuple[list[str], list[str], str]:
    """Run `args` in a fresh interpreter: the heavy modules and the command modules it imported, and stdout."""
    setup = f"app(['calendar', 'seed-demo', '--db', {str(seed)!r}])" if seed else "pass"
    code = (
        "import subprocess, sys\n"
        "from scheduler_agent.cli import app\n"
        f"try:\n    {setup}\nexcept SystemExit:\n    pass\n"
        "before = set(sys.modules)\n"
        f"try:\n    app({args!r})\nexcept SystemExit:\n    pass\n"
        f"print('LOADED', [m for m in {HEAVY!r} if m in sys.modules], "
        f"[m for m in {COMMAND_MODULES!r} if m in sys.modules and m not in before])"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEDULER_AGENT_")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("LOADED "), done.stdout
    heavy, modules = last[len("LOADED ") :].split("] [")
    return eval(heavy + "]"), eval("[" + modules), done.stdout


def test_help_imports_no_command_module_and_nothing_heavy() -> None:
    heavy, modules, shown = loaded_after(["--help"])
    assert heavy == []
    assert modules == []
    assert "calendar" in shown
    assert "conversations" in shown
    assert "Exit codes:" in shown


def test_a_group_help_imports_none_of_its_commands() -> None:
    heavy, modules, shown = loaded_after(["calendar", "--help"])
    assert heavy == []
    assert modules == ["scheduler_agent.cli.calendar"]
    assert "add-person" in shown
    assert "prefs" in shown
    assert "iCalendar" in shown
    heavy, modules, shown = loaded_after(["conversations", "--help"])
    assert heavy == []
    assert "repair" in shown
    assert "scheduler_agent.cli.repair" not in modules


@pytest.mark.parametrize(
    "argv",
    [
        ["calendar", "show", "--person", "priya", "--week", "2026-08-31", "--db", "{db}"],
        ["conversations", "list", "--db", "{db}"],
        ["lint", "{array}"],
    ],
)
def test_the_fast_paths_load_nothing_heavy(argv: list[str], tmp_path: Path) -> None:
    array = tmp_path / "a.json"
    array.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    db = tmp_path / "c.db"
    args = [a.replace("{db}", str(db)).replace("{array}", str(array)) for a in argv]
    heavy, modules, _ = loaded_after(args, seed=db)
    assert heavy == [], f"{' '.join(argv)} imported {heavy}"
    assert "scheduler_agent.cli.live" not in modules, modules


def test_calendar_show_imports_only_the_events_commands(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    _, modules, _ = loaded_after(["calendar", "show", "--db", str(db)], seed=db)
    assert "scheduler_agent.cli.calendar_events" in modules
    for other in ("calendar_files", "prefs", "live", "offline", "repair"):
        assert f"scheduler_agent.cli.{other}" not in modules, other


def imported_by(args: list[str], seed: Path) -> set[str]:
    """Every module a fresh interpreter holds after running `args` (the demo calendar made at `seed` first,
    in another process, so that nothing seeding it imports is counted or hidden)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEDULER_AGENT_")}
    make = f"from scheduler_agent.cli import app\napp(['calendar', 'seed-demo', '--db', {str(seed)!r}])"
    subprocess.run([sys.executable, "-c", make], capture_output=True, env=env)
    assert seed.exists()
    code = (
        "import json, sys\n"
        "from scheduler_agent.cli import app\n"
        f"try:\n    app({args!r})\nexcept SystemExit:\n    pass\n"
        "print('IMPORTED', json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("IMPORTED "), done.stdout
    return set(json.loads(last[len("IMPORTED ") :]))


def within(modules: set[str], package: str) -> list[str]:
    return sorted(m for m in modules if m == package or m.startswith(package + "."))


# What each fast command must not import: what it does not use (issue 14's start-up rows).
THE_OTHER_TOOLS = [f"scheduler_agent.calendar.tools.{name}" for name in ("create_event", "cancel_event", "move_event")]
NOT_FOR_SHOW = [
    *THE_OTHER_TOOLS,
    "scheduler_agent.calendar.tools.list_events",
    "scheduler_agent.calendar.tools.target",
    "scheduler_agent.cli.calendar_json",  # --json only
    "scheduler_agent.cli.run_options",
    "scheduler_agent.cli.person_options",
    "scheduler_agent.cli.render",
    "scheduler_agent.agent.events",
    "scheduler_agent.grammar",
    # importlib.resources, traceback and hashlib: SQLAlchemy, which opens the database, imports them (issue 34)
    "anthropic",
    "httpx",
    "icalendar",
]
NOT_FOR_LIST = [
    "scheduler_agent.calendar",  # the list reads the store, nothing of the calendar
    "scheduler_agent.cli.calendar",
    "scheduler_agent.cli.render",  # `conversations show` draws entries; `list` prints one line each
    "scheduler_agent.cli.view",
    "scheduler_agent.storage.conversations",  # a whole conversation: `show` reads one, `list` reads storage/listing.py
    "scheduler_agent.cli.run_options",
    "scheduler_agent.agent.events",
    "scheduler_agent.agent.loop",
    "scheduler_agent.agent.toolbox",
    "scheduler_agent.api",
    "webbrowser",
    "anthropic",
    "httpx",
]


SHOW, LIST = "scheduler_agent.cli.calendar_events", "scheduler_agent.cli.conversations"


@pytest.mark.parametrize(
    ("argv", "runs", "unused"),
    [
        (["calendar", "show", "--person", "priya", "--week", "2026-08-31", "--db", "{db}"], SHOW, NOT_FOR_SHOW),
        (["calendar", "show", "--db", "{db}"], SHOW, [*NOT_FOR_SHOW, "scheduler_agent.calendar.tools.find_free_slots"]),
        (["conversations", "list", "--db", "{db}"], LIST, NOT_FOR_LIST),
        (["conversations", "list", "--json", "--db", "{db}"], LIST, NOT_FOR_LIST),
    ],
)
def test_a_fast_command_imports_only_what_it_uses(
    argv: list[str], runs: str, unused: list[str], tmp_path: Path
) -> None:
    db = tmp_path / "c.db"
    modules = imported_by([a.replace("{db}", str(db)) for a in argv], seed=db)
    assert runs in modules  # the command ran
    for name in unused:
        assert within(modules, name) == [], f"{' '.join(argv[:2])} imported {within(modules, name)}"


def test_conversations_list_imports_no_grammar_check(tmp_path: Path) -> None:
    """A summary's state needs `conversation_state` alone (grammar/rules.py's readers), not the check."""
    db = tmp_path / "c.db"
    modules = imported_by(["conversations", "list", "--db", str(db)], seed=db)
    checking = ("check", "walk", "blocks", "jsondiff")
    assert [m for m in modules if m.removeprefix("scheduler_agent.grammar.") in checking] == []


def test_show_still_finds_the_free_windows_it_imports_lazily(tmp_path: Path) -> None:
    """The lazy find_free_slots import serves the text view: the windows are there."""
    from click.testing import CliRunner

    db = tmp_path / "c.db"
    runner = CliRunner()
    assert runner.invoke(app, ["calendar", "seed-demo", "--db", str(db)]).exit_code == 0
    args = ["calendar", "show", "--person", "priya", "--week", "2026-08-31", "--today", "2026-08-31", "--db", str(db)]
    shown = runner.invoke(app, args)
    assert shown.exit_code == 0, shown.output
    assert "Free windows of at least 30 minutes for you and priya:" in shown.stdout


def groups(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], LazyGroup]]:
    found: list[tuple[tuple[str, ...], LazyGroup]] = []
    if isinstance(group, LazyGroup):
        found.append((prefix, group))
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        if isinstance(command, click.Group):
            found += groups(command, (*prefix, name))
    return found


def test_each_table_line_is_its_commands_own_help() -> None:
    tables = groups(app)
    assert {prefix for prefix, _ in tables} >= {(), ("calendar",), ("conversations",), ("db",)}
    for prefix, group in tables:
        context = click.Context(group)
        for name, (_, text) in group.lazy.items():
            command = group.get_command(context, name)
            assert command is not None and command.name == name, (*prefix, name)
            assert text == command.get_short_help_str(10**6), f"{' '.join((*prefix, name))}: the table says {text!r}"


def test_an_unknown_command_is_a_usage_error() -> None:
    from click.testing import CliRunner

    result = CliRunner().invoke(app, ["calendar", "shwo"])
    assert result.exit_code == 2
    assert "No such command 'shwo'" in result.stderr


def test_shell_completion_lists_the_lazy_commands() -> None:
    """Click's completion: the shell runs the program with _SCHEDULER_AGENT_COMPLETE set."""
    plain = {k: v for k, v in os.environ.items() if not k.startswith("SCHEDULER_AGENT_")}
    env = plain | {
        "_SCHEDULER_AGENT_COMPLETE": "bash_complete",
        "COMP_WORDS": "scheduler-agent calendar sh",
        "COMP_CWORD": "2",
    }
    code = "import sys; sys.argv[0] = 'scheduler-agent'\nfrom scheduler_agent.cli import main\nmain()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "plain,show" in done.stdout.splitlines()
    script = subprocess.run(
        [sys.executable, "-c", code, "--show-completion"],
        capture_output=True,
        text=True,
        env={**plain, "SHELL": "/bin/bash"},
    )
    assert "_SCHEDULER_AGENT_COMPLETE=bash_complete" in script.stdout


def test_a_command_run_first_under_its_own_group_keeps_its_short_help_option(tmp_path: Path) -> None:
    """Click keeps a command's help option once made: `-h` must survive a group invoked on its own first."""
    from click.testing import CliRunner

    from scheduler_agent.cli.calendar import calendar_app

    runner = CliRunner()
    runner.invoke(calendar_app, ["export", "--db", str(tmp_path / "x.db")])
    shown = runner.invoke(app, ["calendar", "export", "-h"])
    assert shown.exit_code == 0 and "Examples:" in shown.stdout, shown.output


def test_the_edge_still_turns_a_tool_error_into_one_line_without_importing_the_toolbox() -> None:
    """cli/edge.py recognises a ToolError through the module that defines it (never imported on the fast paths)."""
    from click.testing import CliRunner

    from scheduler_agent.agent.toolbox import ToolError
    from scheduler_agent.cli.edge import person_facing

    @click.command()
    @click.argument("kind")
    @person_facing()
    def failing(kind: str) -> None:
        raise ToolError("Not booked: 14:00 is taken.") if kind == "tool" else LookupError("a bug")

    runner = CliRunner()
    told = runner.invoke(failing, ["tool"])
    assert told.exit_code == 1
    assert told.stderr == "Error: Not booked: 14:00 is taken.\n"
    bug = runner.invoke(failing, ["other"], env={"SCHEDULER_AGENT_DEBUG": "0"})
    assert bug.exit_code == 1
    assert "internal error (LookupError: a bug). This is a bug in scheduler-agent" in bug.stderr


@pytest.mark.parametrize("collecting", [True, False], ids=["collector on", "collector off"])
def test_the_sdk_is_imported_with_the_collector_paused_and_left_as_it_was_found(collecting: bool) -> None:
    """No collection runs once the SDK's import has begun (about 300 passes over its ~150,000 long-lived objects
    before, which freed almost nothing), not even as the collector comes back on; they are frozen, and the
    collector is on again only if it was on."""
    code = (
        "import gc, sys\n"
        f"{'' if collecting else 'gc.disable()'}\n"
        "seen = []\n"
        "gc.callbacks.append(lambda phase, info: phase == 'start' and 'anthropic' in sys.modules and seen.append(1))\n"
        "import scheduler_agent.api.client\n"
        "gc.callbacks.clear()\n"
        "print(len(seen), gc.get_freeze_count() > 100_000, gc.isenabled())"
    )
    assert printed_by(code) == ["0", "True", str(collecting)]


def test_the_sdk_is_imported_without_its_aiohttp_transport_which_stays_importable() -> None:
    """aiohttp is installed here (xandikos needs it), so the SDK would load its asynchronous transport, about
    100 ms: our import leaves it out, the SDK's sync client is whole, and a later import of the transport works."""
    code = (
        "import importlib.util, sys\n"
        "assert importlib.util.find_spec('aiohttp') is not None  # installed: the SDK would import it\n"
        "from scheduler_agent.api.sdk import anthropic\n"
        "print('aiohttp' in sys.modules, anthropic._vendor.__name__ in sys.modules)\n"
        "print(type(anthropic.Anthropic(api_key='x', base_url='http://127.0.0.1:9')).__name__)\n"
        "from anthropic._vendor import httpx_aiohttp\n"
        "print('aiohttp' in sys.modules, httpx_aiohttp.AiohttpTransport.__name__)"
    )
    assert printed_by(code) == ["False", "True", "Anthropic", "True", "AiohttpTransport"]


def printed_by(code: str) -> list[str]:
    """The words a fresh interpreter prints running `code`, which must exit 0."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_ask_with_no_mcp_server_never_imports_the_mcp_sdk(tmp_path: Path) -> None:
    """The MCP SDK costs about 1.3 s of imports: a run given no server (`--mcp`, mcp.toml) never loads it."""
    from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text

    seed = tmp_path / "demo.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCHEDULER_AGENT_", "ANTHROPIC_"))}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")  # no mcp.toml
    make = f"from scheduler_agent.cli import app\napp(['calendar', 'seed-demo', '--db', {str(seed)!r}])"
    subprocess.run([sys.executable, "-c", make], capture_output=True, env=env)
    args = ["ask", "Anything free on Monday?", "--db", str(seed), "--no-stream", "--today", "2026-08-27"]
    code = (
        "import json, sys\n"
        "from scheduler_agent.cli import app\n"
        f"try:\n    app({args!r})\nexcept SystemExit as exc:\n    print('EXIT', exc.code)\n"
        "print('IMPORTED', json.dumps(sorted(sys.modules)))"
    )
    with ScriptedServer([Reply([text("Monday is open after 10:00.")])]) as server:
        env.update(ANTHROPIC_API_KEY="sk-ant-test-placeholder", ANTHROPIC_BASE_URL=server.url)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        assert len(server.received) == 1, done.stderr
    assert "Monday is open after 10:00." in done.stdout
    assert "EXIT 0" in done.stdout
    modules = set(json.loads(done.stdout.strip().splitlines()[-1][len("IMPORTED ") :]))
    assert "anthropic" in modules  # the run did call the model
    assert within(modules, "mcp") == []
    assert "scheduler_agent.mcp_client.connection" not in modules
