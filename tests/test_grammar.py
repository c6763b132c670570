"""The grammar check: every rule with the position it reports, the article's three broken shapes,
and the incremental checker giving the same verdicts as the whole walk at a bounded cost."""

from __future__ import annotations

import copy
import random
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.agent.loop import add_user_text
from scheduler_agent.agent.types import JSON
from scheduler_agent.grammar.check import (
    API_MISSING_RESULTS,
    API_PREFILL,
    API_UNEXPECTED_RESULT,
    GrammarError,
    IncrementalChecker,
    Mode,
    Violation,
    check,
    conversation_state,
    unanswered_calls,
)

# --- building lists -----------------------------------------------------------------------------------


def user(text: str = "Book 30 minutes with Priya next week.") -> JSON:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def call(call_id: str, name: str = "find_free_slots", **arguments: Any) -> JSON:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments or {"person": "priya"}}


def asks(*ids: str, text: str | None = None) -> JSON:
    blocks: list[JSON] = [{"type": "text", "text": text}] if text else []
    return {"role": "assistant", "content": [*blocks, *(call(i) for i in ids)]}


def result(call_id: str, content: Any = "Mon 10:00-12:00", *, is_error: bool = False) -> JSON:
    block: JSON = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def answers(*ids: str) -> JSON:
    return {"role": "user", "content": [result(i) for i in ids]}


def final(text: str = "Booked Monday 31 August at 14:00 with Priya.") -> JSON:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def wheres(violations: list[Violation]) -> list[str]:
    return [v.where for v in violations]


VALID_ROUND = [user(), asks("toolu_1", text="Let me look."), answers("toolu_1")]


# --- valid lists --------------------------------------------------------------------------------------


def test_valid_lists_have_no_violations() -> None:
    assert check(VALID_ROUND, mode="request") == []
    assert check([*VALID_ROUND, final()], mode="conversation") == []
    assert check([{"role": "user", "content": "hi"}], mode="request") == []
    two_calls = [user(), asks("a", "b"), {"role": "user", "content": [result("a"), result("b"), *user()["content"]]}]
    assert check(two_calls, mode="request") == []  # text may follow the results
    error = [user(), asks("a"), {"role": "user", "content": [result("a", "no such person; try priya", is_error=True)]}]
    assert check(error, mode="request") == []
    as_blocks = [user(), asks("a"), answers("a")]
    as_blocks[2]["content"][0]["content"] = [{"type": "text", "text": "no"}]
    as_blocks[2]["content"][0]["is_error"] = True
    assert check(as_blocks, mode="request") == []


def test_unknown_block_types_pass() -> None:
    thinking = {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "x"}, call("a")]}
    assert check([user(), thinking, answers("a")], mode="request") == []


# --- the article's three broken shapes ---------------------------------------------------------------


def test_shape_a_results_filed_before_the_assistant_turn_that_asked_for_them() -> None:
    """The retry-wrapper ordering: the results went in, then the model call raised before the reply did."""
    messages = [user(), answers("toolu_1"), asks("toolu_1")]
    violations = check(messages, mode="conversation")
    assert wheres(violations) == ["messages[1]", "messages[1].content[0]"]
    assert violations[0].cause.startswith("two user turns in a row (messages[0] and messages[1])")
    assert violations[1].cause == API_UNEXPECTED_RESULT.format(id="toolu_1")
    assert "unexpected `tool_use_id` found in `tool_result` blocks: toolu_1." in violations[1].cause
    # as a request it also ends with an unanswered call and an assistant turn
    assert wheres(check(messages, mode="request")) == [*wheres(violations), "messages[2]", "messages[2]"]


