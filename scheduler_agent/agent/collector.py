"""The cyclic garbage collector paused while many long-lived objects are made (issue 14).

Reading a stored list, parsing an .ics file and importing the SDK each make objects that all stay alive:
every collection pass during them walks those objects again and finds next to no garbage.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside (reference counting goes on); on again after only if it was on before."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
