"""What the turn's workflow and its activities exchange: ids, iteration numbers and outcome codes.

Never the list, nor a reply: those stay in the project's store (the one exception is a model step's last
heartbeat, which carries a reply the store could not take to the step's next attempt: workflows/steps.py).
Plain dataclasses of the standard library, so the workflow (which Temporal's sandbox imports again for each
run) imports nothing else of the package.
"""

from __future__ import annotations

from dataclasses import dataclass, field

WORKFLOW = "scheduler-agent-turn"
MODEL_STEP = "model_step"  # ask the model once, store its reply
TOOL_ROUND = "tool_round"  # answer every call of the stored reply, store the round
MCP_TOOLS = "mcp_tools"  # at a turn's start: list the MCP servers' tools, store them with the turn (issue 41)
ANSWER_UPDATE = "answer"  # the update `approve` and `decline` send
WAITING_QUERY = "waiting"  # the calls a turn waits on, as `wait` asks

TASK_QUEUE = "scheduler-agent"
DEFAULT_ADDRESS = "localhost:7233"

# outcome codes of a step
GO_ON = "go-on"  # the reply asked for tools (model step), or the round is stored (tool round)
ENDED = "ended"  # the turn ended as `ask` would end it: see `exit_code` and `statement`
NEEDS_APPROVAL = "needs-approval"  # a side effect waits for `approve`/`decline`: see `waiting`

HEARTBEAT_SECONDS = 2.0  # an activity heartbeats this often while it waits (the model, a tool)
HEARTBEAT_TIMEOUT = 10.0  # a step not heard of for this long is run again, on another worker
# A step's bound (its start-to-close timeout): a model step takes at most the worker's `--timeout` (the API's
# retries and their waits included: api/client.py), a round its tools' deadlines. Three times the default
# `--timeout` and two minutes more; `worker` refuses a `--timeout` and `--tool-deadline` that pass it.
STEP_SECONDS = 3 * 600.0 + 120.0


def workflow_id(store: str, cid: int, turn: int) -> str:
    """The workflow of conversation `cid`'s user turn at list position `turn`, in the store whose calendar token
    is `store` (several databases may share a Temporal server): a second start of it is refused."""
    return f"{store}-conversation-{cid}-turn-{turn}"


@dataclass(frozen=True)
class TurnKey:
    """Which turn: the store's calendar token, the conversation, the user turn's position in the list."""

    store: str
    cid: int
    turn: int

    @property
    def workflow_id(self) -> str:
        return workflow_id(self.store, self.cid, self.turn)


@dataclass(frozen=True)
class TurnInput:
    """A submitted turn: its store, its conversation, where its user turn is in the list, the tools approved,
    and the MCP servers it uses (their tools are listed by an activity at its start, and stored with it)."""

    store: str
    cid: int
    turn: int
    approved: list[str] = field(default_factory=list)
    heartbeat_timeout: float = HEARTBEAT_TIMEOUT
    step_seconds: float = STEP_SECONDS
    mcp: list[str] = field(default_factory=list)  # the MCP servers the turn uses, by name (never a command)
    trusted: list[str] = field(default_factory=list)  # of those, the ones `submit --mcp-trust` trusts


@dataclass(frozen=True)
class Step:
    """One step of a turn: which store, which conversation, which turn, which iteration."""

    store: str
    cid: int
    turn: int
    iteration: int
    approved: list[str] = field(default_factory=list)
    trusted: list[str] = field(default_factory=list)  # MCP servers trusted for this turn besides the worker's


@dataclass(frozen=True)
class Waiting:
    """A call that waits for a person: its tool_use id and what it would do."""

    call: str
    summary: str


@dataclass(frozen=True)
class StepOutcome:
    code: str
    exit_code: int = 0
    statement: str = ""
    waiting: list[Waiting] = field(default_factory=list)


@dataclass(frozen=True)
class Answer:
    """`approve` / `decline`: which call (None: the only one waiting), yes or no, and why not."""

    call: str | None
    approved: bool
    reason: str = ""


@dataclass(frozen=True)
class Answered:
    """What `approve` / `decline` hears back: the call answered, and the calls still waiting."""

    answered: Waiting
    still_waiting: list[str]


@dataclass(frozen=True)
class TurnResult:
    """How a turn ended: "done" (as `ask` ends, `exit_code` its exit code) or "failed" (it needs a person)."""

    state: str
    exit_code: int
    statement: str = ""
