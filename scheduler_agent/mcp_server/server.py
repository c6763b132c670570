"""The MCP server: the five calendar tools, the people, hours and preferences as resources, the system prompt.

Built on the official SDK's `MCPServer`. A tool's input schema is the one in `prompts/tools.json` (plus
`idempotency_key` on the changes), not one derived from a Python signature: each tool takes its input as
one raw mapping, and the loop's dispatch checks it against that schema (calls.py).

Approval before a change is a resolver (`Resolve`): it makes every check, then asks the person by
elicitation, in the form the connection speaks (a request in the middle of the call before 2026-07-28,
an `input_required` round after). No `from __future__ import annotations` here: the SDK reads the tool
functions' annotations at registration, and they name objects made in this module's functions.
"""

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

import anyio.to_thread
from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from scheduler_agent.mcp_server import calls, resources
from scheduler_agent.mcp_server.calls import Serving, Verdict

INSTRUCTIONS = (
    "The calendar tools of scheduler-agent: find free time with find_free_slots, look with list_events, then "
    "book, move or cancel with create_event, move_event and cancel_event. Every change is checked (working "
    "hours, the owner's standing rules, everyone free) and approved by the user first. Give a change an "
    "idempotency_key and send the same call again after a lost answer: it is made once. The prompt "
    "`scheduling_assistant` is the system prompt scheduler-agent's own model works with."
)

# Every hint set explicitly: a client that reads one missing assumes the worst (destructive, open world).
# `open_world_hint` is the local calendar's; `build` makes it true for a calendar on a CalDAV server.
ANNOTATIONS = {
    "find_free_slots": ToolAnnotations(
        title="Find free slots",
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    ),
    "list_events": ToolAnnotations(
        title="List events", read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    ),
    "create_event": ToolAnnotations(
        title="Book a meeting",
        read_only_hint=False,
        destructive_hint=False,
        idempotent_hint=False,
        open_world_hint=False,
    ),
    "move_event": ToolAnnotations(
        title="Move a meeting",
        read_only_hint=False,
        destructive_hint=True,
        idempotent_hint=False,
        open_world_hint=False,
    ),
    "cancel_event": ToolAnnotations(
        title="Cancel a meeting",
        read_only_hint=False,
        destructive_hint=True,
        idempotent_hint=False,
        open_world_hint=False,
    ),
}


class Approval(BaseModel):
    """The form the person answers: yes, or no with a reason the model hears."""

    approve: bool = Field(title="Approve this change?")
    reason: str = Field("", title="If not, why? (optional: the assistant reads it and proposes something else)")


class RawInput(ArgModelBase):
    """A tool's whole input as one mapping, `arguments`, for the loop's dispatch to check against its schema."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.__pydantic_extra__ or {})}


Outcome = ElicitationResult[Approval]
ToolFunction = Callable[..., Coroutine[Any, Any, CallToolResult]]


def build(serving: Serving, *, remote: bool = False) -> MCPServer:
    """The server; `remote`: the calendar is on a CalDAV server (the tools reach beyond this machine)."""
    from importlib.metadata import version

    tools = [_tool(serving, name, remote) for name in calls.descriptions()]  # in prompts/tools.json's order
    app = MCPServer("scheduler-agent", version=version("scheduler-agent"), instructions=INSTRUCTIONS, tools=tools)
    resources.register(app, serving)
    return app


def _tool(serving: Serving, name: str, remote: bool) -> Tool:
    fn = _change(serving, name) if name in calls.CHANGES else _read(serving, name)
    annotations = ANNOTATIONS[name].model_copy(update={"open_world_hint": remote})
    tool = Tool.from_function(fn, name=name, description=calls.descriptions()[name], annotations=annotations)
    # The SDK reads both at each call: the schema clients see is ours, and the input reaches `fn` whole.
    tool.parameters = calls.input_schema(name)
    tool.fn_metadata.arg_model = RawInput
    return tool


def _result(text: str, is_error: bool) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)


def _read(serving: Serving, name: str) -> ToolFunction:
    async def read(arguments: dict[str, Any]) -> CallToolResult:
        return _result(*await anyio.to_thread.run_sync(calls.run, serving, name, arguments))

    return read


def _change(serving: Serving, name: str) -> ToolFunction:
    async def ask(arguments: dict[str, Any], ctx: Context) -> Verdict | Elicit[Approval]:
        verdict = await anyio.to_thread.run_sync(calls.prepare, serving, name, arguments, _can_ask(ctx))
        if verdict.question is None:
            return verdict
        return Elicit(f"{verdict.question.rstrip('.')}. Approve?", Approval)

    async def change(arguments: dict[str, Any], approval: Annotated[Outcome, Resolve(ask)]) -> CallToolResult:
        if not isinstance(approval, AcceptedElicitation):  # declined or dismissed: a no without a reason
            return _result(await _declined(serving, name, arguments, ""), True)
        answer = approval.data
        if isinstance(answer, Verdict):
            if answer.error is not None:
                return _result(answer.error, True)
        elif not answer.approve:
            return _result(await _declined(serving, name, arguments, answer.reason.strip()), True)
        return _result(*await anyio.to_thread.run_sync(calls.run, serving, name, arguments))

    return change


def _can_ask(ctx: Context) -> bool:
    """Whether the client takes a form (a bare `elicitation: {}`, from before modes, counts; URL-only does not)."""
    capabilities = ctx.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


async def _declined(serving: Serving, name: str, arguments: dict[str, Any], reason: str) -> str:
    """The refusal text, naming what was asked (the question, made again: the answer came in another round)."""
    verdict = await anyio.to_thread.run_sync(calls.prepare, serving, name, arguments, True)
    question = verdict.question or name
    return calls.declined_text(name, arguments, question, reason)