def test_shape_b_a_call_with_no_result() -> None:
    """The `continue` in an exception handler: two calls, one result."""
    messages = [user(), asks("toolu_1", "toolu_2"), answers("toolu_1")]
    violations = check(messages, mode="request")
    assert violations == [Violation("messages[1]", API_MISSING_RESULTS.format(ids="toolu_2"))]
    assert str(violations[0]) == (
        "messages[1]: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_2. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )


def test_shape_c_an_assistant_turn_rebuilt_from_a_few_fields() -> None:
    """Ids kept, so the pairing rule and the API pass; only the comparison with the raw content catches it."""
    received: list[JSON] = [
        {"type": "text", "text": "Let me look at Priya's week."},
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "find_free_slots",
            "input": {"person": "priya", "week": "2026-08-31"},
        },
    ]
    rebuilt = [{"type": "tool_use", "id": "toolu_1", "name": "find_free_slots", "input": {"person": "priya"}}]
    messages = [user(), {"role": "assistant", "content": rebuilt}, answers("toolu_1")]
    assert check(messages, mode="request") == []  # invisible without the raw response
    violations = check(messages, mode="request", raw={1: received})
    assert violations == [
        Violation(
            "messages[1]",
            "the assistant turn is not the provider's own content: it differs at content[0].type: "
            'received "text", stored "tool_use"; append the response\'s content exactly as it arrived, '
            "every block in order",
            api_accepts=True,  # the API cannot see it: only this check can
        )
    ]
    # keeping the blocks but rebuilding the input is caught at the argument that changed
    kept = [received[0], {**received[1], "input": {"person": "priya"}}]
    messages[1]["content"] = kept
    [violation] = check(messages, mode="request", raw={1: received})
    assert "it differs at content[1].input.week (only received)" in violation.cause
    # and a string where a block list arrived is not the provider's content either
    messages[1]["content"] = copy.deepcopy(received)
    assert check(messages, mode="request", raw={1: received}) == []
    messages[1]["content"] = "Let me look at Priya's week."
    assert "content: received [" in check([*messages[:2], user()], mode="request", raw={1: received})[0].cause


# --- every rule, with the exact position it reports ------------------------------------------------


