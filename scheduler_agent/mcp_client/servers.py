"""An MCP server as a person names it: `--mcp NAME=COMMAND`, `--mcp NAME=URL`, `--mcp-trust NAME`, the config file.

The config file is `mcp.toml` in the config folder (`$XDG_CONFIG_HOME/scheduler-agent/`, or
`~/.config/scheduler-agent/`), one table per server:

    [servers.work]
    command = "npx -y some-calendar-mcp"     # or: url = "https://mcp.example.com/mcp"
    trusted = true                          # its read-only tools run without asking

A server given with `--mcp` replaces the config file's of the same name. Nothing here imports the SDK.
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from scheduler_agent.agent.errors import AgentError

NAME = re.compile(r"[a-z0-9_-]+")
CONFIG_NAME = "mcp.toml"


class ServerSpecError(AgentError):
    """A server named wrongly, on the command line or in the config file: a usage error (exit 2)."""

    exit_code = 2


@dataclass(frozen=True)
class ServerSpec:
    """One server: its name, and either the command that starts it (stdio) or its URL (Streamable HTTP)."""

    name: str
    command: tuple[str, ...] = ()
    url: str | None = None
    trusted: bool = False  # its tools annotated read-only run without approval

    @property
    def where(self) -> str:
        """How it is reached, for a person (the trace): the URL, or the program it runs."""
        return self.url if self.url is not None else self.command[0]


def parse_spec(text: str) -> ServerSpec:
    """`NAME=COMMAND` (split as a shell splits it, no shell run) or `NAME=URL` (http:// or https://)."""
    name, equals, value = text.partition("=")
    if not equals or not value.strip():
        raise ServerSpecError(f"--mcp {text!r}: give NAME=COMMAND or NAME=URL, e.g. --mcp work='npx -y some-mcp'")
    check_name(name, f"--mcp {text!r}")
    value = value.strip()
    if re.match(r"https?://", value):
        return ServerSpec(name, url=value)
    try:
        command = tuple(shlex.split(value))
    except ValueError as exc:  # an unclosed quote
        raise ServerSpecError(f"--mcp {text!r}: the command cannot be split as a shell would ({exc})") from None
    return ServerSpec(name, command=command)


def check_name(name: str, where: str) -> None:
    if not NAME.fullmatch(name):
        raise ServerSpecError(
            f"{where}: the server name {name!r} must be lowercase letters, digits, '_' or '-' (e.g. work, gcal)"
        )


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "scheduler-agent" / CONFIG_NAME


def read_config(path: Path) -> list[ServerSpec]:
    """The servers of the config file; none when it does not exist. A mistake in it is one line naming it."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ServerSpecError(f"{path}: cannot be read as TOML ({exc})") from None
    servers = data.get("servers", {})
    if not isinstance(servers, dict):
        raise ServerSpecError(f"{path}: `servers` must be a table of servers, e.g. [servers.work]")
    found = []
    for name, table in servers.items():
        where = f"{path}, [servers.{name}]"
        check_name(name, where)
        if not isinstance(table, dict) or ("command" in table) == ("url" in table):
            raise ServerSpecError(f'{where}: give either command = "..." or url = "..."')
        value = table.get("command", table.get("url"))
        trusted = table.get("trusted", False)
        if not isinstance(value, str) or not isinstance(trusted, bool):
            raise ServerSpecError(f"{where}: command and url are strings, trusted is true or false")
        if "url" in table and not re.match(r"https?://", value):
            raise ServerSpecError(f"{where}: url {value!r} must start with http:// or https://")
        spec = parse_spec(f"{name}={value}") if "command" in table else ServerSpec(name, url=value)
        found.append(replace(spec, trusted=trusted))
    return found


def servers_for(given: tuple[str, ...], trusted: tuple[str, ...], config: Path | None = None) -> list[ServerSpec]:
    """The servers of a run: the config file's, then `--mcp`'s (replacing one of the same name), with `--mcp-trust`."""
    by_name = {spec.name: spec for spec in read_config(config or config_path())}
    named: set[str] = set()
    for text in given:
        spec = parse_spec(text)
        if spec.name in named:
            raise ServerSpecError(f"--mcp {text!r}: a second server named {spec.name!r}; give each its own name")
        named.add(spec.name)
        by_name[spec.name] = spec
    for name in trusted:
        if name not in by_name:
            known = ", ".join(by_name) or "none"
            raise ServerSpecError(f"--mcp-trust {name}: no server of that name (the servers: {known})")
        by_name[name] = replace(by_name[name], trusted=True)
    return list(by_name.values())
