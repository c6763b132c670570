"""Recording: what reaches a cassette file, and that authoring is reproducible."""

from __future__ import annotations

from pathlib import Path

from scheduler_agent import cassette
from scheduler_agent.authoring import author, cassette_path
from scheduler_agent.model_api import ModelAPI, make_client
from scheduler_agent.request import build_request
from scheduler_agent.scripted_server import Reply, ScriptedServer, text

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


def test_authoring_the_canonical_cassette_again_gives_the_same_file(tmp_path: Path) -> None:
    fresh = tmp_path / "no_mornings.yaml"
    author("no_mornings", fresh)
    assert fresh.read_text() == cassette_path("no_mornings").read_text()
