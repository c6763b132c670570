"""The rules of the message list, one block or one entry at a time, and what the API does about each.

A finding is a `Violation` with a level: an **error** is what the API rejects (HTTP 400), a
**warning** is what it accepts but this project never builds, or cannot see (a turn that is not the
provider's own content). How each rule was established is said beside it, in three kinds of evidence:

- the API's own error texts, as people pasted them into public issue threads (quoted below);
- public recorded traffic: cassettes other projects' test suites recorded from api.anthropic.com
  (`msg_` ids, a Claude model, HTTP 200), cited as project, file, date of the recording's commit, model;
- the SDK's own request types (`anthropic` 2.14.0, `types/`), for shapes the SDK can build.

The walk that applies the rules entry after entry (pairing calls and results on merged turns) is in
`walk.py`; the public checks are in `check.py`. Pure: standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from scheduler_agent.agent.types import is_object

Mode = Literal["request", "conversation"]
State = Literal["empty", "waiting", "interrupted", "complete"]
Level = Literal["error", "warning"]

ROLES = ("user", "assistant")  # the roles that alternate, and that the API merges when they repeat

# The API's own error texts, as it answers them with a 400 (`messages.N...: ` before each). Sources:
# the tool_use/tool_result pair and the empty-content texts are quoted in many public threads (for
# example anthropics/anthropic-sdk-python and BerriAI/litellm issues); "`tool_use` ids must be unique"
# in anthropics/claude-code#20901 (2026-01-26, `messages.1.content.1: ...`) and trycua/cua#524.
API_MISSING_RESULTS = (
    "`tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)
API_UNEXPECTED_RESULT = (
    "unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)
API_EMPTY_CONTENT = "all messages must have non-empty content except for the optional final assistant message"
API_EMPTY_TEXT = "text content blocks must be non-empty"
API_WHITESPACE_TEXT = "text content blocks must contain non-whitespace text"
API_ERROR_NOT_TEXT = "all content must be type 'text' if 'is_error' is true"
API_PREFILL = "This model does not support assistant message prefill. The conversation must end with a user message."
API_FIRST_ROLE = 'messages: first message must use the "user" role'
API_DUPLICATE_CALL = "`tool_use` ids must be unique"

# Block types a system entry may hold besides text: the beta request types name them
# (`types/beta/beta_system_message_param.py`), and recorded traffic shows them accepted:
# pydantic/pydantic-ai, tests/models/cassettes/test_anthropic/test_anthropic_fable_5_lazy_advertisement_live.yaml
# (2026-08-06, claude-fable-5, `/v1/messages?beta=true`).
SYSTEM_BETA_BLOCKS = ("tool_addition", "tool_removal")
SYSTEM_BETA_KEYS = ("clear_at", "output_config")


@dataclass(frozen=True)
class Violation:
    """One finding: where it is (`messages[4].content[1]`) and why, in one sentence.

    `api_accepts` says the API would take the list anyway: the finding is a warning (`level`), which
    `lint` prints and exits 0 on, unless `--strict`; the agent refuses it only when strict.
    """

    where: str
    cause: str
    api_accepts: bool = False

    @property
    def level(self) -> Level:
        return "warning" if self.api_accepts else "error"

    def __str__(self) -> str:
        return f"{self.where}: {self.cause}"


def warning(where: str, cause: str) -> Violation:
    return Violation(where, cause, api_accepts=True)


# --- reading entries ---------------------------------------------------------------------------------


def at(index: int) -> str:
    return f"messages[{index}]"


def role_of(entry: object) -> str | None:
    if is_object(entry):
        role = entry.get("role")
        return role if isinstance(role, str) else None
    return None


def blocks_of(entry: object) -> list[Any]:
    """The content blocks of an entry (none when its content is a string or malformed)."""
    if is_object(entry):
        content = entry.get("content")
        if isinstance(content, list):
            return content
    return []


def has_type(block: object, kind: str) -> bool:
    return is_object(block) and block.get("type") == kind


def kind_of(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def show(value: object) -> str:
    return json.dumps(value) if isinstance(value, str | int | float | bool | None) else kind_of(value)


def not_a_block(where: str, value: object) -> Violation:
    return Violation(where, f'a content block must be an object with a "type", not {kind_of(value)}')


# --- the rules of one entry --------------------------------------------------------------------------


def same_role(role: str, index: int) -> Violation:
    """Two user (or two assistant) turns in a row: a warning.

    The API merges consecutive turns of one role before it validates (established: the split round in
    pydantic/pydantic-ai, tests/cassettes/test_tool_search/
    test_cross_provider_capability_replay[anthropic-claude-sonnet-4-5-openai-responses-gpt-5.4].yaml,
    2026-08-03, claude-sonnet-4-5: `assistant(text, tool_use A), assistant(tool_use B), user(result A,
    result B)` answered 200). The loop never builds it, so it is reported.
    """
    pair = f"messages[{index - 1}] and messages[{index}]"
    if role == "user":
        cause = (
            f"two user turns in a row ({pair}): the API would merge them, but the loop never builds this; "
            "results filed before the assistant turn that asked for them (a retry-wrapper ordering bug) look like this"
        )
    else:
        cause = (
            f"two assistant turns in a row ({pair}): the API would merge them, but the loop never builds this; "
            "every assistant turn is followed by the user turn that answers it"
        )
    return warning(at(index), cause)


def first_is_assistant(where: str) -> Violation:
    """A list that starts with an assistant turn: a warning.

    The API's error text for it exists (`API_FIRST_ROLE`, from older models), but a current model took
    it: pydantic/pydantic-ai, tests/models/cassettes/test_anthropic/
    test_anthropic_model_empty_message_on_history.yaml (2025-10-29, claude-sonnet-4-5).
    """
    return warning(
        where,
        "the list starts with an assistant turn, not a user turn: current models accept it, older ones "
        f'answered "{API_FIRST_ROLE}"; the loop always starts with the person\'s words',
    )


def system_entry(where: str) -> Violation:
    """A `system` role entry inside `messages`: a warning, and only with text (or the beta tool changes).

    Accepted by models that take mid-conversation system messages: pydantic/pydantic-ai,
    tests/models/cassettes/test_anthropic_mid_conversation_system/ (eleven cassettes, 2026-07-30,
    claude-opus-4-8; after a user turn, after a round's results, two in a row, and one followed by
    more turns). The same suite folds it into the user turn for claude-sonnet-4-6 (`[inline-system-
    unsupported]`), so it depends on the model. The SDK's `SystemMessageParam` holds text only. Whether
    one may stand between a call and its result is not established: there it breaks the pair (an error).
    """
    return warning(
        where,
        "a system entry inside messages: accepted by models that take mid-conversation system messages "
        "(not every model does), text only; this project's loop never builds one",
    )


def text_block(block: Mapping[str, Any], where: str) -> Violation | None:
    """A text block: a string, non-empty, not only whitespace (the API's texts; see `blank_text`)."""
    text = block.get("text")
    if not isinstance(text, str):
        return Violation(f"{where}.text", f'a text block needs a string "text", not {kind_of(text)}')
    if not text:
        return Violation(where, API_EMPTY_TEXT)
    if not text.strip():
        return Violation(where, API_WHITESPACE_TEXT)
    return None


def blank_text(where: str) -> Violation:
    """Whitespace-only text in an assistant turn that is not the last entry: a warning.

    The API's whitespace text exists and holds for user turns and for the final assistant turn (a
    prefill), but a `" "` text before two `tool_use` blocks was accepted: simonw/llm-anthropic,
    tests/cassettes/test_anthropic/test_tools.yaml (2026-04-05, claude-haiku-4-5-20251001).
    """
    return warning(
        where,
        "whitespace-only text in an assistant turn: the API accepts it before later turns (it rejects it in "
        f'user turns and at the end, "{API_WHITESPACE_TEXT}"); keep the provider\'s block as it came',
    )


def result_content(block: Mapping[str, Any], where: str) -> list[Violation]:
    """The content of a `tool_result`: a string or blocks; an `is_error` one holds non-empty text only."""
    is_error = block.get("is_error") is True
    empty_error = (
        f"{API_ERROR_NOT_TEXT}: an `is_error` result must say in text what went wrong and what to do, "
        "and this one is empty"
    )
    if "content" not in block or block["content"] is None:
        return [Violation(where, empty_error)] if is_error else []
    content = block["content"]
    if isinstance(content, str):
        return [Violation(f"{where}.content", empty_error)] if is_error and not content.strip() else []
    if not isinstance(content, list):
        cause = f"a `tool_result`'s content must be a string or an array of blocks, not {kind_of(content)}"
        return [Violation(f"{where}.content", cause)]
    found: list[Violation] = []
    if is_error and not content:
        found.append(Violation(f"{where}.content", empty_error))
    for position, inner in enumerate(content):
        inner_where = f"{where}.content[{position}]"
        if not is_object(inner) or not isinstance(inner.get("type"), str):
            found.append(not_a_block(inner_where, inner))
        elif inner["type"] == "text":
            found += [v for v in [text_block(inner, inner_where)] if v]
        elif is_error:
            found.append(Violation(inner_where, f"{API_ERROR_NOT_TEXT}; this block is {inner['type']!r}"))
    return found


def system_blocks(blocks: list[Any], where: str) -> list[Violation]:
    """The blocks of a system entry: text; the beta tool changes as warnings; anything else an error."""
    found: list[Violation] = []
    for position, block in enumerate(blocks):
        block_where = f"{where}.content[{position}]"
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            found.append(not_a_block(block_where, block))
        elif block["type"] == "text":
            found += [v for v in [text_block(block, block_where)] if v]
        elif block["type"] in SYSTEM_BETA_BLOCKS:
            cause = (
                f"a {block['type']!r} block in a system entry: the beta endpoint (/v1/messages?beta=true) accepts "
                "it on models that take mid-conversation system messages; the SDK's plain types hold text only"
            )
            found.append(warning(block_where, cause))
        else:
            cause = f"a system entry holds text only, not a {block['type']!r} block: calls and results go in turns"
            found.append(Violation(block_where, cause))
    return found


def unanswered_calls(messages: Sequence[Any]) -> list[Mapping[str, Any]]:
    """The `tool_use` blocks of a trailing assistant turn (none when the list ends otherwise)."""
    if not messages or role_of(messages[-1]) != "assistant":
        return []
    return [block for block in blocks_of(messages[-1]) if has_type(block, "tool_use")]


def conversation_state(messages: Sequence[Any]) -> State:
    """Where a stored list stands.

    "complete": it ends with the assistant's answer (no calls). "interrupted": it ends with an assistant
    turn whose calls have no results (a round cut short; resumable). "waiting": it ends with a user turn
    the model never answered. "empty": there is nothing in it.
    """
    if not messages:
        return "empty"
    if role_of(messages[-1]) != "assistant":
        return "waiting"
    return "interrupted" if unanswered_calls(messages) else "complete"
