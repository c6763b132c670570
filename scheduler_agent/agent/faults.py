"""Fault points and pauses: hooks FOR TESTS ONLY. Never set these variables in real use.

Code marks the moments where a crash or a race matters with `reach(point)` and `pause(point)`;
both do nothing unless a test set the environment variables below.

- `SCHEDULER_AGENT_FAULT=POINT` kills this process with SIGKILL (no cleanup, no `finally`,
  no atexit: what a power cut or `kill -9` does) the first time `reach(POINT)` runs;
  `POINT@N` kills it the N-th time `reach(POINT)` runs in this process. Several may be
  given, separated by commas.
- `reach_later(POINT)` counts and matches the same way, but the SIGKILL comes
  `SCHEDULER_AGENT_FAULT_DELAY` seconds later (default 0.5), from a timer thread: the way
  to die *while* the caller is blocked, e.g. waiting for the model's response.
- The fault variable is read once per process, at the first `reach` (every loop iteration passes here a
  few times, and a lookup in `os.environ` costs microseconds each time: issue 14). A test that sets it
  in its own process calls `rearm()` after.
- `SCHEDULER_AGENT_TEST_PAUSE_AT=POINT` with `SCHEDULER_AGENT_TEST_PAUSE=SECONDS` makes
  `pause(POINT)` sleep that long, so a test can make two processes really overlap there.

Points in the code:
- `submit_stored` (reach): `submit` stored the user turn and has not started its workflow (cli/workers.py).
- `after_assistant_stored`, `after_results_stored` (reach): in the session's steps, see
  `session/steps.py`; `between_calls` (reach) and `waiting_for_model` (reach_later): in its
  listener, `session/listener.py`.
- `after_calendar_write` (reach): a change (`create_event`, `move_event`, `cancel_event`) has
  committed the event and its bookings record, and has not returned its result yet.
- `between_check_and_insert` (pause): inside a change's transaction, holding the write lock,
  after every check passed and before the event is written.
- On a CalDAV calendar (calendar/caldav/writes.py, changes.py, remote.py), a
  change has no transaction; its moments, in order:
  `caldav_before_put` (pause and reach): a booking checked, its `caldav_bookings` row committed,
  its PUT not sent; `caldav_before_change` (pause and reach): the same for a move or cancellation,
  its ETag read; `after_caldav_put` (reach): the booking is on the server, not yet read back or
  given its local id; `after_caldav_write` (reach): the change is on the server and read back, its
  `bookings` record not yet written. `after_calendar_write` then follows as above.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from functools import cache

from scheduler_agent.agent.errors import InputError

FAULT_VARIABLE = "SCHEDULER_AGENT_FAULT"
DELAY_VARIABLE = "SCHEDULER_AGENT_FAULT_DELAY"
DEFAULT_DELAY_SECONDS = 0.5
PAUSE_AT_VARIABLE = "SCHEDULER_AGENT_TEST_PAUSE_AT"
PAUSE_VARIABLE = "SCHEDULER_AGENT_TEST_PAUSE"

_reached: Counter[str] = Counter()


class FaultSettingError(InputError, ValueError):
    """A fault-injection variable a person set that cannot be read: one line at the edge, not a bug."""


def reach(point: str) -> None:
    """Count a pass through `point`; SIGKILL this process if `SCHEDULER_AGENT_FAULT` names this pass."""
    if _fires(point):
        _kill()


def reach_later(point: str) -> None:
    """Like `reach`, but the SIGKILL comes `SCHEDULER_AGENT_FAULT_DELAY` seconds later, from a timer thread."""
    if _fires(point):
        text = os.environ.get(DELAY_VARIABLE, "")
        try:
            delay = float(text) if text else DEFAULT_DELAY_SECONDS
        except ValueError:
            raise FaultSettingError(f"{DELAY_VARIABLE}={text!r} is not a number of seconds: give e.g. 0.5") from None
        timer = threading.Timer(delay, _kill)
        timer.daemon = True
        timer.start()


def rearm() -> None:
    """Read `SCHEDULER_AGENT_FAULT` again at the next `reach` (for a test that changed it in this process)."""
    _fault_specs.cache_clear()


def reached(point: str) -> int:
    """How many times `point` has been reached in this process."""
    return _reached[point]


def pause(point: str) -> None:
    """Sleep `SCHEDULER_AGENT_TEST_PAUSE` seconds if `SCHEDULER_AGENT_TEST_PAUSE_AT` names `point`."""
    if os.environ.get(PAUSE_AT_VARIABLE, "").strip() != point:
        return
    text = os.environ.get(PAUSE_VARIABLE, "")
    try:
        seconds = float(text)
    except ValueError:
        raise FaultSettingError(f"{PAUSE_VARIABLE}={text!r} is not a number of seconds: give e.g. 1 or 0.5") from None
    time.sleep(seconds)


def _fires(point: str) -> bool:
    _reached[point] += 1
    specs = _fault_specs()
    if not specs:  # the case in real use: every iteration passes here a few times
        return False
    for spec in specs:
        name, _, nth = spec.partition("@")
        if name == point and _reached[point] == _nth(spec, nth):
            return True
    return False


@cache
def _fault_specs() -> tuple[str, ...]:
    """`SCHEDULER_AGENT_FAULT`'s entries, read once (`rearm` reads it again)."""
    return tuple(_specs(os.environ.get(FAULT_VARIABLE) or ""))


def _kill() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _specs(text: str) -> list[str]:
    return [spec.strip() for spec in text.split(",") if spec.strip()]


def _nth(spec: str, text: str) -> int:
    if not text:
        return 1
    if not text.isdigit() or int(text) < 1:
        raise FaultSettingError(f"{FAULT_VARIABLE} entry {spec!r} is malformed: give POINT or POINT@N with N >= 1")
    return int(text)
