"""The turn as a durable workflow: the loop's while-loop again, each step an activity.

    if the turn uses MCP servers: mcp_tools(turn)           # their tools, listed and stored with the turn
    iteration = 0
    while True:
        iteration += 1
        if model_step(turn, iteration) ended: return          # the reply is stored by the step
        while tool_round(turn, iteration) waits for a person:  # the round is stored by the step
            wait until `approve`/`decline` answered every waiting call

`run_turn` (agent/loop.py) is the same loop in one process. Here each step is an activity that loads the
list from the store, runs the session's own step on it, stores what it appended and returns an outcome code:
the list never enters Temporal's history. The bound on iterations is the model step's (the worker's
`--max-iterations`). A step that ends in a person's error (the API down past its retries, a list the grammar
refuses) ends the workflow with `ask`'s exit code; only a worker's death or a lost database is retried.

This module imports temporalio and `names` only: Temporal's sandbox imports it again for each run, and the
workflow calls nothing but its activities, its clock (through Temporal) and its update handlers.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

from scheduler_agent.workflows.names import (
    ANSWER_UPDATE,
    ENDED,
    MCP_TOOLS,
    MODEL_STEP,
    NEEDS_APPROVAL,
    TOOL_ROUND,
    WAITING_QUERY,
    WORKFLOW,
    Answer,
    Answered,
    Step,
    StepOutcome,
    TurnInput,
    TurnResult,
    Waiting,
)

# infrastructure failures (a dead worker, a lost database) are tried again, soon, for as long as it takes
RETRY = RetryPolicy(initial_interval=timedelta(milliseconds=200), maximum_interval=timedelta(seconds=5))
RECHECK_FIRST, RECHECK_MAX = timedelta(minutes=1), timedelta(hours=1)


@workflow.defn(name=WORKFLOW)
class TurnWorkflow:
    def __init__(self) -> None:
        self.cid = 0
        self.waiting: list[Waiting] = []  # the calls of the round that wait for a person
        self.recheck = RECHECK_FIRST

    @workflow.run
    async def run(self, turn: TurnInput) -> TurnResult:
        self.cid = turn.cid
        iteration = 0
        try:
            if turn.mcp:  # the MCP servers' tools, listed once for the turn and stored with it: steps read them
                await self._step(MCP_TOOLS, Step(turn.store, turn.cid, turn.turn, 0, turn.approved, turn.trusted), turn)
            while True:
                iteration += 1
                step = Step(turn.store, turn.cid, turn.turn, iteration, turn.approved, turn.trusted)
                outcome = await self._step(MODEL_STEP, step, turn)
                if outcome.code == ENDED:
                    return TurnResult("done", outcome.exit_code, outcome.statement)
                outcome = await self._step(TOOL_ROUND, step, turn)
                while outcome.code == NEEDS_APPROVAL:
                    await self._until_answered(outcome.waiting)
                    outcome = await self._step(TOOL_ROUND, step, turn)
        except ActivityError as failed:
            cause = failed.cause
            if not isinstance(cause, ApplicationError) or not cause.non_retryable:
                raise
            exit_code = cause.details[0] if cause.details else 1
            return TurnResult("failed", int(exit_code), cause.message)

    async def _step(self, name: str, step: Step, turn: TurnInput) -> StepOutcome:
        outcome: StepOutcome = await workflow.execute_activity(
            name,
            step,
            result_type=StepOutcome,
            start_to_close_timeout=timedelta(seconds=turn.step_seconds),
            heartbeat_timeout=timedelta(seconds=turn.heartbeat_timeout),
            retry_policy=RETRY,
        )
        return outcome

    async def _until_answered(self, waiting: list[Waiting]) -> None:
        """Wait for `approve`/`decline` to answer every waiting call (each stores its answer, then sends the
        update). Should an update be lost (one sent while no worker ran, then the server restarted), the round is
        run again after a while, doubling up to an hour: it finds the answers stored, or waits again."""
        self.waiting = list(waiting)
        try:
            await workflow.wait_condition(lambda: not self.waiting, timeout=self.recheck)
        except TimeoutError:
            self.recheck = min(self.recheck * 2, RECHECK_MAX)
        self.waiting = []

    @workflow.query(name=WAITING_QUERY)
    def pending(self) -> list[Waiting]:
        return list(self.waiting)

    @workflow.update(name=ANSWER_UPDATE)
    def answer(self, answer: Answer) -> Answered:
        """A person answered a waiting call (`approve`/`decline` stored the answer by its tool_use id first)."""
        chosen = self._chosen(answer)
        self.waiting = [each for each in self.waiting if each.call != chosen.call]
        return Answered(chosen, [each.call for each in self.waiting])

    @answer.validator
    def check_answer(self, answer: Answer) -> None:
        self._chosen(answer)

    def _chosen(self, answer: Answer) -> Waiting:
        """The waiting call `answer` is for; ApplicationError (the update is refused) when there is none."""
        waiting = self.pending()
        if not waiting:
            raise ApplicationError(
                f"conversation {self.cid} waits for no approval: `scheduler-agent conversations list --state "
                "needs-approval` shows those that do",
                non_retryable=True,
            )
        if answer.call is None:
            if len(waiting) > 1:
                names = "; ".join(f"{each.call} ({each.summary})" for each in waiting)
                raise ApplicationError(
                    f"conversation {self.cid} has {len(waiting)} calls waiting: {names}. Say which with --call "
                    "TOOL_USE_ID",
                    non_retryable=True,
                )
            return waiting[0]
        for each in waiting:
            if each.call == answer.call:
                return each
        ids = ", ".join(each.call for each in waiting)
        raise ApplicationError(
            f"conversation {self.cid} has no call {answer.call!r} waiting; the calls waiting: {ids}",
            non_retryable=True,
        )
