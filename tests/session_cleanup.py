"""What the test run starts, it ends: a pytest plugin (loaded by conftest.py).

A server that lives for the whole session (PostgreSQL) is not stopped in its fixture's teardown: pytest
runs that teardown inside the last test's, where pytest-timeout charges it to that test. It is registered
with `at_session_end` instead and stopped in `pytest_sessionfinish`, which runs whether the run passed,
failed or was interrupted (Ctrl-C, or a SIGTERM, which this plugin turns into the same interrupt). Then
any process the run started and did not end (a descendant of this one) is ended. A run that passed leaves
no tmp_path folder (pytest's retention policy "failed", pyproject.toml), and then not the folder pytest
keeps them in either (`pytest-of-USER`, when nothing else is in it).
"""

from __future__ import annotations

import atexit
import contextlib
import getpass
import os
import signal
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Protocol, TypeVar

import pytest

_at_end: list[Callable[[], None]] = []


def at_session_end(stop: Callable[[], None]) -> None:
    """Call `stop` once when the session ends (last registered, first called)."""
    _at_end.append(stop)


class SessionServer(Protocol):
    def stop(self) -> None: ...


S = TypeVar("S", bound=SessionServer)


def for_the_session(start: Callable[[], S], unavailable: type[Exception], needed: str, none: str) -> S:
    """`start()`'s server, stopped when the session ends. When it cannot start (`unavailable`), the tests that
    need it fail where CI installed it (CI=true) with `needed`, and are skipped elsewhere with `none`."""
    try:
        server = start()
    except unavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{needed}: {exc}")
        pytest.skip(f"{none}: {exc}")
    at_session_end(server.stop)
    return server


def _children() -> dict[int, list[int]]:
    """Every process's children, read from /proc (a process that ends while we read is left out)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    return children


def descendants(pid: int) -> list[int]:
    """The processes below `pid`, parents before their children."""
    tree = _children()
    found: list[int] = []
    todo = list(tree.get(pid, []))
    while todo:
        child = todo.pop(0)
        found.append(child)
        todo.extend(tree.get(child, []))
    return found


def _end_leftover_processes() -> None:
    """SIGTERM every process this run started and left running; SIGKILL what is still there after 5 s."""
    left = descendants(os.getpid())
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = [pid for pid in left if Path(f"/proc/{pid}").exists() and not _is_zombie(pid)]
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def end_session() -> None:
    """Stop what was registered, then whatever the run left running. Safe to call twice."""
    while _at_end:
        stop = _at_end.pop()
        try:
            stop()
        except Exception as exc:  # one failing stop must not keep the others from running
            print(f"session clean-up: {stop!r} failed: {exc}")
    _end_leftover_processes()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config: pytest.Config) -> None:
    # A SIGTERM (a CI runner's stop, `timeout`) ends the run as Ctrl-C does, so the clean-up below still runs.
    signal.signal(signal.SIGTERM, _interrupt)
    atexit.register(end_session)  # a last resort, should the session end without pytest_sessionfinish


def _remove_empty_temp_root() -> None:
    """pytest removes a passed run's numbered folder, but not `pytest-of-USER` that holds it (as pytest names it)."""
    root = Path(os.environ.get("PYTEST_DEBUG_TEMPROOT") or tempfile.gettempdir()).resolve()
    with contextlib.suppress(OSError):  # not empty (a failed run's folder, another run's), or already gone
        (root / f"pytest-of-{getpass.getuser()}").rmdir()


@pytest.hookimpl(trylast=True)  # after pytest's own, which removes the numbered folder
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    end_session()
    _remove_empty_temp_root()
