"""The lessons: the cassettes shipped in `cassettes/`, each showing one thing about the loop."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.playback.cassette_file import read_setup

# The order of the tour; a cassette not named here comes after, by name.
ORDER = (
    "no_mornings",
    "streamed",
    "wrong_day",
    "parallel_calls",
    "iteration_bound",
    "overloaded",
    "overloaded_exhausted",
    "reschedule",
    "team_meeting",
    "standing_rule",
)


@dataclass(frozen=True)
class LessonInfo:
    name: str
    kind: str
    title: str
    lesson: str
    path: Path


def cassettes_dir() -> Path:
    return Path(str(resources.files("scheduler_agent.cassettes")))


def lessons() -> list[LessonInfo]:
    found = []
    for path in cassettes_dir().glob("*.yaml"):
        setup = read_setup(path)
        found.append(
            LessonInfo(path.stem, setup.get("kind", "?"), setup.get("title", ""), setup.get("lesson", ""), path)
        )
    rank = {name: index for index, name in enumerate(ORDER)}
    return sorted(found, key=lambda lesson: (rank.get(lesson.name, len(ORDER)), lesson.name))


def lesson_path(name: str) -> Path:
    path = cassettes_dir() / f"{name}.yaml"
    if not path.is_file():
        names = ", ".join(lesson.name for lesson in lessons())
        raise AgentError(f"No lesson {name!r}. The lessons are: {names} (`scheduler-agent demo --list`)")
    return path
