"""The loop's two steps as they run in one process, with nothing around them: the list in memory is all.

    model_step = AskModel(build, send, report)      # build, send, judge, append the reply verbatim
    tool_round = AnswerCalls(toolbox, report)       # one tool_result per call, in one user turn
    run_turn(messages, model_step=model_step, tool_round=tool_round, max_iterations=10, report=report)

A session's steps (`session/steps.py`) are these, with the request checked before it is sent and
what each step appends stored before it is reported: they fill in `keep_reply` and `keep_round`, and look
in the store first, so that a step run again after a crash does not do its work twice.
Pure: the standard library and agent/ only.
"""

from __future__ import annotations

from scheduler_agent.agent.events import ReplyReceived, ReplySetAside, Report, RequestSent, RoundAnswered, TurnOutcome
from scheduler_agent.agent.loop import Build, Send, answer_all, model_stopped, not_run, set_aside, tool_uses
from scheduler_agent.agent.replies import CallIds, judge
from scheduler_agent.agent.toolbox import Toolbox
from scheduler_agent.agent.types import JSON


class AskModel:
    """The model step (`loop.ModelStep`): build the request, send it, judge the reply, append it verbatim.

    Run twice with the same list, it asks the model twice: nothing but the list remembers the first answer, and
    in one process there is no crash to come back from (a session's step remembers: `session/steps.py`).
    `known_calls` keeps the list's call ids between turns (a reply may not reuse one); None: a new set, read
    from the list."""

    def __init__(self, build: Build, send: Send, report: Report, known_calls: CallIds | None = None) -> None:
        self.build, self.send, self.report = build, send, report
        self.known_calls = known_calls if known_calls is not None else CallIds()

    def __call__(self, messages: list[JSON], iteration: int) -> TurnOutcome | None:
        return self.take(messages, iteration, self.ask(messages, iteration))

    def ask(self, messages: list[JSON], iteration: int) -> JSON:
        """The model's reply to the request built from `messages`, as the API sent it."""
        request = self.build(messages)
        self.report(RequestSent(iteration, request))
        reply = self.send(request)
        del request  # sent: the step keeps no request (a session's next one may then reuse its list: growth.py)
        return reply

    def take(self, messages: list[JSON], iteration: int, reply: JSON) -> TurnOutcome | None:
        """Judge `reply`; append it, verbatim, before any tool runs; None when its calls are to be answered."""
        verdict = judge(reply, self.known_calls.of(messages))
        if not verdict.usable:  # kept beside the list, never in it: the list stays valid to send again
            self.keep_reply(messages, iteration, reply, appended=False)
            self.report(ReplySetAside(iteration, reply, verdict.fit, verdict.problems))
            return set_aside(reply, verdict, iteration)
        messages.append({"role": "assistant", "content": reply["content"]})  # verbatim, before any tool runs
        self.keep_reply(messages, iteration, reply, appended=True)
        self.report(ReplyReceived(iteration, reply))
        calls = tool_uses(reply)
        if calls and reply.get("stop_reason") == "tool_use":
            return None  # the turn goes on: the tool round answers these calls
        if calls:  # cut off mid-call: answer without running, so the list stays valid
            why = f"the reply stopped ({reply.get('stop_reason')}) before this call was complete"
            messages.append({"role": "user", "content": [not_run(call, why) for call in calls]})
            self.keep_round(messages, iteration)
            self.report(RoundAnswered(iteration, messages[-1]))
        return model_stopped(reply, iteration)

    def keep_reply(self, messages: list[JSON], iteration: int, reply: JSON, appended: bool) -> None:
        """`reply`, just appended as the list's last entry (or, `appended` False, kept beside the list), before
        anyone hears of it. In one process: nothing to do."""

    def keep_round(self, messages: list[JSON], iteration: int) -> None:
        """The round of results just appended as the list's last entry, before anyone hears of it."""


class AnswerCalls:
    """The tool round (`loop.ToolRound`): each call of the last assistant turn run, one result per call, in order,
    in one user turn.

    Run twice with the same list, it runs the calls twice. That is safe when the toolbox answers a call that
    changed something from its record of that `tool_use` id (`Toolbox.run` is given the id), as the calendar's
    tools do: nothing is booked twice, and a tool that only reads reads again."""

    def __init__(self, toolbox: Toolbox, report: Report) -> None:
        self.toolbox, self.report = toolbox, report

    def __call__(self, messages: list[JSON], iteration: int) -> None:
        results, interrupted = answer_all(self.toolbox, tool_uses(messages[-1]), iteration, self.report)
        messages.append({"role": "user", "content": results})  # ONE user turn: one tool_result per call
        self.keep_round(messages, iteration)
        self.report(RoundAnswered(iteration, messages[-1]))
        if interrupted:  # Ctrl-C during a tool: the round is answered (and stored); now stop
            raise KeyboardInterrupt

    def keep_round(self, messages: list[JSON], iteration: int) -> None:
        """The round just appended as the list's last entry, before anyone hears of it. In one process: nothing."""
