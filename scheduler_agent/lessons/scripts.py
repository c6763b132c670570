"""The lessons' scripts: for each, what the person types and the replies the scripted server serves.

Only the replies are written here. Every request in a cassette is what the real loop sent in
answer to them, recorded by `lessons/authoring.py`. A lesson is `recordable` when a real model can be
asked to do it again (`python -m scheduler_agent.lessons.authoring --live`); a scripted one shows a
behaviour a model will not produce on cue (booking the wrong day, the API sending 529s).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scheduler_agent.agent.request import DEFAULT_MAX_ITERATIONS, DEFAULT_MODEL
from scheduler_agent.agent.types import JSON
from scheduler_agent.testing.scripted_server import Reply, text, tool_use

OVERLOADED = Reply(
    status=529, error_type="overloaded_error", error_message="Overloaded", headers={"retry-after-ms": "10"}
)


@dataclass(frozen=True)
class Lesson:
    title: str
    lesson: str  # two or three sentences: what it shows, and where in the code it happens
    recordable: bool
    inputs: list[str]
    replies: list[Reply]
    clock: str = "2026-08-27T09:00"
    options: JSON = field(default_factory=dict)
    preferences: list[JSON] = field(default_factory=list)  # added to the demo calendar, as `prefs add` would

    def all_options(self) -> JSON:
        return {"model": DEFAULT_MODEL, "max_iterations": DEFAULT_MAX_ITERATIONS, **self.options}


def find(call_id: str, person: str = "priya", week: str = "2026-08-31") -> JSON:
    return tool_use(call_id, "find_free_slots", {"person": person, "week": week})


def book(call_id: str, start: str, person: str = "priya", minutes: int = 30) -> JSON:
    return tool_use(call_id, "create_event", {"with": person, "start": start, "minutes": minutes})


def move(call_id: str, event_id: int, **changes: object) -> JSON:
    return tool_use(call_id, "move_event", {"event_id": event_id, **changes})


def asks(*calls: JSON) -> Reply:
    return Reply(list(calls), "tool_use")


CANONICAL = "Find a 30-minute slot with Priya next week and book it. Nothing before 10am."
RULE = "Never book anything before 10am. What do Priya's and my Mondays look like next week?"
CANONICAL_REPLIES = [
    asks(find("toolu_scripted_nm_01")),
    asks(book("toolu_scripted_nm_02", "2026-08-31T14:00")),
    Reply(
        [
            text(
                "Booked: Monday 2026-08-31, 14:00-14:30 (Europe/London), 30 minutes with Priya Raman. "
                "The other free windows (Mon 09:00 and Wed 09:15) were before 10am."
            )
        ]
    ),
]

LESSONS: dict[str, Lesson] = {
    "no_mornings": Lesson(
        title="The canonical trace: find a slot with Priya next week and book it, nothing before 10am",
        lesson=(
            "The whole agent is a loop: every iteration resends the whole array (1, 3, then 5 entries) and the "
            "10am rule holds because it is in every array, not because the model remembers it. The windows carry "
            "full dates, so nothing is left to guess. Read run_turn in scheduler_agent/agent/loop.py, then run this "
            "with --dump-array."
        ),
        recordable=True,
        inputs=[CANONICAL],
        replies=CANONICAL_REPLIES,
    ),
    "streamed": Lesson(
        title="The canonical trace, streamed: the text arrives in pieces, the list gets the whole message",
        lesson=(
            'The same three iterations as no_mornings, with "stream": true in every request: each reply comes as '
            "server-sent events (the cassette stores them as they came), its text in pieces shown as they arrive "
            "and its tool input as pieces of JSON. Only the assembled message joins the list, and it equals the "
            "no_mornings list turn for turn. See assemble in scheduler_agent/api/sse.py."
        ),
        recordable=True,
        inputs=[CANONICAL],
        replies=CANONICAL_REPLIES,
        options={"stream": True},
    ),
    "wrong_day": Lesson(
        title="The published trace's mistake: the model books Tuesday, the error string steers it back",
        lesson=(
            "The model books 2026-09-01T14:00, a Tuesday, though the free window was on Monday. create_event "
            "answers with an actionable conflict that names the clashing event and the week's free windows, and "
            "on the next iteration the model books Monday 14:00: error strings are prompts. See check_free in "
            "scheduler_agent/calendar/tools/create_event.py and run_call in agent/toolbox.py."
        ),
        recordable=False,
        inputs=[CANONICAL],
        replies=[
            asks(find("toolu_scripted_wd_01")),
            asks(book("toolu_scripted_wd_02", "2026-09-01T14:00")),
            asks(book("toolu_scripted_wd_03", "2026-08-31T14:00")),
            Reply([text("Booked Monday 2026-08-31, 14:00-14:30 with Priya Raman; Tuesday was taken.")]),
        ],
    ),
    "parallel_calls": Lesson(
        title="Two calls in one turn, one of them failing: both answered in one user turn",
        lesson=(
            "One assistant turn asks for Priya's and Sam's free windows at once, and Sam is not in the calendar. "
            "Both calls are answered in ONE user turn, in order, the failing one with is_error: true and a text "
            "that lists the people who are known, so the model can ask the user. See answer_all in agent/loop.py."
        ),
        recordable=False,
        inputs=["When are Priya and Sam free next week?"],
        replies=[
            Reply(
                [
                    text("I'll look up both at once."),
                    find("toolu_scripted_pc_01"),
                    find("toolu_scripted_pc_02", person="sam"),
                ],
                "tool_use",
            ),
            Reply(
                [
                    text(
                        "Priya and you are free Mon 2026-08-31 09:00-09:30 and 14:00-15:00, and Wed 2026-09-02 "
                        "09:15-09:45. I don't know a Sam: the calendar has Aiko, Marco and Priya. Who is Sam?"
                    )
                ]
            ),
        ],
    ),
    "iteration_bound": Lesson(
        title="A model that keeps asking: the loop stops at the bound with a valid list",
        lesson=(
            "The model keeps asking for one more week. The loop stops at the bound (here --max-iterations 3) "
            "right after the last round's results are appended, so the list is valid and exits 3; `resume` or a "
            "new message goes on from it. The bound is counted from the list itself: iterations_in_turn in "
            "agent/loop.py."
        ),
        recordable=False,
        inputs=["Find the first week when Priya and I both have a free hour."],
        replies=[
            asks(find("toolu_scripted_ib_01", week="2026-08-31")),
            asks(find("toolu_scripted_ib_02", week="2026-09-07")),
            asks(find("toolu_scripted_ib_03", week="2026-09-14")),
        ],
        options={"max_iterations": 3},
    ),
    "overloaded": Lesson(
        title="The API is overloaded twice; the SDK retries and the turn completes",
        lesson=(
            "The first request gets 529 overloaded_error twice; the SDK retries (obeying retry-after-ms) and the "
            "third attempt succeeds. The list never sees a retry: retries live below the loop, in the SDK, and "
            "the cassette records every attempt. See scheduler_agent/api/client.py."
        ),
        recordable=False,
        inputs=[CANONICAL],
        replies=[
            OVERLOADED,
            OVERLOADED,
            asks(find("toolu_scripted_ov_01")),
            asks(book("toolu_scripted_ov_02", "2026-08-31T14:00")),
            Reply([text("Booked Monday 2026-08-31, 14:00-14:30 with Priya Raman.")]),
        ],
    ),
    "overloaded_exhausted": Lesson(
        title="The API stays overloaded until the retries run out: exit 5, the list intact",
        lesson=(
            "Every attempt gets 529 until the SDK's retries run out: the turn stops with exit 5 and one line. "
            "The stored list is valid (it ends with the user's turn, waiting), so `scheduler-agent resume ID` "
            "sends it again, and the conversation's retries-exhausted counter is 1. See Session._run in "
            "session/session.py."
        ),
        recordable=False,
        inputs=[CANONICAL],
        replies=[OVERLOADED, OVERLOADED, OVERLOADED],
    ),
    "forgotten_rule": Lesson(
        title="'The agent forgot': a naive trim drops the first turn, and its rule with it",
        lesson=(
            "Turn 1 sets a standing rule; turn 2 asks for the meeting. Under a context budget, a naive trim that "
            "keeps only the newest entries drops turn 1: --dump-array shows the rule is not in the array, and the "
            "model books 09:00. It never saw the rule. Compare `demo kept_rule`, and agent/trim.py."
        ),
        recordable=False,
        inputs=[RULE, "Book 30 minutes with her on Monday."],
        replies=[
            asks(find("toolu_scripted_fr_01")),
            Reply([text("You're both free Monday 09:00-09:30 and 14:00-15:00. Noted: nothing before 10am.")]),
            asks(book("toolu_scripted_fr_02", "2026-08-31T09:00")),
            Reply([text("Booked Monday 2026-08-31 09:00-09:30 with Priya Raman.")]),
        ],
        options={"context_budget": 960, "trim": "newest"},  # ~860 tokens are the system prompt and tools
    ),
    "kept_rule": Lesson(
        title="The same budget with the project's trim: the first turn, and its rule, stay",
        lesson=(
            "The same two turns under the same budget, with the project's own trim: it cuts whole rounds only and "
            "always keeps the first user turn, where standing instructions live. The rule is in every array and "
            "the model books 14:00. See trimmed in scheduler_agent/agent/trim.py."
        ),
        recordable=False,
        inputs=[RULE, "Book 30 minutes with her on Monday."],
        replies=[
            asks(find("toolu_scripted_kr_01")),
            Reply([text("You're both free Monday 09:00-09:30 and 14:00-15:00. Noted: nothing before 10am.")]),
            asks(book("toolu_scripted_kr_02", "2026-08-31T14:00")),
            Reply([text("Booked Monday 2026-08-31 14:00-14:30 with Priya Raman, after 10am as you asked.")]),
        ],
        options={"context_budget": 960},  # ~860 tokens are the system prompt and tools
    ),
    "reschedule": Lesson(
        title="'Make it 45 minutes instead': the meeting is moved, not booked twice",
        lesson=(
            "Turn 1 books 30 minutes with Priya on Monday at 14:00 (event #29). Turn 2 says only 'Make it 45 "
            "minutes instead': the model calls move_event on the id the booking returned, the tool checks the "
            "longer meeting like a new one (leaving its own old time out), and the calendar holds one event, "
            "14:00-14:45. See scheduler_agent/calendar/tools/move_event.py."
        ),
        recordable=True,
        inputs=[CANONICAL, "Make it 45 minutes instead."],
        replies=[
            *CANONICAL_REPLIES,
            asks(move("toolu_scripted_rs_01", 29, minutes=45)),
            Reply(
                [text("Done: it is now Monday 2026-08-31, 14:00-14:45, 45 minutes with Priya Raman (still event #29).")]
            ),
        ],
    ),
    "team_meeting": Lesson(
        title="Three people, one common window: find_free_slots and create_event with `also`",
        lesson=(
            "An hour for Priya (London), Aiko (New York) and the owner: `also` adds people to the same calls the "
            "seed trace makes. The windows are where all three work and are free, and next week has only one, "
            "Monday 14:00-15:00 London (09:00 in New York); the booking invites all three. See group_search in "
            "scheduler_agent/calendar/tools/find_free_slots.py and shared_working_hours in calendar/slots.py."
        ),
        recordable=True,
        inputs=["Find an hour next week for Priya, Aiko and me, and book it as 'Team sync'."],
        replies=[
            asks(
                tool_use(
                    "toolu_scripted_tm_01",
                    "find_free_slots",
                    {"person": "priya", "also": ["aiko"], "week": "2026-08-31", "minutes": 60},
                )
            ),
            asks(
                tool_use(
                    "toolu_scripted_tm_02",
                    "create_event",
                    {
                        "with": "priya",
                        "also": ["aiko"],
                        "start": "2026-08-31T14:00",
                        "minutes": 60,
                        "title": "Team sync",
                    },
                )
            ),
            Reply(
                [
                    text(
                        "Booked 'Team sync' on Monday 2026-08-31, 14:00-15:00 London (09:00-10:00 for Aiko in New "
                        "York), for you, Priya and Aiko: the only hour next week when all three of you are free."
                    )
                ]
            ),
        ],
    ),
    "standing_rule": Lesson(
        title="A standing rule set once with `calendar prefs add` is in every request, and the tools enforce it",
        lesson=(
            "The calendar carries a preference added with `calendar prefs add 'No meetings before 10am' "
            "--not-before 10:00`. The user never mentions it: it is in the system prompt of every request (see "
            "--dump-array), find_free_slots leaves the morning windows out and names the rule, and a booking "
            "at 09:15 is refused with '09:15 is before your 10:00 rule'. The replies are scripted (written by "
            "hand, and they say so); the requests are what the real loop sent. See scheduler_agent/calendar/prefs.py."
        ),
        recordable=False,
        inputs=["Find 30 minutes with Priya next week and book it."],
        preferences=[{"text": "No meetings before 10am", "rule": "not_before", "value": "10:00"}],
        replies=[
            asks(find("toolu_scripted_sr_01")),
            asks(book("toolu_scripted_sr_02", "2026-09-02T09:15")),
            asks(book("toolu_scripted_sr_03", "2026-08-31T14:00")),
            Reply(
                [
                    text(
                        "[A scripted reply.] Booked Monday 2026-08-31, 14:00-14:30 with Priya Raman: your standing "
                        "rule keeps meetings after 10:00, so Wednesday 09:15 was refused."
                    )
                ]
            ),
        ],
    ),
}
