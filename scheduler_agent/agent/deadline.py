"""A deadline for one tool call, on the monotonic clock (wall-clock changes never move it).

Deadlines are cooperative: a tool checks its deadline at the point where stopping is still
safe, e.g. `create_event` right before it commits, and raises `DeadlineExceeded` there so
that nothing is written. `answer_call` turns that into a result that says what happened.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


class DeadlineExceeded(Exception):
    """A tool stopped because its deadline passed; whatever it was writing was rolled back."""

    def __init__(self, deadline: Deadline, doing: str = "the call") -> None:
        super().__init__(f"{doing} passed its {deadline.seconds:g}-second deadline")
        self.deadline = deadline


@dataclass(frozen=True)
class Deadline:
    """The moment (time.monotonic) by which a call must finish, and the budget it was given."""

    ends_at: float
    seconds: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        """A deadline `seconds` from now (0 or less: already expired)."""
        return cls(time.monotonic() + seconds, seconds)

    def remaining(self) -> float:
        """Seconds left, never below 0."""
        return max(0.0, self.ends_at - time.monotonic())

    def expired(self) -> bool:
        return time.monotonic() >= self.ends_at

    def check(self, doing: str = "the call") -> None:
        """Raise DeadlineExceeded if the deadline has passed."""
        if self.expired():
            raise DeadlineExceeded(self, doing)
