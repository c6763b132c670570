"""What the loop needs from tools, and how a call becomes a `tool_result` block.

A tool never leaves a call unanswered. Whatever happens (bad input, a tool's own
`ToolError`, an unexpected exception, an unknown name), `answer_call` returns a
`tool_result` with `is_error: true` and a text the model can act on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

JSON = dict[str, Any]


class ToolError(Exception):
    """Raised by a tool for a failure the model should read: the message is a prompt.

    Say what went wrong, with the inputs, and what to do next.
    """


class Toolbox(Protocol):
    """The tools the model may call: their definitions as sent, and a way to run one."""

    @property
    def definitions(self) -> list[JSON]: ...

    def run(self, name: str, arguments: Mapping[str, Any], tool_use_id: str) -> str:
        """Run one call and return its result text; raise ToolError for an actionable failure."""
        ...


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def schema_problems(schema: Mapping[str, Any], arguments: object) -> list[str]:
    """Check arguments against the subset of JSON Schema our tools use; one sentence per problem."""
    if not isinstance(arguments, dict):
        return [f"the input must be a JSON object, got {type(arguments).__name__}"]
    properties: Mapping[str, Any] = schema.get("properties", {})
    problems = [f"missing required field {field!r}" for field in schema.get("required", []) if field not in arguments]
    for field, value in arguments.items():
        spec = properties.get(field)
        if spec is None:
            if schema.get("additionalProperties", True) is False:
                problems.append(f"unknown field {field!r} (known: {', '.join(properties)})")
            continue
        expected = spec.get("type")
        allowed = _JSON_TYPES.get(expected, (object,)) if isinstance(expected, str) else (object,)
        is_bool = isinstance(value, bool)
        if not isinstance(value, allowed) or (is_bool and expected in ("integer", "number")):
            problems.append(f"field {field!r} must be {_article(expected)} {expected}, got {value!r}")
    return problems


def _article(word: object) -> str:
    return "an" if str(word)[:1] in "aeiou" else "a"


def answer_call(toolbox: Toolbox, call: Mapping[str, Any]) -> JSON:
    """Run one `tool_use` block and return its `tool_result` block; never raises for a tool's failure."""
    name, call_id, arguments = call["name"], call["id"], call.get("input", {})
    definition = next((d for d in toolbox.definitions if d["name"] == name), None)
    if definition is None:
        known = ", ".join(d["name"] for d in toolbox.definitions)
        return _result(call_id, f"There is no tool named {name!r}. The tools are: {known}.", error=True)
    problems = schema_problems(definition.get("input_schema", {}), arguments)
    if problems:
        text = f"{name} was not run: {'; '.join(problems)}. Call it again with input that fits its schema."
        return _result(call_id, text, error=True)
    try:
        return _result(call_id, toolbox.run(name, arguments, call_id))
    except ToolError as exc:
        return _result(call_id, str(exc), error=True)
    except Exception as exc:  # a bug in a tool still answers its call
        text = (
            f"{name} failed with an internal error ({type(exc).__name__}: {exc}). The same input will "
            "likely fail the same way: tell the user what you were trying to do and that this tool failed."
        )
        return _result(call_id, text, error=True)


def _result(call_id: str, text: str, *, error: bool = False) -> JSON:
    block: JSON = {"type": "tool_result", "tool_use_id": call_id, "content": text}
    if error:
        block["is_error"] = True
    return block
