"""The pure parts: the request body, the prompt files, the default model."""

from __future__ import annotations

import warnings
from typing import get_args

import pytest

from scheduler_agent.agent.request import build_request
from scheduler_agent.cli.run_options import DEFAULT_MODEL
from scheduler_agent.session.prompt_loader import PromptError, read_prompt, render


def test_the_request_is_built_without_the_network_and_keeps_the_list_unmarked() -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    tools = [{"name": "t", "description": "d", "input_schema": {"type": "object", "properties": {}}}]
    request = build_request(model="m", system="s", tools=tools, messages=messages, max_tokens=100)
    assert request == {
        "max_tokens": 100,
        "messages": messages,
        "model": "m",
        "cache_control": {"type": "ephemeral"},
        "system": "s",
        "tools": tools,
    }
    assert list(request)[:3] == ["max_tokens", "messages", "model"]  # the SDK's own key order
    assert request["messages"] is not messages  # a later append does not change a request already built


SYSTEM_VALUES = {
    "owner_name": "Jordan Lee",
    "owner_tz": "Europe/London",
    "weekday": "Thursday",
    "today": "2026-08-27",
    "next_monday": "2026-08-31",
    "people": "- priya: Priya Raman, Europe/London",
    "preferences": "",
}


def test_the_system_prompt_renders_every_placeholder() -> None:
    prompt = render("system.md", **SYSTEM_VALUES)
    assert "$" not in prompt
    assert "Today is Thursday 2026-08-27" in prompt
    assert "Monday 2026-08-31" in prompt


def test_a_missing_placeholder_fails_loudly() -> None:
    values = dict(SYSTEM_VALUES)
    del values["today"]
    with pytest.raises(PromptError, match=r"placeholders without a value: \['today'\]"):
        render("system.md", **values)


def test_a_value_no_placeholder_uses_fails_loudly() -> None:
    with pytest.raises(PromptError, match=r"values no placeholder uses: \['todya'\]"):
        render("system.md", **SYSTEM_VALUES, todya="x")


def test_tool_definitions_are_a_prompt_file() -> None:
    assert '"find_free_slots"' in read_prompt("tools.json")
    assert '"create_event"' in read_prompt("tools.json")


def test_the_default_model_is_current_in_the_sdk() -> None:
    from anthropic.types.model import Model

    known = get_args(get_args(Model)[0])
    assert DEFAULT_MODEL in known
    assert known.index(DEFAULT_MODEL) < known.index("claude-sonnet-4-5")  # newer than the deprecated line


def test_the_sdk_does_not_warn_that_the_default_model_is_deprecated() -> None:
    from helpers import DUMMY_KEY

    from scheduler_agent.api.client import make_client
    from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text

    with ScriptedServer([Reply([text("ok")])]) as server:
        client = make_client(api_key=DUMMY_KEY, base_url=server.url, max_retries=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)  # the SDK warns when asked for a deprecated model
            client.messages.create(model=DEFAULT_MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    assert len(server.received) == 1
