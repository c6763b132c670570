"""Exceptions meant for people: caught once, at the CLI edge, and shown as one line.

Each carries the exit code the CLI returns. Failures meant for the model are not
exceptions: they are `tool_result` blocks with `is_error: true` (see agent/toolbox.py).
"""

from __future__ import annotations


class AgentError(Exception):
    """A failure a person must act on. `str(error)` is the one line they see."""

    exit_code = 1


def too_deeply_nested(path: object, give: str = "a JSON array of messages, a dump or a cassette (.yaml)") -> AgentError:
    """For a RecursionError met reading a person's JSON or YAML file: the parsers recurse once a level."""
    return AgentError(
        f"{path} is too deeply nested to be a message list (arrays or objects hundreds of levels deep): give {give}"
    )


class InputError(AgentError):
    """Something a person typed (an option, an argument) is not valid; the message says what to give."""

    exit_code = 1


class BudgetTooSmall(InputError):
    """A --context-budget smaller than any request can be: a usage problem (exit 2), said before anything is sent."""

    exit_code = 2


def utf8_problem(text: str) -> str | None:
    """Where `text` stops being UTF-8 ("byte 0xe9 at character 4"), or None. Python hands bytes that are not
    UTF-8 (in an argument, on standard input) over as lone surrogates, which no request, file or row can hold."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        what = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"character U+{code:04X}"
        return f"{what} at character {exc.start + 1}"
    return None


def refuse_not_utf8(text: str, source: str) -> None:
    """Text that is not UTF-8 is the person's mistake: refused where it enters, before anything is stored."""
    problem = utf8_problem(text)
    if problem is not None:
        raise InputError(f"{source} is not valid UTF-8 text ({problem}): give it as UTF-8 (e.g. `iconv -t utf-8`)")


class ModelUnavailable(AgentError):
    """The API could not be reached or kept failing after the SDK's retries."""

    exit_code = 5


class ModelRequestFailed(AgentError):
    """The API refused the request (authentication, a 4xx)."""

    exit_code = 1


class CassetteError(AgentError):
    """A replay diverged from its cassette, or left recorded interactions unused."""

    exit_code = 1


class UnusableReply(AgentError):
    """The model's (or the API's) reply could not be used: the list was left as it was."""

    exit_code = 7
