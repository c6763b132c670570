"""Prompt files from `prompts/`, filled with named placeholders that fail loudly.

`$name` placeholders (string.Template). A placeholder with no value, or a value that no
placeholder uses, raises PromptError: a typo never sends a half-rendered prompt.
"""

from __future__ import annotations

from importlib import resources
from string import Template

from scheduler_agent.agent.errors import AgentError


class PromptError(AgentError):
    """A prompt file and the values given for it do not fit."""


def read_prompt(name: str) -> str:
    return resources.files("scheduler_agent.prompts").joinpath(name).read_text(encoding="utf-8")


def render(name: str, **values: str) -> str:
    template = Template(read_prompt(name))
    wanted = set(template.get_identifiers())
    missing, unused = wanted - values.keys(), values.keys() - wanted
    if missing or unused:
        raise PromptError(
            f"prompts/{name}: placeholders without a value: {sorted(missing) or 'none'}; "
            f"values no placeholder uses: {sorted(unused) or 'none'}"
        )
    return template.substitute(values)
