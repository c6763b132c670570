"""The cassette file: readable YAML, and the setup it carries. No vcrpy here, so `demo --list` is fast.

JSON bodies are stored as YAML structures (`body: {json: ...}`), key order kept, multi-line
strings as blocks. A body that is not JSON stays the string it was: a streamed reply (server-sent
events, `event: ...` and `data: {...}` lines) is a `|` block of those lines, as they came over the
wire, and reads back to the same text. Beside its interactions a cassette carries, under
`metadata.scheduler_agent`, the setup that makes it replayable anywhere: the clock, the
calendar, the user's inputs, the options, its kind (recordable or scripted) and its lesson.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import yaml

from scheduler_agent.agent.errors import CassetteError, too_deeply_nested
from scheduler_agent.agent.types import JSON

METADATA_KEY = "scheduler_agent"


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (the system prompt, tool results) as `|` blocks."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value and not any(c in value for c in "\r\t") and value == value.rstrip(" ") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _represent_str)


def _to_structure(text: str | bytes | None) -> Any:
    """A JSON body as `{"json": ...}`; any other body (an event stream) as its text, untouched."""
    if text is None:
        return None
    decoded = text.decode("utf-8") if isinstance(text, bytes) else text
    try:
        return {"json": json.loads(decoded)}
    except ValueError:
        return decoded


def _to_text(body: Any) -> Any:
    if isinstance(body, dict) and set(body) == {"json"}:
        return json.dumps(body["json"], ensure_ascii=False, separators=(",", ":"))
    return body


class ReadableYaml:
    """A vcrpy serializer: JSON request and response bodies become YAML structures and back."""

    @staticmethod
    def serialize(cassette: JSON) -> str:
        for interaction in cassette["interactions"]:
            interaction["request"]["body"] = _to_structure(interaction["request"]["body"])
            body = interaction["response"]["body"]
            body["string"] = _to_structure(body["string"])
        setup = cassette.get("metadata", {}).get(METADATA_KEY, {})
        ordered = {"metadata": cassette.get("metadata"), **cassette} if setup else cassette  # the setup first
        header = "".join(f"# {line}\n" for line in _header_lines(setup))
        return header + str(yaml.dump(ordered, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100))

    @staticmethod
    def deserialize(text: str) -> JSON:
        cassette: JSON = yaml.safe_load(text)
        for interaction in cassette["interactions"]:
            interaction["request"]["body"] = _to_text(interaction["request"]["body"])
            body = interaction["response"]["body"]
            body["string"] = _to_text(body["string"])
        return cassette


def _header_lines(setup: JSON) -> list[str]:
    if not setup:
        return []
    lines = [f"{setup.get('title', 'A scheduler-agent cassette')} ({setup.get('kind', 'untagged')})."]
    lines += textwrap.wrap(f"How it was made: {setup.get('how', 'not recorded')}.", 98)
    lines.append("Replay: scheduler-agent replay this-file.yaml (see docs/lessons.md, 'Cassettes').")
    return lines


def no_cassette(path: Path) -> CassetteError:
    """For a cassette path that is not a file: a folder given by mistake, or nothing there."""
    return CassetteError(f"{path} is a folder, not a cassette" if path.is_dir() else f"No cassette at {path}")


def read_setup(path: Path) -> JSON:
    """The setup a cassette carries (clock, calendar, inputs, options, kind), without replaying it."""
    if not path.is_file():
        raise no_cassette(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CassetteError(f"Cannot read cassette {path}: {exc}") from exc
    except RecursionError:  # PyYAML recurses once a level
        raise too_deeply_nested(path, "a cassette that scheduler-agent recorded") from None
    setup = (data or {}).get("metadata", {}).get(METADATA_KEY) if isinstance(data, dict) else None
    if not isinstance(setup, dict):
        raise CassetteError(f"{path} is not a scheduler-agent cassette: it has no metadata.{METADATA_KEY} setup")
    return setup
