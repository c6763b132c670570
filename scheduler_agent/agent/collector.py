"""The cyclic garbage collector paused while many long-lived objects are made (issue 14).

Reading a stored list, parsing an .ics file and importing the SDK each make objects that all stay alive:
every collection pass during them walks those objects again and finds next to no garbage.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(*, freeze: bool = False) -> Iterator[None]:
    """No cyclic collection inside (reference counting goes on); on again after only if it was on before.

    `freeze`: what exists when the block ends is kept out of every later collection (`gc.freeze`), for
    objects that live on (a stored list read for a session): else the first pass after the block walks all of
    them, and each full pass after it walks them again, in every iteration of the loop that follows. Reference
    counting still frees them when they go."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if freeze:
            gc.freeze()
    finally:
        if enabled:
            gc.enable()
