"""The command line: the only layer that imports Click, and the one place that turns exceptions into exit codes.

Nothing else in the package imports `cli`. `app` is the root command group (Click); `main` is the console script.
A Ctrl-C while the commands load is one line and exit 130, never a traceback.
"""

import sys

try:
    from scheduler_agent.cli.app import app, main
except KeyboardInterrupt:
    sys.stderr.write("\nError: Interrupted.\n")
    raise SystemExit(130) from None

__all__ = ["app", "main"]
