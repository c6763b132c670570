"""Make the cassettes: the real loop and SDK, recorded by vcrpy, against scripted replies or the real API.

    python -m scheduler_agent.lessons.authoring                 # every lesson, scripted replies on loopback
    python -m scheduler_agent.lessons.authoring --live          # the recordable lessons, against the real API

Scripted mode needs no key and no network: a loopback server (testing/scripted_server.py) serves the
replies written below, so every request in the cassette is the real body the loop sent. Live
mode needs credentials the SDK can find (ANTHROPIC_API_KEY) and re-records only the lessons a
real model can be asked to do again.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

from scheduler_agent.agent.events import ignore
from scheduler_agent.agent.types import JSON
from scheduler_agent.api.client import ModelAPI, make_client
from scheduler_agent.calendar.fixtures import demo_fixture
from scheduler_agent.lessons.catalogue import cassettes_dir
from scheduler_agent.lessons.scripts import LESSONS, Lesson
from scheduler_agent.playback import vcr_cassette as cassette
from scheduler_agent.playback.replay import PLACEHOLDER_KEY, Replayed, calendar_from, run_inputs, settings_of
from scheduler_agent.session.session import Session
from scheduler_agent.testing.scripted_server import ScriptedServer


def setup_for(lesson: Lesson, *, live: bool) -> JSON:
    """What the cassette carries beside its interactions, so that replay needs nothing else."""
    how = (
        "recorded against the real API"
        if live
        else "recorded by running the real loop and SDK against a loopback server that served scripted "
        "replies: every request is the real body; the replies were written by hand and their usage token "
        "counts are estimates"
    )
    return {
        "title": lesson.title,
        "lesson": lesson.lesson,
        "kind": "recordable" if lesson.recordable else "scripted",
        "replies": "recorded" if live else "scripted",
        "how": how,
        "clock": lesson.clock,
        "calendar": {**demo_fixture(), **({"preferences": lesson.preferences} if lesson.preferences else {})},
        "inputs": lesson.inputs,
        "options": lesson.all_options(),
    }


def cassette_path(name: str) -> Path:
    """Where a lesson's cassette ships (cassettes/NAME.yaml in the package)."""
    return cassettes_dir() / f"{name}.yaml"


def author(name: str, path: Path, *, live: bool = False) -> JSON:
    """Run the lesson through the real loop while vcrpy records it into `path`; return the setup written."""
    lesson = LESSONS[name]
    setup = setup_for(lesson, live=live)
    with ExitStack() as stack:
        conn, clock = stack.enter_context(
            calendar_from(setup, Path(stack.enter_context(tempfile.TemporaryDirectory())))
        )
        server = None if live else stack.enter_context(ScriptedServer(lesson.replies))
        client = make_client() if server is None else make_client(api_key=PLACEHOLDER_KEY, base_url=server.url)
        # ModelAPI streams every request that says "stream": true (settings_of reads the lesson's option).
        session = Session(conn, clock, ModelAPI(client).send, settings_of(setup), ignore)
        session.store()
        with cassette.recording(path, setup):
            setup["exit_code"] = run_inputs(session, setup["inputs"], Replayed()).exit_code  # saved at the end
        if server is not None and server.unused:
            raise RuntimeError(f"{name}: {server.unused} scripted replies were never requested")
    return setup


def main(argv: list[str] | None = None) -> int:
    prog = "python -m scheduler_agent.lessons.authoring"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
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
