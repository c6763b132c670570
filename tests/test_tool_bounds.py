"""One place for the 5-480 minute bounds: the schema in prompts/tools.json and the code's constants agree."""

from __future__ import annotations

import re

from scheduler_agent.calendar.tools import MAX_MINUTES, MIN_MINUTES, tool_definitions


def test_every_minutes_field_has_the_codes_bounds() -> None:
    fields = {
        definition["name"]: definition["input_schema"]["properties"]["minutes"]
        for definition in tool_definitions()
        if "minutes" in definition["input_schema"]["properties"]
    }
    assert sorted(fields) == ["create_event", "find_free_slots", "move_event"]
    for name, field in fields.items():
        assert (field["minimum"], field["maximum"]) == (MIN_MINUTES, MAX_MINUTES), name
        assert f"from {MIN_MINUTES} to {MAX_MINUTES}" in field["description"], name


def test_the_descriptions_say_the_same_bounds() -> None:
    for definition in tool_definitions():
        for low, high in re.findall(r"(\d+) to (\d+) minutes", definition["description"]):
            assert (int(low), int(high)) == (MIN_MINUTES, MAX_MINUTES), definition["name"]
