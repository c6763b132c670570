"""The canonical no-mornings task sends the same bytes as before the loop ran on two steps (issue 35).

`tests/data/no_mornings_bytes.sha256` holds the sha256 of every request body the scripted server received
and of what `demo --dump-array` showed, recorded from the loop as it was before `run_turn` took a model step
and a tool round (main at a4d79a0). Refactoring the loop must not move a byte of either. To record them
again after a change that is meant to move them, run this file (`python tests/test_same_requests.py`) into
the fixture.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

from click.testing import CliRunner

from scheduler_agent.agent.events import ignore
from scheduler_agent.api.client import ModelAPI, make_client
from scheduler_agent.cli import app
from scheduler_agent.lessons.authoring import cassette_path, setup_for
from scheduler_agent.lessons.scripts import LESSONS
from scheduler_agent.playback.cassette_file import ReadableYaml
from scheduler_agent.playback.replay import PLACEHOLDER_KEY, Replayed, calendar_from, run_inputs, settings_of
from scheduler_agent.session.session import Session
from scheduler_agent.testing.scripted_server import ScriptedServer

FIXTURE = Path(__file__).resolve().parent / "data" / "no_mornings_bytes.sha256"


def task_bodies() -> list[bytes]:
    """The canonical task, in a stored session, against the scripted server: each request body as it came."""
    lesson = LESSONS["no_mornings"]
    setup = setup_for(lesson, live=False)
    with (
        tempfile.TemporaryDirectory() as tmp,
        calendar_from(setup, Path(tmp)) as (conn, clock),
        ScriptedServer(lesson.replies) as server,
    ):
        send = ModelAPI(make_client(api_key=PLACEHOLDER_KEY, base_url=server.url, max_retries=0)).send
        session = Session(conn, clock, send, settings_of(setup), ignore)
        session.store()
        assert run_inputs(session, lesson.inputs, Replayed()).exit_code == 0
        return list(server.bodies)


def demo_dump() -> tuple[bytes, bytes]:
    """`demo --dump-array --dump-array-file F`: what it showed (stdout, then stderr) and the file F."""
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "dump.jsonl"
        result = CliRunner().invoke(app, ["demo", "--dump-array", "--dump-array-file", str(dump)])
        assert result.exit_code == 0, result.stderr
        return (result.stdout + result.stderr).encode(), dump.read_bytes()


def observed() -> list[tuple[str, bytes]]:
    bodies = [(f"request {n} of the no-mornings task", body) for n, body in enumerate(task_bodies(), 1)]
    shown, file = demo_dump()
    return [*bodies, ("demo --dump-array, as shown", shown), ("demo --dump-array-file", file)]


def digest_lines(items: list[tuple[str, bytes]]) -> list[str]:
    return [f"{hashlib.sha256(data).hexdigest()}  {len(data)}  {what}" for what, data in items]


def recorded() -> list[str]:
    return [line for line in FIXTURE.read_text().splitlines() if line and not line.startswith("#")]


def test_the_no_mornings_task_sends_the_same_bytes_as_before() -> None:
    items = observed()
    assert [what for what, _ in items] == [line.split("  ", 2)[2] for line in recorded()]
    for line, wanted in zip(digest_lines(items), recorded(), strict=True):
        assert line == wanted  # one body or one dump per assert: the failure names which moved


def test_the_request_bodies_are_the_cassettes() -> None:
    """Beside the bytes, the same bodies as JSON values: a moved byte names its place here, by path."""
    cassette = ReadableYaml.deserialize(cassette_path("no_mornings").read_text())
    recorded_bodies = [json.loads(i["request"]["body"]) for i in cassette["interactions"]]
    assert [json.loads(body) for body in task_bodies()] == recorded_bodies


if __name__ == "__main__":
    print("# sha256, bytes, what: recorded by python tests/test_same_requests.py")
    print("\n".join(digest_lines(observed())))