RULES: list[tuple[str, list[Any], Mode, list[tuple[str, str]]]] = [
    ("empty list", [], "request", [("messages", "the list is empty")]),
    (
        "starts with an assistant turn",
        [final(), user()],
        "request",
        [
            (
                "messages[0]",
                "the list starts with an assistant turn, not a user turn: current models accept it, older ones "
                'answered "messages: first message must use the "user" role"',
            )
        ],
    ),
    (
        "entry not an object",
        [user(), "hello"],
        "request",
        [("messages[1]", 'an entry must be an object with "role" and "content", not a string')],
    ),
    (
        "bad role",
        [{"role": "tool", "content": "hi"}],
        "request",
        [("messages[0].role", 'the role must be "user" or "assistant" (or "system" for a system entry), not "tool"')],
    ),
    (
        "extra key",
        [{"role": "user", "content": "hi", "name": "jo"}],
        "request",
        [("messages[0].name", 'an entry holds only "role" and "content"')],
    ),
    ("no content", [{"role": "user"}], "request", [("messages[0]", 'the entry has no "content"')]),
    (
        "content of the wrong type",
        [{"role": "user", "content": 3}],
        "request",
        [("messages[0].content", "content must be a string or an array of content blocks, not a number")],
    ),
    (
        "empty string content",
        [{"role": "user", "content": ""}],
        "request",
        [
            (
                "messages[0].content",
                "all messages must have non-empty content except for the optional final assistant message",
            )
        ],
    ),
    (
        "whitespace string content",
        [{"role": "user", "content": " \n"}],
        "request",
        [("messages[0].content", "text content blocks must contain non-whitespace text")],
    ),
    (
        "empty content list (an empty answer)",
        [user(), {"role": "assistant", "content": []}],
        "conversation",
        [
            (
                "messages[1].content",
                "all messages must have non-empty content except for the optional final assistant message",
            )
        ],
    ),
    (
        "empty text block",
        [user(""), final()],
        "conversation",
        [("messages[0].content[0]", "text content blocks must be non-empty")],
    ),
    (
        "whitespace text block",
        [user(), final(" ")],
        "conversation",
        [("messages[1].content[0]", "text content blocks must contain non-whitespace text")],
    ),
    (
        "block without a type",
        [{"role": "user", "content": [{"text": "hi"}]}],
        "request",
        [("messages[0].content[0]", 'a content block must be an object with a "type", not an object')],
    ),
    (
        "text that is not a string",
        [{"role": "user", "content": [{"type": "text", "text": None}]}],
        "request",
        [("messages[0].content[0].text", 'a text block needs a string "text", not null')],
    ),
    (
        "missing result",
        [user(), asks("a", "b", "c"), answers("b")],
        "request",
        [("messages[1]", API_MISSING_RESULTS.format(ids="a, c"))],
    ),
    (
        "no user turn after the call",
        [user(), asks("a"), final()],
        "conversation",
        [
            ("messages[1]", API_MISSING_RESULTS.format(ids="a")),
            ("messages[2]", "two assistant turns in a row (messages[1] and messages[2])"),
        ],
    ),
    (
        "results as a plain string",
        [user(), asks("a"), {"role": "user", "content": "done"}],
        "request",
        [("messages[1]", API_MISSING_RESULTS.format(ids="a"))],
    ),
    (
        "extra result",
        [user(), asks("a"), answers("a", "zzz")],
        "request",
        [("messages[2].content[1]", API_UNEXPECTED_RESULT.format(id="zzz"))],
    ),
    (
        "duplicated result",
        [user(), asks("a"), answers("a", "a")],
        "request",
        [
            (
                "messages[2].content[1]",
                "a second `tool_result` for a (the first is content[0]): each call gets exactly one result",
            )
        ],
    ),
    (
        "text before the results",
        [user(), asks("a"), {"role": "user", "content": [{"type": "text", "text": "here"}, result("a")]}],
        "request",
        [
            (
                "messages[2].content[1]",
                "this `tool_result` comes after content[0] (text): results must come first in the user turn",
            )
        ],
    ),
    (
        "result with no call before it",
        [{"role": "user", "content": [result("a")]}],
        "request",
        [("messages[0].content[0]", API_UNEXPECTED_RESULT.format(id="a"))],
    ),
    (
        "result answering a call two turns back",
        [user(), asks("a"), answers("a"), final("ok"), answers("a")],
        "request",
        [("messages[4].content[0]", API_UNEXPECTED_RESULT.format(id="a"))],
    ),
    (
        "result without a tool_use_id",
        [user(), asks("a"), {"role": "user", "content": [result("a"), {"type": "tool_result", "content": "x"}]}],
        "request",
        [
            (
                "messages[2].content[1].tool_use_id",
                'a `tool_result` block needs the id of the call it answers in "tool_use_id", not null',
            )
        ],
    ),
    (
        "is_error with an image",
        [
            user(),
            asks("a"),
            {"role": "user", "content": [result("a", [{"type": "image", "source": {}}], is_error=True)]},
        ],
        "request",
        [
            (
                "messages[2].content[0].content[0]",
                "all content must be type 'text' if 'is_error' is true; this block is 'image'",
            )
        ],
    ),
    (
        "is_error with nothing to say",
        [user(), asks("a"), {"role": "user", "content": [result("a", " ", is_error=True)]}],
        "request",
        [
            (
                "messages[2].content[0].content",
                "all content must be type 'text' if 'is_error' is true: an `is_error` result must say in text",
            )
        ],
    ),
    (
        "is_error with an empty block list",
        [user(), asks("a"), {"role": "user", "content": [result("a", [], is_error=True)]}],
        "request",
        [("messages[2].content[0].content", "an `is_error` result must say in text what went wrong")],
    ),
    (
        "empty text inside a result",
        [user(), asks("a"), {"role": "user", "content": [result("a", [{"type": "text", "text": ""}])]}],
        "request",
        [("messages[2].content[0].content[0]", "text content blocks must be non-empty")],
    ),
    (
        "tool id used twice",
        [user(), asks("a"), answers("a"), asks("a"), answers("a")],
        "request",
        [
            (
                "messages[3].content[0]",
                "the `tool_use` id a is used again (first at messages[1].content[0]): the API accepts an id again "
                "in a later round",
            )
        ],
    ),
    (
        "call without an id",
        [user(), {"role": "assistant", "content": [{"type": "tool_use", "name": "x", "input": {}}]}],
        "conversation",
        [("messages[1].content[0].id", 'a `tool_use` block needs a non-empty string "id", not null')],
    ),
    (
        "call without a name",
        [user(), {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "input": {}}]}, answers("a")],
        "request",
        [("messages[1].content[0].name", "needs the name of the tool")],
    ),
    (
        "call input not an object",
        [user(), {"role": "assistant", "content": [{**call("a"), "input": "priya"}]}, answers("a")],
        "request",
        [("messages[1].content[0].input", '"input" must be an object, not a string')],
    ),
    (
        "call in a user turn",
        [{"role": "user", "content": [call("a")]}],
        "request",
        [("messages[0].content[0]", "a `tool_use` block in a user turn")],
    ),
    (
        "result in an assistant turn",
        [user(), asks("a"), answers("a"), {"role": "assistant", "content": [result("a")]}],
        "conversation",
        [
            ("messages[3].content[0]", "a `tool_result` block in an assistant turn"),
            ("messages[3].content[0]", API_UNEXPECTED_RESULT.format(id="a")),
        ],
    ),
    (
        "two user turns",
        [user(), user()],
        "request",
        [("messages[1]", "two user turns in a row (messages[0] and messages[1]): the API would merge them")],
    ),
    ("request ends with the answer", [user(), final()], "request", [("messages[1]", API_PREFILL)]),
    (
        "request ends with unanswered calls",
        [user(), asks("a", "b")],
        "request",
        [
            ("messages[1]", API_MISSING_RESULTS.format(ids="a, b")),
            ("messages[1]", "a request must end with a user turn"),
        ],
    ),
]


