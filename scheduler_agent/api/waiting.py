"""While a request is out: a line every `STILL_WAITING_SECONDS` of silence, so a stalled reply is never waited
on in silence (the default `--timeout` is ten minutes). Told from a thread of its own, as a `StillWaiting`
event; any part of the reply that arrives starts the count again."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TypeVar

from scheduler_agent.agent.events import StillWaiting

STILL_WAITING_SECONDS = 15.0
OnWait = Callable[[StillWaiting], None]
T = TypeVar("T")


class Watch:
    """`with Watch(report, timeout):` around a request; `touch()` when a part of the reply arrives."""

    def __init__(self, report: OnWait | None, timeout: float, every: float | None = None) -> None:
        self.report = report
        self.timeout = timeout
        self.every = STILL_WAITING_SECONDS if every is None else every
        self.started = self.last = time.monotonic()
        self.done = threading.Event()

    def __enter__(self) -> Watch:
        if self.report is not None:
            threading.Thread(target=self._run, name="still-waiting", daemon=True).start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.done.set()

    def touch(self) -> None:
        self.last = time.monotonic()

    def touching(self, items: Iterator[T]) -> Iterator[T]:
        for item in items:
            self.touch()
            yield item

    def _run(self) -> None:
        assert self.report is not None
        while not self.done.wait(max(self.last + self.every - time.monotonic(), 0.01)):
            now = time.monotonic()
            if now - self.last >= self.every:
                self.report(StillWaiting(now - self.started, self.timeout))
                self.last = now
