"""The order of the package's layers, written once: each package may import only the packages before it.

`tests/test_layout.py` walks every import of the package against this list, and the documentation's
Layout page draws its map from it (`docs/hooks.py`). A package on the list that is not in this tree yet
is skipped by both: the list is the order the packages take when they arrive. This module imports
nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple


class Layer(NamedTuple):
    package: str  # the subpackage of scheduler_agent
    role: str  # one line for the map


# From the bottom (imports nothing else of the package) to the top (the command line).
LAYERS: tuple[Layer, ...] = (
    Layer("agent", "the pure core: the loop and what it calls; no SDK, no database, no Click"),
    Layer("api", "the Messages API: the one module that calls the SDK, streamed replies, models, prices"),
    Layer("grammar", "the message list's grammar: the check (full and incremental), lint"),
    Layer("storage", "the store: SQLite or PostgreSQL, the schema, its migrations, the conversations"),
    Layer("calendar", "the calendar: people, events, slots, iCalendar, feeds, CalDAV, and the model's tools"),
    Layer("testing", "for tests, lessons and benchmarks only: a scripted Messages API, a real PostgreSQL"),
    Layer("mcp_client", "tools from MCP servers, for the loop"),
    Layer("session", "the loop wired to the check, the store, the calendar and the person"),
    Layer("playback", "cassettes: record and replay a conversation's HTTP"),
    Layer("workflows", "the session as durable Temporal workflows"),
    Layer("view", "the trace viewer's page"),
    Layer("lessons", "the lessons: their catalogue, scripts and authoring"),
    Layer("mcp_server", "the calendar tools served over the Model Context Protocol"),
    Layer("cli", "the command line, on Click: the only layer that imports Click"),
)

ORDER: tuple[str, ...] = tuple(layer.package for layer in LAYERS)

# Product code never imports `testing`: only these (and the tests and benchmarks, outside the package) do.
TESTING_USERS: tuple[str, ...] = ("lessons",)

PACKAGE = Path(__file__).resolve().parent


def present() -> list[Layer]:
    """The layers this tree has, bottom first."""
    return [layer for layer in LAYERS if (PACKAGE / layer.package / "__init__.py").exists()]


def drawing() -> str:
    """The map of the layers, top first (what a person types) down to the loop, one line each."""
    layers = list(reversed(present()))
    width = max(len(layer.package) for layer in layers) + 2
    lines = []
    for n, layer in enumerate(layers):
        lines.append(f"{layer.package + '/':<{width}}{layer.role}")
        if n < len(layers) - 1:
            lines.append("  |")
    return "\n".join(line.rstrip() for line in lines)
