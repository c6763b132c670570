"""The grammar check against what the real API does: each shape recorded traffic showed accepted is
valid or warning-only, each shape the API rejects is an error, and the mutants of valid lists (a dropped
result, a wrong id, a turn between a call and its result) are errors. The lists are this project's own,
written for these tests; the rules' docs cite the recordings each shape was learned from."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from scheduler_agent.agent.types import JSON
from scheduler_agent.grammar.check import (
    API_MISSING_RESULTS,
    API_PREFILL,
    API_UNEXPECTED_RESULT,
    IncrementalChecker,
    Mode,
    Violation,
    check,
)


def ask(text: str) -> JSON:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def call(call_id: str, name: str = "find_free_slots", **arguments: Any) -> JSON:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments or {"person": "sam"}}


def says(text: str) -> JSON:
    return {"type": "text", "text": text}


def assistant(*blocks: JSON) -> JSON:
    return {"role": "assistant", "content": list(blocks)}


def results(*ids: str) -> JSON:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": f"ok {i}"} for i in ids]}


def system(content: Any) -> JSON:
    return {"role": "system", "content": content}


def errors(violations: list[Violation]) -> list[Violation]:
    return [v for v in violations if v.level == "error"]


def levels(violations: list[Violation]) -> list[tuple[str, str]]:
    return [(v.where, v.level) for v in violations]


# --- shapes the API accepted: valid, or warnings only -------------------------------------------------

ROUND = [ask("Is Sam free on Tuesday?"), assistant(says("Checking."), call("toolu_a")), results("toolu_a")]

ACCEPTED: dict[str, tuple[list[Any], Mode, list[tuple[str, str]]]] = {
    "a system entry after the person's turn": (
        [ask("Review my week."), assistant(says("Done.")), ask("Again, please."), system("Answer in French.")],
        "request",
        [("messages[3]", "warning")],
    ),
    "a system entry as a string after a round's results, then more turns": (
        [*ROUND, system("Keep answers short."), assistant(says("Sam is free at 10.")), ask("Book it.")],
        "request",
        [("messages[3]", "warning")],
    ),
    "two system entries in a row": (
        [ask("Plan it."), system([says("Use 24-hour times.")]), system([says("Name the weekday.")])],
        "request",
        [("messages[1]", "warning"), ("messages[2]", "warning")],
    ),
    "a system entry with a beta tool change": (
        [ask("Refund order 7."), system([{"type": "tool_addition", "tool": {"name": "refund"}}])],
        "request",
        [("messages[1]", "warning"), ("messages[1].content[0]", "warning")],
    ),
    "one round split over two assistant turns": (
        [
            ask("When are Sam and Ana free?"),
            assistant(says("Looking at both."), call("toolu_sam")),
            assistant(call("toolu_ana", person="ana")),
            results("toolu_sam", "toolu_ana"),
        ],
        "request",
        [("messages[2]", "warning")],
    ),
    "results split over two user turns": (
        [ask("Both?"), assistant(call("toolu_1"), call("toolu_2")), results("toolu_1"), results("toolu_2")],
        "request",
        [("messages[3]", "warning")],
    ),
    "the same call id in two rounds": (
        [*ROUND, assistant(call("toolu_a", person="ana")), results("toolu_a")],
        "request",
        [("messages[3].content[0]", "warning")],
    ),
    "a list that starts with an assistant turn": (
        [assistant(says("Hello, what shall I book?")), ask("Thirty minutes with Sam.")],
        "request",
        [("messages[0]", "warning")],
    ),
    "whitespace text before two calls in a turn that is not the last": (
        [ask("Two slots?"), assistant(says(" "), call("toolu_x"), call("toolu_y")), results("toolu_x", "toolu_y")],
        "request",
        [("messages[1].content[0]", "warning")],
    ),
    "a paused turn sent back to go on": (
        [ask("Search the web."), assistant(says("Searching."), {"type": "server_tool_use", "id": "srvtoolu_1"})],
        "request",
        [("messages[1]", "warning")],
    ),
}


@pytest.mark.parametrize("name", ACCEPTED)
def test_a_shape_the_api_accepted_has_no_errors(name: str) -> None:
    messages, mode, expected = ACCEPTED[name]
    found = check(messages, mode=mode)
    assert levels(found) == expected, found
    assert errors(found) == []


@pytest.mark.parametrize("name", ACCEPTED)
def test_the_incremental_checker_agrees_on_each_accepted_shape(name: str) -> None:
    messages, mode, _ = ACCEPTED[name]
    checker, grown = IncrementalChecker(), []
    for entry in messages:
        grown.append(entry)
        assert checker.check(grown, mode=mode) == check(grown, mode=mode)


def test_prefill_is_an_error_where_the_model_refuses_it_and_a_warning_where_that_is_not_known() -> None:
    messages = [ask("Say yes."), assistant(says("Yes"))]
    [refused] = check(messages, mode="request")
    assert refused.level == "error"
    assert API_PREFILL in refused.cause
    [unknown] = check(messages, mode="request", prefill_refused=False)
    assert unknown.level == "warning"
    assert "models that take prefill accept it" in unknown.cause


def test_whitespace_text_in_the_last_assistant_turn_is_an_error_and_a_warning_once_a_turn_follows() -> None:
    messages: list[Any] = [ask("Anything?"), assistant(says("\n"))]
    assert levels(check(messages, mode="conversation")) == [("messages[1].content[0]", "error")]
    messages.append(ask("Go on."))
    assert levels(check(messages, mode="request")) == [("messages[1].content[0]", "warning")]
    checker = IncrementalChecker()
    assert checker.check(messages[:2], mode="conversation") == check(messages[:2], mode="conversation")
    assert checker.check(messages, mode="request") == check(messages, mode="request")  # appended: re-judged


# --- shapes the API rejects: errors ------------------------------------------------------------------

REJECTED: dict[str, tuple[list[Any], Mode, list[tuple[str, str]]]] = {
    "a system entry holding a call": (
        [ask("Book."), system([call("toolu_s")])],
        "request",
        [("messages[1]", "system entry inside messages"), ("messages[1].content[0]", "holds text only")],
    ),
    "a system entry holding an image": (
        [ask("Look."), system([{"type": "image", "source": {}}])],
        "request",
        [("messages[1]", "system entry"), ("messages[1].content[0]", "not a 'image' block")],
    ),
    "an empty system entry": (
        [ask("Hi."), system("")],
        "request",
        [("messages[1]", "system entry"), ("messages[1].content", "non-empty content")],
    ),
    "the same id twice in one turn": (
        [ask("Twice?"), assistant(call("toolu_d"), call("toolu_d")), results("toolu_d")],
        "request",
        [("messages[1].content[1]", "`tool_use` ids must be unique")],
    ),
    "the same id twice in one turn split over two entries": (
        [ask("Twice?"), assistant(call("toolu_d")), assistant(call("toolu_d")), results("toolu_d")],
        "request",
        [
            ("messages[2]", "two assistant turns in a row"),
            ("messages[2].content[0]", "also the id of messages[1].content[0], in the same turn"),
        ],
    ),
    "a split round with one result missing": (
        [ask("Both?"), assistant(call("toolu_1")), assistant(call("toolu_2")), results("toolu_2")],
        "request",
        [("messages[1]", API_MISSING_RESULTS.format(ids="toolu_1")), ("messages[2]", "two assistant turns")],
    ),
    "text between the results of a merged user turn": (
        [ask("Both?"), assistant(call("toolu_1"), call("toolu_2")), results("toolu_1"), ask("and"), results("toolu_2")],
        "request",
        [
            ("messages[3]", "two user turns in a row"),
            ("messages[4]", "two user turns in a row"),
            ("messages[4].content[0]", "comes after messages[3].content[0] (text)"),
        ],
    ),
    "a stored conversation ending with calls in a turn that is not the last": (
        [ask("Both?"), assistant(call("toolu_1")), assistant(says("One moment."))],
        "conversation",
        [("messages[1]", API_MISSING_RESULTS.format(ids="toolu_1")), ("messages[2]", "two assistant turns")],
    ),
}


@pytest.mark.parametrize("name", REJECTED)
def test_a_shape_the_api_rejects_is_an_error(name: str) -> None:
    messages, mode, expected = REJECTED[name]
    found = check(messages, mode=mode)
    assert [v.where for v in found] == [where for where, _ in expected], found
    for violation, (_, cause) in zip(found, expected, strict=True):
        assert cause in violation.cause
    assert errors(found)


# --- mutants of valid lists ---------------------------------------------------------------------------

VALID: list[list[Any]] = [
    ROUND,
    [*ROUND, assistant(says("Sam is free at 10; booking."), call("toolu_b", "create_event")), results("toolu_b")],
    [ask("Sam and Ana?"), assistant(call("toolu_s"), call("toolu_n")), results("toolu_s", "toolu_n")],
    [ask("Split?"), assistant(call("toolu_p")), assistant(call("toolu_q")), results("toolu_p", "toolu_q")],
    [*ROUND, system("Be brief."), assistant(call("toolu_c")), results("toolu_c")],
]


def result_turns(messages: list[Any]) -> list[int]:
    return [
        i
        for i, m in enumerate(messages)
        if m["role"] == "user" and any(b.get("type") == "tool_result" for b in m["content"])
    ]


def drop_result(messages: list[Any], i: int) -> None:
    del messages[i]["content"][0]


def wrong_id(messages: list[Any], i: int) -> None:
    messages[i]["content"][0]["tool_use_id"] = "toolu_nobody"


def user_turn_between(messages: list[Any], i: int) -> None:
    messages.insert(i, ask("Wait, one more thing."))


def system_between(messages: list[Any], i: int) -> None:
    messages.insert(i, system("Be brief."))


def results_first_moved(messages: list[Any], i: int) -> None:
    messages[i]["content"].insert(0, says("Here you are."))


MUTANTS: dict[str, Callable[[list[Any], int], None]] = {
    "a dropped result": drop_result,
    "a wrong id": wrong_id,
    "a user turn between the call and its result": user_turn_between,
    "a system entry between the call and its result": system_between,
    "text before the results": results_first_moved,
}


@pytest.mark.parametrize("mutate", MUTANTS.values(), ids=list(MUTANTS))
@pytest.mark.parametrize("valid", range(len(VALID)))
def test_every_mutant_of_a_valid_list_is_an_error(valid: int, mutate: Callable[[list[Any], int], None]) -> None:
    original = VALID[valid]
    assert errors(check(original, mode="request")) == []
    for turn in result_turns(original):
        mutant = copy.deepcopy(original)
        mutate(mutant, turn)
        found = errors(check(mutant, mode="request"))
        assert found, mutant
        assert any(API_MISSING_RESULTS.split(":")[0] in v.cause or API_UNEXPECTED_RESULT[:30] in v.cause for v in found)
        checker, grown = IncrementalChecker(), []
        for entry in mutant:
            grown.append(entry)
            assert checker.check(grown, mode="request") == check(grown, mode="request")
