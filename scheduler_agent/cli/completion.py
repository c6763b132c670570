"""`--install-completion` and `--show-completion`: Click's shell completion (`_SCHEDULER_AGENT_COMPLETE`).

The shell asks the program itself for completions: `eval "$(_SCHEDULER_AGENT_COMPLETE=bash_source
scheduler-agent)"` in ~/.bashrc (zsh_source in ~/.zshrc; fish_source into fish's completions folder).
"""

from __future__ import annotations

import os
from pathlib import Path

import click
from click.shell_completion import get_completion_class

PROG, VARIABLE = "scheduler-agent", "_SCHEDULER_AGENT_COMPLETE"


def shell() -> str:
    """The user's shell (from $SHELL): bash, zsh or fish; a clear error for any other."""
    name = Path(os.environ.get("SHELL", "bash")).name
    if get_completion_class(name) is None:
        raise click.UsageError(f"no completion for the shell {name!r}: bash, zsh and fish have one")
    return name


def script(command: click.Command) -> str:
    """The completion script for the current shell, as `eval` runs it."""
    completion = get_completion_class(shell())
    assert completion is not None
    return completion(command, {}, PROG, VARIABLE).source()


def install(command: click.Command) -> str:
    """Add the line that loads the completion to the shell's start-up file (once); say where."""
    name = shell()
    if name == "fish":
        target = Path.home() / ".config/fish/completions" / f"{PROG}.fish"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(script(command), encoding="utf-8")
    else:
        target = Path.home() / f".{name}rc"
        line = f'eval "$({VARIABLE}={name}_source {PROG})"'
        present = target.read_text(encoding="utf-8") if target.exists() else ""
        if line not in present:
            with target.open("a", encoding="utf-8") as rc:
                rc.write(f"\n{line}\n")
    return f"{name} completion installed in {target}; restart the shell to use it."