@pytest.mark.parametrize(("messages", "mode", "expected"), [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_each_rule_reports_its_position_and_cause(
    messages: list[Any], mode: Mode, expected: list[tuple[str, str]]
) -> None:
    violations = check(messages, mode=mode)
    assert wheres(violations) == [where for where, _ in expected], violations
    for violation, (_, cause) in zip(violations, expected, strict=True):
        assert cause in violation.cause


WARNINGS = {  # the rules above whose findings the API accepts (the rest are errors: the API rejects them)
    "starts with an assistant turn": ["warning"],
    "no user turn after the call": ["error", "warning"],
    "tool id used twice": ["warning"],
    "two user turns": ["warning"],
}


@pytest.mark.parametrize(("name", "messages", "mode", "expected"), RULES, ids=[r[0] for r in RULES])
def test_each_rule_has_its_level(name: str, messages: list[Any], mode: Mode, expected: list[tuple[str, str]]) -> None:
    levels = [violation.level for violation in check(messages, mode=mode)]
    assert levels == WARNINGS.get(name, ["error"] * len(expected))


def test_every_violation_is_reported_in_order() -> None:
    messages = [final(""), answers("x"), asks("a", "a"), {"role": "user", "content": []}]
    assert wheres(check(messages, mode="request")) == [
        "messages[0]",  # starts with an assistant turn
        "messages[0].content[0]",  # empty text
        "messages[1].content[0]",  # a result for nothing
        "messages[2].content[1]",  # a duplicated call id
        "messages[2]",  # calls a, a without results
        "messages[3].content",  # empty content
    ]


def test_raw_for_an_entry_that_is_not_an_assistant_turn_or_outside_the_list() -> None:
    violations = check(VALID_ROUND, mode="request", raw={0: [], 9: []})
    assert wheres(violations) == ["messages[0]", "messages[9]"]
    assert "not an assistant turn" in violations[0].cause
    assert "the list has 3 entries" in violations[1].cause


def test_an_unknown_mode_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match='mode must be "request" or "conversation"'):
        check(VALID_ROUND, mode="chat")  # type: ignore[arg-type]


# --- conversations: complete, interrupted, waiting --------------------------------------------------


def test_a_conversation_may_end_with_unanswered_calls_which_is_interrupted() -> None:
    messages = [user(), asks("toolu_1", "toolu_2")]
    assert check(messages, mode="conversation") == []
    assert conversation_state(messages) == "interrupted"
    assert [c["id"] for c in unanswered_calls(messages)] == ["toolu_1", "toolu_2"]


@pytest.mark.parametrize(
    ("messages", "state"),
    [
        ([], "empty"),
        ([user()], "waiting"),
        (VALID_ROUND, "waiting"),
        ([*VALID_ROUND, final()], "complete"),
        ([user(), asks("a")], "interrupted"),
    ],
)
def test_conversation_state(messages: list[Any], state: str) -> None:
    assert conversation_state(messages) == state


def test_grammar_error_lists_each_violation_and_says_nothing_was_sent() -> None:
    violations = [*check([user(), asks("a", "b"), answers("a")], mode="request"), Violation("messages[9]", "x")]
    error = GrammarError(violations)
    assert isinstance(error, AgentError)
    assert error.exit_code == 1
    assert error.violations == violations
    head, *rest = str(error).splitlines()
    assert "NOT sent" in head
    assert "2 places" in head
    assert rest == [f"  {v}" for v in violations]


def test_the_module_is_pure() -> None:
    code = (
        "import sys, scheduler_agent.grammar.check, scheduler_agent.grammar.lint\n"
        "print([m for m in ('anthropic', 'vcr', 'typer', 'httpx') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --- the incremental checker --------------------------------------------------------------------------


def test_the_checker_notices_text_added_to_the_last_user_turn() -> None:
    """After an iteration-bound stop the loop appends the person's text to the trailing results turn."""
    messages = [user(), asks("a"), answers("a")]
    checker = IncrementalChecker()
    assert checker.check(messages, mode="request") == []
    add_user_text(messages, "")  # an empty text block joins the results turn in place
    assert wheres(checker.check(messages, mode="request")) == ["messages[2].content[1]"]
    assert checker.examined == 2  # the boundary entry, found changed, examined again
    messages[2]["content"][1]["text"] = "go on"
    assert checker.check(messages, mode="request") == []


def test_the_checker_follows_a_shrinking_list_and_a_new_list() -> None:
    checker = IncrementalChecker()
    messages = [user(), asks("a"), answers("a"), asks("a")]
    assert wheres(checker.check(messages, mode="conversation")) == ["messages[3].content[0]"]
    messages.pop()
    assert checker.check(messages, mode="conversation") == []
    messages.append(asks("b"))  # the id `a` was forgotten with the entry that held it the second time
    assert checker.check(messages, mode="conversation") == []
    other = [answers("z")]
    assert wheres(checker.check(other, mode="request")) == ["messages[0].content[0]"]
    assert checker.examined == 1


IDS = ["t1", "t2", "t3"]  # a small pool, so that reused ids happen


def pending_ids(messages: list[Any]) -> list[str]:
    last = messages[-1] if messages else None
    if not isinstance(last, dict) or last.get("role") != "assistant" or not isinstance(last.get("content"), list):
        return []
    return [b["id"] for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]


def valid_entry(rng: random.Random, messages: list[Any]) -> JSON:
    """What a loop appends next."""
    pending = pending_ids(messages)
    if pending:
        rng.shuffle(pending)
        blocks: list[Any] = [
            result(i, rng.choice(["ok", [{"type": "text", "text": "no"}]]), is_error=rng.random() < 0.3)
            for i in pending
        ]
        if rng.random() < 0.2:
            blocks.append({"type": "text", "text": "and also"})
        return {"role": "user", "content": blocks}
    last = messages[-1] if messages else None
    if isinstance(last, dict) and last.get("role") == "user":
        ids = [f"u{rng.getrandbits(40)}" for _ in range(rng.choice([0, 1, 1, 2, 3]))]
        return asks(*ids, text=rng.choice([None, "Let me look."])) if ids else final()
    return rng.choice([user(), {"role": "user", "content": "hi"}])


def broken_entry(rng: random.Random, messages: list[Any]) -> Any:
    """Each of the ways an entry goes wrong."""
    pending = pending_ids(messages)
    if pending and rng.random() < 0.5:
        ids = list(pending)
        if rng.random() < 0.5:
            ids.pop(rng.randrange(len(ids)))  # a call with no result
        else:
            ids.append(rng.choice([*ids, *IDS]))  # an extra or duplicated result
        blocks: list[Any] = [
            result(i, rng.choice(["ok", "", [{"type": "image"}]]), is_error=rng.random() < 0.5) for i in ids
        ]
        if rng.random() < 0.3:
            blocks.insert(0, {"type": "text", "text": "first"})
        return {"role": "user", "content": blocks}
    return rng.choice(
        [
            asks(*rng.sample(IDS, rng.randint(1, 2)), text=rng.choice([None, "", " "])),
            {"role": "assistant", "content": []},
            final(),
            user(""),
            {"role": "user", "content": rng.choice(["", " "])},
            answers(rng.choice(IDS)),
            "garbage",
            {"role": "tool", "content": "x"},
            {"role": "system", "content": rng.choice(["Be brief.", [{"type": "text", "text": ""}], [call("t1")]])},
            {"role": "user"},
            {"role": "user", "content": 7},
        ]
    )


def random_step(rng: random.Random, messages: list[Any], error_rate: float) -> list[Any]:
    """Grow the list as a loop does, and now and then change it the ways the checker must notice."""
    roll = rng.random()
    last = messages[-1] if messages else None
    if roll < 0.75:
        for _ in range(rng.choice([1, 1, 2])):
            broken = rng.random() < error_rate
            messages.append(broken_entry(rng, messages) if broken else valid_entry(rng, messages))
    elif (
        roll < 0.85
        and isinstance(last, dict)
        and last.get("role") == "user"
        and isinstance(last.get("content"), str | list)
    ):
        add_user_text(messages, "" if rng.random() < error_rate else "more")  # in place, as after a bound stop
    elif roll < 0.9 and isinstance(last, dict) and isinstance(last.get("content"), list):
        last["content"].append(
            rng.choice([{"type": "text", "text": ""}, call(rng.choice(IDS)), result(rng.choice(IDS))])
        )
    elif roll < 0.93 and messages:
        del messages[-rng.randint(1, min(3, len(messages))) :]
        if rng.random() < 0.5:  # and, before the next check, grow again or change the new last entry
            messages = random_step(rng, messages, error_rate)
    elif roll < 0.96 and messages:
        replaced = rng.randint(1, min(3, len(messages)))
        del messages[-replaced:]
        for _ in range(replaced):  # as many entries as there were: only their identity tells
            messages.append(broken_entry(rng, messages) if rng.random() < error_rate else valid_entry(rng, messages))
    else:
        messages = copy.deepcopy(messages)  # a different list object
    return messages


def random_raw(rng: random.Random, messages: list[Any]) -> dict[int, Any] | None:
    assistants = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"]
    if not assistants or rng.random() < 0.5:
        return None
    index = rng.choice([*assistants, len(messages) + 1, 0])
    content = (
        copy.deepcopy(messages[index].get("content"))
        if index < len(messages) and isinstance(messages[index], dict)
        else []
    )
    if rng.random() < 0.3 and isinstance(content, list) and content:
        content = content[:-1]  # a turn rebuilt without its last block
    return {index: content}


def grow(seed: int) -> Iterator[tuple[random.Random, list[Any]]]:
    rng = random.Random(seed)
    error_rate = [0.0, 0.02, 0.1, 0.3][seed % 4]
    messages: list[Any] = []
    for _ in range(50):
        messages = random_step(rng, messages, error_rate)
        yield rng, messages


@pytest.mark.parametrize("seed", range(80))
def test_the_incremental_checker_agrees_with_check_at_every_step(seed: int) -> None:
    checker = IncrementalChecker()
    for rng, messages in grow(seed):
        mode: Mode = rng.choice(["request", "conversation"])
        raw = random_raw(rng, messages)
        assert checker.check(messages, mode=mode, raw=raw) == check(messages, mode=mode, raw=raw), (seed, messages)


def test_the_random_lists_are_valid_and_invalid_in_many_ways() -> None:
    verdicts = [check(messages, mode="conversation") for seed in range(80) for _, messages in grow(seed)]
    assert sum(not v for v in verdicts) > 500
    assert sum(bool(v) for v in verdicts) > 500
    kinds = {v.cause[:20] for found in verdicts for v in found}
    assert len(kinds) >= 15, kinds


def test_checking_a_long_list_round_by_round_examines_a_bounded_number_of_entries() -> None:
    checker = IncrementalChecker()
    messages: list[Any] = [user()]
    assert checker.check(messages, mode="request") == []
    examined = [checker.examined]
    number = 0
    while len(messages) < 2000:
        number += 1
        reply = asks(f"toolu_{number}", text=f"Looking, round {number}.")
        messages.append(reply)
        messages.append(answers(f"toolu_{number}"))
        assert checker.check(messages, mode="request", raw={len(messages) - 2: copy.deepcopy(reply["content"])}) == []
        examined.append(checker.examined)
    assert len(messages) >= 2000
    assert max(examined) == 3  # two new entries and the one before them, whatever the length
    assert check(messages, mode="request") == []
    # a broken round at the end of a long list is still found, at the same cost
    messages += [asks("toolu_1"), answers("toolu_1")]
    assert wheres(checker.check(messages, mode="request")) == [f"messages[{len(messages) - 2}].content[0]"]
    assert checker.examined == 3
