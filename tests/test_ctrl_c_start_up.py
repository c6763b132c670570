"""A Ctrl-C while the program starts: never lost, never called a bug.

`tests/test_terminal.py` presses Ctrl-C at several moments of a real start-up; these pin down the two places
found by pressing it at 500 random moments, where the KeyboardInterrupt lands in code that does not let it
through as it is.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import click
from click.testing import CliRunner

from scheduler_agent.cli.edge import person_facing

# A weakref callback, as the import system's for a module lock, in which the real SIGINT's handler raises:
# Python cannot raise it there (it is "unraisable"), so without the CLI's hook the key press would be lost.
LANDS_IN_A_CALLBACK = """
import os, signal, sys, time, weakref
from scheduler_agent.cli.edge import Unraisable

sys.unraisablehook = hook = Unraisable()
hook.running = {running}
# Python's own handler, as a program started from a terminal has it; started in the background by a shell
# (as CI may start this suite), SIGINT is ignored, and Python keeps it so.
signal.signal(signal.SIGINT, signal.default_int_handler)

class Lock:
    pass

def callback(ref):
    os.kill(os.getpid(), signal.SIGINT)
    {where}

lock = Lock()
ref = weakref.ref(lock, callback)
try:
    del lock  # the callback runs here
    time.sleep(5)  # a program waiting in a system call, as at a prompt
    print("lost")
except KeyboardInterrupt:
    print("raised again in the program")
"""


def run(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)


def test_a_ctrl_c_that_lands_in_a_weakref_callback_is_raised_again_in_the_program() -> None:
    done = run(LANDS_IN_A_CALLBACK.format(running=True, where="sum(range(10))  # the handler raises it here"))
    assert (done.stdout, done.stderr, done.returncode) == ("raised again in the program\n", "", 0)


def test_the_same_callback_without_a_ctrl_c_raises_nothing() -> None:
    script = LANDS_IN_A_CALLBACK.replace("os.kill(os.getpid(), signal.SIGINT)", "pass")
    done = run(script.format(running=True, where="pass").replace("time.sleep(5)", "time.sleep(0.5)"))
    assert (done.stdout, done.stderr, done.returncode) == ("lost\n", "", 0)


def test_a_ctrl_c_that_lands_in_a_callback_once_the_program_has_ended_is_let_go_quietly() -> None:
    """At exit (after `main` has returned) the key press is one the person made to leave: nothing to add."""
    script = LANDS_IN_A_CALLBACK.format(running=False, where="sum(range(10))")
    done = run(script.replace("time.sleep(5)", "time.sleep(0.5)"))
    assert (done.stdout, done.stderr, done.returncode) == ("lost\n", "", 0)


def test_a_ctrl_c_that_python_re_raised_as_another_error_is_still_an_interruption_not_a_bug(tmp_path: Path) -> None:
    """A Ctrl-C that lands in a descriptor's __set_name__ while a class is made (one in the SDK's types, while
    `anthropic` is imported) comes out of Python as RuntimeError("Error calling __set_name__ ...") on 3.11."""

    class LandsInSetName:
        def __set_name__(self, owner: type, name: str) -> None:
            raise KeyboardInterrupt  # where the signal's handler would raise it

    @click.command()
    @person_facing()
    def loading() -> None:
        type("Client", (), {"apps": LandsInSetName()})

    result = CliRunner().invoke(loading, [], env={"SCHEDULER_AGENT_DEBUG": "0", "XDG_DATA_HOME": str(tmp_path)})
    assert (result.exit_code, result.stderr) == (130, "Error: Interrupted.\n")
    assert not (tmp_path / "scheduler-agent" / "last-error.txt").exists()  # no traceback saved for a bug


def test_a_ctrl_c_while_click_parses_and_imports_the_command_is_exit_130_as_anywhere_else(tmp_path: Path) -> None:
    """Click's standalone mode would say "Aborted!" and exit 1; the exit codes' table says 130."""
    script = textwrap.dedent(
        """
        import importlib, sys
        from scheduler_agent.cli import main

        real = importlib.import_module

        def import_module(name, *args):
            if name == "scheduler_agent.cli.live":  # `chat`, imported by the group when it is asked for
                raise KeyboardInterrupt  # where the signal's handler would raise it
            return real(name, *args)

        importlib.import_module = import_module
        sys.argv = ["scheduler-agent", "chat", "--db", sys.argv[1]]
        main()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "cal.db")], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr, done.stdout) == (130, "\nError: Interrupted.\n", "")
    assert not (tmp_path / "cal.db").exists()  # nothing was started


def test_ask_json_reports_such_a_ctrl_c_as_the_interruption_it_exits_with(tmp_path: Path) -> None:
    """`ask --json` writes its summary before the edge exits: the two agree on 130."""
    import io
    import json

    from scheduler_agent.cli.json_report import JsonReport
    from scheduler_agent.storage.db import connect

    out = io.StringIO()
    try:
        raise RuntimeError("Error calling __set_name__ on 'cached_property' instance 'apps'") from KeyboardInterrupt()
    except RuntimeError as exc:
        JsonReport(out, connect(tmp_path / "cal.db")).write(None, exc)
    summary = json.loads(out.getvalue())
    assert (summary["exit_code"], summary["exit_reason"]) == (130, "Interrupted.")
