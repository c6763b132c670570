"""m007_replies: each reply the API sent, beside the list and outside it: usage, model, stop reason, request size.

`appended` is 1 when the reply is the list's entry at `position` (its content is stored there once); a reply
that was not appended (one that would poison the list) keeps its whole body in `body`.
"""

from scheduler_agent.storage.migrations.ddl import run

revision = "m007"
down_revision = "m006"


def upgrade() -> None:
    run(
        """
        CREATE TABLE replies (
            conversation_id {int} NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            seq {int} NOT NULL,               -- 1, 2, ... in the order the replies arrived
            position {int} NOT NULL,          -- the list's length when the request was sent
            iteration {int} NOT NULL,
            model {text} NOT NULL DEFAULT '',
            stop_reason {text},
            usage {text} NOT NULL DEFAULT '{{}}',   -- the API's usage object, as it came
            request_bytes {int} NOT NULL DEFAULT 0,
            appended {int} NOT NULL DEFAULT 1,
            body {text},                          -- the whole reply, only when it was not appended
            created_at {text} NOT NULL DEFAULT {now},
            PRIMARY KEY (conversation_id, seq)
        )
        """,
    )
