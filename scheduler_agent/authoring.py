"""Make the cassettes: the real loop and SDK, recorded by vcrpy, against scripted replies or the real API.

    python -m scheduler_agent.authoring                 # every lesson, scripted replies on loopback
    python -m scheduler_agent.authoring --live          # the recordable lessons, against the real API

Scripted mode needs no key and no network: a loopback server (scripted_server.py) serves the
replies written below, so every request in the cassette is the real body the loop sent. Live
mode needs credentials the SDK can find (ANTHROPIC_API_KEY) and re-records only the lessons a
real model can be asked to do again.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from scheduler_agent import cassette
from scheduler_agent.calendar_store import demo_fixture
from scheduler_agent.events import JSON, ignore
from scheduler_agent.model_api import ModelAPI, make_client
from scheduler_agent.options import DEFAULT_MAX_ITERATIONS, DEFAULT_MODEL
from scheduler_agent.replay import PLACEHOLDER_KEY, calendar_from, settings_of
from scheduler_agent.scripted_server import Reply, ScriptedServer, text, tool_use
from scheduler_agent.session import Session


@dataclass(frozen=True)
class Lesson:
    title: str
    recordable: bool
    inputs: list[str]
    replies: list[Reply]
    clock: str = "2026-08-27T09:00"
    options: JSON = field(default_factory=lambda: {"model": DEFAULT_MODEL, "max_iterations": DEFAULT_MAX_ITERATIONS})

    def setup(self, *, live: bool) -> JSON:
        how = (
            "recorded against the real API"
            if live
            else "recorded by running the real loop and SDK against a loopback server that served scripted "
            "replies: every request is the real body; the replies were written by hand and their usage token "
            "counts are estimates"
        )
        return {
            "title": self.title,
            "kind": "recordable" if self.recordable else "scripted",
            "how": how,
            "clock": self.clock,
            "calendar": demo_fixture(),
            "inputs": self.inputs,
            "options": self.options,
        }


LESSONS: dict[str, Lesson] = {
    "no_mornings": Lesson(
        title="The canonical trace: find a slot with Priya next week and book it, nothing before 10am",
        recordable=True,
        inputs=["Find a 30-minute slot with Priya next week and book it. Nothing before 10am."],
        replies=[
            Reply(
                [tool_use("toolu_scripted_nm_01", "find_free_slots", {"person": "priya", "week": "2026-08-31"})],
                "tool_use",
            ),
            Reply(
                [
                    tool_use(
                        "toolu_scripted_nm_02",
                        "create_event",
                        {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30},
                    )
                ],
                "tool_use",
            ),
            Reply(
                [
                    text(
                        "Booked: Monday 2026-08-31, 14:00-14:30 (Europe/London), 30 minutes with Priya Raman. "
                        "The other free windows (Mon 09:00 and Wed 09:15) were before 10am."
                    )
                ]
            ),
        ],
    ),
}


def cassette_path(name: str) -> Path:
    """Where a lesson's cassette lives in the source tree (cassettes/NAME.yaml)."""
    return Path(str(resources.files("scheduler_agent.cassettes"))) / f"{name}.yaml"


def author(name: str, path: Path, *, live: bool = False) -> JSON:
    """Run the lesson through the real loop while vcrpy records it into `path`; return the setup written."""
    lesson = LESSONS[name]
    setup = lesson.setup(live=live)
    with ExitStack() as stack:
        conn, clock = stack.enter_context(
            calendar_from(setup, Path(stack.enter_context(tempfile.TemporaryDirectory())))
        )
        server = None if live else stack.enter_context(ScriptedServer(lesson.replies))
        client = make_client() if server is None else make_client(api_key=PLACEHOLDER_KEY, base_url=server.url)
        session = Session(conn, clock, ModelAPI(client).send, settings_of(setup), ignore)
        with cassette.recording(path, setup):
            for user_text in setup["inputs"]:
                setup["exit_code"] = session.ask(user_text).stop.exit_code  # the setup is saved when recording ends
        if server is not None and server.unused:
            raise RuntimeError(f"{name}: {server.unused} scripted replies were never requested")
    return setup


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scheduler_agent.authoring", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help=f"lessons to record (default: all): {', '.join(LESSONS)}")
    parser.add_argument("--live", action="store_true", help="record against the real API (recordable lessons)")
    parser.add_argument(
        "--out", type=Path, default=Path("cassettes"), help="directory to write to (default: ./cassettes)"
    )
    args = parser.parse_args(argv)
    if not args.out.is_dir():
        parser.error(f"no directory {args.out}: run this from the repository root, or give --out DIR")
    names = args.names or [n for n in LESSONS if LESSONS[n].recordable or not args.live]
    for name in names:
        if name not in LESSONS:
            parser.error(f"no lesson {name!r}; the lessons are {', '.join(LESSONS)}")
        if args.live and not LESSONS[name].recordable:
            parser.error(f"{name} is scripted: a real model will not reproduce it on cue")
        path = args.out / f"{name}.yaml"
        author(name, path, live=args.live)
        sys.stdout.write(f"wrote {path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
