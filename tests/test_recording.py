"""Recording: what reaches a cassette file, and that authoring is reproducible."""

from __future__ import annotations

from pathlib import Path

from scheduler_agent.agent.request import build_request
from scheduler_agent.api.client import ModelAPI, make_client
from scheduler_agent.playback import vcr_cassette as cassette
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text

SECRET = "sk-ant-api03-THIS-MUST-NOT-LEAK"


def test_no_secret_or_per_machine_header_reaches_the_file(tmp_path: Path) -> None:
    path = tmp_path / "secret.yaml"
    headers = {"anthropic-organization-id": "org-SECRET", "set-cookie": "session=SECRET"}
    with ScriptedServer([Reply([text("hi")], headers=headers)]) as server:
        client = make_client(api_key=SECRET, base_url=server.url, max_retries=0)
        with cassette.recording(path, {"title": "t", "kind": "scripted"}):
            request = build_request(
                model="claude-sonnet-5-5",
                system="s",
                tools=[],
                messages=[{"role": "user", "content": [{"type": "text", "text": "hello"}]}],
            )
            ModelAPI(client).send(request)
    written = path.read_text()
    assert "hello" in written
    for leak in (SECRET, "SECRET", "authorization", "x-api-key", "x-stainless", "user-agent", "127.0.0.1"):
        assert leak not in written, leak


def test_ask_record_writes_a_cassette_that_replays_offline_with_no_secret(
    demo_db: Path,
    api,
    tmp_path: Path,
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    from click.testing import CliRunner

    from scheduler_agent.cli import app
    from scheduler_agent.testing.scripted_server import tool_use

    runner = CliRunner()
    headers = {"anthropic-organization-id": "org-SECRET", "set-cookie": "session=SECRET"}
    call = tool_use("toolu_rec_1", "create_event", {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30})
    api([Reply([call], "tool_use", headers=headers), Reply([text("Booked Monday 14:00.")], headers=headers)])
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    path = tmp_path / "session.yaml"
    live = runner.invoke(
        app,
        ["ask", "Book Priya Monday 2pm", "--yes", "--record", str(path), "--db", str(demo_db), "--today", "2026-08-27"],
    )
    assert live.exit_code == 0, live.stderr
    written = path.read_text()
    for leak in ("SECRET", "authorization", "x-api-key", "cookie", "organization", "x-stainless", "127.0.0.1"):
        assert leak not in written, leak
    assert "Book Priya Monday 2pm" in written
    assert "recorded from a live session" in written

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    replayed = runner.invoke(app, ["replay", str(path)])  # offline, against a fresh copy of the calendar
    assert replayed.exit_code == 0, replayed.stderr
    assert replayed.stdout.strip() == live.stdout.strip() == "Booked Monday 14:00."
    assert "Event id: 29" in replayed.stderr  # the same ids: the calendar was carried with its event ids


def test_chat_record_keeps_every_input_and_the_exit_code(demo_db: Path, api, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from scheduler_agent.cli import app
    from scheduler_agent.playback.cassette_file import read_setup

    runner = CliRunner()
    api([Reply([text("Hello.")]), Reply([text("Goodbye.")])])
    path = tmp_path / "chat.yaml"
    result = runner.invoke(app, ["chat", "--record", str(path), "--db", str(demo_db)], input="hi\nbye\n")
    assert result.exit_code == 0, result.stderr
    setup = read_setup(path)
    assert setup["inputs"] == ["hi", "bye"]
    assert setup["exit_code"] == 0
    assert setup["kind"] == "recordable"
    replayed = runner.invoke(app, ["replay", str(path)])
    assert replayed.exit_code == 0
    assert replayed.stdout.splitlines() == ["Hello.", "Goodbye."]
    assert "you> hi" in replayed.stderr
    assert "you> bye" in replayed.stderr


def test_record_cannot_continue_a_conversation(demo_db: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from scheduler_agent.cli import app

    result = CliRunner().invoke(app, ["ask", "x", "-c", "--record", str(tmp_path / "r.yaml"), "--db", str(demo_db)])
    assert result.exit_code == 2
    assert "--record starts a new conversation" in result.stderr


def test_the_live_re_record_path_records_whatever_the_sdk_is_pointed_at(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`authoring --live` uses the SDK's own configuration; here it is pointed at loopback, never the network."""
    from scheduler_agent.lessons.authoring import main
    from scheduler_agent.lessons.scripts import LESSONS
    from scheduler_agent.playback.cassette_file import read_setup
    from scheduler_agent.playback.replay import replay

    with ScriptedServer(LESSONS["no_mornings"].replies) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        assert main(["--live", "no_mornings", "--out", str(tmp_path)]) == 0
    path = tmp_path / "no_mornings.yaml"
    setup = read_setup(path)
    assert setup["replies"] == "recorded"
    assert setup["how"] == "recorded against the real API"
    assert SECRET not in path.read_text()
    assert len(server.received) == 3
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    assert replay(path, report=lambda event: None).exit_code == 0


def test_live_refuses_a_scripted_lesson(tmp_path: Path) -> None:
    import pytest

    from scheduler_agent.lessons.authoring import main

    with pytest.raises(SystemExit) as stopped:
        main(["--live", "wrong_day", "--out", str(tmp_path)])
    assert stopped.value.code == 2
