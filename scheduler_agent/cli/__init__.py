"""The command line: the only layer that imports Typer, and the one place that turns exceptions into exit codes.

Nothing else in the package imports `cli`. `app` builds the commands; `main` is the console script.
"""

from scheduler_agent.cli.app import app, main

__all__ = ["app", "main"]
