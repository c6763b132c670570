"""What the commands are built of, on Click: lazy groups, commands whose arguments have help, examples.

A `LazyGroup` knows its subcommands as a table, name -> (`module:attribute`, one-line help): it imports a
command's module only when that command runs, and `--help` prints the table without importing any.
`tests/test_cli_conventions.py` checks that each line of a table is its command's own help.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from scheduler_agent.agent.collector import collector_paused

F = TypeVar("F", bound=Callable[..., Any])
# Every command's own: Click keeps a command's help option once made, so a command first run under
# another root (a test invoking a group directly) must not lose `-h`.
HELP = {"help_option_names": ["-h", "--help"]}


def examples(*commands: str) -> str:
    """A command's "Examples:" epilog, kept as written (Click's \\b stops it rewrapping the lines)."""
    return "Examples:\n\n\b\n" + "\n".join(f"  {command}" for command in commands)


class HelpArgument(click.Argument):
    """An argument with a help text, listed under "Arguments" in its command's help."""

    def __init__(self, param_decls: Sequence[str], help: str = "", **attrs: Any) -> None:
        super().__init__(param_decls, **attrs)
        self.text = help

    def help_record(self, ctx: click.Context) -> tuple[str, str]:
        return self.make_metavar(ctx), self.text + ("  [required]" if self.required else "")


class Command(click.Command):
    """A command whose help lists its arguments, each with its help, before its options."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["context_settings"] = {**HELP, **(kwargs.get("context_settings") or {})}
        super().__init__(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command once its text is known to be UTF-8 (paths are `Path`s, never checked: a file's name may
        be any bytes) and the files it would write are checked: none may lose a file (cli/options.py)."""
        from scheduler_agent.agent.errors import utf8_problem
        from scheduler_agent.cli.options import check_outputs

        for param in self.get_params(ctx):
            given = ctx.params.get(param.name or "")
            for value in given if isinstance(given, tuple) else (given,):
                problem = utf8_problem(value) if isinstance(value, str) else None
                if problem is not None:
                    raise click.BadParameter(f"not valid UTF-8 text ({problem}): give it as UTF-8", ctx, param)
        check_outputs(ctx)
        return super().invoke(ctx)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [p.help_record(ctx) for p in self.get_params(ctx) if isinstance(p, HelpArgument)]
        if rows:
            with formatter.section("Arguments"):
                formatter.write_dl(rows)
        super().format_options(ctx, formatter)


def entries(count: int) -> str:
    """`1 entry`, `3 entries`: a message list's length, as the commands word it."""
    return f"{count} {'entry' if count == 1 else 'entries'}"


def argument(name: str, help: str, metavar: str, **attrs: Any) -> Callable[[F], F]:
    """`click.argument` with a help text and a metavar (Click's own arguments have neither)."""
    return click.argument(name, cls=HelpArgument, help=help, metavar=metavar, **attrs)


def command(name: str, epilog: str) -> Callable[[Callable[..., Any]], Command]:
    """A command named `name`, its help from the docstring, its examples as `epilog`."""
    return click.command(name, cls=Command, epilog=epilog)


Lazy = dict[str, tuple[str, str]]


class LazyGroup(click.Group):
    """A group whose subcommands are imported when one runs: `lazy` maps name -> (`module:attr`, short help)."""

    def __init__(self, *args: Any, lazy: Lazy | None = None, **kwargs: Any) -> None:
        kwargs["context_settings"] = {**HELP, **(kwargs.get("context_settings") or {})}
        super().__init__(*args, **kwargs)
        self.lazy: Lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.lazy, *(name for name in self.commands if name not in self.lazy)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name not in self.lazy:
            return None
        module_name, attribute = self.lazy[cmd_name][0].split(":")
        with collector_paused(freeze=True):  # what the command imports (SQLAlchemy, ...) lives as long as the process
            found = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(found, click.Command):
            raise TypeError(f"{module_name}:{attribute} is not a Click command")
        self.commands[cmd_name] = found  # imported once
        return found

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As Click's own, from the table's one-line helps: `--help` imports no command module."""
        rows = [(name, help) for name, (_, help) in self.lazy.items()]
        rows += [(n, c.get_short_help_str(10**6)) for n, c in self.commands.items() if n not in self.lazy]
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, shorten(help, limit)) for name, help in rows])


class RequestGroup(LazyGroup):
    """The root group: a first argument that names no command is a request, run by `default` (as `llm 'text'` runs
    `prompt`), its options too (`scheduler-agent -m MODEL "text"`). A single word within edit distance 2 of a
    command's name is a usage error naming that command, never a paid request."""

    def __init__(self, *args: Any, default: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.default = default

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and self._is_request(ctx, args[0]):
            args = [self.default, *args]
        return super().parse_args(ctx, args)

    def _is_request(self, ctx: click.Context, first: str) -> bool:
        if first in self.lazy or first in self.commands:
            return False
        if first.startswith("-") and first != "-":  # the root's own options stay the root's
            own = {name for param in self.get_params(ctx) for name in param.opts}
            return first.split("=", 1)[0] not in own
        if first.strip() and not any(c.isspace() for c in first) and not ctx.resilient_parsing:
            near = min(self.list_commands(ctx), key=lambda name: edit_distance(first.lower(), name))
            if edit_distance(first.lower(), near) <= 2:
                raise click.UsageError(
                    f"No such command {first!r}: did you mean `{near}`? (A one-word request is not sent: "
                    f'say more, or give it to ask: `{ctx.command_path} ask "{first}"`.)',
                    ctx,
                )
        return True


def edit_distance(one: str, other: str) -> int:
    """Levenshtein's distance: the fewest single-character insertions, deletions and substitutions."""
    previous = list(range(len(other) + 1))
    for i, a in enumerate(one, start=1):
        current = [i]
        for j, b in enumerate(other, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1]


def shorten(text: str, limit: int) -> str:
    """A one-line help cut to `limit` characters the way Click cuts it."""
    if len(text) <= limit:
        return text
    import textwrap

    return textwrap.shorten(text, max(limit, 3), placeholder="...", break_on_hyphens=False)


def group(name: str, help: str, lazy: Lazy) -> LazyGroup:
    return LazyGroup(name, help=help, lazy=lazy, no_args_is_help=True)
